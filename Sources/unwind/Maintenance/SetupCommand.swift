import ArgumentParser
import Glibc
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import UnwindAssembly
import UnwindMaintenance
import UnwindCore
import UnwindRuntime
import UnwindLinuxHardware

/// `unwind setup`: the setup file a person edits on a laptop (`unwind-setup.txt` on the SD card's
/// boot partition), checked and imported at boot by the image's `unwind-firstboot.service`.
struct SetupCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "setup",
        abstract: "Check or import a setup file (alert contacts, counselling line, device name, Wi-Fi, SSH key).",
        discussion: """
            The setup file has one "key: value" a line (see /usr/share/doc/unwind/examples/unwind-setup.txt); an \
            empty value keeps what the device has. Every value is checked by the same rules as 'unwind alerts set' \
            and 'unwind config check', and every problem names its line. What is right is imported even when \
            other lines are wrong. Exit status: 0 all of it imported (or nothing to import), 1 some lines are \
            wrong (the rest was imported), 2 bad usage.
            """,
        subcommands: [Check.self, Import.self])

    struct Check: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "check",
            abstract: "Check a setup file and say what an import would change on this device; change nothing.",
            discussion: "Prints \"nothing new to import\" when every value is empty or what the device already has.")
        @OptionGroup var options: MaintenanceOptions
        @Option(help: ArgumentHelp("Where Wi-Fi and SSH settings go (as for import).", valueName: "dir"))
        var systemDirectory: String?
        @Argument(help: "The setup file.") var file: String

        func run() throws {
            let setup = SetupFile.parse(try readSetupFile(file))
            let changes = try SetupChanges(setup, options: options, systemDirectory: systemDirectory)
            for line in changes.summary { say(line) }
            for p in setup.problems { say("\(file): \(p)") }
            if !setup.problems.isEmpty { throw ExitCode(1) }
        }
    }

    struct Import: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "import",
            abstract: "Import a setup file into the device's state and configuration, then take the contacts' numbers and the Wi-Fi password out of it.",
            discussion: """
                Run with the device stopped (the image's unwind-firstboot.service runs it before unwind.service). \
                The contacts, the configuration, Wi-Fi and the SSH key change as one: killed at any moment, the \
                device has all of them as they were or all as the file says (with the device running, a file \
                that sets only contacts is imported through it; one that sets more is refused). Writes the \
                result beside the file (unwind-setup-result.txt) and into the state directory, where the \
                device shows it on its screen at the next start until a button is pressed. A file with nothing in \
                it to import changes nothing and writes nothing.
                """)
        @OptionGroup var options: MaintenanceOptions
        @Argument(help: "The setup file.") var file: String
        @Option(help: ArgumentHelp("Where Wi-Fi and SSH settings go (wpa_supplicant.conf, authorized_keys); without it they are refused.", valueName: "dir"))
        var systemDirectory: String?
        @Option(help: ArgumentHelp("The result file (default: unwind-setup-result.txt beside the setup file).", valueName: "file"))
        var result: String?
        @Flag(help: "Keep the contacts' numbers and the Wi-Fi password in the setup file (default: taken out once imported).")
        var keepSecrets = false

        func run() throws {
            let resultPath = result ?? SetupReport.beside(file, SetupFile.resultFileName)
            let bytes: [UInt8]
            do { bytes = try readSetupFile(file) } catch {
                if !FileManager.default.fileExists(atPath: file) {
                    // Nothing to import; nothing written: an imaged device boots this way every day.
                    say("no setup file at \(file): nothing to import")
                    return
                }
                throw error
            }
            var setup = SetupFile.parse(bytes)
            let changes = try SetupChanges(setup, options: options, systemDirectory: systemDirectory)
            // Imported before (its numbers taken out), or what the device already has: nothing is
            // written, so a card is not written at every boot. Problems that remain were reported
            // when the file was new.
            guard !changes.isEmpty || (!setup.problems.isEmpty && changes.firstLook) else {
                say(SetupChanges.nothingNew)
                return
            }
            var done: [String] = []
            let m = try options.maintainer()
            let alerts = changes.contacts.map { ImportedAlert(slot: $0.slot, name: $0.alert.name, number: $0.alert.number.text, message: $0.alert.message) }
            done += changes.contacts.map { "contact \($0.slot) (\($0.alert.name))" }
            var outside: [OutsideFile] = []
            if let c = configurationFile(changes.settings, &setup, done: &done) { outside.append(c) }
            outside += systemFiles(changes, &setup, done: &done)
            // The running device writes its own directory alone: the configuration, Wi-Fi and
            // the SSH key cannot change in one step with the contacts it saves.
            if !outside.isEmpty, try m.runningDeviceSocket() != nil {
                throw ControlFailure.failed("the device is running on \(m.stateDirectory); this setup file also sets \(outside.map(\.path).joined(separator: ", ")), which change together with the contacts only while it is stopped: nothing was imported — stop it (sudo systemctl stop unwind), import again, and start it")
            }
            setup.problems.sort { $0.line < $1.line }
            let name = String(file.split(separator: "/").last ?? Substring(file))
            var report = SetupReport.result(imported: done, problems: setup.problems, file: name)
            // All of it as one change — the contacts, the screen's copy of the result (so the
            // device can say what happened even when the card cannot be written), the
            // configuration, Wi-Fi, the SSH key — or none of it, wherever a kill lands.
            var imported = true
            do {
                // What was kept aside on the way is in the answer.
                if let said = try m.change(.importSetup(alerts: alerts, screen: report.screen), outside: outside).response.message { say(said) }
            } catch {
                imported = false
                setup.problems.append(.init(line: 0, message: "nothing was imported: \(error.message)"))
                report = SetupReport.result(imported: [], problems: setup.problems, file: name)
                // The screen says so when it can: the device shows it at its next start.
                do { _ = try m.change(.importSetup(alerts: [], screen: report.screen)) } catch {
                    writeError("cannot save the result for the screen: \(error.message)")
                }
            }
            do { try writeFile(resultPath, Array((report.file.joined(separator: "\n") + "\n").utf8), replace: true) } catch {
                writeError("cannot write \(resultPath): \(error)")
            }
            // Once imported: a failed import keeps the numbers for the next try.
            if !keepSecrets, imported {
                let scrubbed = setup.scrubbed(note: SetupChanges.importedNote)
                if Array(scrubbed.utf8) != bytes {
                    do { try writeFile(file, Array(scrubbed.utf8), replace: true) } catch {
                        writeError("cannot take the numbers out of \(file): \(error)")
                    }
                }
            }
            for line in report.file { say(line) }
            if !setup.problems.isEmpty { throw ExitCode(1) }
        }

        /// The device name and the counselling line, set in the configuration file's text, which
        /// is then checked whole by the parser `unwind run` uses; the new file keeps the old
        /// one's owner and mode (root:unwind 0640: it may hold the SIM PIN).
        func configurationFile(_ settings: [SetupChanges.Setting], _ setup: inout SetupFile, done: inout [String]) -> OutsideFile? {
            guard !settings.isEmpty else { return nil }
            let path = options.config ?? DeviceConfiguration.defaultPath
            let old: String
            do { old = try ConfigurationFile.readText(path) ?? "" } catch {
                setup.problems.append(.init(line: line(of: settings[0].line, in: setup), message: "\(settings[0].what) not saved: \(error)"))
                return nil
            }
            var text = old
            for s in settings { text = ConfigurationText.setting(s.key, to: s.value, in: text) }
            do { _ = try DeviceConfiguration.parse(text, path: path) } catch {
                setup.problems.append(.init(line: line(of: settings[0].line, in: setup),
                                            message: "\(settings[0].what) not saved: the configuration \(path) would not be valid (\(error)); run 'unwind config check'"))
                return nil
            }
            for what in Set(settings.map(\.what)).sorted() { done.append(what) }
            var info = stat()
            guard stat(path, &info) == 0 else { return OutsideFile(path: path, bytes: Array(text.utf8), mode: 0o640) }
            return OutsideFile(path: path, bytes: Array(text.utf8), mode: info.st_mode & 0o7777, owner: info.st_uid, group: info.st_gid)
        }

        /// Wi-Fi and the SSH key: files the image's services read (wpa_supplicant, sshd).
        func systemFiles(_ changes: SetupChanges, _ setup: inout SetupFile, done: inout [String]) -> [OutsideFile] {
            guard changes.wifi != nil || !changes.sshKeys.isEmpty else { return [] }
            guard let dir = systemDirectory else {
                if changes.wifi != nil { setup.problems.append(.init(line: line(of: "wifi name", in: setup), message: "Wi-Fi is set up only on the Unwind SD-card image; set it up with the system's own tools here")) }
                if !changes.sshKeys.isEmpty { setup.problems.append(.init(line: line(of: "ssh key", in: setup), message: "the SSH key is set up only on the Unwind SD-card image; use ~/.ssh/authorized_keys here")) }
                return []
            }
            var files: [OutsideFile] = []
            if let w = changes.wifi {
                files.append(OutsideFile(path: dir + "/" + SetupChanges.wifiFile, bytes: SetupChanges.wifiConfiguration(w), mode: 0o600))
                done.append("Wi-Fi (\(w.name))")
            }
            if !changes.sshKeys.isEmpty {
                files.append(OutsideFile(path: dir + "/" + SetupChanges.keysFile, bytes: SetupChanges.authorizedKeys(changes.sshKeys), mode: 0o644))
                done.append("SSH key (SSH is on)")
            }
            return files
        }

        func line(of key: String, in setup: SetupFile) -> Int {
            setup.lines.firstIndex { l in
                guard let colon = l.firstIndex(of: ":") else { return false }
                return SetupFile.normalizedKey(String(l[..<colon])) == key
            }.map { $0 + 1 } ?? 0
        }
    }
}

