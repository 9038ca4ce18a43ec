import Testing
import UnwindCore

@Suite("Alert slots: validation, files, encoding report")
struct AlertSlotTests {
    // MARK: Numbers

    @Test(arguments: ["+17787824615", "7787824615", "911", "+123", String(repeating: "9", count: 20),
                      "+" + String(repeating: "1", count: 20)])
    func validNumbers(_ text: String) throws {
        let n = try PhoneNumber(text)
        #expect(n.text == text)
        #expect(n.isInternational == text.hasPrefix("+"))
    }

    @Test func numbersAreRejectedNeverCorrected() {
        func rule(_ s: String) -> AlertFieldError.Rule? {
            do { _ = try PhoneNumber(s); return nil } catch { #expect(error.field == .number); return error.rule }
        }
        #expect(rule("") == .empty)
        #expect(rule("+") == .digitCount(0))
        #expect(rule("12") == .digitCount(2))
        #expect(rule(String(repeating: "1", count: 21)) == .digitCount(21))
        #expect(rule("+1 778 782 4615") == .notADigit(position: 3, scalar: 0x20))
        #expect(rule("(778) 782-4615") == .notADigit(position: 1, scalar: 0x28))
        #expect(rule("778-782-4615") == .notADigit(position: 4, scalar: 0x2D))
        #expect(rule("++1778") == .notADigit(position: 2, scalar: 0x2B))
        #expect(rule("1778+") == .notADigit(position: 5, scalar: 0x2B))
        #expect(rule("٧٧٨٧٨٢٤٦١٥") == .notADigit(position: 1, scalar: 0x667))  // Arabic-Indic digits are not ASCII
        #expect(rule("７７８") == .notADigit(position: 1, scalar: 0xFF17))        // nor fullwidth ones
        #expect(rule(" 7787824615") == .notADigit(position: 1, scalar: 0x20))
    }

    /// Injection: the characters that could end or extend an AT command line or a prompt.
    @Test(arguments: ["\"", "\r", "\n", ";", "\u{1A}", "\u{1B}"])
    func injectionCharactersInNumbersAreRejected(_ bad: String) {
        for text in ["+1555\(bad)0100", "\(bad)15550100", "15550100\(bad)", "1555\(bad)ATD911"] {
            #expect(throws: AlertFieldError.self) { try PhoneNumber(text) }
            #expect(throws: AlertFieldError.self) { try AlertSlot(name: "Mum", number: text, message: "Help") }
        }
    }

    @Test func errorMessagesNameTheFieldAndTheRule() {
        do { _ = try PhoneNumber("+1 778") } catch {
            #expect(error.description.hasPrefix("number: character 3 is a space (U+0020)"))
            #expect(error.description.contains("only digits and one leading \"+\""))
        }
        do { _ = try AlertSlot(name: "Mum", number: "123", message: "Help\r") } catch {
            #expect(error.field == .message)
            #expect(error.description.contains("carriage return"))
            #expect(error.description.contains("Windows line endings"))
        }
        #expect(AlertFieldError(.message, .tooLong(count: 161, limit: 160)).description
                == "message: 161 characters; at most 160 allowed")
    }

    // MARK: Names and messages

    @Test func nameRules() throws {
        _ = try AlertSlot(name: String(repeating: "n", count: 40), number: "123", message: "m")
        _ = try AlertSlot(name: "Zoë 👩‍👧", number: "123", message: "m")
        let cases: [(String, AlertFieldError.Rule)] = [
            ("", .empty), ("   ", .blank), (String(repeating: "n", count: 41), .tooLong(count: 41, limit: 40)),
            ("Mu\tm", .controlCharacter(position: 3, scalar: 9)), ("\u{FEFF}Mum", .controlCharacter(position: 1, scalar: 0xFEFF)),
            ("Mum\u{2028}", .controlCharacter(position: 4, scalar: 0x2028)),
        ]
        for (name, rule) in cases {
            #expect(throws: AlertFieldError(.name, rule)) { try AlertSlot(name: name, number: "123", message: "m") }
        }
    }

