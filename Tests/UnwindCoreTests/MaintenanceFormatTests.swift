import Foundation
import Testing
import UnwindCore

/// The pure pieces behind the maintainer's commands: vCard reading, the backup archive and the
/// core's maintenance changes.
@Suite struct MaintenanceFormatTests {
    // MARK: vCard

    @Test func vCard21WithQuotedPrintableAndBareTypes() throws {
        let text = "BEGIN:VCARD\r\nVERSION:2.1\r\nN;CHARSET=UTF-8;ENCODING=QUOTED-PRINTABLE:M=C3=BCller;J=C3=BCrgen;;;\r\n"
            + "TEL;HOME;VOICE:030 1234567\r\nTEL;CELL;PREF:+49 (171) 123-4567\r\nEND:VCARD\r\n"
        let c = try VCard.parse(Array(text.utf8))
        #expect(c.count == 1)
        #expect(c[0].name == "Jürgen Müller")
        #expect(try VCard.phoneNumber(of: c[0]).text == "+491711234567")
    }

    @Test func vCard4WithTelURIsAndFolding() throws {
        let text = """
            BEGIN:VCARD
            VERSION:4.0
            FN:Aroha Te
              Whānau
            TEL;VALUE=uri;TYPE="voice,home":tel:+64-9-555-0101
            TEL;VALUE=uri;PREF=1;TYPE="cell":tel:+64-21-555-0199;ext=12
            END:VCARD
            """
        let c = try VCard.parse(Array(text.utf8))
        #expect(c[0].name == "Aroha Te Whānau")
        #expect(c[0].bestTelephone?.value == "+64-21-555-0199")
        #expect(try VCard.phoneNumber(of: c[0]).text == "+64215550199")
    }

    @Test func theMobileNumberIsPreferredAndNothingIsInvented() throws {
        let c = VCardContact(name: "X", telephones: [VCardTelephone(value: "555 0100", types: ["HOME"]),
                                                     VCardTelephone(value: "(604) 555.0199", types: ["CELL"])])
        #expect(try VCard.phoneNumber(of: c).text == "6045550199")  // no country code added
        let plus = VCardContact(name: "Y", telephones: [VCardTelephone(value: "+1 604 555 0100 x12", types: [])])
        #expect(throws: VCard.Problem.self) { try VCard.phoneNumber(of: plus) }
        let slash = VCardContact(name: "Z", telephones: [VCardTelephone(value: "0604/5550100", types: [])])
        #expect(throws: VCard.Problem.self) { try VCard.phoneNumber(of: slash) }
    }

    @Test func choosingAContact() throws {
        let cs = ["Ann One", "Ann Two", "Bob"].map { VCardContact(name: $0, telephones: []) }
        #expect(try VCard.choose(cs, named: "bob").name == "Bob")
        #expect(try VCard.choose(cs, named: "ANN TWO").name == "Ann Two")
        #expect(try VCard.choose(cs, named: "two").name == "Ann Two")
        #expect(throws: VCard.Problem.ambiguous("Ann", matches: ["Ann One", "Ann Two"])) { try VCard.choose(cs, named: "Ann") }
        #expect(throws: VCard.Problem.chooseOne(["Ann One", "Ann Two", "Bob"])) { try VCard.choose(cs, named: nil) }
        #expect(throws: VCard.Problem.noContactNamed("Eve", available: ["Ann One", "Ann Two", "Bob"])) { try VCard.choose(cs, named: "Eve") }
    }

    @Test func malformedVCards() {
        func problem(_ s: String) -> VCard.Problem? {
            do { _ = try VCard.parse(Array(s.utf8)); return nil } catch { return error }
        }
        #expect(problem("") == .noContacts)
        #expect(problem("BEGIN:VCARD\nFN:A\n") == .unterminated(line: 1))
        #expect(problem("BEGIN:VCARD\nFN:A\nBEGIN:VCARD\nEND:VCARD\n") == .nestedCard(line: 3))
        #expect(problem("BEGIN:VCARD\nTEL:1\nEND:VCARD\n") == .noName(card: 1))
        #expect(problem("BEGIN:VCARD\nFN:A\nthis is not a property\nEND:VCARD\n") == .malformedLine(3))
        #expect(problem(String(repeating: "x", count: VCard.maximumSize + 1)) == .tooLarge(VCard.maximumSize + 1))
    }

    // MARK: Archive

    var files: [String: [UInt8]] {
        var f: [String: [UInt8]] = ["totalTime.txt": Array("1\n0\n0\n1\n1\n1\n".utf8), "sessionHistory.txt": [],
                                    "mantras.txt": Array("Café.\n".utf8), "reminders.txt": Array("never\n".utf8),
                                    "outbox/alert-1-1-abcd.msg": Array("x".utf8)]
        for n in AlertSlotFile.names { f[n] = [] }
        return f
    }