/// What importing a setup file would change on this device: values it already has are left out,
/// so a card imported once (its numbers then taken out) changes nothing at the next boot.
struct SetupChanges {
    typealias Setting = (key: String, value: String, what: String, line: String)
    static let nothingNew = "nothing new to import"

    var contacts: [(slot: Int, alert: AlertSlot)] = []
    var settings: [Setting] = []
    var wifi: SetupFile.WiFi?
    var sshKeys: [String] = []
    /// The file is not as the last import left it: its problems are news.
    var firstLook = true
    static let importedNote = "\(SetupFile.notePrefix) imported; the contacts' numbers and the Wi-Fi password were taken out of this file. See \(SetupFile.resultFileName)."

    var isEmpty: Bool { contacts.isEmpty && settings.isEmpty && wifi == nil && sshKeys.isEmpty }

    init(_ setup: SetupFile, options: MaintenanceOptions, systemDirectory: String?) throws(ControlFailure) {
        firstLook = !setup.isAsImported(note: Self.importedNote)
        let m = try options.maintainer()
        let files = try StateFiles(m)
        for (slot, alert) in setup.contacts.sorted(by: { $0.key < $1.key }) {
            if case .ready(let have) = try files.slot(slot), have == alert { continue }
            contacts.append((slot, alert))
        }
        // The configuration as the device reads it; one that does not parse has nothing to compare.
        let current = (try? ConfigurationFile.load(options.config ?? DeviceConfiguration.defaultPath)) ?? nil
        if let name = setup.deviceName, name != current?.settings.statusTexts.deviceName {
            settings.append(("device.name", name, "device name", "device name"))
        }
        if let c = setup.counselling, c != current?.counselling {
            settings.append(("counselling.name", c.name, "counselling line", "counselling name"))
            settings.append(("counselling.display_number", c.displayNumber, "counselling line", "counselling number"))
            settings.append(("counselling.dial_number", c.dialNumber.text, "counselling line", "counselling number"))
        }
        // What the system directory already holds is not new (as for the contacts).
        func have(_ name: String) -> [UInt8]? { systemDirectory.flatMap { try? NamedFile.read($0 + "/" + name, limit: 1 << 16) } }
        if let w = setup.wifi, have(Self.wifiFile) != Self.wifiConfiguration(w) { wifi = w }
        if !setup.sshKeys.isEmpty, have(Self.keysFile) != Self.authorizedKeys(setup.sshKeys) { sshKeys = setup.sshKeys }
    }

