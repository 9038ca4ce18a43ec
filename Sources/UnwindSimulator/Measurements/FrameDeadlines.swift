#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Dispatch
import Glibc
import Logging
import Synchronization
import UnwindAssembly
import UnwindMaintenance
import UnwindCore
import UnwindRuntime
import UnwindSeams
import UnwindLinuxHardware
import UnwindModem
import UnwindSimulatedHardware

/// What PANIC presses and hostile control-socket clients cost the loop's frame deadlines: the
/// device assembled as the daemon is (`DeviceAssembly`: the real loop on the real clock and
/// poll waiter, on its own thread; the control socket; the state files and the outbox on this
/// machine's disk, fsynced, written in the background as on the board; a `GSMModem` over a
/// pseudo-terminal to a ready simulated modem), pressed and attacked from this thread. The
/// loop's own counters say how many frame deadlines passed undrawn.
public struct FrameDeadlineCost: CustomStringConvertible {
    public var what: String
    /// Presses that armed PANIC, or requests sent.
    public var count: Int
    public var framesDrawn: Int
    public var framesMissed: Int
    public var seconds: Double
    /// How long the loop's thread was ready to run but waited for a CPU (its schedstat): the
    /// time this machine's other work took from it.
    public var starved: Duration = .zero

    public init(what: String, count: Int, framesDrawn: Int, framesMissed: Int, seconds: Double, starved: Duration = .zero) {
        self.what = what
        self.count = count
        self.framesDrawn = framesDrawn
        self.framesMissed = framesMissed
        self.seconds = seconds
        self.starved = starved
    }

    /// The frames a run may miss and still have cost the loop nothing of its own: each frame's
    /// time the loop's thread waited for a CPU is the machine's (other builds, other tests) and
    /// may cost a frame; beyond that at most 3, or 1 in 50 (a debugging build on a busy machine).
    public static func missedAllowed(drawn: Int, missed: Int, starved: Duration) -> Int {
        max(3, (drawn + missed) / 50) + Int(starved / (Duration.seconds(1) / DeviceLoop.framesPerSecond))
    }

    public var missedAllowed: Int { Self.missedAllowed(drawn: framesDrawn, missed: framesMissed, starved: starved) }

    public var missedPerThousand: Double { count == 0 ? 0 : Double(framesMissed) * 1000 / Double(count) }

    public var description: String {
        "\(what): \(count) in \(seconds.fixed(1)) s, \(framesDrawn) frames drawn, \(framesMissed) missed"
            + (count > 0 ? " (\(missedPerThousand.fixed(1)) per 1,000)"
                : " (\((Double(framesMissed) * 60 / max(seconds, 1)).fixed(1)) a minute)")
    }
}

public final class FrameDeadlineRig: @unchecked Sendable {
    let directory: String
    public let modemSim: ModemSimulator
    public let buttons: SimulatedButtons
    let device: DeviceAssembly
    private let stopped = DispatchSemaphore(value: 0)
    private let stop = ManagedFlag()
    /// The loop's thread (/proc/self/task/ID), once it runs.
    private let loopThread = Atomic<Int32>(0)
    /// Whether the loop's thread runs at real-time priority (`start(ahead:)`).
    public let ranAhead = Atomic<Bool>(false)
    private let logger: Logger
    /// PANIC is held this long to arm (the device's 1.5 s would make 1,000 presses take 25 min).
    public static let panicHold: Duration = .milliseconds(60)

