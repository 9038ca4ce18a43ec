import Testing
@testable import UnwindCore

@Suite struct MantraListTests {
    @Test func wrapsAroundBothWays() {
        var m = MantraList(["one", "two", "three"])
        #expect(m.current == 0 && m.currentText == "one")
        m.previous()
        #expect(m.currentText == "three")
        m.next()
        #expect(m.currentText == "one")
        m.next(); m.next(); m.next()
        #expect(m.currentText == "one")
        m.previous(); m.previous()
        #expect(m.currentText == "two")
    }

    @Test func deletingDownToEmptyShowsTheSpecsMessage() {
        var m = MantraList(["a", "b", "c"], current: 2)
        #expect(m.deleteCurrent() == "c")
        #expect(m.currentText == "a")            // after the last: the first
        #expect(m.deleteCurrent() == "a")
        #expect(m.currentText == "b")
        #expect(m.deleteCurrent() == "b")
        #expect(m.isEmpty && m.currentText == nil)
        #expect(m.deleteCurrent() == nil)
        #expect(m.lines == ["No mantras found.", "Please create a new", "mantra"])
        #expect(MantraList.emptyMessage == "No mantras found. Please create a new mantra")
        m.next(); m.previous()                  // harmless on an empty list
        #expect(m.isEmpty)
    }

    @Test func linesAreWrappedWhenTheCurrentMantraChanges() {
        var m = MantraList(["I can breathe slowly. In, hold, out, hold.", "Short."])
        #expect(m.lines == ["I can breathe slowly.", "In, hold, out, hold."])
        m.next()
        #expect(m.lines == ["Short."])
        #expect(m.lines.allSatisfy { $0.count <= MantraList.columns })
    }

    @Test func addedMantraBecomesCurrent() throws {
        var m = MantraList(["a", "b"])
        try m.add("c")
        #expect(m.current == 2 && m.currentText == "c")
        #expect(throws: MantrasFile.Problem.invalid(line: 4, .tooLong(161))) {
            try m.add(String(repeating: "x", count: 161))
        }
        #expect(m.count == 3)
    }

    @Test func replaceKeepsAnIndexThatStillExists() {
        var m = MantraList(["a", "b", "c"], current: 2)
        m.replace(with: ["x", "y"])
        #expect(m.current == 1)
        m.replace(with: ["x", "y", "z"], current: 2)
        #expect(m.currentText == "z")
    }
}

@Suite struct MantrasFileTests {
    func parse(_ s: String) throws(MantrasFile.Problem) -> [String] { try MantrasFile.parse(Array(s.utf8)) }

    @Test(arguments: [
        "I am safe.\nOne breath at a time.\n",
        "",
        "Caf\u{E9} au lait, calme.\n",
        String(repeating: "x", count: 160) + "\n",
        "a\nb\nc\n",
    ])
    func roundTripsByteForByte(_ text: String) throws {
        #expect(MantrasFile.format(try parse(text)) == text)
    }

    @Test func finalNewlineIsOptionalOnReading() throws {
        #expect(try parse("a\nb") == ["a", "b"])
    }

    @Test func theCharacterLimitIs160() throws {
        #expect(try parse(String(repeating: "y", count: 160) + "\n").first?.count == 160)
        #expect(throws: MantrasFile.Problem.invalid(line: 2, .tooLong(161))) {
            try parse("ok\n" + String(repeating: "y", count: 161) + "\n")
        }
        // Characters, not bytes: 160 accented letters (320 bytes) are fine.
        #expect(try parse(String(repeating: "\u{E9}", count: 160)).count == 1)
        #expect(MantrasFile.problem(with: String(repeating: "a", count: 160)) == nil)
        #expect(MantrasFile.problem(with: String(repeating: "a", count: 161)) == .tooLong(161))
    }

    @Test(arguments: [
        ("a\n\nb\n", MantrasFile.Problem.invalid(line: 2, .blank)),        // a blank line
        ("\n", .invalid(line: 1, .blank)),
        ("   \n", .invalid(line: 1, .blank)),
        ("a\r\nb\n", .invalid(line: 1, .character(0x0D))),                 // Windows line ends
        ("tab\there\n", .invalid(line: 1, .character(0x09))),
        ("bell\u{7}\n", .invalid(line: 1, .character(0x07))),
        ("smile \u{1F600}\n", .invalid(line: 1, .character(0x1F600))),     // the display cannot draw it
        (" leading\n", .invalid(line: 1, .surroundingSpace)),
        ("trailing \n", .invalid(line: 1, .surroundingSpace)),
    ])
    func badLinesAreRejected(_ text: String, _ problem: MantrasFile.Problem) {
        #expect(throws: problem) { try parse(text) }
    }

    @Test func invalidUTF8IsRejected() {
        #expect(throws: MantrasFile.Problem.notUTF8(line: 2)) { try MantrasFile.parse(Array("ok\n".utf8) + [0xFF, 0x0A]) }
    }

    @Test func salvageKeepsTheGoodLines() {
        let bytes = Array("  I am here.  \r\n\nok\n\(String(repeating: "z", count: 161))\nbell\u{7}\nend\n".utf8) + [0xC3, 0x0A]
        #expect(MantrasFile.salvage(bytes) == ["I am here.", "ok", "end"])
    }

    @Test func problemsReadWell() {
        #expect(MantraProblem.tooLong(170).description == "a mantra has at most 160 characters; this one has 170")
        #expect(MantraProblem.character(0x0D).description == "a mantra cannot contain control characters (found U+000D)")
        #expect(MantraProblem.character(0x1F600).description == "the display cannot show the character U+1F600")
        #expect(MantrasFile.Problem.invalid(line: 3, .blank).description == "mantras.txt line 3: a mantra cannot be empty")
    }
}

