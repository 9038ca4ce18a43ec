import Testing
@testable import UnwindCore

/// "How am I doing?" through the core's one door: the page after ALERT, a self-check answered
/// item by item (LEFT/RIGHT, SELECT, PAGE back), its dated result saved and shown with its band,
/// the mood once a day, the chart's data, the coping cards (from the page, a high result and the
/// affirmations page), a screen left alone.
@Suite struct SelfCheckPageTests {
    var core: DeviceCore
    var effects: [Effect] = []
    /// 2026-03-02 12:00 UTC, a Monday.
    static let noon: Int64 = 1_772_452_800

    init() {
        core = DeviceCore(mantras: ["One breath at a time.", "I am safe."])
    }

    func at(_ s: Double) -> Moment { Moment(.seconds(s), wall: WallTime(secondsSinceEpoch: Self.noon + Int64(s))) }
    mutating func press(_ g: ButtonGesture, _ s: Double) { core.apply(.button(g), at: at(s), effects: &effects) }
    /// A short press, as the edge reports one: down, short, up.
    mutating func tap(_ b: Button, _ s: Double) {
        press(.down(b), s); press(.short(b), s + 0.05); press(.up(b, heldFor: .milliseconds(50)), s + 0.05)
    }
    mutating func tick(_ s: Double) { core.apply(.tick, at: at(s), effects: &effects) }
    mutating func toPage(_ s: Double) { while core.state.page != .howAmIDoing { tap(.page, s) } }
    /// Chooses entry `e` on the page and opens it.
    mutating func open(_ e: SelfCheckEntry, _ s: Double) {
        toPage(s)
        while core.state.selfCheck.entry != e { tap(.right, s) }
        tap(.select, s)
    }
    /// Answers the item on screen with `answer` (0–3) and takes it.
    mutating func answer(_ a: Int, _ s: Double) {
        tap(.right, s)
        for _ in 0..<a { tap(.right, s) }
        tap(.select, s)
    }
    var saves: [StateFile: String] {
        var d: [StateFile: String] = [:]
        for case .save(let f, let t) in effects { d[f] = t }
        return d
    }
    var run: QuestionnaireRun? {
        if case .selfCheck(.questionnaire(let r)) = core.state.overlay { return r }
        return nil
    }

    @Test mutating func thePageComesAfterTheAlertPageAndItsEntriesWrap() {
        for _ in 0..<4 { tap(.page, 1) }
        #expect(core.state.page == .howAmIDoing && Page.howAmIDoing.menuLabel == "CHECK")
        #expect(core.state.selfCheck.entry == .mood)
        tap(.left, 2)
        #expect(core.state.selfCheck.entry == .reminder)
        tap(.right, 3)
        tap(.right, 3)
        #expect(core.state.selfCheck.entry == .quick)
        tap(.page, 4)
        #expect(core.state.page == .breathing)
    }

    @Test mutating func aQuickCheckIsAnsweredItemByItemAndSavedDated() {
        open(.quick, 1)
        #expect(run?.count == 4 && run?.current.instrument == .gad2 && run?.current.index == 0)
        #expect(run?.lines == ["Feeling nervous, anxious, or on", "edge"])
        // SELECT before an answer does nothing: every answer is the person's.
        tap(.select, 2)
        #expect(run?.step == 0 && run?.answer == nil)
        // The first press gives "Not at all"; the answers stop at their ends.
        tap(.left, 3)
        #expect(run?.answer == 0)
        for _ in 0..<5 { tap(.right, 3) }
        #expect(run?.answer == 3)
        tap(.select, 4)
        answer(1, 5)
        #expect(run?.current.instrument == .phq2 && run?.current.index == 0)
        // PAGE goes back, the answer kept.
        tap(.page, 6)
        #expect(run?.current.instrument == .gad2 && run?.current.index == 1 && run?.answer == 1)
        tap(.select, 7)
        answer(0, 8)
        answer(2, 9)
        #expect(saves[.selfChecks] == "\(Self.noon + 9) gad2 31 4\n\(Self.noon + 9) phq2 02 2\n")
        guard case .selfCheck(.result(let o)) = core.state.overlay else { Issue.record("no result"); return }
        #expect(o.results.map(\.band) == [.fullCheckSuggested, .belowCutOff])
        #expect(o.offer == .fullCheck(.anxiety))
        // SELECT takes the offer: the GAD-7, from its first item.
        tap(.select, 10)
        #expect(run?.kind == .anxiety && run?.step == 0)
    }

