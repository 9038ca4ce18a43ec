import Testing
@testable import UnwindCore
@testable import UnwindRender

/// "How am I doing?"'s screens, each pinned to the pixel (the pictures: SelfCheckPictures.swift),
/// and the words that matter read off the pixels: the stem and the item, the answer chosen, the
/// band and "a self-check, not a diagnosis", the safety screen's words and the counselling line.
@Suite struct SelfCheckScreenTests {
    /// Monday 2026-03-02 12:00 UTC.
    static let noon: Int64 = 1_772_452_800
    static let day = CivilDate.day(year: 2026, month: 3, day: 2)

    /// A device with two weeks of moods, two checks, a coping card and a contact, on the page.
    static func device() -> DeviceCore {
        var moods: [MoodEntry] = []
        for d in 0..<14 where d % 3 != 2 { moods.append(MoodEntry(day: day - 13 + Int64(d), mood: 2 + d % 4)) }
        let results = [
            SelfCheckResult(taken: WallTime(secondsSinceEpoch: noon - 21 * 86_400), instrument: .gad7, answers: [2, 2, 2, 1, 1, 2, 2]),
            SelfCheckResult(taken: WallTime(secondsSinceEpoch: noon - 14 * 86_400), instrument: .gad7, answers: [2, 1, 1, 1, 1, 1, 1]),
            SelfCheckResult(taken: WallTime(secondsSinceEpoch: noon - 7 * 86_400), instrument: .gad7, answers: [1, 1, 0, 1, 1, 1, 0]),
            SelfCheckResult(taken: WallTime(secondsSinceEpoch: noon - 86_400), instrument: .phq9, answers: [1, 1, 1, 0, 0, 1, 0, 0, 0]),
        ]
        let cards = [CopingCard(concern: "I will panic at the dentist tomorrow.",
                                answer: "I have sat through it before. I can breathe slowly and ask for a pause.")]
        var core = DeviceCore(mantras: ["I am safe."], selfCheck: SelfCheckRecords(results: results, moods: moods, cards: cards))
        core.alertSlotsChanged([.ready(try! AlertSlot(name: "Mum", number: "+15551234567", message: "Please call me"))])
        var effects: [Effect] = []
        core.apply(.tick, at: Moment(.seconds(0), wall: WallTime(secondsSinceEpoch: noon)), effects: &effects)
        core.state.page = .howAmIDoing
        return core
    }

    static func state(_ view: SelfCheckView?) -> DeviceState {
        var s = device().state
        if let view { s.overlay = .selfCheck(view) }
        return s
    }

    static func results(_ i: Instrument, _ answers: [Int]) -> SelfCheckResult {
        SelfCheckResult(taken: WallTime(secondsSinceEpoch: noon), instrument: i, answers: answers)
    }

    static func question(_ kind: SelfCheckKind, step: Int, answer: Int?) -> QuestionnaireRun {
        var r = QuestionnaireRun(kind, at: .zero)
        for _ in 0..<step { r.choose(by: 1); _ = r.advance(at: .zero) }
        if let answer { for _ in 0...answer { r.choose(by: 1) } }
        return r
    }

    /// Every screen pinned, by name, with the state it is drawn from.
    static var scenes: [(String, DeviceState)] {
        let phq9 = results(.phq9, [2, 1, 2, 1, 1, 2, 1, 1, 1])
        var entry = device().state
        entry.page = .affirmations
        entry.selfCheck.cardsOnMantraPage = true
        var weekly = device().state
        weekly.page = .breathing
        weekly.selfCheck.reminder.shownSince = .zero
        var chart = ProgressChart(device().state.selfCheck, today: day, zone: .utc)
        chart.turn(by: 1)
        var turned = CardViewer(cards: device().state.selfCheck.cards, at: .zero)
        turned.turn(in: device().state.selfCheck.cards, at: .zero)
        return [
            ("page", state(nil)),
            ("question", state(.questionnaire(question(.anxiety, step: 0, answer: 2)))),
            ("longQuestion", state(.questionnaire(question(.mood, step: 7, answer: nil)))),
            ("result", state(.result(SelfCheckOutcome([phq9], hasCards: true)))),
            ("quickResult", state(.result(SelfCheckOutcome([results(.gad2, [1, 1]), results(.phq2, [2, 1])], hasCards: true)))),
            ("safety", state(.safety(SafetyStep(outcome: SelfCheckOutcome([phq9], hasCards: true))))),
            ("confirmTelling", state(.safety(SafetyStep(stage: .confirmTelling, outcome: SelfCheckOutcome([phq9], hasCards: true))))),
            ("mood", state(.mood(MoodQuestion(rating: 4)))),
            ("moodChart", state(.progress(ProgressChart(device().state.selfCheck, today: day, zone: .utc)))),
            ("anxietyChart", state(.progress(chart))),
            ("cardAnswer", state(.cards(turned))),
            ("cardsOnTheMantraPage", entry),
            ("weeklyReminder", weekly),
        ]
    }