    @Test func messageRules() throws {
        let m160 = String(repeating: "x", count: 160)
        #expect(try AlertSlot(name: "a", number: "123", message: m160).encoding.parts == 1)
        #expect(throws: AlertFieldError(.message, .tooLong(count: 161, limit: 160))) {
            try AlertSlot(name: "a", number: "123", message: m160 + "x")
        }
        // 160 characters counts what a person sees: 160 emoji are 160 characters (UCS-2, 5 parts).
        let emoji = try AlertSlot(name: "a", number: "123", message: String(repeating: "😀", count: 160))
        #expect(emoji.encoding.alphabet == .ucs2 && emoji.encoding.parts == 5)
        for bad in ["\r", "\n", "\u{1A}", "\u{1B}", "\u{0}", "\u{7F}", "\u{85}"] {
            #expect(throws: AlertFieldError.self) { try AlertSlot(name: "a", number: "123", message: "Help\(bad)me") }
        }
        #expect(throws: AlertFieldError(.message, .blank)) { try AlertSlot(name: "a", number: "123", message: "  ") }
        // Quotes and semicolons are refused at save (nothing of a slot reaches a command line), naming the place.
        #expect(throws: AlertFieldError(.message, .commandCharacter(position: 8, scalar: 0x3B))) {
            try AlertSlot(name: "a", number: "123", message: "Call me; now")
        }
        #expect(throws: AlertFieldError(.message, .commandCharacter(position: 1, scalar: 0x22))) {
            try AlertSlot(name: "a", number: "123", message: "\"now\"")
        }
        // A hand-made string of combining marks is one character but dozens of parts.
        let zalgo = "a" + String(repeating: "\u{301}", count: 700)
        #expect(throws: AlertFieldError.self) { try AlertSlot(name: "a", number: "123", message: zalgo) }
    }

    // MARK: Files

    @Test func fileRoundTrip() throws {
        let a = try AlertSlot(name: "Mum", number: "+15550100001", message: "Panic attack — please call")
        let text = AlertSlotFile.format(a)
        #expect(text == "Mum\n+15550100001\nPanic attack — please call\n")
        #expect(try AlertSlotFile.parse(Array(text.utf8)) == a)
        #expect(try AlertSlotFile.parse(Array(text.dropLast().utf8)) == a, "the last line feed may be missing")
        #expect(AlertSlotFile.name(slot: 1) == "alert01.txt")
        #expect(AlertSlotFile.names == ["alert01.txt", "alert02.txt", "alert03.txt", "alert04.txt", "alert05.txt"])
    }

    @Test func slotStates() {
        #expect(AlertSlotState(file: nil) == .empty)
        #expect(AlertSlotState(file: []) == .empty)
        #expect(AlertSlotState(file: Array("Mum\n123\nHelp\n".utf8)).alert?.name == "Mum")
        #expect(AlertSlotState(file: Array("Mum\n123\n".utf8)) == .needsAttention(.lineCount(2)))
        #expect(AlertSlotState(file: Array("Mum\n123\nHelp\n\n".utf8)) == .needsAttention(.lineCount(4)))
        #expect(AlertSlotState(file: [0x4D, 0xFF, 0x0A, 0x31, 0x0A, 0x32]) == .needsAttention(.notUTF8))
        #expect(AlertSlotState(file: Array(repeating: 0x41, count: 3000)) == .needsAttention(.tooLarge(3000)))
        if case .needsAttention(let p) = AlertSlotState(file: Array("Mum\r\n123\r\nHelp\r\n".utf8)) {
            #expect(p == .invalid(AlertFieldError(.name, .controlCharacter(position: 4, scalar: 0x0D))))
            #expect(p.description.hasPrefix("line 1, name: character 4 is a carriage return"))
        } else {
            Issue.record("a CRLF file must need attention")
        }
    }

    /// Slot files crafted by hand with the dangerous characters never load as sendable alerts.
    @Test(arguments: ["\"", "\r", ";", "\u{1A}", "\u{1B}"])
    func craftedSlotFilesNeedAttention(_ bad: String) {
        #expect(AlertSlotState(file: Array("Mum\n+1555\(bad)0100\nHelp\n".utf8)).alert == nil)
        if bad != "\"" && bad != ";" {
            #expect(AlertSlotState(file: Array("Mum\n+15550100\nHelp\(bad)me\n".utf8)).alert == nil)
            #expect(AlertSlotState(file: Array("Mu\(bad)m\n+15550100\nHelp\n".utf8)).alert == nil)
        }
    }

    // MARK: Encoding report

    @Test func encodingReport() throws {
        let plain = SMSEncoding("Hello, please call me")
        #expect(plain.alphabet == .gsm7 && plain.units == 21 && plain.parts == 1)
        #expect(plain.description == "GSM-7, 1 part (21 of 160 septets)")
        let euro = SMSEncoding("10€ [x]")
        #expect(euro.alphabet == .gsm7 && euro.units == 10, "€, [ and ] take two septets each")
        let ucs = SMSEncoding("Help ✋")
        #expect(ucs.alphabet == .ucs2 && ucs.units == 6 && ucs.firstNonGSM == "✋")
        #expect(ucs.description == "UCS-2 (because of \"✋\"), 1 part (6 of 70 units)")
        #expect(SMSEncoding(String(repeating: "a", count: 161)).description == "GSM-7, 2 parts (161 septets, 152 per part)")
        #expect(SMSEncoding("éèùìòÇØøÅåÄÖÑÜ§¿äöñüàßÉÆæΔΦΓΛΩΠΨΣΘΞ¡£¥¤").alphabet == .gsm7)
        #expect(SMSEncoding("ç").alphabet == .ucs2, "only the capital Ç is in the default alphabet")
    }

    @Test func gsm7TablesRoundTrip() {
        for (septet, scalar) in GSM7.defaultAlphabet.enumerated() where septet != 0x1B {
            let u = Unicode.Scalar(scalar)!
            #expect(GSM7.septets(for: u)! == (UInt8(septet), nil))
            #expect(GSM7.decode([UInt8(septet)]) == String(Character(u)))
        }
        for e in GSM7.extensionTable {
            let u = Unicode.Scalar(e.scalar)!
            #expect(GSM7.septets(for: u)! == (0x1B, e.septet))
            #expect(GSM7.decode([0x1B, e.septet]) == String(Character(u)))
        }
        #expect(GSM7.decode([0x1B, 0x41]) == "A", "an unknown extension reads as the default character")
        #expect(GSM7.decode([0x1B, 0x1B, 0x41]) == " A")
        #expect(GSM7.decode([0x41, 0x1B]) == "A ")
        #expect(GSM7.defaultAlphabet.count == 128)
    }

    @Test func counsellingDefault() {
        let c = CounsellingLine.sfuCounselling
        #expect(c.name == "SFU Counselling")
        #expect(c.displayNumber == "(778) 782-4615")
        #expect(c.dialNumber.text == "+17787824615")
    }
}
