#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import UnwindCore

/// The state directory belongs to the service user, who can plant anything in it; the
/// maintainer's commands often run as root. Each link is planted as the service user would
/// (owned by it) and each writing command is run as root (the tests' own user): no command may
/// read, copy, create, truncate or chown anything a link points to.
@Suite("Links planted in the state directory, commands run as root")
struct HostileLinkTests {
    static let secret = "SECRET root-only bytes\n"

    /// A stopped device's state directory owned by the service user (nobody), with a root-only
    /// secret beside it.
    struct Planted {
        let root = temporaryDirectory("links")
        var state: String { root + "/state" }
        var secret: String { root + "/secret" }

        init() throws {
            try FileManager.default.createDirectory(atPath: root + "/state", withIntermediateDirectories: true)
            try Data(HostileLinkTests.secret.utf8).write(to: URL(fileURLWithPath: root + "/secret"))
            chmod(root + "/secret", 0o600)
            try Data("Breathe.\n".utf8).write(to: URL(fileURLWithPath: root + "/state/mantras.txt"))
            _ = lchown(root + "/state", 65534, 65534)
            _ = lchown(root + "/state/mantras.txt", 65534, 65534)
        }

        /// `ln -s TARGET state/NAME`, owned by the service user.
        func plant(_ name: String, to target: String) throws {
            unlink(state + "/" + name)
            try #require(symlink(target, state + "/" + name) == 0)
            _ = lchown(state + "/" + name, 65534, 65534)
        }

        func run(_ arguments: [String]) -> UnwindRun.Result {
            UnwindRun.run(arguments + ["--state", state])
        }

        /// The secret untouched: its bytes, owner and mode, and no copy anywhere in the state.
        func expectSecretUntouched(sourceLocation: SourceLocation = #_sourceLocation) {
            var info = stat()
            #expect(stat(secret, &info) == 0, sourceLocation: sourceLocation)
            #expect(info.st_uid == 0 && info.st_mode & 0o777 == 0o600, "the secret was chowned or chmodded", sourceLocation: sourceLocation)
            #expect(readText(secret) == HostileLinkTests.secret, sourceLocation: sourceLocation)
            for name in (try? FileManager.default.subpathsOfDirectory(atPath: state)) ?? [] where fileType(state + "/" + name) == S_IFREG {
                #expect(!(readText(state + "/" + name) ?? "").contains("SECRET"), "\(name) holds a copy of the secret", sourceLocation: sourceLocation)
            }
        }
    }

    static let writingCommands: [[String]] = [
        ["mantras", "add", "A new mantra."],
        ["alerts", "set", "1", "--name", "Mum", "--number", "+15551234567", "--message", "Please call me"],
        ["reminders", "set", "daily 21:30"],
        ["stats", "--reset", "--yes"],
    ]

    static let stateFiles = [MantrasFile.name, AlertSlotFile.name(slot: 1), RemindersFile.name, TotalTimeFile.name]

    /// A state file replaced by a link to the secret: the command refuses to read through it
    /// (naming the file) or replaces the link itself; it never copies the secret.
    @Test(arguments: zip(writingCommands, stateFiles))
    func aLinkedStateFileIsNeverReadThrough(_ command: [String], _ file: String) throws {
        let p = try Planted()
        defer { try? FileManager.default.removeItem(atPath: p.root) }
        try p.plant(file, to: p.secret)
        let r = p.run(command)
        if r.status == 0 {
            // Written whole, in place of the link, owned by the service user.
            #expect(fileType(p.state + "/" + file) == S_IFREG, "\(r)")
        } else {
            expectFailure(r, 1, file)
            #expect(r.stderr.contains("symbolic link"), "\(r)")
        }
        p.expectSecretUntouched()
        // Whatever the command wrote belongs to the service user, never to root (the lock too:
        // the device must be able to open it after a root command made it).
        for name in try FileManager.default.contentsOfDirectory(atPath: p.state) where fileType(p.state + "/" + name) == S_IFREG {
            var info = stat()
            _ = lstat(p.state + "/" + name, &info)
            #expect(info.st_uid == 65534, "\(name) is owned by \(info.st_uid)")
        }
    }

    /// `.lock` and `.daemon` as links to the secret, or to a file that does not exist yet: no
    /// command creates, truncates or locks through them.
    @Test(arguments: [".lock", ".daemon"])
    func dotFilesAreNeverFollowed(_ name: String) throws {
        let p = try Planted()
        defer { try? FileManager.default.removeItem(atPath: p.root) }
        for target in [p.secret, p.root + "/created-by-unwind"] {
            try p.plant(name, to: target)
            for command in Self.writingCommands + (name == ".daemon" ? [["status"]] : []) {
                let r = p.run(command)
                #expect(r.status != 0, "\(command) went through a planted \(name): \(r)")
                #expect(r.stderr.contains("symbolic link"), "\(r)")
            }
            #expect(access(p.root + "/created-by-unwind", F_OK) != 0, "a file was created through \(name)")
            p.expectSecretUntouched()
        }
    }

    /// `unwind backup` archives what the files hold, never what a link points to.
    @Test func backupRefusesALinkInsteadOfArchivingItsTarget() throws {
        let p = try Planted()
        defer { try? FileManager.default.removeItem(atPath: p.root) }
        let archive = p.root + "/backup.tar"
        try p.plant(MantrasFile.name, to: p.secret)
        expectFailure(p.run(["backup", archive]), 1, MantrasFile.name)
        #expect(!((FileManager.default.contents(atPath: archive).map { String(decoding: $0, as: UTF8.self) }) ?? "").contains("SECRET"))

        // A linked outbox directory is refused the same way.
        unlink(p.state + "/" + MantrasFile.name)
        try FileManager.default.createDirectory(atPath: p.root + "/elsewhere", withIntermediateDirectories: true)
        try Data(Self.secret.utf8).write(to: URL(fileURLWithPath: p.root + "/elsewhere/0001-a.msg"))
        try p.plant("outbox", to: p.root + "/elsewhere")
        let r = p.run(["backup", archive, "--force"])
        expectFailure(r, 1, "outbox")
        #expect(!((FileManager.default.contents(atPath: archive).map { String(decoding: $0, as: UTF8.self) }) ?? "").contains("SECRET"))
    }