    static let wifiFile = "wpa_supplicant.conf"
    static let keysFile = "authorized_keys"

    /// wpa_supplicant's configuration for the setup file's network.
    static func wifiConfiguration(_ w: SetupFile.WiFi) -> [UInt8] {
        var conf = "# Written by 'unwind setup import' from the setup file.\nctrl_interface=DIR=/run/wpa_supplicant GROUP=netdev\nupdate_config=0\n"
        if !w.country.isEmpty { conf += "country=\(w.country)\n" }
        conf += "network={\n\tssid=\"\(w.name)\"\n\tpsk=\"\(w.password)\"\n}\n"
        return Array(conf.utf8)
    }

    static func authorizedKeys(_ keys: [String]) -> [UInt8] { Array((keys.joined(separator: "\n") + "\n").utf8) }

    var summary: [String] {
        var lines: [String] = []
        for (slot, a) in contacts { lines.append("contact \(slot): \(a.name), \(a.number.text), \(a.encoding)") }
        for s in settings { lines.append("\(s.key): \(s.value)") }
        if let w = wifi { lines.append("Wi-Fi: \(w.name)") }
        if !sshKeys.isEmpty { lines.append("SSH key: given (SSH will be on)") }
        return lines.isEmpty ? [Self.nothingNew] : lines
    }
}

