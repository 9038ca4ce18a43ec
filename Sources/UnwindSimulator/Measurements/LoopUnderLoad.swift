#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Glibc
import UnwindCore
import UnwindRuntime
import UnwindLinuxHardware
import UnwindSeams

/// The loop on a busy machine: the device as the daemon (`FrameDeadlineRig`), a breathing
/// session running (the motor pulses at every corner), measured for a while on its own, then
/// beside `MachineLoad`, with the loop's thread at ordinary priority and at the daemon's
/// real-time one (`LoopPriority`, when this process may have it).
public struct LoopUnderLoad: CustomStringConvertible {
    public var what: String
    public var framesDrawn: Int
    public var framesMissed: Int
    public var seconds: Double
    /// How long the loop's thread waited for a CPU.
    public var starved: Duration
    public var motorEdges: Int
    public var motorLateness: LatenessCounts
    public var worstMotorLateness: Duration

    /// Frames drawn of those due, in per cent.
    public var framesOnTime: Double {
        framesDrawn + framesMissed == 0 ? 0 : Double(framesDrawn) * 100 / Double(framesDrawn + framesMissed)
    }

    public var description: String {
        func ms(_ d: Duration?) -> String { d.map { "≤ \(Double($0.nanoseconds / 1_000) / 1_000) ms" } ?? "> 100 ms" }
        let worst = Double(worstMotorLateness.nanoseconds / 1_000) / 1_000
        return "\(what): \(framesDrawn) frames drawn, \(framesMissed) missed (\(framesOnTime.fixed(2)) % on time) in \(seconds.fixed(1)) s; "
            + "the loop waited \(Double(starved.nanoseconds / 1_000_000) / 1_000) s for a CPU; "
            + "\(motorEdges) motor edges late by p50 \(ms(motorLateness.atMost(0.5))), p99 \(ms(motorLateness.atMost(0.99))), "
            + "max \(worst) ms, \(motorLateness.later(than: .milliseconds(5))) later than 5 ms"
    }

    /// `seconds` of a breathing session; `load` beside it (started first, stopped after);
    /// `ahead`: the loop's thread asks for real-time priority. Nil when `ahead` was asked and
    /// refused (this process may not have it).
    public static func measure(seconds: Int, load: MachineLoad?, ahead: Bool) throws -> LoopUnderLoad? {
        let rig = try FrameDeadlineRig()
        rig.start(ahead: ahead)
        if ahead && !FrameDeadlineRig.wait(.seconds(5), until: { rig.ranAhead.load(ordering: .acquiring) }) {
            _ = rig.finish()
            return nil
        }
        // A session, so that the motor pulses: SELECT on the breathing page.
        rig.buttons.tap(.select, holdFor: .milliseconds(60))
        try load?.start()
        let t0 = LinuxClock().now().instant
        for _ in 0..<max(0, seconds) { sleep(1) }
        let (s, starved) = rig.finishMeasured()
        load?.stop()
        let what = (load.map { "beside \($0)" } ?? "on its own") + (ahead ? ", the loop at real-time priority" : ", the loop at ordinary priority")
        return LoopUnderLoad(what: what, framesDrawn: s.framesRendered, framesMissed: s.framesMissed,
                             seconds: FrameDeadlineRig.seconds(since: t0), starved: starved, motorEdges: s.motorEdgesApplied,
                             motorLateness: s.motorLateness, worstMotorLateness: s.worstMotorLateness)
    }
}

/// What a busy board does beside the device, as child processes in this process's session (the
/// scheduler's autogroup: they compete with the loop as equals, as a build started from the same
/// shell does): `busy` processes that only compute (a shell counting), `memory` ones that each
/// keep writing through 64 MiB, `churn` ones that each start short-lived programs one after
/// another (a build's compiler runs: every new process, and every wake-up, competes for a CPU as
/// the loop's thread does when it wakes), and one that writes 8 MiB files to `directory` with
/// fsync, one after another.
public final class MachineLoad: CustomStringConvertible {
    public let busy: Int
    public let memory: Int
    public let churn: Int
    public let directory: String
    private var children: [pid_t] = []

