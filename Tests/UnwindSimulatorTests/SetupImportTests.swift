#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import UnwindCore
import UnwindTestSupport

/// `unwind setup import` as the image's first boot runs it: the real executable on a state
/// directory, a configuration and a "boot partition" directory.
@Suite("Setup import: the card's setup file into the device, the numbers off the card")
struct SetupImportTests {
    struct Card {
        let root = temporaryDirectory("setup-card")
        var state: String { root + "/state" }
        var boot: String { root + "/boot" }
        var system: String { root + "/system" }
        var config: String { root + "/unwind.conf" }
        var setup: String { boot + "/unwind-setup.txt" }

        init(setup text: [UInt8]?, config: String = "state_directory: /var/lib/unwind\ndevice:\n  name: Unwind # signs answers\n") {
            for d in [state, boot, system] { _ = mkdir(d, 0o755) }
            _ = FileManager.default.createFile(atPath: self.config, contents: Data(config.utf8))
            if let text { _ = FileManager.default.createFile(atPath: setup, contents: Data(text)) }
        }

        func run(_ extra: [String] = []) -> UnwindRun.Result {
            UnwindRun.run(["setup", "import", "--config", config, "--state", state, "--system-directory", system] + extra + [setup])
        }

        func text(_ path: String) -> String? { readText(path) }
    }

    static let mixed = """
        device name: Bedside test\r
        contact 1 name: Sam\r
        contact 1 number: +44 7700 900123\r
        contact 1 message: Alex pressed PANIC. Please call.\r
        contact 2 name: Kim\r
        contact 2 number: 0770O 900456\r
        contact 2 message: Please call.\r
        counselling name: Crisis line\r
        counselling number: +1 800 555 0199\r
        wifi name: Home\r
        wifi password: correct horse\r

        """

    @Test func aMixedFileImportsWhatIsRightAndNamesTheWrongLine() {
        let card = Card(setup: Array(Self.mixed.utf8))
        defer { try? FileManager.default.removeItem(atPath: card.root) }
        let r = card.run()
        #expect(r.status == 1, "\(r)")
        // Contact 1 is in its slot, exactly as `unwind alerts set` writes it.
        #expect(card.text(card.state + "/alert01.txt") == "Sam\n+447700900123\nAlex pressed PANIC. Please call.\n")
        #expect(card.text(card.state + "/alert02.txt") == nil)
        // The screen's copy and the card's copy name line 6.
        let screen = card.text(card.state + "/" + SetupResultFile.name) ?? ""
        #expect(screen.hasPrefix("Setup: fix unwind-setup.txt line 6\n"), "\(screen)")
        let onCard = card.text(card.boot + "/" + SetupFile.resultFileName) ?? ""
        #expect(onCard.contains("line 6: contact 2 number"), "\(onCard)")
        #expect(onCard.contains("Imported: contact 1 (Sam)"), "\(onCard)")
        // The configuration took the name and the counselling line, comments kept, and passes the check.
        let config = card.text(card.config) ?? ""
        #expect(config.contains("name: \"Bedside test\""), "\(config)")
        #expect(config.contains("dial_number: \"+18005550199\""), "\(config)")
        #expect(UnwindRun.run(["config", "check", "--config", card.config]).status == 0)
        // Wi-Fi went to the system directory, readable by root only.
        var info = stat()
        #expect(stat(card.system + "/wpa_supplicant.conf", &info) == 0 && info.st_mode & 0o777 == 0o600)
        // The numbers and the password are off the card; the rest stays for the person to fix.
        let after = card.text(card.setup) ?? ""
        #expect(!after.contains("900123") && !after.contains("900456") && !after.contains("correct horse"), "\(after)")
        #expect(after.contains("contact 2 name: Kim\r\n"))
    }

    @Test func aFileWithNothingToImportWritesNothing() throws {
        let template = "device name:\ncontact 1 name:\ncontact 1 number:\ncontact 1 message:\n"
        let card = Card(setup: Array(template.utf8))
        defer { try? FileManager.default.removeItem(atPath: card.root) }
        let before = try FileManager.default.attributesOfItem(atPath: card.setup)[.modificationDate] as? Date
        let r = card.run()
        #expect(r.status == 0, "\(r)")
        #expect(card.text(card.boot + "/" + SetupFile.resultFileName) == nil)
        #expect(card.text(card.state + "/" + SetupResultFile.name) == nil)
        #expect(try FileManager.default.attributesOfItem(atPath: card.setup)[.modificationDate] as? Date == before)
    }

    @Test func aMissingFileIsNotAnError() {
        let card = Card(setup: nil)
        defer { try? FileManager.default.removeItem(atPath: card.root) }
        let r = card.run()
        #expect(r.status == 0, "\(r)")
        #expect(r.stdout.contains("no setup file"))
    }

    /// UTF-16 from Notepad imports; a Latin-1 file is one problem with its line, nothing imported.
    @Test func encodings() {
        let utf16: [UInt8] = [0xFF, 0xFE] + Self.mixed.utf16.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }
        let a = Card(setup: utf16)
        defer { try? FileManager.default.removeItem(atPath: a.root) }
        #expect(a.run().status == 1)
        #expect(a.text(a.state + "/alert01.txt") != nil)

        let latin1 = Array("contact 1 name: Sam\ncontact 1 number: +447700900123\ncontact 1 message: Caf".utf8) + [0xE9, 0x0A]
        let b = Card(setup: latin1)
        defer { try? FileManager.default.removeItem(atPath: b.root) }
        let r = b.run()
        #expect(r.status == 1)
        #expect(b.text(b.state + "/alert01.txt") == nil)
        #expect((b.text(b.boot + "/" + SetupFile.resultFileName) ?? "").contains("line 3: not UTF-8"))
    }

    /// A setup file that is a directory, a FIFO, a link (to a file that parses) or 10 MB: refused
    /// with one reason, never waited on, nothing imported, nothing of the target quoted.
    @Test(arguments: ["directory", "fifo", "link", "huge"])
    func hostileFormsOfTheFile(_ form: String) {
        let card = Card(setup: nil)
        defer { try? FileManager.default.removeItem(atPath: card.root) }
        let secret = card.root + "/secret"
        _ = FileManager.default.createFile(atPath: secret, contents: Data("contact 1 name: SECRET\n".utf8))
        switch form {
        case "directory": _ = mkdir(card.setup, 0o755)
        case "fifo": _ = mkfifo(card.setup, 0o644)
        case "link": _ = symlink(secret, card.setup)
        default: _ = FileManager.default.createFile(atPath: card.setup, contents: Data(repeating: 0x41, count: 10 << 20))
        }
        let r = card.run()
        #expect(r.status == (form == "huge" ? 2 : 1), "\(r)")  // too large is bad input, as readFile says
        #expect(!(r.stdout + r.stderr).contains("SECRET"))
        #expect(card.text(card.state + "/alert01.txt") == nil)
        #expect(card.text(card.state + "/" + SetupResultFile.name) == nil)
    }

    /// A second import of the card as the first left it changes nothing.
    @Test func importingTwiceIsImportingOnce() throws {
        let card = Card(setup: Array(Self.mixed.utf8))
        defer { try? FileManager.default.removeItem(atPath: card.root) }
        _ = card.run()
        let slot = card.text(card.state + "/alert01.txt")
        let r = card.run()
        #expect(r.status == 0, "\(r)")
        #expect(card.text(card.state + "/alert01.txt") == slot)
    }
}