/// The setup file's bytes. A symbolic link is refused, not followed: run as root at boot, a link
/// to another file would have its lines parsed and fragments of them quoted back as problems
/// (a card's FAT partition has no links; only a tampered card or a mistake makes one).
func readSetupFile(_ path: String) throws(ControlFailure) -> [UInt8] {
    var info = stat()
    if lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFLNK {
        throw .failed("cannot read \(path): it is a symbolic link; the setup file must be the file itself")
    }
    return try readFile(path, limit: SetupFile.maximumSize)
}

/// What the person reads: on the screen (short) and in the result file on the card (whole).
enum SetupReport {
    /// `name` in the directory of `path`.
    static func beside(_ path: String, _ name: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return name }
        return String(path[...slash]) + name
    }

    static func result(imported: [String], problems: [SetupFile.Problem], file: String) -> (screen: [String], file: [String]) {
        let importedLine = imported.isEmpty ? "Nothing was imported." : "Imported: " + imported.joined(separator: ", ") + "."
        guard let first = problems.first else {
            return (["Setup: Ready.", importedLine], ["Ready.", importedLine])
        }
        let screen = ["Setup: fix \(file) \(first.line == 0 ? "" : "line \(first.line)")".trimmingSpacesAtEnd,
                      first.message, problems.count > 1 ? "(\(problems.count - 1) more: see \(SetupFile.resultFileName))" : "",
                      importedLine].filter { !$0.isEmpty }
        let whole = ["Not everything could be set up. Fix these lines of \(file), put the card back and start the device again:"]
            + problems.map { "  \($0)" } + [importedLine]
        return (screen, whole)
    }
}

extension String {
    var trimmingSpacesAtEnd: String {
        var s = self
        while s.last == " " { s.removeLast() }
        return s
    }
}
