import Testing
@testable import UnwindCore

@Suite("The SD card's setup file: every line checked as the maintainer's commands check it, the right ones kept")
struct SetupFileTests {
    static let good = """
        # notes are skipped
        device name: Bedside
        contact 1 name: Sam
        contact 1 number: +44 7700 900123
        contact 1 message: Alex pressed PANIC. Please call.
        Contact 2 Name:   Jo
        contact_2_number: (604) 555-0100
        contact 2 message: Please call Alex.
        counselling name: Crisis line
        counselling number: +1 800 555 0199
        Wi-Fi name: Home
        wifi password: correct horse
        wifi country: gb
        ssh key: ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGq2f0CJ8q9l2x4b8yq0X2bB6lYw0y1ZQe4sZr0Ayj2C maintainer@laptop

        """

    @Test func aGoodFileGivesEverything() {
        let f = SetupFile.parse(Array(Self.good.utf8))
        #expect(f.problems.isEmpty)
        #expect(f.contacts[1]?.number.text == "+447700900123")
        #expect(f.contacts[2]?.number.text == "6045550100")
        #expect(f.contacts[2]?.name == "Jo")
        #expect(f.deviceName == "Bedside")
        #expect(f.counselling?.displayNumber == "+1 800 555 0199")
        #expect(f.counselling?.dialNumber.text == "+18005550199")
        #expect(f.wifi == SetupFile.WiFi(name: "Home", password: "correct horse", country: "GB"))
        #expect(f.sshKeys.count == 1)
    }

