#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import UnwindCore
import UnwindLinuxHardware
import UnwindTestSupport

/// `unwind setup import` killed with SIGKILL at many points — on entry to each of its file-system
/// and socket system calls in turn (strace's fault injection), then at random moments: the
/// contacts, the screen's copy of the result, the configuration, Wi-Fi and the SSH key are all
/// as they were or all as the setup file says, never some of each; and the next import succeeds.
/// With the device stopped (the files, one transaction) and running (the device takes the
/// contacts in one request).
@Suite("Setup import: all of it or none of it, wherever it is killed", .serialized)
struct SetupImportKillTests {
    static let strace = "/usr/bin/strace"
    static var haveStrace: Bool { FileManager.default.isExecutableFile(atPath: strace) }

    static let contactsOnly = """
        contact 1 name: Sam
        contact 1 number: +44 7700 900123
        contact 1 message: Alex pressed PANIC. Please call.
        contact 2 name: Jo
        contact 2 number: (604) 555-0100
        contact 2 message: Alex needs help now. Please call.
        contact 3 name: Kim
        contact 3 number: +1 604 555 0101
        contact 3 message: Please call Alex.

        """

    static let everything = "device name: Bedside test\n" + contactsOnly + """
        counselling name: Crisis line
        counselling number: +1 800 555 0199
        wifi name: Home
        wifi password: correct horse
        ssh key: ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBnWq0Uj2yGx8kV3R1sS2w0bXy9kV3R1sS2w0bXy9kV3 maintainer@laptop

        """

    /// What the device has before the import: other contacts in slots 1 and 4, its own name, a Wi-Fi network.
    static func writeOld(state: String, system: String?) throws {
        try Data("Old Sam\n+15550000001\nOld message\n".utf8).write(to: URL(fileURLWithPath: state + "/alert01.txt"))
        try Data("Lee\n+15550000004\nPlease come.\n".utf8).write(to: URL(fileURLWithPath: state + "/alert04.txt"))
        if let system {
            try Data("network={\n\tssid=\"Old\"\n}\n".utf8).write(to: URL(fileURLWithPath: system + "/wpa_supplicant.conf"))
        }
    }

    /// The state directory is the service user's, as on the device; the import runs as root.
    static func card(_ text: String) throws -> SetupImportTests.Card {
        let card = SetupImportTests.Card(setup: Array(text.utf8))
        try writeOld(state: card.state, system: card.system)
        try require(lchownTree(card.state, 65534, 65534))
        return card
    }

    /// Everything an import may change, as the next reader sees it: a store opened on the state
    /// directory first finishes a committed change a killed writer left, or throws an
    /// uncommitted one away.
    /// `asTheNextReader: false`: the files as they are, for a directory whose device runs in
    /// this process (a store opened here would take the device's own transaction for a dead
    /// writer's: it has this process's pid).
    static func snapshot(state: String, config: String, system: String?, asTheNextReader: Bool = true) throws -> [String: String] {
        if asTheNextReader { _ = try DirectoryStore(directory: state) }
        var s: [String: String] = [:]
        for name in AlertSlotFile.names + [SetupResultFile.name] { s[name] = readText(state + "/" + name) ?? "-" }
        s["config"] = readText(config) ?? "-"
        if let system {
            for name in ["wpa_supplicant.conf", "authorized_keys"] { s[name] = readText(system + "/" + name) ?? "-" }
        }
        return s
    }

    static func snapshot(_ card: SetupImportTests.Card) throws -> [String: String] {
        try snapshot(state: card.state, config: card.config, system: card.system)
    }

    /// What a killed writer may never leave once the next reader has looked: staging
    /// directories, staged files beside the configuration or in the system directory.
    static func leftovers(_ directories: [String]) -> [String] {
        directories.flatMap { d in
            ((try? FileManager.default.contentsOfDirectory(atPath: d)) ?? [])
                .filter { $0.hasPrefix(".txn-") || $0.contains(".import-") || $0.contains(".tmp-") }.map { d + "/" + $0 }
        }
    }

