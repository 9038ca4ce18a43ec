#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import UnwindCore
import UnwindLinuxHardware

/// The maintainer's commands that write the state files, with the device stopped: a change of
/// several files is one change whatever step a SIGKILL lands on, and nothing that was under a
/// name (a huge file, a FIFO, a link, a file the device cannot read) is destroyed by writing it.
@Suite("Maintainer writes: atomic and keeping what was there", .serialized)
struct MaintenanceWriteSafetyTests {
    static let strace = "/usr/bin/strace"
    static let oldTotals = "5\n10\n0\n60\n300\n4\n"
    static let oldHistory = "1767225000 60\n1767225100 300\n"
    static let newTotals = TotalTimeFile.format(.zero)
    static let newHistory = SessionHistoryFile.format([])

    static func writeOld(_ state: String) throws {
        try Data(oldTotals.utf8).write(to: URL(fileURLWithPath: state + "/" + TotalTimeFile.name))
        try Data(oldHistory.utf8).write(to: URL(fileURLWithPath: state + "/" + SessionHistoryFile.name))
    }

    /// The pair as the next reader sees it: a store opened on the directory first finishes a
    /// committed change a killed writer left, or throws an uncommitted one away.
    static func pair(_ state: String) throws -> (String?, String?) {
        let store = try DirectoryStore(directory: state)
        func text(_ name: String) throws -> String? { try store.read(name).map { String(decoding: $0, as: UTF8.self) } }
        return (try text(TotalTimeFile.name), try text(SessionHistoryFile.name))
    }

    enum Outcome { case old, new, mixed(String?, String?) }

    static func outcome(_ state: String) throws -> Outcome {
        let (t, h) = try pair(state)
        if t == oldTotals && h == oldHistory { return .old }
        if t == newTotals && h == newHistory { return .new }
        return .mixed(t, h)
    }

    /// `unwind stats --reset --yes` killed by SIGKILL on entry to each of its file-system steps
    /// in turn (strace's fault injection: every fsync, rename, unlink and mkdir it makes), then at
    /// random moments: the totals and the history are always both old or both new.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: strace), "strace is installed by deploy/dev-deps.sh"))
    func statsResetKilledAnywhereIsAllOrNothing() throws {
        let state = temporaryDirectory("reset-kill")
        defer { try? FileManager.default.removeItem(atPath: state) }
        var killed = 0, rolledForward = 0, mixes: [String] = []
        for call in ["fsync", "mkdirat", "renameat", "renameat2", "rename", "unlinkat", "unlink", "rmdir"] {
            var n = 1
            while n < 200 {
                try Self.writeOld(state)
                let p = Process()
                p.executableURL = URL(fileURLWithPath: Self.strace)
                p.arguments = ["-f", "-o", "/dev/null", "-e", "trace=\(call)", "-e", "inject=\(call):signal=KILL:when=\(n)",
                               UnwindRun.executable, "stats", "--reset", "--yes", "--state", state]
                p.standardOutput = FileHandle.nullDevice
                p.standardError = FileHandle.nullDevice
                try p.run()
                p.waitUntilExit()
                let wasKilled = p.terminationReason == .uncaughtSignal || p.terminationStatus == 128 + SIGKILL
                switch try Self.outcome(state) {
                case .old: break
                case .new: if wasKilled { rolledForward += 1 }
                case .mixed(let t, let h): mixes.append("\(call) #\(n): totals \(String(reflecting: t)), history \(String(reflecting: h))")
                }
                if !wasKilled { break }  // fewer than n such calls: this one is done
                killed += 1
                n += 1
            }
        }
        // Random moments, from before the process is loaded to after it has finished.
        var random = SystemRandomNumberGenerator()
        for _ in 0..<40 {
            try Self.writeOld(state)
            let p = try UnwindRun.start(["stats", "--reset", "--yes", "--state", state])
            usleep(UInt32.random(in: 0...60_000, using: &random))
            kill(p.processIdentifier, SIGKILL)
            p.waitUntilExit()
            if case .mixed(let t, let h) = try Self.outcome(state) { mixes.append("at random: \(String(reflecting: t)), \(String(reflecting: h))") }
        }
        #expect(mixes.isEmpty, "half a reset: \(mixes)")
        #expect(killed >= 8, "the reset's own steps were reached: \(killed)")
        let left = try FileManager.default.contentsOfDirectory(atPath: state).filter { $0.hasPrefix(".txn") || $0.contains(".tmp-") }
        #expect(left.isEmpty, "leftovers: \(left)")
        print("stats --reset: killed at \(killed) system calls (\(rolledForward) rolled forward, \(killed - rolledForward) rolled back) and at 40 random moments; never half a reset")
    }