    /// `outboxAtOnce`: the outbox written on the loop's thread, for comparison.
    /// `prepare`: given the state directory, before the device is assembled (an outbox to load).
    public init(outboxAtOnce: Bool = false, prepare: (String) throws -> Void = { _ in }) throws {
        directory = FileManager.default.temporaryDirectory.path + "/unwind-frame-deadlines-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        for k in 1...AlertSlotFile.slotCount {
            let slot = try AlertSlot(name: "Contact \(k)", number: "+1555010000\(k)", message: "Panic alert \(k): please call me now.")
            _ = FileManager.default.createFile(atPath: directory + "/" + AlertSlotFile.name(slot: k), contents: Data(AlertSlotFile.format(slot).utf8))
        }
        try prepare(directory)
        let clock = LinuxClock()
        var logger = Logger(label: "unwind.bench.frames")
        logger.logLevel = .critical
        self.logger = logger
        modemSim = try ModemSimulator()
        modemSim.start()
        buttons = try SimulatedButtons(wakingPollersOn: clock)
        let board = Board(clock: clock, waiter: try PollWaiter(), motor: SimulatedMotor(clock: clock), buttons: buttons,
                          presenter: SimulatedDisplay())
        var settings = DeviceSettings()
        settings.screen = ScreenCareSettings(sleepAfter: nil, nightStart: nil, nightEnd: nil, pixelShiftPeriod: nil)
        settings.panic.hold = Self.panicHold
        settings.panic.escalateAfter = .zero
        let recipe = DeviceRecipe(stateDirectory: directory, settings: settings,
                                  socket: ControlSocket.simulator(stateDirectory: directory), writeInBackground: true)
        let directory = self.directory, path = modemSim.path
        device = try DeviceAssembly(board: board, recipe: recipe, alerts: { now in
            try ModemAlertLink.open(stateDirectory: directory, serial: SerialConfiguration(path: path),
                                    modem: ModemConfiguration(), logger: logger, now: now,
                                    writer: outboxAtOnce ? .atOnce : .inBackground())
        }, logger: logger)
    }

    /// The loop on its own thread, as in the daemon; `ahead`: the thread asks for the daemon's
    /// real-time priority (`LoopPriority`), and `ranAhead` says whether it got it.
    public func start(ahead: Bool = false) {
        startThread(name: "unwind.loop") { [self] in
            if ahead { ranAhead.store(LoopPriority.request(logger: logger), ordering: .releasing) }
            loopThread.store(currentThreadID(), ordering: .releasing)
            device.loop.run(until: { stop.isSet })
            stopped.signal()
        }
    }

    /// How long the loop's thread has waited for a CPU so far; zero before it runs.
    public var loopWaitedForACPU: Duration {
        let tid = loopThread.load(ordering: .acquiring)
        return tid > 0 ? timeWaitingForACPU(thread: tid) : .zero
    }

    /// Stops the loop and returns its counters (read once its thread is done with them), and
    /// how long the loop waited for a CPU in all.
    public func finishMeasured() -> (LoopStatistics, starved: Duration) {
        let starved = loopWaitedForACPU
        return (finish(), starved)
    }

    /// Stops the loop and returns its counters (read once its thread is done with them).
    public func finish() -> LoopStatistics {
        stop.set()
        stopped.wait()
        let s = device.loop.statistics
        device.finish()
        modemSim.stop()
        try? FileManager.default.removeItem(atPath: directory)
        return s
    }

    public static func seconds(since t0: Instant) -> Double { Double((LinuxClock().now().instant - t0).nanoseconds) / 1e9 }

    /// `count` PANIC presses, each once the previous one's five alerts all reached the modem.
    public static func panicPresses(_ count: Int, outboxAtOnce: Bool = false) throws -> FrameDeadlineCost {
        let rig = try FrameDeadlineRig(outboxAtOnce: outboxAtOnce)
        rig.start()
        let t0 = LinuxClock().now().instant
        // The modem set up and the first frames drawn.
        guard wait(.seconds(20), until: { rig.modemSim.withScriptedModem { $0.commands.contains { $0.hasPrefix("AT+COPS?") } } }) else {
            _ = rig.finish()
            throw DeviceError(device: "frame deadlines", operation: "wait for the modem", errno: ETIMEDOUT)
        }
        var armed = 0
        for k in 1...count {
            rig.buttons.tap(.panic, holdFor: panicHold + .milliseconds(20))
            guard wait(.seconds(20), until: { rig.modemSim.delivered.count >= 5 * k }) else { break }
            armed = k
            // Its confirmations reach the device before PANIC is pressed again (a PANIC while
            // alerts are on their way sends nothing more).
            usleep(30_000)
        }
        let s = rig.finish()
        return FrameDeadlineCost(what: "PANIC presses (5 alerts each\(outboxAtOnce ? ", outbox written on the loop's thread" : ""))",
                                 count: armed, framesDrawn: s.framesRendered,
                                 framesMissed: s.framesMissed, seconds: seconds(since: t0))
    }

    /// The device running for `seconds` with nothing pressed and no client: what this machine
    /// costs the loop anyway (other processes, the scheduler).
    public static func quiet(seconds: Int) throws -> FrameDeadlineCost {
        let rig = try FrameDeadlineRig()
        rig.start()
        let t0 = LinuxClock().now().instant
        usleep(UInt32(seconds) * 1_000_000)
        let s = rig.finish()
        return FrameDeadlineCost(what: "nothing pressed, no client", count: 0, framesDrawn: s.framesRendered,
                                 framesMissed: s.framesMissed, seconds: Self.seconds(since: t0))
    }

    /// A running device whose control socket answers, and the socket's path.
    private static func answeringRig() throws -> (FrameDeadlineRig, String) {
        let rig = try FrameDeadlineRig()
        rig.start()
        let path = ControlSocket.simulator(stateDirectory: rig.directory)
        guard wait(.seconds(20), until: { ControlClient.answers(path) }) else {
            _ = rig.finish()
            throw DeviceError(device: "frame deadlines", operation: "wait for the control socket", errno: ETIMEDOUT)
        }
        return (rig, path)
    }

    /// The hostile requests, in turn, each on a connection of its own: a line of 1 MB nested
    /// 1 MB deep, one nested 600 deep, a 1 MB request that decodes (a mantra far too long), 1 MB of
    /// garbage, and one dripped a few bytes at a time.
    public static func hostileRequests(_ count: Int) throws -> FrameDeadlineCost {
        let (rig, path) = try answeringRig()
        let t0 = LinuxClock().now().instant
        let megabyte = ControlLimits.maximumRequest - 1
        let forms: [[UInt8]] = [
            Array(repeating: UInt8(ascii: "["), count: megabyte),
            Array(repeating: UInt8(ascii: "["), count: 600) + Array(repeating: UInt8(ascii: "]"), count: 600),
            Array("{\"version\":1,\"request\":{\"addMantra\":{\"text\":\"".utf8) + Array(repeating: UInt8(ascii: "a"), count: megabyte - 64)
                + Array("\"}}}".utf8),
            (0..<megabyte).map { UInt8(truncatingIfNeeded: $0 &* 131 &+ 7) | 0x80 },
        ]
        let drip = Array("{\"version\":1,\"request\":{\"status\":{}}}".utf8)
        var sent = 0
        for k in 0..<count {
            if k % 5 == 4 {
                if try sendRaw(drip + [0x0A], to: path, chunk: 3) { sent += 1 }
            } else if try sendRaw(forms[k % 5] + [0x0A], to: path, chunk: nil) {
                sent += 1
            }
        }
        let s = rig.finish()
        return FrameDeadlineCost(what: "hostile requests", count: sent, framesDrawn: s.framesRendered,
                                 framesMissed: s.framesMissed, seconds: seconds(since: t0))
    }

    /// `count` status requests from 16 connections at once, each sent as soon as the previous
    /// answer is read: the most a flood of well-formed requests asks of the loop (a status is
    /// built from the device's state on the loop's thread).
    public static func statusFlood(_ count: Int) throws -> FrameDeadlineCost {
        let (rig, path) = try answeringRig()
        let t0 = LinuxClock().now().instant
        let answered = Atomic<Int>(0)
        let group = DispatchGroup()
        for _ in 0..<ControlLimits.maximumClients {
            DispatchQueue.global().async(group: group) {
                guard let client = try? ControlClient(path: path) else { return }
                while answered.add(1, ordering: .relaxed).newValue <= count {
                    guard (try? client.send(.status)) != nil else { return }
                }
            }
        }
        group.wait()
        let s = rig.finish()
        return FrameDeadlineCost(what: "status requests from 16 connections", count: min(count, answered.load(ordering: .relaxed)),
                                 framesDrawn: s.framesRendered, framesMissed: s.framesMissed, seconds: seconds(since: t0))
    }

    /// Connects, writes `bytes` (in `chunk`-byte pieces with a pause between, or at once), and
    /// waits for the device's one answer line. False when the device closed without answering.
    static func sendRaw(_ bytes: [UInt8], to path: String, chunk: Int?) throws -> Bool {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        defer { close(fd) }
        var a = sockaddr_un()
        a.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &a.sun_path) { $0.copyBytes(from: Array(path.utf8) + [0]) }
        let r = withUnsafePointer(to: &a) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard r == 0 else { throw DeviceError(device: "frame deadlines", operation: "connect", errno: errno) }
        var timeout = timeval(tv_sec: 20, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var offset = 0
        while offset < bytes.count {
            let n = min(chunk ?? bytes.count, bytes.count - offset)
            let w = bytes[offset..<(offset + n)].withUnsafeBytes { send(fd, $0.baseAddress, n, Int32(MSG_NOSIGNAL)) }
            if w <= 0 { break }
            offset += w
            if chunk != nil { usleep(2000) }
        }
        var answer = [UInt8](repeating: 0, count: 4096)
        return recv(fd, &answer, answer.count, 0) > 0
    }

    public static func wait(_ limit: Duration, until done: () -> Bool) -> Bool {
        let end = LinuxClock().now().instant + limit
        while !done() {
            if LinuxClock().now().instant > end { return false }
            usleep(2000)
        }
        return true
    }
}

/// A flag the bench's thread sets and the loop's thread reads.
final class ManagedFlag: @unchecked Sendable {
    private let value = Atomic<Bool>(false)
    func set() { value.store(true, ordering: .relaxed) }
    var isSet: Bool { value.load(ordering: .relaxed) }
}

/// How long a thread of this process has been ready to run but waiting for a CPU (the second
/// figure of /proc/self/task/TID/schedstat): the time a busy machine took from it.
public func timeWaitingForACPU(thread: pid_t) -> Duration {
    let text = (try? String(contentsOfFile: "/proc/self/task/\(thread)/schedstat", encoding: .utf8)) ?? ""
    let fields = text.split(separator: " ")
    return fields.count >= 2 ? .nanoseconds(Int64(fields[1]) ?? 0) : .zero
}
