import Testing
@testable import UnwindCore

@Suite struct PanicPageTests {
    var core: DeviceCore
    var effects: [Effect] = []

    init() throws {
        var c = DeviceCore()
        c.alertSlotsChanged([
            .ready(try AlertSlot(name: "Mum", number: "+15551234567", message: "Having a panic attack, please call")),
            .empty,
            .ready(try AlertSlot(name: "Sam", number: "5557654321", message: "Please come over")),
            .needsAttention(.lineCount(2)),
        ])
        core = c
    }

    mutating func at(_ s: Double) -> Moment { Moment(.seconds(s)) }
    mutating func press(_ g: ButtonGesture, _ s: Double) { core.apply(.button(g), at: at(s), effects: &effects) }
    mutating func tick(_ s: Double) { core.apply(.tick, at: at(s), effects: &effects) }

    var onsets: [Instant] {
        effects.compactMap { e -> Instant? in
            guard case .motor(let m) = e, m.on else { return nil }
            return m.at
        }
    }

    var sent: [[AlertRequest]] { effects.compactMap { if case .sendAlerts(let r) = $0 { r } else { nil } } }

    /// PANIC again: while any alert is still on its way, nothing is sent
    /// twice ("already on their way"); once every alert is out — even 0.05 s after the last
    /// confirmation — a person pressing again wants help again, and every contact is sent the
    /// alert again, as a new episode.
    @Test mutating func panicAgainWhilePendingSendsNothingOnceAllAreOutSendsEverything() {
        press(.down(.panic), 0); tick(1.5)
        #expect(sent.count == 1 && sent[0].map(\.slot) == [0, 2])
        core.apply(.alertDelivery(slot: 0, .sent), at: at(3), effects: &effects)
        // Sam's alert is still on its way: pressed again, nothing goes.
        press(.down(.panic), 3.5); tick(5.0)
        #expect(sent.count == 1, "sent again while one was pending")
        #expect(core.state.panic.notice == .alreadySending)
        core.apply(.alertDelivery(slot: 2, .sent), at: at(6), effects: &effects)
        // PANIC held from before the last confirmation, armed 0.05 s after it: sent again.
        press(.down(.panic), 4.55); tick(6.05)
        #expect(sent.count == 2, "a new PANIC once all were out")
        #expect(sent.last?.map(\.slot) == [0, 2])
        #expect(core.state.panic.progress.map(\.delivery) == [.queued, .queued])
    }

    /// No service centre anywhere: the alerts cannot go out until the device is fixed. The
    /// person is told at once (screen and two long pulses), not left watching "retrying".
    @Test mutating func alertsThatCannotGoOutAreSaidAndFelt() {
        press(.down(.panic), 0); tick(1.5)
        let before = onsets.count
        core.apply(.alertDelivery(slot: 0, .blocked("the SIM has no message centre number")), at: at(2), effects: &effects)
        #expect(core.state.panic.progress(ofSlot: 0)?.word == "CANNOT")
        #expect(onsets.count == before + 2, "two long pulses")
        #expect(core.state.panic.progress(ofSlot: 0)?.isFinished == false, "still retried")
    }

    /// A second PANIC while the first batch is on its way queues nothing twice; once one contact
    /// has failed for good, a PANIC sends that one again — and only that one.
    @Test mutating func aSecondPanicWhilePendingSendsNothingTwice() {
        press(.down(.panic), 0); tick(1.5)
        #expect(sent.count == 1)
        press(.up(.panic, heldFor: .seconds(1.6)), 1.6)
        press(.down(.panic), 3); tick(4.5)
        #expect(sent.count == 1, "every contact would have got everything twice")
        #expect(core.state.panic.notice == .alreadySending && core.state.panic.showsNotice(at: .seconds(5)))
        press(.up(.panic, heldFor: .seconds(1.6)), 4.6)
        core.apply(.alertDelivery(slot: 0, .sent), at: at(5), effects: &effects)
        core.apply(.alertDelivery(slot: 2, .failed("not in service")), at: at(5), effects: &effects)
        // Mum sent, Sam failed for good: nothing pending → a new PANIC is a new batch.
        press(.down(.panic), 6); tick(7.5)
        #expect(sent.count == 2 && sent[1].map(\.slot) == [0, 2])
        press(.up(.panic, heldFor: .seconds(1.6)), 7.6)
        core.apply(.alertDelivery(slot: 2, .failed("not in service")), at: at(8), effects: &effects)
        // Mum still on her way, Sam failed: PANIC sends Sam again, not Mum.
        press(.down(.panic), 9); tick(10.5)
        #expect(sent.count == 3 && sent[2].map(\.slot) == [2], "\(sent)")
        #expect(core.state.panic.notice == .resendingFailed)
        #expect(core.state.panic.progress(ofSlot: 0) == .queued && core.state.panic.progress(ofSlot: 2) == .queued)
    }