    @Test func archiveRoundTripsAndEveryTruncationIsRefused() throws {
        let a = StateArchive.make(files, created: WallTime(secondsSinceEpoch: 1_767_225_600))
        #expect(a.count % 512 == 0)
        let opened = try StateArchive.open(a)
        #expect(opened.files == files)
        #expect(opened.created == WallTime(secondsSinceEpoch: 1_767_225_600))
        for cut in stride(from: 1, to: a.count, by: 97) {
            #expect(throws: StateArchive.Problem.self) { try StateArchive.open(Array(a.prefix(cut))) }
        }
        for i in stride(from: 0, to: a.count - 1024, by: 61) where a[i] != 0 || i % 512 < 500 {
            var b = a
            b[i] ^= 0x01
            if b == a { continue }
            // A changed byte in a header, a file or the manifest is caught (padding bytes are not data).
            if (try? StateArchive.open(b))?.files == files { continue }
            #expect(throws: StateArchive.Problem.self) { try StateArchive.open(b) }
        }
    }

    @Test func archivesThatAreNotOurs() {
        func problem(_ b: [UInt8]) -> StateArchive.Problem? {
            do { _ = try StateArchive.open(b); return nil } catch { return error }
        }
        let manifest = ("manifest.txt", Array("unwind-state-archive 1\ncreated 0\n".utf8))
        #expect(problem(Tar.write([("../x", [1])], mtime: 0)) == .unsafeName("../x"))
        #expect(problem(Tar.write([("/etc/passwd", [1])], mtime: 0)) == .unsafeName("/etc/passwd"))
        #expect(problem(Tar.write([manifest, ("mantras.txt", [1]), ("mantras.txt", [1])], mtime: 0)) == .mismatch("mantras.txt", "not listed"))
        #expect(problem(Tar.write([("mantras.txt", [1])], mtime: 0)) == .noManifest)
        #expect(problem(Tar.write([("manifest.txt", Array("unwind-state-archive 2\ncreated 0\n".utf8))], mtime: 0)) == .newerFormat(2))
        #expect(problem(Tar.write([manifest, ("outbox/../../x.msg", [1])], mtime: 0)) == .unsafeName("outbox/../../x.msg"))
        #expect(problem(Tar.write([manifest], mtime: 0)) == .missing("totalTime.txt"))
        var link = Tar.write([manifest], mtime: 0)
        link[156] = UInt8(ascii: "2")
        var sum = 0
        for (i, b) in link.prefix(512).enumerated() { sum += (148..<156).contains(i) ? 0x20 : Int(b) }
        let digits = Array(String(sum, radix: 8).utf8)
        for i in 0..<6 { link[148 + i] = i < 6 - digits.count ? 0x30 : digits[i - (6 - digits.count)] }
        #expect(problem(link) == .unsupportedMember("manifest.txt", "link"))
    }

    // MARK: The core

    @Test func addingWhileThePersonConfirmsADeleteKeepsWhatTheySaw() throws {
        var core = DeviceCore(mantras: ["A", "B", "C"])
        var effects: [Effect] = []
        let now = Moment(.zero)
        for g: ButtonGesture in [.short(.page), .short(.page), .long(.select)] { core.apply(.button(g), at: now, effects: &effects) }
        #expect(core.state.overlay == .confirmDelete)
        #expect(core.apply(.maintainer(.addMantra("D")), at: now, effects: &effects) == nil)
        #expect(core.state.mantras.currentText == "A")
        core.apply(.button(.down(.select)), at: now, effects: &effects)
        #expect(core.state.mantras.items == ["B", "C", "D"])
        #expect(effects.last == .save(.mantras, "B\nC\nD\n"))
        // Outside the question, a new mantra is the one shown.
        #expect(core.apply(.maintainer(.addMantra("E")), at: now, effects: &effects) == nil)
        #expect(core.state.mantras.currentText == "E")
        // A delete that finds another text at the number changes nothing.
        #expect(core.apply(.maintainer(.deleteMantra(index: 0, expected: "A")), at: now, effects: &effects) == .listChanged)
        #expect(core.apply(.maintainer(.deleteMantra(index: 0, expected: "B")), at: now, effects: &effects) == nil)
        #expect(core.state.mantras.items == ["C", "D", "E"] && core.state.mantras.currentText == "E")
    }

    @Test func resettingStatisticsSavesZeros() {
        var core = DeviceCore(totals: BreathingTotals(totalSeconds: 100, shortestSeconds: 10, longestSeconds: 90, count: 2))
        var effects: [Effect] = []
        core.apply(.maintainer(.replaceStatistics(totals: .zero, history: [])), at: Moment(.zero), effects: &effects)
        #expect(core.state.breathing.totals == .zero)
        #expect(effects == [.save(.totalTime, "0\n0\n0\n0\n0\n0\n"), .save(.sessionHistory, "")])
    }
}
