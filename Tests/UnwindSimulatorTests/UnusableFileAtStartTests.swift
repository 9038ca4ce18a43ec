#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing

/// A FIFO or a file the device cannot open where it writes, in the output and state directories:
/// refused at once with a word, or set aside and made anew — never waited on, never a stop. The
/// real `unwind` executable, bounded in time (a hang fails the test, it does not hang the suite).
@Suite("A FIFO or an unopenable file where the device writes: refused or set aside, never waited on", .serialized)
struct UnusableFileAtStartTests {
    /// Runs `unwind` with `arguments`; nil when it was still running after `limit` (then killed).
    static func run(_ arguments: [String], asNobody: Bool = false, within limit: Duration = .seconds(10)) throws -> (status: Int32, stderr: String)? {
        let p = Process()
        if asNobody {
            p.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
            p.arguments = ["--reuid=65534", "--regid=65534", "--clear-groups", UnwindRun.executable] + arguments
        } else {
            p.executableURL = URL(fileURLWithPath: UnwindRun.executable)
            p.arguments = arguments
        }
        let err = Pipe()
        p.standardError = err
        p.standardOutput = FileHandle.nullDevice
        p.standardInput = FileHandle.nullDevice
        try p.run()
        guard waitUntil(limit, every: .milliseconds(20), { !p.isRunning }) else {
            kill(p.processIdentifier, SIGKILL)
            p.waitUntilExit()
            return nil
        }
        let text = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        return (p.terminationStatus, text)
    }

    /// A FIFO under the name of a file the headless simulator writes in `--out`: opening it for
    /// writing would wait for a reader that never comes (the run would hang with no word). It is
    /// refused at once, one line naming the file, and the FIFO left as it was.
    @Test(arguments: ["alerts.log", "motor.log", "summary.txt"])
    func aFIFOAmongTheHeadlessOutputsIsRefusedNotWaitedOn(_ name: String) throws {
        let dir = temporaryDirectory("fifo-out-\(name)")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try FileManager.default.createDirectory(atPath: dir + "/out", withIntermediateDirectories: true)
        try require(mkfifo(dir + "/out/" + name, 0o600) == 0)
        try Data("0 PANIC hold 1.6\n5 end\n".utf8).write(to: URL(fileURLWithPath: dir + "/s.txt"))
        let r = try Self.run(["sim", "--headless", dir + "/s.txt", "--out", dir + "/out", "--state", dir + "/state", "--no-frames"])
        let result = try #require(r, "unwind sim --headless hung on a FIFO at out/\(name)")
        #expect(result.status != 0)
        #expect(result.stderr.contains(name) && result.stderr.contains("not a regular file"), "\(result.stderr)")
        var info = stat()
        #expect(lstat(dir + "/out/" + name, &info) == 0 && info.st_mode & S_IFMT == S_IFIFO, "the FIFO was not left as it was")
    }

    /// A FIFO at the terminal simulator's `sim.log`: rather than hang before drawing anything,
    /// `unwind sim` says why and exits.
    @Test func aFIFOAtTheSimulatorsLogIsRefusedNotWaitedOn() throws {
        let dir = temporaryDirectory("fifo-simlog")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        try require(mkfifo(dir + "/sim.log", 0o600) == 0)
        let sim = try SimulatorOnTerminal(state: dir)
        let status = sim.exitStatus(within: .seconds(10))
        #expect(status != nil && status != 0, "unwind sim hung on a FIFO at sim.log")
        #expect(sim.text.contains("sim.log") && sim.text.contains("not a regular file"), "\(sim.text.suffix(400))")
    }

    /// `.daemon` of mode 000 in the service user's own state directory (the service user, or a
    /// damaged card): a device that refused to start on it ("cannot open .daemon: Permission
    /// denied") would, under `Restart=always`, be a device with no panic path. `.lock` of mode
    /// 000: every save would wait on the lock for as long as the device ran ("held by someone
    /// else"). Both are moved aside at start as `.corrupt-*` (kept, mode and all) and made anew.
    @Test(arguments: [".daemon", ".lock"])
    func aDotFileTheServiceUserCannotOpenIsSetAsideNotAStop(_ name: String) throws {
        let dir = temporaryDirectory("mode0-\(name)")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let state = dir + "/state"
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true)
        try Data("Mum\n+15550100001\nPlease call me.\n".utf8).write(to: URL(fileURLWithPath: state + "/alert01.txt"))
        try Data("0 PANIC hold 1.6\n20 end\n".utf8).write(to: URL(fileURLWithPath: dir + "/s.txt"))
        try require(FileManager.default.createFile(atPath: state + "/" + name, contents: Data("x\n".utf8)))
        try require(chmod(state + "/" + name, 0) == 0)
        for path in [dir, state, state + "/alert01.txt", state + "/" + name] { try require(chown(path, 65534, 65534) == 0) }
        let r = try #require(try Self.run(["sim", "--headless", dir + "/s.txt", "--out", dir + "/out", "--state", state, "--no-frames"],
                                          asNobody: true, within: .seconds(30)), "the headless device hung")
        #expect(r.status == 0, "\(r.stderr.suffix(400))")
        #expect((try? String(contentsOfFile: dir + "/out/alerts.log", encoding: .utf8))?.contains("+15550100001") == true, "PANIC did not go")
        let names = try FileManager.default.contentsOfDirectory(atPath: state)
        #expect(names.filter { $0.hasPrefix(name + ".corrupt-") }.count == 1, "\(names)")
        // What the device did was kept: the PANIC's episode is on the card.
        #expect((try? String(contentsOfFile: state + "/escalation.txt", encoding: .utf8))?.contains("+15550100001") == true)
        #expect(r.stderr.contains(name) && r.stderr.contains("moved aside"), "\(r.stderr.suffix(400))")
    }
}
