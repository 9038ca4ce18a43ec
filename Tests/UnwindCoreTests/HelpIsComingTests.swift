import Testing
@testable import UnwindCore

/// After the alerts: delivered, replies, escalation calls and "I'm OK now", on simulated time.
@Suite struct HelpIsComingTests {
    var core: DeviceCore
    var effects: [Effect] = []

    static let mum = "+17785551234", sam = "6045557654"

    init() throws {
        try self.init(settings: DeviceSettings())
    }

    init(settings: DeviceSettings) throws {
        var c = DeviceCore(settings: settings)
        c.alertSlotsChanged([
            .ready(try AlertSlot(name: "Mum", number: Self.mum, message: "Having a panic attack, please call")),
            .empty,
            .ready(try AlertSlot(name: "Sam", number: Self.sam, message: "Please come over")),
        ])
        core = c
    }

    func at(_ s: Double) -> Moment { Moment(.seconds(s)) }
    mutating func press(_ g: ButtonGesture, _ s: Double) { core.apply(.button(g), at: at(s), effects: &effects) }
    mutating func tick(_ s: Double) { core.apply(.tick, at: at(s), effects: &effects) }
    mutating func news(_ slot: Int, _ d: AlertDelivery, _ s: Double) { core.apply(.alertDelivery(slot: slot, d), at: at(s), effects: &effects) }
    mutating func reply(_ from: String, _ text: String, id: String = "r1", _ s: Double) {
        core.apply(.replyReceived(IncomingReply(id: id, from: from, text: text)), at: at(s), effects: &effects)
    }

    /// PANIC held at 0, both alerts sent at 5 s.
    mutating func panicSent() {
        press(.down(.panic), 0); tick(1.5)
        news(0, .sent, 5); news(2, .sent, 5)
        effects = []
    }

    var dialled: [String] { effects.compactMap { if case .dial(let n) = $0 { n.text } else { nil } } }
    var hangUps: Int { effects.filter { $0 == .hangUp }.count }
    var sent: [AlertRequest] { effects.flatMap { e -> [AlertRequest] in if case .sendAlerts(let r) = e { r } else { [] } } }
    var pulses: [(at: Instant, length: Duration)] {
        var on: [Instant] = [], out: [(Instant, Duration)] = []
        for case .motor(let m) in effects {
            if m.on { on.append(m.at) } else if let a = on.popLast() { out.append((a, m.at - a)) }
        }
        return out.sorted { $0.0 < $1.0 }
    }

    // MARK: Delivered

    @Test mutating func deliveredIsToldApartFromSent() {
        press(.down(.panic), 0); tick(1.5)
        effects = []
        news(0, .sent, 5)
        #expect(core.state.panic.progress(ofSlot: 0) == .sent)
        #expect(pulses.isEmpty)
        news(2, .sent, 6)
        // All sent: three quick taps.
        #expect(pulses.map(\.length) == [.milliseconds(80), .milliseconds(80), .milliseconds(80)])
        effects = []
        news(0, .delivered, 9)
        #expect(core.state.panic.progress(ofSlot: 0) == .delivered)
        #expect(AlertDelivery.delivered.word == "DELIVERED")
        // Delivered: two slow pulses, unlike "sent".
        #expect(pulses.map(\.length) == [.milliseconds(250), .milliseconds(250)])
        // Told once per contact.
        effects = []
        news(0, .delivered, 10)
        #expect(pulses.isEmpty)
    }

    @Test mutating func withoutAReportSentStandsForever() {
        panicSent()
        for s in stride(from: 6.0, through: 3600, by: 60) { tick(s) }
        #expect(core.state.panic.progress.map(\.delivery) == [.sent, .sent])
    }

    // MARK: Replies

