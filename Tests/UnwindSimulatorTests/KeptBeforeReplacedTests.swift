#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import UnwindCore
import UnwindModem
import UnwindTestSupport

/// Bytes a command replaces are kept: a file under a name a change writes that the device could
/// not read or parse — the service user cannot read it, it does not parse, it is a FIFO or 10 MB —
/// is moved aside as `<name>.corrupt-<time>` first (renamed, never read into memory), the
/// command says where it went and exits 0; when it cannot be moved, the command refuses (exit 1)
/// and the bytes stay under their name. Through the real command, with the device running (its
/// writer keeps them) and stopped (the command does).
@Suite("What a command replaces is kept aside first, and said", .serialized)
struct KeptBeforeReplacedTests {
    static let garbage = Array("not a state file\u{1}\n\u{FF}".utf8)

    /// The one file kept aside as `<name>.corrupt-…` in `directory`.
    static func keptCopy(of name: String, in directory: String) -> String? {
        let aside = ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).filter { $0.hasPrefix(name + ".corrupt-") }
        return aside.count == 1 ? directory + "/" + aside[0] : nil
    }

    static func bytes(_ path: String) -> [UInt8]? { FileManager.default.contents(atPath: path).map { [UInt8]($0) } }

    static func expectKept(_ r: UnwindRun.Result, _ name: String, in directory: String, bytes original: [UInt8]?,
                           fifo: Bool = false, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(r.status == 0, "\(r)", sourceLocation: sourceLocation)
        #expect(r.stdout.contains("the old \(name) (") && r.stdout.contains("was kept as \(name).corrupt-"), "\(r)",
                sourceLocation: sourceLocation)
        guard let copy = keptCopy(of: name, in: directory) else {
            Issue.record("no \(name).corrupt-* in \(directory)", sourceLocation: sourceLocation)
            return
        }
        if fifo {
            #expect(fileType(copy) == S_IFIFO, "the FIFO itself is moved aside", sourceLocation: sourceLocation)
        } else {
            #expect(bytes(copy) == original, "the old bytes are gone", sourceLocation: sourceLocation)
        }
    }

    // MARK: alerts clear, the device running

    enum Unusable: String, CaseIterable, Sendable { case unparsable, unreadable }

    /// The device loaded a slot it could not use ("needs attention"), or the slot's file was made
    /// unreadable for the service user behind its back: clearing the slot keeps the old bytes.
    @Test(arguments: Unusable.allCases)
    func alertsClearOnARunningDeviceKeepsTheSlotItCouldNotUse(_ form: Unusable) throws {
        let original: [UInt8] = form == .unparsable ? Self.garbage : Array("Mum\n+15550000003\nPlease call\n".utf8)
        let rig = try MaintenanceRig { dir in try Data(original).write(to: URL(fileURLWithPath: dir + "/alert03.txt")) }
        defer { rig.shutdown() }
        if form == .unreadable {
            // The state directory is the service user's; the file's mode keeps that user out.
            try require(lchownTree(rig.directory, 65534, 65534))
            try require(chmod(rig.directory + "/alert03.txt", 0) == 0)
        }
        let r = rig.unwind(["alerts", "clear", "3"])
        Self.expectKept(r, "alert03.txt", in: rig.directory, bytes: original)
        if form == .unreadable { #expect(r.stdout.contains("not readable by 65534, the device's user"), "\(r)") }
        #expect(rig.file("alert03.txt") == "", "the slot is cleared")
        // An empty slot is a good one: clearing it again keeps nothing more. (Not after the
        // directory was given to another user: this device runs as root, and its new file is root's.)
        guard form == .unparsable else { return }
        let again = rig.unwind(["alerts", "clear", "3"])
        #expect(again.status == 0 && !again.stdout.contains("was kept as"), "\(again)")
        let kept = try FileManager.default.contentsOfDirectory(atPath: rig.directory).filter { $0.contains(".corrupt-") }
        #expect(kept.count == 1, "\(kept)")
    }

    /// With the device stopped, an empty slot is a good slot too: clearing it twice keeps nothing.
    @Test func clearingAnEmptySlotKeepsNothing() throws {
        let state = temporaryDirectory("empty-slot")
        defer { try? FileManager.default.removeItem(atPath: state) }
        for _ in 0..<2 {
            let r = UnwindRun.run(["alerts", "clear", "2", "--state", state])
            #expect(r.status == 0 && !r.stdout.contains("was kept as"), "\(r)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: state).filter { $0.contains(".corrupt-") }.isEmpty)
    }

    // MARK: restore over the help state

    struct HelpCase: Sendable, CustomTestStringConvertible {
        var file: String
        var running: Bool
        var testDescription: String { "\(file), device \(running ? "running" : "stopped")" }
    }

    static var helpCases: [HelpCase] {
        [CheckInFile.name, AlertTestFile.name, EscalationFile.name].flatMap { f in [true, false].map { HelpCase(file: f, running: $0) } }
    }

    @Test(arguments: helpCases)
    func restoreKeepsAnUnparsableHelpFile(_ c: HelpCase) throws {
        let dir = temporaryDirectory("restore-help")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let source = try HelpBackupTests.stateWithHelp(dir)
        #expect(UnwindRun.run(["backup", dir + "/b.tar", "--state", source]).status == 0)
        let r: UnwindRun.Result
        let state: String
        if c.running {
            let rig = try MaintenanceRig()
            defer { rig.shutdown() }
            state = rig.directory
            // Damaged behind the running device's back (it loaded a good one, or none).
            try Data(Self.garbage).write(to: URL(fileURLWithPath: state + "/" + c.file))
            r = rig.unwind(["restore", dir + "/b.tar", "--yes"])
            Self.expectKept(r, c.file, in: state, bytes: Self.garbage)
            #expect(rig.file(c.file).map { $0.utf8.count > 0 && !$0.contains("not a state file") } == true)
        } else {
            state = dir + "/target"
            try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true)
            try Data(Self.garbage).write(to: URL(fileURLWithPath: state + "/" + c.file))
            r = UnwindRun.run(["restore", dir + "/b.tar", "--yes", "--state", state])
            Self.expectKept(r, c.file, in: state, bytes: Self.garbage)
            #expect(readText(state + "/" + c.file).map { !$0.contains("not a state file") } == true)
        }
    }

    // MARK: restore over a reply the inbox cannot read

    struct ReplyCase: Sendable, CustomTestStringConvertible {
        var form: String
        var running: Bool
        var testDescription: String { "a \(form) reply file, device \(running ? "running" : "stopped")" }
    }

    static var replyCases: [ReplyCase] { ["fifo", "huge", "unparsable"].flatMap { f in [true, false].map { ReplyCase(form: f, running: $0) } } }

    /// A reply only the backup has, whose name holds something the inbox could not read: moved
    /// aside (a FIFO never opened blocking, 10 MB never read into memory), then written.
    @Test(arguments: replyCases)
    func restoreKeepsWhatIsUnderAReplysName(_ c: ReplyCase) throws {
        let dir = temporaryDirectory("restore-reply")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let archive = try ReplyBackupTests().makeBackup(dir)
        let name = ReplyBackupTests.newInBackup + Inbox.replyExtension
        var original: [UInt8]?
        func plant(_ state: String) throws {
            try ReplyBackupTests.targetInbox(state)
            let path = state + "/" + Inbox.directoryName + "/" + name
            switch c.form {
            case "fifo": try require(mkfifo(path, 0o644) == 0)
            case "huge":
                original = [UInt8](repeating: UInt8(ascii: "r"), count: 10 << 20)
                try Data(original!).write(to: URL(fileURLWithPath: path))
            default:
                original = Self.garbage
                try Data(original!).write(to: URL(fileURLWithPath: path))
            }
        }
        // The backup's reply is in its place.
        func expectRestored(_ inbox: String) {
            #expect(fileType(inbox + "/" + name) == S_IFREG)
            #expect(readText(inbox + "/" + name)?.contains("Are you ok?") == true)
        }
        let inbox: String
        let r: UnwindRun.Result
        if c.running {
            let rig = try MaintenanceRig(withInbox: true, prepare: plant)
            defer { rig.shutdown() }
            inbox = rig.directory + "/" + Inbox.directoryName
            r = rig.unwind(["restore", archive, "--yes"])
            expectRestored(inbox)
            // A file the device could not parse at its start it kept aside then; what it could
            // not read at all (a FIFO, 10 MB) it kept aside now.
            if c.form == "unparsable" {
                #expect(r.status == 0 && Self.keptCopy(of: name, in: inbox).map(Self.bytes) == original, "\(r)")
            } else {
                Self.expectKept(r, name, in: inbox, bytes: original, fifo: c.form == "fifo")
            }
        } else {
            let state = dir + "/target"
            try plant(state)
            inbox = state + "/" + Inbox.directoryName
            r = UnwindRun.run(["restore", archive, "--yes", "--state", state])
            if c.form == "unparsable" {
                // The inbox sets it aside as it opens, and the answer says so.
                #expect(r.status == 0 && r.stdout.contains("kept as \(name).corrupt-"), "\(r)")
                #expect(Self.keptCopy(of: name, in: inbox).map(Self.bytes) == original)
            } else {
                Self.expectKept(r, name, in: inbox, bytes: original, fifo: c.form == "fifo")
            }
            expectRestored(inbox)
        }
    }

    // MARK: when the copy cannot be made

    /// An immutable file (chattr +i) cannot be renamed, even by root.
    static let canMakeImmutable: Bool = {
        let dir = temporaryDirectory("chattr-probe")
        defer {
            _ = runTool("/usr/bin/chattr", ["-i", dir + "/f"])
            try? FileManager.default.removeItem(atPath: dir)
        }
        _ = FileManager.default.createFile(atPath: dir + "/f", contents: Data("x".utf8))
        return runTool("/usr/bin/chattr", ["+i", dir + "/f"]) && rename(dir + "/f", dir + "/g") != 0
    }()

    static func runTool(_ path: String, _ arguments: [String]) -> Bool {
        guard FileManager.default.isExecutableFile(atPath: path) else { return false }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: path)
        p.arguments = arguments
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        guard (try? p.run()) != nil else { return false }
        p.waitUntilExit()
        return p.terminationStatus == 0
    }

    /// A slot the device could not use that cannot be moved aside: the command refuses (exit 1),
    /// says why, and the bytes stay under their name — running device and stopped.
    @Test(.enabled(if: canMakeImmutable, "the file system here has no immutable files"), arguments: [true, false])
    func whenTheOldFileCannotBeMovedTheCommandRefuses(_ running: Bool) throws {
        let rig = running ? try MaintenanceRig { try Data(Self.garbage).write(to: URL(fileURLWithPath: $0 + "/alert03.txt")) } : nil
        let state = rig?.directory ?? temporaryDirectory("refuse")
        defer {
            _ = Self.runTool("/usr/bin/chattr", ["-i", state + "/alert03.txt"])
            rig?.shutdown()
            try? FileManager.default.removeItem(atPath: state)
        }
        if rig == nil { try Data(Self.garbage).write(to: URL(fileURLWithPath: state + "/alert03.txt")) }
        try require(Self.runTool("/usr/bin/chattr", ["+i", state + "/alert03.txt"]))
        let r = UnwindRun.run(["alerts", "clear", "3", "--state", state])
        #expect(r.status == 1, "\(r)")
        #expect(r.stderr.contains("alert03.txt is not a valid alert03.txt and cannot be moved aside"), "\(r)")
        #expect(Self.bytes(state + "/alert03.txt") == Self.garbage, "the bytes stay under their name")
        #expect(Self.keptCopy(of: "alert03.txt", in: state) == nil)
    }
}