    // MARK: - Hostile files under the names a command writes

    enum Hostile: String, CaseIterable, Sendable {
        case huge, fifo, symlink, unreadable
    }

    struct Case: Sendable, CustomTestStringConvertible {
        var command: [String]
        var file: String
        var hostile: Hostile
        var testDescription: String { "\(command.joined(separator: " ")) over \(file) as \(hostile)" }
    }

    static var hostileCases: [Case] {
        let commands: [([String], [String])] = [
            (["alerts", "clear", "2"], [AlertSlotFile.name(slot: 2)]),
            (["stats", "--reset", "--yes"], [TotalTimeFile.name, SessionHistoryFile.name]),
            (["reminders", "set", "daily", "21:30"], [RemindersFile.name]),
        ]
        return commands.flatMap { c in c.1.flatMap { f in Hostile.allCases.map { Case(command: c.0, file: f, hostile: $0) } } }
    }

    /// With the device stopped, each command over each hostile form of the file it replaces:
    /// the command is done (exit 0) and says where the old thing went, the old thing is beside
    /// the new file as `<name>.corrupt-<time>` with every byte, and nothing is read or written
    /// through a link. The state directory is the service user's; the command runs as root, as
    /// `sudo unwind …` does.
    @Test(arguments: hostileCases)
    func aCommandKeepsWhatWasUnderTheName(_ c: Case) throws {
        let root = temporaryDirectory("keep")
        defer { try? FileManager.default.removeItem(atPath: root) }
        let state = root + "/state", secret = root + "/secret"
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true)
        try Data("SECRET\n".utf8).write(to: URL(fileURLWithPath: secret))
        try Self.writeOld(state)
        try Data("Mum\n+15550000002\nPlease call\n".utf8).write(to: URL(fileURLWithPath: state + "/" + AlertSlotFile.name(slot: 2)))
        try Data("never\n".utf8).write(to: URL(fileURLWithPath: state + "/" + RemindersFile.name))
        let path = state + "/" + c.file
        let original: [UInt8]?
        switch c.hostile {
        case .huge:
            original = [UInt8](repeating: UInt8(ascii: "7"), count: 10 << 20)
            try Data(original!).write(to: URL(fileURLWithPath: path))
        case .fifo:
            original = nil
            unlink(path)
            try require(mkfifo(path, 0o644) == 0)
        case .symlink:
            original = nil
            unlink(path)
            try require(symlink(secret, path) == 0)
        case .unreadable:
            original = FileManager.default.contents(atPath: path).map { [UInt8]($0) }
        }
        try require(lchownTree(state, 65534, 65534))
        if c.hostile == .unreadable { try require(chmod(path, 0) == 0) }

        let r = UnwindRun.run(c.command + ["--state", state])
        #expect(r.status == 0, "\(r)")
        #expect(r.stdout.contains("the old \(c.file) (") && r.stdout.contains("was kept as \(c.file).corrupt-"), "\(r)")
        let entries = try FileManager.default.contentsOfDirectory(atPath: state)
        let aside = entries.filter { $0.hasPrefix(c.file + ".corrupt-") }.map { state + "/" + $0 }
        #expect(aside.count == 1, "\(entries)")
        if let a = aside.first {
            switch c.hostile {
            case .huge, .unreadable: #expect(FileManager.default.contents(atPath: a).map { [UInt8]($0) } == original, "the old bytes are gone")
            case .fifo: #expect(fileType(a) == S_IFIFO)
            case .symlink: #expect(fileType(a) == S_IFLNK)
            }
        }
        #expect(fileType(path) == S_IFREG, "no new \(c.file)")
        #expect(readText(secret) == "SECRET\n")
        // The new file is the service user's, as the rest of the directory.
        var info = stat()
        #expect(lstat(path, &info) == 0 && info.st_uid == 65534, "the new \(c.file) is not the service user's")
    }
}