    @Test(arguments: [
        ("+17785551234", true), ("17785551234", true), ("7785551234", true), ("0017785551234", true),
        ("01117785551234", true), ("+17785551235", false), ("+447785551234", false /* both international: another country */),
        ("5551234", false), ("", false), ("+", false), ("VODAFONE", false), ("+1778555123a", false),
        ("778 555 1234", false), ("+1\u{0}7785551234", false),
    ])
    func numbersMatchInEveryForm(_ sender: String, _ matches: Bool) throws {
        let mum = try PhoneNumber("+17785551234")
        #expect(mum.isSameNumber(asSender: sender) == matches)
    }

    @Test(arguments: [("+447700900123", "07700900123", true), ("07700900123", "+447700900123", true),
                      ("+447700900123", "447700900123", true), ("6045557654", "+16045557654", true),
                      ("6045557654", "16045557654", true), ("6045557654", "6045557655", false)])
    func nationalAndInternationalForms(_ stored: String, _ sender: String, _ matches: Bool) throws {
        #expect(try PhoneNumber(stored).isSameNumber(asSender: sender) == matches)
    }

    /// The one rule the screen and `unwind replies` share: with only national contacts, the
    /// counselling line's "+1" says which country they are in.
    @Test func theCounsellingLineSaysWhichCountryANationalContactIsIn() throws {
        let slots: [AlertSlotState] = [.empty, .ready(try AlertSlot(name: "Sam", number: "6045557654", message: "Please come"))]
        let line = try PhoneNumber("+17787824615")
        #expect(AlertSlotState.slot(sending: "+16045557654", in: slots, counselling: line) == 1)
        #expect(AlertSlotState.slot(sending: "6045557654", in: slots, counselling: line) == 1)
        #expect(AlertSlotState.slot(sending: "+446045557654", in: slots, counselling: line) == nil)
        #expect(AlertSlotState.slot(sending: "+446045557654", in: slots, counselling: nil) == 1)   // no country known
    }

    /// A long reply scrolls from when it came on screen: its arrival, or the press that put the
    /// one before it away — not the arrival of one that waited behind another.
    @Test mutating func eachReplyIsOnScreenFromWhenItIsShown() {
        panicSent()
        reply("17785551234", "On my way", 30)
        reply("6045557654", "Coming too", id: "r2", 32)
        #expect(core.state.panic.aftercare.replyShownSince == .seconds(30))
        press(.down(.left), 40)
        #expect(core.state.panic.aftercare.replies.map(\.name) == ["Sam"])
        #expect(core.state.panic.aftercare.replyShownSince == .seconds(40))
    }

    @Test mutating func aContactsReplyIsShownAndAcknowledges() {
        panicSent()
        press(.down(.left), 6)   // the person closed the status screen
        #expect(core.state.overlay == .none)
        reply("17785551234", "On my way, 10 min", 30)
        #expect(core.state.overlay == .alertStatus)
        #expect(core.state.panic.aftercare.replies.map(\.name) == ["Mum"])
        #expect(core.state.panic.aftercare.replies.first?.lines == ["On my way, 10 min"])
        #expect(core.state.panic.progress.first { $0.slot == 0 }?.acknowledged == true)
        #expect(core.state.panic.progress.first { $0.slot == 2 }?.acknowledged == false)
        // Three slow swells.
        #expect(pulses.map(\.length) == Array(repeating: .milliseconds(500), count: 3))
        // The same reply found again (a restart) is not shown twice.
        reply("17785551234", "On my way, 10 min", 31)
        #expect(core.state.panic.aftercare.replies.count == 1)
        // Any button dismisses it, and the inbox remembers.
        effects = []
        press(.down(.right), 40)
        #expect(core.state.panic.aftercare.replies.isEmpty)
        #expect(effects.contains(.markRepliesSeen(["r1"])))
        #expect(core.state.overlay == .alertStatus)
    }

    @Test mutating func aStrangersReplyIsNeverShown() {
        panicSent()
        press(.down(.left), 6)
        reply("+19995550000", "Who is this?", 30)
        reply("VODAFONE", "Your bill is ready", id: "r2", 31)
        #expect(core.state.overlay == .none)
        #expect(core.state.panic.aftercare.replies.isEmpty)
        #expect(effects.isEmpty)
    }