    /// A loop that ran late (no tick while PANIC was down, as under a flood of requests) still
    /// sends: the release's own held time, from the edges' timestamps, decides.
    @Test mutating func aHoldCountedByTheEdgesSendsEvenWithoutATick() {
        press(.down(.panic), 10)
        press(.up(.panic, heldFor: .seconds(1.6)), 10.05)
        #expect(sent.count == 1, "a 1.6 s hold was taken for 'released early'")
        #expect(sent.first?.map(\.slot) == [0, 2])
        #expect(core.state.panic.notice != .releasedEarly)
    }

    @Test mutating func holdingPanicSendsEveryReadySlot() {
        press(.down(.panic), 10)
        #expect(core.state.panic.armingSince == .seconds(10))
        #expect(effects.contains { if case .motor = $0 { true } else { false } })   // the ramp
        tick(11.4)
        #expect(sent.isEmpty)
        tick(11.5)
        #expect(sent.count == 1)
        #expect(sent[0].map(\.slot) == [0, 2])
        #expect(core.state.overlay == .alertStatus)
        #expect(core.state.panic.progress.map(\.delivery) == [.queued, .queued])
        effects = []
        press(.long(.panic), 11.6); press(.up(.panic, heldFor: .seconds(2)), 12)
        #expect(sent.isEmpty) // letting go after arming changes nothing
    }

    @Test mutating func releasedEarlySendsNothingAndSaysSo() {
        press(.down(.panic), 10)
        tick(11)
        press(.up(.panic, heldFor: .seconds(1.2)), 11.2)
        tick(12)
        #expect(sent.isEmpty)
        #expect(effects.contains(.cancelMotor))
        #expect(core.state.panic.notice == .releasedEarly && core.state.panic.showsNotice(at: .seconds(12)))
    }

    @Test mutating func panicWorksFromAnyPageEvenDuringASessionAndOnASleepingScreen() {
        press(.down(.select), 0)   // a breathing session runs
        press(.down(.panic), 5)
        tick(6.6)
        #expect(sent.count == 1)
        #expect(core.state.breathing.isRunning)
        var c = DeviceCore(settings: DeviceSettings(screen: ScreenCareSettings(sleepAfter: .seconds(10))))
        c.alertSlotsChanged(core.state.panic.slots)
        var e: [Effect] = []
        c.apply(.tick, at: Moment(.seconds(1)), effects: &e)
        c.apply(.tick, at: Moment(.seconds(20)), effects: &e)
        #expect(c.state.display.asleep)
        c.apply(.button(.down(.panic)), at: Moment(.seconds(21)), effects: &e)
        #expect(!c.state.display.asleep)
        c.apply(.tick, at: Moment(.seconds(22.5)), effects: &e)
        #expect(e.contains { if case .sendAlerts = $0 { true } else { false } })
    }

    @Test mutating func statusShowsEachAlertAndTheMotorTellsTheOutcome() {
        press(.down(.panic), 0); tick(1.5)
        effects = []
        core.apply(.alertDelivery(slot: 0, .sending), at: at(2), effects: &effects)
        core.apply(.alertDelivery(slot: 0, .sent), at: at(3), effects: &effects)
        // Not all sent yet: nothing felt (escalation.txt follows where each contact stands).
        #expect(effects.allSatisfy { if case .save(.escalation, _) = $0 { true } else { false } })
        core.apply(.alertDelivery(slot: 2, .retrying("network error 38")), at: at(3), effects: &effects)
        core.apply(.alertDelivery(slot: 2, .sent), at: at(9), effects: &effects)
        // All sent: three taps.
        #expect(effects.filter { $0 == .motor(MotorEdge(at: .seconds(9), on: true)) }.count == 1)
        #expect(onsets.count == 3)
        // The result stays until a button acknowledges it.
        tick(60)
        #expect(core.state.overlay == .alertStatus)
        press(.down(.left), 61)
        #expect(core.state.overlay == .none)
        press(.short(.left), 61.1)
        #expect(core.state.page == .breathing) // the acknowledging press did nothing else
    }