    /// Windows Notepad: CRLF, a byte-order mark, or UTF-16 ("Unicode") — all read alike.
    @Test(arguments: ["crlf", "bom", "utf16le", "utf16be"])
    func editorsEncodingsReadAlike(_ form: String) {
        let crlf = Self.good.replacingAll("\n", with: "\r\n")
        let bytes: [UInt8] = switch form {
        case "crlf": Array(crlf.utf8)
        case "bom": [0xEF, 0xBB, 0xBF] + Array(crlf.utf8)
        case "utf16le": [0xFF, 0xFE] + crlf.utf16.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }
        default: [0xFE, 0xFF] + crlf.utf16.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }
        }
        let f = SetupFile.parse(bytes)
        #expect(f.problems.isEmpty, "\(f.problems)")
        #expect(f.contacts.count == 2)
        #expect(f.crlf)
    }

    @Test func anotherEncodingIsOneProblemNamingItsLine() {
        // Latin-1 "é" on line 3.
        let bytes = Array("device name: x\ncontact 1 name: Sam\ncontact 1 message: caf".utf8) + [0xE9] + Array("\n".utf8)
        let f = SetupFile.parse(bytes)
        #expect(f.problems.count == 1)
        #expect(f.problems.first?.line == 3)
        #expect(f.problems.first?.message.contains("UTF-8") == true)
        #expect(f.contacts.isEmpty)
    }

    /// A wrong line costs only its own contact: the others are imported.
    @Test func aWrongLineNamesItselfAndTheRestStands() {
        let text = """
            contact 1 name: Sam
            contact 1 number: +447700900123
            contact 1 message: Please call.
            contact 2 name: Jo
            contact 2 number: 0770O 900456
            contact 2 message: Please call.
            contact 3 name: Kim
            contact 3 number: 07700900789
            contact 3 message: He said "call"; now
            contact 4 number: 07700900111
            contakt 5 name: Lee
            device name: Bedside
            device name: Again
            just words
            """
        let f = SetupFile.parse(Array(text.utf8))
        #expect(f.contacts.keys.sorted() == [1])
        let byLine = Dictionary(grouping: f.problems, by: \.line)
        #expect(byLine[5]?.first?.message.contains("contact 2") == true)      // the letter O
        // In the setup file's terms: the number as written, and formatting is allowed there.
        #expect(byLine[5]?.first?.message.contains("\"0770O 900456\" has \"O\" (U+004F)") == true)
        #expect(byLine[5]?.first?.message.contains("no spaces") == false)
        let dashes = SetupFile.parse(Array("contact 1 name: A\ncontact 1 number: --\ncontact 1 message: B\n".utf8))
        #expect(dashes.problems.map(\.message) == ["contact 1 number: \"--\" has no digits"])
        #expect(byLine[9]?.first?.message.contains("contact 3") == true)      // a quote in the message
        #expect(byLine[10]?.first?.message.contains("needs a name and a message") == true)
        #expect(byLine[11]?.first?.message.contains("did you mean \"contact 5 name\"") == true)
        #expect(byLine[13]?.first?.message.contains("given twice") == true)
        #expect(byLine[14]?.first?.message.contains("no \":\"") == true)
        #expect(f.deviceName == "Bedside")
        #expect(f.problems.map(\.line) == f.problems.map(\.line).sorted())
    }

    /// UTF-16 with a lone surrogate on line 2, or a byte missing at its end: one problem, nothing read.
    @Test func brokenUTF16() {
        let text = Array("device name: x\ncontact 1 name: ".utf16) + [0xD800] + Array("\n".utf16)
        let lone = SetupFile.parse([0xFF, 0xFE] + text.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] })
        #expect(lone.problems.map(\.line) == [2])
        #expect(lone.deviceName == nil)
        let odd = SetupFile.parse([0xFF, 0xFE, 0x41, 0x00, 0x42])
        #expect(odd.problems.count == 1 && odd.problems[0].line == 0)
    }

    @Test func hostileValuesAreRefusedNotCarried() {
        let text = """
            contact 1 name: Sam\u{1B}[2J
            contact 1 number: +447700900123
            contact 1 message: Please call.
            wifi name: Home"
            wifi password: short
            ssh key: ssh-ed25519 AAAA; rm -rf /
            """
        let f = SetupFile.parse(Array(text.utf8))
        #expect(f.contacts.isEmpty)
        #expect(f.wifi == nil)
        #expect(f.sshKeys.isEmpty)
        #expect(f.problems.count == 3)
        // Problems never carry a control character to the screen or a terminal.
        #expect(!f.problems.contains { $0.description.unicodeScalars.contains(where: TextSafety.isTerminalControl) })
    }

    @Test func anEmptyOrHugeFile() {
        #expect(!SetupFile.parse([]).asksForAnything)
        #expect(SetupFile.parse([]).problems.isEmpty)
        let template = "device name:\ncontact 1 name:\ncontact 1 number:\ncontact 1 message:\n"
        #expect(!SetupFile.parse(Array(template.utf8)).asksForAnything)
        let huge = SetupFile.parse(Array(repeating: 0x41, count: SetupFile.maximumSize + 1))
        #expect(huge.problems.first?.line == 0)
    }

    /// Once imported, the numbers and the Wi-Fi password go; read again, the file asks for
    /// nothing, so the card is not written again.
    @Test func scrubbedFileKeepsNoSecretAndAsksForNothing() {
        let crlf = Self.good.replacingAll("\n", with: "\r\n")
        let f = SetupFile.parse(Array(crlf.utf8))
        let out = f.scrubbed(note: "Unwind: imported")
        #expect(!out.contains("900123") && !out.contains("555-0100") && !out.contains("correct horse"))
        #expect(out.contains("contact 1 name: Sam"))
        #expect(out.hasPrefix("# Unwind: imported\r\n"))
        let again = SetupFile.parse(Array(out.utf8))
        #expect(again.problems.isEmpty, "\(again.problems)")
        #expect(again.contacts.isEmpty && again.wifi == nil)
        // Scrubbing twice leaves one note.
        #expect(again.scrubbed(note: "Unwind: imported") == out)
    }

    @Test func theResultFileForTheScreen() throws {
        #expect(try SetupResultFile.parse([]) == nil)
        #expect(try SetupResultFile.parse(Array("Setup: Ready.\n\nImported: contact 1\n".utf8)) == ["Setup: Ready.", "Imported: contact 1"])
        #expect(throws: SetupResultFile.Problem.notUTF8) { try SetupResultFile.parse([0xFF]) }
        #expect(try SetupResultFile.parse(Array("a\u{1B}[2Jb\n".utf8)) == ["a [2Jb"])
    }

    /// The notice stays until a button; the press only closes it, and the file is emptied.
    @Test func theDeviceShowsTheResultUntilAPress() {
        var core = DeviceCore()
        core.showSetupResult(["Setup: fix unwind-setup.txt line 5", "contact 2 number: …"])
        #expect(core.state.setupNotice != nil)
        var effects: [Effect] = []
        let t = Moment(.zero + .seconds(1), wall: WallTime(secondsSinceEpoch: 1_800_000_000))
        core.handle(.down(.select), at: t, effects: &effects)
        #expect(core.state.setupNotice == nil)
        #expect(effects.contains(.save(.setupResult, "")))
        core.handle(.short(.select), at: t, effects: &effects)
        #expect(!core.state.breathing.isRunning, "the press that closed the notice starts nothing")
    }
}