    @Test mutating func aLongReplyShowsItsFirstWords() {
        panicSent()
        reply(Self.sam, String(repeating: "word ", count: 60) + "\u{1B}[2J end", 30)
        let lines = core.state.panic.aftercare.replies[0].lines
        #expect(lines.count == ContactReply.shownLines)
        #expect(lines.last?.hasSuffix("...") == true)
        #expect(lines.allSatisfy { $0.count <= ContactReply.columns })
        #expect(!lines.joined().unicodeScalars.contains { $0.value == 0x1B })
    }

    // MARK: Escalation

    /// The alerts went at 1.5 s (PANIC held from 0): the ladder is due at 181.5 s.
    @Test mutating func nobodyAnswersSoEachContactIsRung() {
        panicSent()
        tick(181.4)
        #expect(dialled.isEmpty)
        tick(181.5)
        #expect(dialled == [Self.mum])
        #expect(core.state.panic.aftercare.ringing == 0)
        tick(206.4); #expect(hangUps == 0)
        tick(206.5); #expect(hangUps == 1)
        tick(209.4); #expect(dialled == [Self.mum])
        tick(209.5); #expect(dialled == [Self.mum, Self.sam])
        tick(234.5); #expect(hangUps == 2)
        tick(237.5)
        #expect(core.state.panic.aftercare.escalation == .ended(.roundsDone))
        #expect(core.state.panic.aftercare.calls.map(\.slot) == [0, 2])
        #expect(effects.contains { if case .log(let l) = $0 { l.contains("ringing alert slot 1 (Mum)") } else { false } })
        tick(400)
        #expect(dialled.count == 2)
    }

    @Test mutating func aReplyEndsTheLadder() {
        panicSent()
        tick(181.5)
        #expect(dialled == [Self.mum])
        reply(Self.sam, "coming", 190)
        #expect(hangUps == 1)
        #expect(core.state.panic.aftercare.escalation == .ended(.replied))
        for s in stride(from: 191.0, through: 400, by: 1) { tick(s) }
        #expect(dialled == [Self.mum])
    }

    @Test mutating func aContactWhoAlreadyAnsweredIsNeverRung() {
        panicSent()
        reply(Self.mum, "ok", 60)
        for s in stride(from: 61.0, through: 400, by: 1) { tick(s) }
        #expect(dialled.isEmpty)
        #expect(core.state.panic.aftercare.escalation == .ended(.replied))
    }

    @Test mutating func aCallThatEndsByItselfMovesOn() {
        panicSent()
        tick(181.5)
        core.apply(.callChanged(active: true), at: at(182), effects: &effects)
        core.apply(.callChanged(active: false), at: at(190), effects: &effects)   // busy
        #expect(core.state.panic.callActive == false)
        tick(192.9); #expect(dialled == [Self.mum])
        tick(193); #expect(dialled == [Self.mum, Self.sam])
    }

    @Test mutating func roundsRepeatAndTheCounsellingCallIsNeverInterrupted() throws {
        var s = DeviceSettings()
        s.panic.callRounds = 2
        s.panic.escalateAfter = .seconds(60)
        s.panic.ringFor = .seconds(10)
        self = try HelpIsComingTests(settings: s)
        panicSent()
        // The person is on the phone to the counselling line when the ladder is due.
        core.apply(.callChanged(active: true), at: at(50), effects: &effects)
        tick(61.5)
        #expect(dialled.isEmpty)
        core.apply(.callChanged(active: false), at: at(70), effects: &effects)
        for t in stride(from: 70.0, through: 200, by: 0.5) { tick(t) }
        #expect(dialled == [Self.mum, Self.sam, Self.mum, Self.sam])
        #expect(core.state.panic.aftercare.calls.map(\.round) == [1, 1, 2, 2])
        #expect(core.state.panic.aftercare.escalation == .ended(.roundsDone))
    }