    /// A restore run as root over planted links replaces the links themselves, and the restored
    /// files belong to the service user.
    @Test func restoreReplacesLinksAndGivesTheFilesToTheServiceUser() throws {
        let p = try Planted()
        defer { try? FileManager.default.removeItem(atPath: p.root) }
        let archive = p.root + "/backup.tar"
        #expect(p.run(["backup", archive]).status == 0)
        for file in StateArchive.stateFiles { try p.plant(file, to: p.secret) }
        let r = p.run(["restore", archive, "--yes"])
        #expect(r.status == 0, "\(r)")
        for file in StateArchive.stateFiles {
            var info = stat()
            #expect(lstat(p.state + "/" + file, &info) == 0 && info.st_mode & S_IFMT == S_IFREG, "\(file)")
            #expect(info.st_uid == 65534, "\(file) owned by \(info.st_uid)")
        }
        p.expectSecretUntouched()
    }

    /// A backup keeps a broken file's bytes but says at once that it would not restore.
    @Test func backupWarnsAboutAFileThatWouldNotRestore() throws {
        let p = try Planted()
        defer { try? FileManager.default.removeItem(atPath: p.root) }
        try Data((String(repeating: "N", count: 41) + "\n+15551234567\nHelp\n").utf8)
            .write(to: URL(fileURLWithPath: p.state + "/" + AlertSlotFile.name(slot: 1)))
        let archive = p.root + "/backup.tar"
        let r = p.run(["backup", archive])
        #expect(r.status == 0, "\(r)")
        #expect(r.stderr.contains("warning: this backup will not restore") && r.stderr.contains(AlertSlotFile.name(slot: 1)), "\(r)")
        expectFailure(p.run(["restore", archive, "--yes"]), 2, AlertSlotFile.name(slot: 1))
    }

    /// A restore journal planted by the service user (or damaged) that cannot be finished is
    /// set aside: the device still starts and PANIC works; every command still works.
    @Test func anUnfinishableJournalNeverStopsTheDevice() throws {
        let p = try Planted()
        defer { try? FileManager.default.removeItem(atPath: p.root) }
        try FileManager.default.createDirectory(atPath: p.state + "/.txn-99999-0/mantras.txt/sub", withIntermediateDirectories: true)
        #expect(FileManager.default.createFile(atPath: p.state + "/.txn-99999-0/.commit", contents: nil))
        try Data("Mum\n+15551234567\nHelp\n".utf8).write(to: URL(fileURLWithPath: p.state + "/alert01.txt"))
        _ = lchownTree(p.state, 65534, 65534)
        let script = p.root + "/script.txt"
        try Data("0.5 PANIC hold 1.7\n3 end\n".utf8).write(to: URL(fileURLWithPath: script))
        try FileManager.default.createDirectory(atPath: p.root + "/out", withIntermediateDirectories: true)
        _ = lchown(p.root + "/out", 65534, 65534)
        let r = UnwindRun.run(["sim", "--headless", script, "--state", p.state, "--out", p.root + "/out", "--no-frames"], user: .nobody)
        #expect(r.status == 0, "\(r)")
        #expect(r.stderr.contains("could not be finished"), "\(r)")
        #expect((readText(p.root + "/out/alerts.log") ?? "").contains("slot 1"))
        #expect(readText(p.state + "/mantras.txt") == "Breathe.\n")
        #expect(p.run(["mantras", "add", "Still works."]).status == 0)
    }

    /// A second name of a root-only file (a hard link, possible where protected_hardlinks is
    /// off) is never read into the state or an archive.
    @Test func aHardLinkedStateFileIsNeverRead() throws {
        let p = try Planted()
        defer { try? FileManager.default.removeItem(atPath: p.root) }
        unlink(p.state + "/mantras.txt")
        try #require(link(p.secret, p.state + "/mantras.txt") == 0)
        let list = p.run(["mantras", "list"])
        #expect(list.status != 0 && list.stderr.contains("hard link"), "\(list)")
        #expect(p.run(["backup", p.root + "/b.tar"]).status != 0)
        #expect(p.run(["mantras", "add", "Hello."]).status != 0)
        unlink(p.state + "/mantras.txt")  // the second name itself; no copy may remain elsewhere
        p.expectSecretUntouched()
    }

    /// `.daemon` or `.lock` planted as links: the device itself still starts (it moves them
    /// aside; a command run as root only refuses them).
    @Test(arguments: [".daemon", ".lock"])
    func theDeviceStartsOverAPlantedDotFile(_ name: String) throws {
        let p = try Planted()
        defer { try? FileManager.default.removeItem(atPath: p.root) }
        try p.plant(name, to: p.root + "/nowhere")
        let rig = try MaintenanceRig(directory: p.state)
        #expect(rig.status() != nil, "the device did not come up over a planted \(name)")
        #expect(access(p.root + "/nowhere", F_OK) != 0)
        let entries = try FileManager.default.contentsOfDirectory(atPath: p.state)
        #expect(entries.contains { $0.hasPrefix(name + ".corrupt-") }, "\(entries)")
        rig.shutdown()
    }
}