    @Test mutating func pageOnTheFirstItemLeavesAndNothingIsSaved() {
        open(.anxietyCheck, 1)
        answer(3, 2)
        tap(.page, 3)
        tap(.page, 4)
        #expect(core.state.overlay == .none && core.state.page == .howAmIDoing)
        #expect(saves[.selfChecks] == nil && core.state.selfCheck.results.isEmpty)
    }

    @Test mutating func aFullCheckShowsItsTotalAndBandAndAHighOneOffersTheCards() {
        core.state.selfCheck.cards = [CopingCard(concern: "It will never end.", answer: "It has ended before.")]
        open(.anxietyCheck, 1)
        for (i, a) in [2, 2, 1, 2, 1, 1, 2].enumerated() { answer(a, 2 + Double(i)) }
        guard case .selfCheck(.result(let o)) = core.state.overlay else { Issue.record("no result"); return }
        #expect(o.results.count == 1 && o.results[0].total == 11 && o.results[0].band == .moderate)
        #expect(o.offer == .cards)
        tap(.select, 20)
        guard case .selfCheck(.cards(let v)) = core.state.overlay else { Issue.record("no cards"); return }
        #expect(v.lines == ["It will never end."])
        tap(.select, 21)
        guard case .selfCheck(.cards(let turned)) = core.state.overlay else { Issue.record("closed"); return }
        #expect(turned.showsAnswer && turned.lines == ["It has ended before."])
        tap(.page, 22)
        #expect(core.state.overlay == .none)
    }

    @Test mutating func aHighResultWithoutCardsOffersABreath() {
        open(.moodCheck, 1)
        for i in 0..<9 { answer(i == 8 ? 0 : 2, 2 + Double(i)) }
        guard case .selfCheck(.result(let o)) = core.state.overlay else { Issue.record("no result"); return }
        #expect(o.results[0].total == 16 && o.results[0].band == .moderatelySevere && o.offer == .breathe)
        tap(.select, 20)
        #expect(core.state.page == .breathing && core.state.breathing.isRunning)
    }

    @Test mutating func theMoodIsKeptOnceADayAndTheSecondReplacesTheFirst() {
        open(.mood, 1)
        tap(.select, 2)                       // nothing chosen: nothing kept
        #expect(saves[.moods] == nil)
        tap(.right, 3)
        guard case .selfCheck(.mood(let q)) = core.state.overlay else { Issue.record("no question"); return }
        #expect(q.rating == 3)                // the first press starts in the middle
        tap(.right, 3); tap(.right, 3); tap(.right, 3)
        tap(.select, 4)
        #expect(saves[.moods] == "2026-03-02 5\n" && core.state.overlay == .none)
        tick(5)
        #expect(core.state.selfCheck.summary.moodToday == 5)
        // The same day again: asked with today's answer, replaced.
        open(.mood, 6)
        guard case .selfCheck(.mood(let again)) = core.state.overlay else { Issue.record("no question"); return }
        #expect(again.rating == 5)
        tap(.left, 7)
        tap(.select, 7)
        #expect(saves[.moods] == "2026-03-02 4\n")
        // The next day: a new line.
        open(.mood, 86_400)
        tap(.right, 86_401); tap(.left, 86_401)           // 3, then 2
        tap(.select, 86_402)
        #expect(saves[.moods] == "2026-03-02 4\n2026-03-03 2\n")
        tick(86_403)
        #expect(core.state.selfCheck.summary.moodToday == 2)
    }