    @Test mutating func rightOnTheStatusScreenStopsTheCalls() {
        panicSent()
        tick(181.5)
        press(.down(.right), 185)
        #expect(hangUps == 1)
        #expect(core.state.panic.aftercare.escalation == .ended(.stopped))
        #expect(core.state.panic.notice == .callsStopped)
        #expect(core.state.overlay == .alertStatus)
    }

    @Test mutating func noCallsWhenTurnedOff() throws {
        var s = DeviceSettings()
        s.panic.escalateAfter = .zero
        self = try HelpIsComingTests(settings: s)
        panicSent()
        for t in stride(from: 6.0, through: 600, by: 1) { tick(t) }
        #expect(dialled.isEmpty)
        #expect(core.state.panic.aftercare.escalation == .idle)
    }

    // MARK: "I'm OK now"

    @Test mutating func imOKNowInTwoPresses() {
        press(.down(.panic), 0); tick(1.5)
        news(0, .delivered, 5)
        news(2, .retrying("network error"), 5)
        effects = []
        press(.down(.select), 10)
        press(.long(.select), 10.8)
        #expect(core.state.panic.aftercare.confirmingAllClear)
        #expect(sent.isEmpty)
        press(.up(.select, heldFor: .seconds(1)), 11)
        #expect(sent.isEmpty)   // the hold's release is not the confirmation
        press(.down(.select), 12)
        #expect(sent.map(\.slot) == [0])
        #expect(sent.allSatisfy { $0.purpose == .allClear && $0.alert.message == PanicSettings.defaultOKMessage })
        #expect(sent.first?.alert.number.text == Self.mum)
        // Sam's alert had not gone yet: it is cancelled, nobody worried who was not told.
        #expect(effects.contains(.cancelAlerts([2])))
        #expect(core.state.panic.notice == .allClearSending)
        #expect(core.state.panic.aftercare.allClear.map(\.slot) == [0])
        // Wound-down pulses: 400, 200, 100 ms.
        #expect(pulses.map(\.length) == [.milliseconds(400), .milliseconds(200), .milliseconds(100)])
        core.apply(.followUpDelivery(slot: 0, purpose: .allClear, .sent), at: at(14), effects: &effects)
        #expect(core.state.panic.aftercare.allClear.first?.delivery == .sent)
        // Sam's alert was already on the wire after all: Sam gets "I'm OK now" too.
        effects = []
        news(2, .sent, 15)
        #expect(sent.map(\.slot) == [2])
        #expect(sent.first?.purpose == .allClear)
    }

    @Test mutating func theConfirmationCanBeRefused() {
        panicSent()
        press(.down(.select), 10); press(.long(.select), 10.8); press(.up(.select, heldFor: .seconds(1)), 11)
        press(.down(.left), 12)
        #expect(!core.state.panic.aftercare.confirmingAllClear)
        #expect(sent.isEmpty)
        #expect(core.state.overlay == .alertStatus)
    }

    @Test mutating func imOKNowStopsTheCalls() {
        panicSent()
        tick(181.5)
        press(.down(.select), 185); press(.long(.select), 186); press(.down(.select), 187)
        #expect(hangUps == 1)
        #expect(core.state.panic.aftercare.escalation == .ended(.allClear))
        for t in stride(from: 188.0, through: 400, by: 1) { tick(t) }
        #expect(dialled == [Self.mum])
    }

    @Test mutating func theStatusScreenOpensAgainFromThePanicPage() {
        panicSent()
        press(.down(.left), 6)
        for _ in 0..<3 { press(.short(.page), 7) }
        #expect(core.state.page == .panic)
        press(.down(.select), 8); press(.long(.select), 8.8)
        #expect(core.state.overlay == .alertStatus)
        press(.up(.select, heldFor: .seconds(1)), 9)
        #expect(sent.isEmpty)
    }
}