    /// `arguments` to the real executable, killed with SIGKILL on entry to its `n`-th `call`;
    /// true when it was killed (false: it makes fewer such calls, and ran to its end).
    static func runKilled(_ arguments: [String], at call: String, _ n: Int) throws -> Bool {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: strace)
        p.arguments = ["-f", "-o", "/dev/null", "-e", "trace=\(call)", "-e", "inject=\(call):signal=KILL:when=\(n)",
                       UnwindRun.executable] + arguments
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        p.standardInput = FileHandle.nullDevice
        try p.run()
        p.waitUntilExit()
        return p.terminationReason == .uncaughtSignal || p.terminationStatus == 128 + SIGKILL
    }

    /// The device stopped: the state files, the configuration, Wi-Fi and the SSH key in one
    /// transaction of the state directory, the outside files staged beside their targets.
    @Test(.enabled(if: haveStrace, "strace is installed by deploy/dev-deps.sh"))
    func killedAnywhereWithTheDeviceStoppedItIsAllOldOrAllNew() throws {
        let reference = try Self.card(Self.everything)
        defer { try? FileManager.default.removeItem(atPath: reference.root) }
        let old = try Self.snapshot(reference)
        let done = reference.run()
        #expect(done.status == 0, "\(done)")
        let new = try Self.snapshot(reference)
        for key in ["alert01.txt", "alert02.txt", "alert03.txt", SetupResultFile.name, "config", "wpa_supplicant.conf", "authorized_keys"] {
            #expect(old[key] != new[key], "the import does not change \(key)")
        }
        #expect(new["alert04.txt"] == old["alert04.txt"])
        var info = stat()
        #expect(lstat(reference.state + "/alert01.txt", &info) == 0 && info.st_uid == 65534, "the new slot is not the service user's")

        var killed = 0, rolledForward = 0, mixes: [String] = [], failedAgain: [String] = []
        func check(_ card: SetupImportTests.Card, _ what: String, wasKilled: Bool) throws {
            let now = try Self.snapshot(card)
            if now == new {
                if wasKilled { rolledForward += 1 }
            } else if now != old {
                let differing = now.keys.sorted().filter { now[$0] != old[$0] && now[$0] != new[$0] }
                let newKeys = now.keys.sorted().filter { now[$0] == new[$0] && new[$0] != old[$0] }
                mixes.append("\(what): new \(newKeys), neither \(differing)")
            }
            let left = Self.leftovers([card.state, card.root, card.system])
            if !left.isEmpty { mixes.append("\(what): left \(left)") }
            guard wasKilled else { return }
            let again = card.run()
            let after = try Self.snapshot(card)
            if again.status != 0 || after != new { failedAgain.append("\(what): \(again)") }
        }
        for call in ["fsync", "mkdirat", "mkdir", "renameat", "renameat2", "rename", "unlinkat", "unlink", "fchmod", "fchown"] {
            var n = 1
            while n < 400 {
                let card = try Self.card(Self.everything)
                defer { try? FileManager.default.removeItem(atPath: card.root) }
                let wasKilled = try Self.runKilled(["setup", "import", "--config", card.config, "--state", card.state,
                                                    "--system-directory", card.system, card.setup], at: call, n)
                try check(card, "\(call) #\(n)", wasKilled: wasKilled)
                if !wasKilled { break }
                killed += 1
                n += 1
            }
        }
        var random = SystemRandomNumberGenerator()
        for i in 0..<30 {
            let card = try Self.card(Self.everything)
            defer { try? FileManager.default.removeItem(atPath: card.root) }
            let p = try UnwindRun.start(["setup", "import", "--config", card.config, "--state", card.state,
                                         "--system-directory", card.system, card.setup])
            usleep(UInt32.random(in: 0...80_000, using: &random))
            kill(p.processIdentifier, SIGKILL)
            p.waitUntilExit()
            try check(card, "random #\(i)", wasKilled: p.terminationReason == .uncaughtSignal)
        }
        #expect(mixes.isEmpty, "half an import: \(mixes)")
        #expect(failedAgain.isEmpty, "the next import: \(failedAgain)")
        #expect(killed >= 40, "the import's own steps were reached: \(killed)")
        print("setup import, device stopped: killed at \(killed) system calls (\(rolledForward) rolled forward) and at 30 random moments; \(mixes.count) half imports")
    }

    /// The device running: the contacts and the screen's copy in one request, written by the
    /// device as one change; the command killed at its socket's and its files' system calls.
    @Test(.enabled(if: haveStrace, "strace is installed by deploy/dev-deps.sh"))
    func killedAnywhereWithTheDeviceRunningItIsAllOldOrAllNew() throws {
        let dir = temporaryDirectory("setup-kill-running")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let config = dir + "/unwind.conf"
        try Data("device:\n  name: Unwind\n".utf8).write(to: URL(fileURLWithPath: config))
        let rig = try MaintenanceRig(directory: dir + "/state") {
            _ = mkdir($0, 0o755)
            try Self.writeOld(state: $0, system: nil)
        }
        defer { rig.shutdown() }
        let setup = dir + "/unwind-setup.txt"
        let arguments = ["setup", "import", "--config", config, "--state", rig.directory, setup]
        func reset() throws {
            // The old contacts again, through the device (its one writer), and the setup file anew.
            #expect(rig.unwind(["alerts", "set", "1", "--name", "Old Sam", "--number", "+15550000001", "--message", "Old message"]).status == 0)
            for slot in ["2", "3"] { #expect(rig.unwind(["alerts", "clear", slot]).status == 0) }
            // The screen's copy is read only when the device starts: the test takes it back itself.
            unlink(rig.directory + "/" + SetupResultFile.name)
            try Data(Self.contactsOnly.utf8).write(to: URL(fileURLWithPath: setup))
        }
        // The card's view and the device's own (what a PANIC would send), each judged whole: the
        // device takes a change in memory at once and writes it a moment later, so for that
        // moment the card is still all old while the device is all new.
        func snapshot() throws -> [String: String] {
            try Self.snapshot(state: rig.directory, config: config, system: nil, asTheNextReader: false)
        }
        func deviceView() -> String { rig.status()?.alertSlots.joined(separator: " | ") ?? "-" }
        try reset()
        let old = try snapshot(), oldDevice = deviceView()
        let done = rig.unwind(["setup", "import", "--config", config, setup])
        #expect(done.status == 0, "\(done)")
        #expect(rig.file(SetupResultFile.name)?.hasPrefix("Setup: Ready.") == true)
        let new = try snapshot(), newDevice = deviceView()
        #expect(old != new && new["alert04.txt"] == old["alert04.txt"], "\(old) → \(new)")
        #expect(oldDevice != newDevice, "\(oldDevice)")

        var killed = 0, mixes: [String] = [], failedAgain: [String] = []
        func check(_ what: String, wasKilled: Bool) throws {
            // Never a mix, at any moment: the device may still be answering a request the
            // command sent before it died, so it is looked at until the request is done.
            // The device's view, whenever it is looked at; the card's once the device has written
            // what it took (a change through it answers only when every write before it is on
            // the card: the card is not looked at while the device renames the new files in).
            var last: ([String: String], String)?
            let settled = rig.wait(.seconds(10)) {
                let device = deviceView()
                if device != oldDevice && device != newDevice { mixes.append("\(what): device \(device)") }
                guard rig.unwind(["reminders", "set", "never"]).status == 0, let card = try? snapshot() else { return false }
                defer { last = (card, device) }
                return last.map { $0.0 == card && $0.1 == device } ?? false
            }
            if let (card, device) = last, settled {
                if card != old && card != new { mixes.append("\(what): card \(card)") }
                if (card == new) != (device == newDevice) { mixes.append("\(what): card \(card), device \(device)") }
            } else {
                mixes.append("\(what): the device and its card did not settle")
            }
            guard wasKilled else { return }
            let again = rig.unwind(["setup", "import", "--config", config, setup])
            let after = try snapshot()
            if again.status != 0 || after != new || deviceView() != newDevice { failedAgain.append("\(what): \(again)") }
        }
        for call in ["connect", "sendto", "poll", "recvfrom", "fsync", "rename"] {
            var n = 1
            while n < 40 {
                try reset()
                let wasKilled = try Self.runKilled(arguments, at: call, n)
                try check("\(call) #\(n)", wasKilled: wasKilled)
                if !wasKilled { break }
                killed += 1
                n += 1
            }
        }
        var random = SystemRandomNumberGenerator()
        for i in 0..<20 {
            try reset()
            let p = try UnwindRun.start(arguments)
            usleep(UInt32.random(in: 0...80_000, using: &random))
            kill(p.processIdentifier, SIGKILL)
            p.waitUntilExit()
            try check("random #\(i)", wasKilled: p.terminationReason == .uncaughtSignal)
        }
        #expect(mixes.isEmpty, "half an import: \(mixes)")
        #expect(failedAgain.isEmpty, "the next import: \(failedAgain)")
        #expect(killed >= 6, "the import's own steps were reached: \(killed)")
        print("setup import, device running: killed at \(killed) system calls and at 20 random moments; \(mixes.count) half imports")
    }

    /// The device running cannot change the configuration, Wi-Fi or the SSH key together with
    /// the contacts it saves: such a file is refused whole, nothing changed, and the command
    /// says how to import it.
    @Test func withTheDeviceRunningAFileThatSetsMoreThanContactsIsRefusedWhole() throws {
        let card = try Self.card(Self.everything)
        defer { try? FileManager.default.removeItem(atPath: card.root) }
        let rig = try MaintenanceRig(directory: card.state + "-running") {
            _ = mkdir($0, 0o755)
            try Self.writeOld(state: $0, system: nil)
        }
        defer { rig.shutdown() }
        let before = try Self.snapshot(state: rig.directory, config: card.config, system: card.system)
        let r = UnwindRun.run(["setup", "import", "--config", card.config, "--state", rig.directory,
                               "--system-directory", card.system, card.setup])
        #expect(r.status == 1, "\(r)")
        #expect(r.stderr.contains("nothing was imported") && r.stderr.contains("sudo systemctl stop unwind"), "\(r)")
        #expect(try Self.snapshot(state: rig.directory, config: card.config, system: card.system) == before)
        #expect(readText(card.setup) == Self.everything, "the numbers were taken out of a file that was not imported")
    }
}