    public init(busy: Int, memory: Int, churn: Int = 0, directory: String) {
        self.busy = busy
        self.memory = memory
        self.churn = churn
        self.directory = directory
    }

    public var description: String {
        "\(busy) busy processes, \(memory) writing through 64 MiB each, "
            + (churn > 0 ? "\(churn) starting short programs, " : "") + "a writer fsyncing 8 MiB files"
    }

    func start() throws {
        // Every loop goes on only while the benchmark lives: each shell leads a process group of
        // its own, which a Ctrl-C at the terminal does not reach, and a killed benchmark never
        // runs stop(). Alive means that its pid ($2) is a process, not a zombie, started when
        // the benchmark was ($3, /proc's start time): a pid reused by another process does not
        // keep the load running. A busy shell checks once per 100,000 counts.
        let started = try Self.startTime()
        let alive = "exec 2>/dev/null; alive() { t=$2; read -r s < /proc/\"$1\"/stat || return 1; s=${s##*\") \"}; "
            + "set -- $s; [ \"$1\" != Z ] && [ \"${20}\" = \"$t\" ]; }; while alive \"$2\" \"$3\"; do"
        var scripts = [String](repeating: "\(alive) i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done; done", count: busy)
        // dd through a 64 MiB block: the page's worth of memory written again and again.
        scripts += [String](repeating: "\(alive) dd if=/dev/zero of=/dev/null bs=64M count=8; done", count: memory)
        // A shell that counts to 3,000 (a few milliseconds of work) and exits, started again and again.
        scripts += [String](repeating: "\(alive) /bin/sh -c 'i=0; while [ $i -lt 3000 ]; do i=$((i+1)); done'; done", count: churn)
        let file = directory + "/unwind-load-\(getpid())"
        // The file is the script's argument, never part of its text (the directory comes from TMPDIR).
        scripts.append("\(alive) dd if=/dev/zero of=\"$1\" bs=1M count=8 conv=fsync; done; rm -f \"$1\"")
        for script in scripts {
            let words: [String] = ["/bin/sh", "-c", script, "sh", file, String(getpid()), started]
            let argv: [UnsafeMutablePointer<CChar>?] = words.map { strdup($0) } + [nil]
            defer { for a in argv { free(a) } }
            var pid: pid_t = 0
            // Each shell leads a process group of its own, so that stopping it stops its dd too
            // (a dd left running could write the file again after it was removed).
            var attributes = posix_spawnattr_t()
            posix_spawnattr_init(&attributes)
            defer { posix_spawnattr_destroy(&attributes) }
            posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP))
            posix_spawnattr_setpgroup(&attributes, 0)
            let r = posix_spawn(&pid, "/bin/sh", nil, &attributes, argv, environ)
            guard r == 0 else {
                stop()
                throw DeviceError(device: "machine load", operation: "posix_spawn /bin/sh", errno: r)
            }
            children.append(pid)
        }
    }

    /// This process's start time in clock ticks since boot: field 22 of /proc/self/stat,
    /// counted after the command name's closing parenthesis (the name may hold spaces).
    static func startTime() throws -> String {
        guard let stat = try? String(contentsOfFile: "/proc/self/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else {
            throw DeviceError(device: "machine load", operation: "read /proc/self/stat", errno: ENOENT)
        }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 19, fields[19].allSatisfy(\.isNumber) else {
            throw DeviceError(device: "machine load", operation: "read /proc/self/stat", errno: EINVAL)
        }
        return String(fields[19])
    }

    func stop() {
        for pid in children {
            // The shell and whatever it started (its process group).
            kill(-pid, SIGKILL)
            var status: Int32 = 0
            while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        }
        children = []
        unlink(directory + "/unwind-load-\(getpid())")
    }
}