@Suite struct AffirmationsPageTests {
    var core = DeviceCore(mantras: ["one", "two", "three"])
    var effects: [Effect] = []
    var t = 0.0

    init() { core.state.page = .affirmations }

    mutating func press(_ b: Button, long: Bool = false) {
        t += 1
        core.apply(.button(.down(b)), at: Moment(.seconds(t)), effects: &effects)
        if long {
            core.apply(.button(.long(b)), at: Moment(.seconds(t + 0.8)), effects: &effects)
            core.handle(.up(b, heldFor: .seconds(1)), at: Moment(.seconds(t + 1)), effects: &effects)
        } else {
            core.apply(.button(.short(b)), at: Moment(.seconds(t + 0.08)), effects: &effects)
            core.handle(.up(b, heldFor: .milliseconds(80)), at: Moment(.seconds(t + 0.08)), effects: &effects)
        }
    }

    var saves: [String] { effects.compactMap { if case .save(.mantras, let s) = $0 { s } else { nil } } }

    @Test mutating func leftAndRightBrowseWithWrapAround() {
        press(.left)
        #expect(core.state.mantras.currentText == "three")
        #expect(core.state.mantraShownAt == .seconds(1))
        press(.right); press(.right)
        #expect(core.state.mantras.currentText == "two")
        #expect(effects.isEmpty)             // browsing changes no file
    }

    @Test mutating func longSelectAsksAndSecondSelectDeletes() {
        press(.right)
        press(.select, long: true)
        #expect(core.state.overlay == .confirmDelete)
        #expect(core.state.mantras.count == 3)
        press(.select)
        #expect(core.state.overlay == .none)   // the confirming press does not also open the reminder settings
        #expect(core.state.mantras.items == ["one", "three"])
        #expect(core.state.mantras.currentText == "three")
        #expect(saves == ["one\nthree\n"])
    }

    @Test mutating func anyOtherButtonKeepsTheMantra() {
        for b in [Button.left, .right, .page] {
            press(.select, long: true)
            #expect(core.state.overlay == .confirmDelete)
            press(b)
            #expect(core.state.overlay == .none)
            #expect(core.state.page == .affirmations)   // PAGE only cancelled
            #expect(core.state.mantras.count == 3)
        }
        #expect(core.state.mantras.currentText == "one")   // the cancelling LEFT/RIGHT did not browse
        #expect(saves.isEmpty)
    }

    @Test mutating func deletingEverythingLeavesTheMessageAndNoConfirm() {
        for _ in 0..<3 { press(.select, long: true); press(.select) }
        #expect(core.state.mantras.isEmpty)
        #expect(saves.last == "")
        press(.select, long: true)
        #expect(core.state.overlay == .none)     // nothing to delete
        #expect(core.state.mantras.lines.joined(separator: " ") == MantraList.emptyMessage)
    }

    @Test mutating func shortSelectOpensTheReminderSettings() {
        press(.select)
        #expect(core.state.overlay == .reminderSettings(ReminderEditor(.never)))
    }

    @Test mutating func maintainersMantraBecomesCurrentAndIsSaved() throws {
        try core.addMantra("I am learning.", at: Moment(.seconds(50)), effects: &effects)
        #expect(core.state.mantras.current == 3)
        #expect(core.state.mantraShownAt == .seconds(50))
        #expect(saves == ["one\ntwo\nthree\nI am learning.\n"])
    }
}
