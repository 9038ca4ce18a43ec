import Testing
@testable import UnwindCore

/// PHQ-9 item 9 answered above "Not at all": the counselling line at once (before the total),
/// its call through the modem, its website's code; the offer to tell the alert contacts, which
/// sends nothing until the person's SELECT on the confirmation and then sends exactly what PANIC
/// sends.
@Suite struct SafetyStepTests {
    var core: DeviceCore
    var effects: [Effect] = []

    init(contacts: Bool = true) throws {
        core = DeviceCore(website: "https://www.sfu.ca/students/health/", websiteCode: QRCodeImage(size: 21, modules: Array(repeating: false, count: 441), version: 1, level: "M"))
        if contacts {
            core.alertSlotsChanged([
                .ready(try AlertSlot(name: "Mum", number: "+15551234567", message: "Please call me")),
                .empty,
                .ready(try AlertSlot(name: "Sam", number: "5557654321", message: "Please come over")),
            ])
        }
    }

    func at(_ s: Double) -> Moment { Moment(.seconds(s), wall: WallTime(secondsSinceEpoch: 1_772_452_800 + Int64(s))) }
    mutating func press(_ g: ButtonGesture, _ s: Double) { core.apply(.button(g), at: at(s), effects: &effects) }
    mutating func tap(_ b: Button, _ s: Double) {
        press(.down(b), s); press(.short(b), s + 0.05); press(.up(b, heldFor: .milliseconds(50)), s + 0.05)
    }
    mutating func tick(_ s: Double) { core.apply(.tick, at: at(s), effects: &effects) }

    /// The PHQ-9 answered with `answers` (0–3 each), from the page.
    mutating func phq9(_ answers: [Int]) {
        core.state.page = .howAmIDoing
        core.state.selfCheck.entry = .moodCheck
        tap(.select, 1)
        for (i, a) in answers.enumerated() {
            for _ in 0...a { tap(.right, 2 + Double(i)) }
            tap(.select, 2 + Double(i))
        }
    }

    var sent: [[AlertRequest]] { effects.compactMap { if case .sendAlerts(let r) = $0 { r } else { nil } } }
    var safety: SafetyStep? {
        if case .selfCheck(.safety(let s)) = core.state.overlay { return s }
        return nil
    }

    @Test(arguments: [1, 2, 3]) mutating func itemNineAboveNotAtAllBringsTheCounsellingLineAtOnce(_ a: Int) {
        phq9([0, 1, 0, 0, 0, 0, 0, 0, a])
        #expect(safety?.stage == .offer)
        // The result is on the card already, item 9 with it.
        #expect(core.state.selfCheck.results.last?.answers == [0, 1, 0, 0, 0, 0, 0, 0, a])
        #expect(effects.contains { if case .save(.selfChecks, let t) = $0 { t.hasSuffix(" phq9 01000000\(a) \(1 + a)\n") } else { false } })
        // Nothing is sent, nothing dialled, nothing felt by itself.
        #expect(sent.isEmpty && !effects.contains { if case .dial = $0 { true } else if case .motor = $0 { true } else { false } })
        // PAGE goes on to the results.
        tap(.page, 30)
        guard case .selfCheck(.result(let o)) = core.state.overlay else { Issue.record("no result"); return }
        #expect(o.results[0].total == 1 + a)
    }

    @Test mutating func itemNineNotAtAllGoesStraightToTheResults() {
        phq9([3, 3, 3, 3, 3, 3, 3, 3, 0])
        guard case .selfCheck(.result(let o)) = core.state.overlay else { Issue.record("no result"); return }
        #expect(o.results[0].total == 24 && o.results[0].band == .severe)
    }

    @Test mutating func selectCallsTheCounsellingLineAndHangsUp() {
        phq9([0, 0, 0, 0, 0, 0, 0, 0, 1])
        tap(.select, 30)
        #expect(effects.contains(.dial(core.state.panic.counselling.dialNumber)) && core.state.panic.callActive)
        #expect(safety?.stage == .offer)
        tap(.select, 40)
        #expect(effects.contains(.hangUp) && !core.state.panic.callActive)
    }

    @Test mutating func holdingSelectShowsTheWebsitesCodeAndAnyButtonReturns() {
        phq9([0, 0, 0, 0, 0, 0, 0, 0, 2])
        press(.down(.select), 30); press(.long(.select), 30.8); press(.up(.select, heldFor: .seconds(1)), 31)
        #expect(safety?.stage == .code && core.state.overlay.showsCounsellingCode)
        #expect(!effects.contains { if case .dial = $0 { true } else { false } })
        tap(.left, 32)
        #expect(safety?.stage == .offer)
    }

    @Test mutating func tellingTheContactsWaitsForTheConfirmationsSelect() {
        phq9([0, 0, 0, 0, 0, 0, 0, 0, 3])
        tap(.right, 30)
        #expect(safety?.stage == .confirmTelling && sent.isEmpty)
        for b in [Button.left, .right, .page] {
            tap(b, 31)
            #expect(safety?.stage == .offer && sent.isEmpty, "\(b) must not send")
            tap(.right, 32)
        }
        tick(600)                                  // time alone sends nothing either
        #expect(sent.isEmpty && core.state.display.asleep)
        tap(.select, 601)                          // the press that wakes the screen only wakes it
        #expect(sent.isEmpty && safety?.stage == .confirmTelling)
        tap(.select, 602)
        // PANIC's own path: the same alerts, the same status screen.
        var panic = try! SafetyStepTests()
        panic.press(.down(.panic), 0)
        panic.tick(1.6)
        #expect(sent.count == 1 && sent == panic.sent)
        #expect(core.state.overlay == .alertStatus && core.state.panic.progress.map(\.slot) == [0, 2])
    }

    @Test mutating func withoutContactsNothingIsOffered() throws {
        var c = try SafetyStepTests(contacts: false)
        c.phq9([0, 0, 0, 0, 0, 0, 0, 0, 1])
        c.tap(.right, 30)
        #expect(c.safety?.stage == .offer && c.sent.isEmpty)
    }

    @Test mutating func panicStillWorksOverTheSafetyScreen() {
        phq9([0, 0, 0, 0, 0, 0, 0, 0, 1])
        press(.down(.panic), 30)
        tick(31.6)
        #expect(sent.count == 1 && core.state.overlay == .alertStatus)
    }
}