    static func render(_ s: DeviceState, at t: Double = 1) -> Framebuffer {
        var fb = Framebuffer()
        Screen.render(s, at: .seconds(t), into: &fb)
        return fb
    }

    @Test(arguments: scenes.map(\.0)) func everyScreenIsPinnedToThePixel(_ name: String) {
        let s = Self.scenes.first { $0.0 == name }!.1
        #expect(TextArt.halfBlocks(Self.render(s)) == SelfCheckPictures.all[name].map { $0 + "\n" }, "\(name)")
    }

    func shows(_ fb: Framebuffer, _ text: String, font: BitmapFont = .small, x: Int, y: Int, _ ink: Ink = .on) -> Bool {
        var expected = Framebuffer()
        if ink == .off { expected.fill(x: 0, y: 0, width: expected.width, height: expected.height) }
        expected.text(text, font: font, x: x, y: y, ink)
        for yy in y..<(y + font.height) {
            for xx in x..<min(fb.width, x + font.textWidth(text)) where fb[xx, yy] != expected[xx, yy] { return false }
        }
        return true
    }

    func centred(_ text: String, font: BitmapFont = .small) -> Int { (128 - font.textWidth(text)) / 2 }

    @Test func anItemShowsTheStemTheQuestionnairesWordsAndTheAnswer() {
        let fb = Self.render(Self.state(.questionnaire(Self.question(.anxiety, step: 0, answer: 2))))
        #expect(shows(fb, "GAD-7 1/7", x: 1, y: 10))
        #expect(shows(fb, "Over the last 2 weeks, how", x: 1, y: 17) && shows(fb, "often have you been bothered by", x: 1, y: 24))
        #expect(shows(fb, "Feeling nervous, anxious, or on", x: 1, y: 31) && shows(fb, "edge", x: 1, y: 38))
        #expect(shows(fb, "More than half the days", x: centred("More than half the days"), y: 57, .off))
    }

    @Test func aLongItemScrollsToItsEnd() {
        let run = Self.question(.mood, step: 7, answer: nil)
        #expect(run.lines.count > 3)
        let last = run.lines[run.lines.count - 1]
        let early = Self.render(Self.state(.questionnaire(run)), at: 1)
        // After the pause and the travel (6 px a second), the last line is in the box.
        let late = Self.render(Self.state(.questionnaire(run)), at: 3 + Double(run.lines.count * 7 - 21) / 6 + 0.5)
        #expect(shows(early, run.lines[0], x: 1, y: 31))
        #expect(shows(late, last, x: 1, y: 45))
    }

    @Test func theResultSaysItIsASelfCheckNotADiagnosis() {
        let fb = Self.render(Self.state(.result(SelfCheckOutcome([Self.results(.phq9, [2, 1, 2, 1, 1, 2, 1, 1, 1])], hasCards: true))))
        #expect(shows(fb, "12 of 27", font: .regular, x: centred("12 of 27", font: .regular), y: 18))
        #expect(shows(fb, "moderate", font: .regular, x: centred("moderate", font: .regular), y: 30))
        #expect(shows(fb, "A self-check, not a diagnosis.", x: centred("A self-check, not a diagnosis."), y: 47))
        #expect(shows(fb, "your cards", x: 17, y: 57))
    }

    @Test func theSafetyScreenSaysItsWordsAndTheCounsellingLine() {
        let fb = Self.render(Self.state(.safety(SafetyStep(outcome: SelfCheckOutcome([Self.results(.phq9, Array(repeating: 1, count: 9))], hasCards: true)))))
        #expect(SafetyWords.heading == "You are not alone")
        #expect(SafetyWords.offer == ["Thoughts like these are heavy", "to carry alone. You can talk", "to someone now:"])
        #expect(shows(fb, SafetyWords.heading, x: centred(SafetyWords.heading), y: 10, .off))
        for (i, line) in SafetyWords.offer.enumerated() { #expect(shows(fb, line, x: 1, y: 18 + i * 7)) }
        #expect(shows(fb, "SFU Counselling", x: 1, y: 40) && shows(fb, "(778) 782-4615", x: 65, y: 40))
        #expect(shows(fb, "call", x: 17, y: 49) && shows(fb, "> tell my contacts", x: 0, y: 57))
        let confirm = Self.render(Self.state(.safety(SafetyStep(stage: .confirmTelling, outcome: SelfCheckOutcome([], hasCards: false)))))
        for (i, line) in SafetyWords.confirmation.enumerated() { #expect(shows(confirm, line, x: 1, y: 19 + i * 7)) }
        #expect(shows(confirm, "Other buttons: not now", x: 0, y: 57))
    }

    @Test func theWebsitesCodeFillsTheScreenAsOnTheAlertPage() {
        var s = Self.state(.safety(SafetyStep(stage: .code, outcome: SelfCheckOutcome([], hasCards: false))))
        s.panic.websiteCode = QRCodeImage(size: 21, modules: (0..<441).map { $0 % 3 == 0 }, version: 1, level: "M")
        var alertPage = s
        alertPage.overlay = .counsellingCode
        #expect(Self.render(s) == Self.render(alertPage))
    }
}