    @Test mutating func aPermanentFailureIsFelt() {
        press(.down(.panic), 0); tick(1.5)
        effects = []
        core.apply(.alertDelivery(slot: 2, .failed("5557654321 is not in service")), at: at(4), effects: &effects)
        #expect(onsets == [.seconds(4), .seconds(4.6)])
        #expect(core.state.panic.progress(ofSlot: 2) == .failed("5557654321 is not in service"))
    }

    @Test mutating func selectOnTheStatusStartsBreathing() {
        for _ in 0..<3 { press(.short(.page), 0) }
        #expect(core.state.page == .panic)
        press(.down(.panic), 1); tick(2.5)
        // SELECT acts on release there (held, it offers "I'm OK now").
        press(.down(.select), 3)
        #expect(core.state.overlay == .alertStatus)
        press(.short(.select), 3.2)
        #expect(core.state.page == .breathing)
        #expect(core.state.breathing.isRunning)
        #expect(core.state.overlay == .none)
    }

    @Test mutating func thePanicPageSelectsAndSendsOneSlot() {
        for _ in 0..<3 { press(.short(.page), 0) }
        press(.short(.select), 1)            // slot 1 (Mum)
        #expect(sent.last?.map(\.slot) == [0])
        press(.down(.left), 2)               // acknowledge the status
        press(.down(.right), 3)              // slot 2: empty
        press(.short(.select), 4)
        #expect(sent.count == 1)
        #expect(core.state.panic.notice == .emptySlot)
        press(.down(.right), 5); press(.down(.right), 6)   // slot 4: needs attention
        press(.short(.select), 7)
        #expect(sent.count == 1)
        #expect(core.state.panic.notice == .needsAttention)
        press(.down(.left), 8); press(.down(.left), 9); press(.down(.left), 10); press(.down(.left), 11)
        #expect(core.state.panic.selection == 5) // wraps to the counselling line
    }

    @Test mutating func counsellingLineDialsAndHangsUp() {
        for _ in 0..<3 { press(.short(.page), 0) }
        press(.down(.left), 1)
        #expect(core.state.panic.isCounsellingSelected)
        press(.short(.select), 2)
        #expect(effects.contains(.dial(CounsellingLine.sfuCounselling.dialNumber)))
        press(.short(.select), 3)
        #expect(effects.contains(.hangUp))
        press(.long(.select), 4)
        #expect(core.state.overlay == .counsellingCode)
    }

    @Test mutating func noContactsIsExplained() {
        var c = DeviceCore()
        var e: [Effect] = []
        c.apply(.button(.down(.panic)), at: Moment(.seconds(0)), effects: &e)
        c.apply(.tick, at: Moment(.seconds(1.5)), effects: &e)
        #expect(!e.contains { if case .sendAlerts = $0 { true } else { false } })
        #expect(c.state.panic.notice == .noContacts)
    }

    @Test mutating func aCancelWindowCanStopTheSend() {
        var c = DeviceCore(settings: DeviceSettings(panic: PanicSettings(cancelWindow: .seconds(5))))
        c.alertSlotsChanged(core.state.panic.slots)
        var e: [Effect] = []
        c.apply(.button(.down(.panic)), at: Moment(.seconds(0)), effects: &e)
        c.apply(.tick, at: Moment(.seconds(1.5)), effects: &e)
        #expect(c.state.panic.sendingAt == .seconds(6.5))
        c.apply(.button(.down(.right)), at: Moment(.seconds(3)), effects: &e)
        c.apply(.tick, at: Moment(.seconds(7)), effects: &e)
        #expect(!e.contains { if case .sendAlerts = $0 { true } else { false } })
        #expect(c.state.panic.notice == .cancelled)
    }
}