    @Test mutating func theChartHoldsTheLastEightWeeks() {
        let day = CivilDate.day(year: 2026, month: 3, day: 2)
        core.state.selfCheck.moods = [MoodEntry(day: day - 60, mood: 1), MoodEntry(day: day - 55, mood: 2), MoodEntry(day: day, mood: 4)]
        core.state.selfCheck.results = [
            SelfCheckResult(taken: WallTime(secondsSinceEpoch: Self.noon - 7 * 86_400), instrument: .gad7, answers: [3, 3, 3, 3, 0, 0, 0]),
            SelfCheckResult(taken: WallTime(secondsSinceEpoch: Self.noon - 86_400), instrument: .gad2, answers: [3, 3]),
            SelfCheckResult(taken: WallTime(secondsSinceEpoch: Self.noon), instrument: .phq9, answers: [1, 1, 1, 1, 1, 0, 0, 0, 0]),
        ]
        open(.progress, 1)
        guard case .selfCheck(.progress(let c)) = core.state.overlay else { Issue.record("no chart"); return }
        #expect(c.moods == [ChartPoint(day: 0, value: 2), ChartPoint(day: 55, value: 4)])
        #expect(c.anxietyChecks == [ChartPoint(day: 48, value: 12)])   // the quick check is not drawn
        #expect(c.moodChecks == [ChartPoint(day: 55, value: 5)])
        tap(.right, 2)
        guard case .selfCheck(.progress(let turned)) = core.state.overlay else { Issue.record("closed"); return }
        #expect(turned.view == .anxietyChecks && turned.points == c.anxietyChecks)
        tap(.select, 3)
        #expect(core.state.overlay == .none)
    }

    @Test mutating func aScreenLeftAloneForHalfAnHourClosesUnsaved() {
        open(.moodCheck, 1)
        answer(2, 2)
        tick(2 + 29 * 60)
        #expect(run != nil)
        tick(2 + 30 * 60)
        #expect(core.state.overlay == .none && core.state.selfCheck.results.isEmpty)
    }

    @Test mutating func theCardsSitBetweenTheLastMantraAndTheFirst() {
        core.state.page = .affirmations
        tap(.right, 1)
        #expect(core.state.mantras.current == 1 && !core.state.selfCheck.showsCardsOnMantraPage)
        tap(.right, 2)                        // no cards: the list wraps as ever
        #expect(core.state.mantras.current == 0)
        core.apply(.maintainer(.addCopingCard(CopingCard(concern: "What if I fail?", answer: "Then I learn."))), at: at(3), effects: &effects)
        #expect(saves[.copingCards] == "What if I fail?\tThen I learn.\n")
        tap(.left, 4)                         // before the first mantra: the cards
        #expect(core.state.selfCheck.showsCardsOnMantraPage && core.state.mantras.current == 1)
        tap(.left, 5)                         // back to the last mantra
        #expect(!core.state.selfCheck.showsCardsOnMantraPage && core.state.mantras.current == 1)
        tap(.right, 6)
        #expect(core.state.selfCheck.showsCardsOnMantraPage)
        // Holding SELECT there deletes nothing; SELECT opens the cards.
        press(.down(.select), 7); press(.long(.select), 7.8); press(.up(.select, heldFor: .seconds(1)), 8)
        #expect(core.state.overlay == .none && core.state.mantras.count == 2)
        tap(.select, 9)
        guard case .selfCheck(.cards(let v)) = core.state.overlay else { Issue.record("no cards"); return }
        #expect(v.lines == ["What if I fail?"])
        tap(.page, 10)
        tap(.right, 11)                       // from the cards on to the first mantra
        #expect(!core.state.selfCheck.showsCardsOnMantraPage && core.state.mantras.current == 0)
    }

    @Test mutating func theMaintainersCardsAreCheckedAndDeletedOnlyAsSeen() {
        let card = CopingCard(concern: "Concern", answer: "Answer")
        #expect(core.apply(.maintainer(.addCopingCard(CopingCard(concern: "x\u{7}", answer: "y"))), at: at(1), effects: &effects)
            == .copingCard("the concern cannot contain control characters (found U+0007)"))
        core.apply(.maintainer(.addCopingCard(card)), at: at(2), effects: &effects)
        #expect(core.apply(.maintainer(.deleteCopingCard(index: 0, expected: CopingCard(concern: "Other", answer: "Answer"))), at: at(3), effects: &effects) == .cardsChanged)
        #expect(core.apply(.maintainer(.deleteCopingCard(index: 0, expected: card)), at: at(4), effects: &effects) == nil)
        #expect(core.state.selfCheck.cards.isEmpty && saves[.copingCards] == "")
    }
}
