import Testing
import UnwindCore

@Suite("Text safety: terminal escaping, bidi controls, NFC names and messages")
struct TextSafetyTests {
    // MARK: Escaping for a terminal

    /// A raw string and how it is printed; the test's own log shows only the printed form, so
    /// running these tests sends no escape sequence to the terminal either.
    struct Sample: CustomTestStringConvertible, Sendable {
        var raw: String
        var shown: String
        var testDescription: String { shown }
    }

    @Test(arguments: [
        ("\u{1B}]0;pwned\u{07}", "\\u001B]0;pwned\\u0007"),
        ("\u{1B}[31mred\u{1B}[0m", "\\u001B[31mred\\u001B[0m"),
        ("a\nb\r\tc", "a\\u000Ab\\u000D\\u0009c"),
        ("\u{0}\u{7F}", "\\u0000\\u007F"),
        ("csi\u{9B}2J", "csi\\u009B2J"),                    // C1: U+009B is CSI to some terminals
        ("abc\u{202E}fdp.exe", "abc\\u202Efdp.exe"),        // right-to-left override
        ("\u{2066}\u{2067}\u{2068}\u{2069}", "\\u2066\\u2067\\u2068\\u2069"),
        ("\u{200E}\u{200F}\u{061C}\u{202A}\u{202B}\u{202C}\u{202D}", "\\u200E\\u200F\\u061C\\u202A\\u202B\\u202C\\u202D"),
        ("line\u{2028}sep", "line\\u2028sep"),
    ].map { Sample(raw: $0.0, shown: $0.1) })
    func controlsAreEscaped(_ sample: Sample) {
        #expect(TextSafety.escaped(sample.raw) == sample.shown)
        #expect(!TextSafety.escaped(sample.raw).unicodeScalars.contains(where: TextSafety.isTerminalControl))
    }

    @Test(arguments: ["plain", "Café, naïve — “quoted” · ✓", "مرحبا", "שלום", "日本語", "🙂", "back\\slash", ""])
    func printableTextIsUnchanged(_ text: String) {
        #expect(TextSafety.escaped(text) == text)
    }

    // MARK: UTF-8

    @Test func theFirstInvalidByteIsFound() {
        #expect(TextSafety.firstInvalidUTF8(Array("ok é".utf8)) == nil)
        #expect(TextSafety.firstInvalidUTF8([0x61, 0x62, 0xFF]) == 2)
        #expect(TextSafety.firstInvalidUTF8([0x61, 0xC3]) == 1)            // cut in the middle of "é"
        #expect(TextSafety.firstInvalidUTF8([0xED, 0xA0, 0x80]) == 0)      // a UTF-16 surrogate
        #expect(TextSafety.firstInvalidUTF8([0xC0, 0xAF]) == 0)            // an overlong "/"
    }

    // MARK: Names and messages

    @Test func namesAndMessagesAreStoredInNFC() throws {
        let decomposed = "Rene\u{301}"
        let slot = try AlertSlot(name: decomposed, number: "+15550100", message: "Cafe\u{301} at 8")
        #expect(Array(slot.name.unicodeScalars) == Array("Ren\u{E9}".unicodeScalars))
        #expect(Array(slot.message.unicodeScalars) == Array("Caf\u{E9} at 8".unicodeScalars))
        #expect(TextSafety.isNFC(slot.name) && TextSafety.isNFC(slot.message))
        #expect(!TextSafety.isNFC(decomposed))
        // "é" is in GSM-7; "e" and a combining accent is not: NFC keeps the message in GSM-7.
        #expect(slot.encoding.description.hasPrefix("GSM-7"))
        // A slot file written in NFD reads back in NFC, and formats in NFC.
        let file = try #require(try AlertSlotFile.parse(Array("Rene\u{301}\n+15550100\nCafe\u{301}\n".utf8)))
        #expect(Array(AlertSlotFile.format(file).utf8) == Array("Ren\u{E9}\n+15550100\nCaf\u{E9}\n".utf8))
    }

    @Test(arguments: [0x202A, 0x202B, 0x202C, 0x202D, 0x202E, 0x2066, 0x2067, 0x2068, 0x2069, 0x200E, 0x200F, 0x061C] as [UInt32])
    func bidiControlsAreRefusedInNamesAndMessages(_ v: UInt32) throws {
        let c = String(Character(try #require(Unicode.Scalar(v))))
        for field in [AlertField.name, .message] {
            let name = field == .name ? "Mu\(c)m" : "Mum"
            let message = field == .message ? "Call\(c) me" : "Call me"
            do {
                _ = try AlertSlot(name: name, number: "+15550100", message: message)
                Issue.record("U+\(String(v, radix: 16)) accepted in the \(field)")
            } catch {
                #expect(error.field == field)
                #expect(error.rule == .directionControl(position: field == .name ? 3 : 5, scalar: v))
                // The message names the character; it never carries it.
                #expect(!error.description.unicodeScalars.contains(where: TextSafety.isBidiControl))
            }
        }
    }

    @Test func theCounsellingNameFollowsTheSameRules() {
        #expect(throws: AlertFieldError.self) {
            try CounsellingLine(name: "SFU\u{202E}", displayNumber: "1", dialNumber: try PhoneNumber("123"))
        }
    }

    @Test func aReplacementCharacterIsRefused() {
        do {
            _ = try AlertSlot(name: "Mu\u{FFFD}m", number: "123", message: "Help")
            Issue.record("U+FFFD accepted")
        } catch {
            #expect(error.rule == .replacementCharacter(position: 3))
            #expect(error.description.contains("not valid UTF-8"))
        }
    }

    @Test func errorsNameControlsWithoutShowingThem() {
        let shown = AlertFieldError(.name, .notADigit(position: 1, scalar: 0x9B)).description
        #expect(shown.contains("U+009B") && !shown.contains("\u{9B}"))
    }
}
