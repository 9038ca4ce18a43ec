import Testing
@testable import UnwindCore

/// Hostile input to the core side of "help is coming" on simulated time: replies, modem news
/// that does not fit, "I'm OK now", the call ladder, the daily check-in and the monthly test
/// against odd records and clocks. A `// Regression:` line names the defect its test keeps out.
@Suite struct HelpIsComingHostileInputTests {
    var core: DeviceCore
    var effects: [Effect] = []

    static let mum = "+17785551234", sam = "6045557654"
    /// 2026-11-22 00:00 UTC.
    static let midnight: Int64 = CivilDate.day(year: 2026, month: 11, day: 22) * 86_400

    init() throws { try self.init(settings: DeviceSettings()) }

    init(settings: DeviceSettings, checkIn: CheckInRecord? = nil, alertTest: AlertTestRecord? = nil) throws {
        var c = DeviceCore(settings: settings, checkIn: checkIn, alertTest: alertTest)
        c.alertSlotsChanged([
            .ready(try AlertSlot(name: "Mum", number: Self.mum, message: "Having a panic attack, please call")),
            .empty,
            .ready(try AlertSlot(name: "Sam", number: Self.sam, message: "Please come over")),
        ])
        core = c
    }

    /// `s` seconds after 2026-11-22 00:00 UTC on both clocks.
    func at(_ s: Double) -> Moment {
        Moment(.seconds(s), wall: WallTime(secondsSinceEpoch: Self.midnight + Int64(s.rounded(.down))))
    }
    func hm(_ h: Int, _ m: Int, day: Int = 0) -> Double { Double(day * 86_400 + h * 3600 + m * 60) }
    mutating func press(_ g: ButtonGesture, _ s: Double) { core.apply(.button(g), at: at(s), effects: &effects) }
    mutating func tap(_ b: Button, _ s: Double) {
        press(.down(b), s); press(.short(b), s + 0.08); press(.up(b, heldFor: .milliseconds(80)), s + 0.08)
    }
    mutating func tick(_ s: Double) { core.apply(.tick, at: at(s), effects: &effects) }
    mutating func run(_ a: Double, _ b: Double, by step: Double = 1) { for t in stride(from: a, through: b, by: step) { tick(t) } }
    mutating func news(_ slot: Int, _ d: AlertDelivery, _ s: Double) { core.apply(.alertDelivery(slot: slot, d), at: at(s), effects: &effects) }
    mutating func reply(_ from: String, _ text: String, id: String = "r1", _ s: Double) {
        core.apply(.replyReceived(IncomingReply(id: id, from: from, text: text)), at: at(s), effects: &effects)
    }
    mutating func trusted(_ yes: Bool, _ s: Double) { core.apply(.wallClockSynchronised(yes), at: at(s), effects: &effects) }

    /// PANIC held from `s`; the alerts go out 1.5 s later.
    mutating func panic(_ s: Double) { press(.down(.panic), s); tick(s + 1.5) }

    var dialled: [String] { effects.compactMap { if case .dial(let n) = $0 { n.text } else { nil } } }
    var sent: [AlertRequest] { effects.flatMap { e -> [AlertRequest] in if case .sendAlerts(let r) = e { r } else { [] } } }

    // MARK: Replies

    /// Mum answered the monthly [TEST] SMS (or just said goodnight) hours before the PANIC; the
    /// person never saw it (the display was asleep). Her old text must not count as having heard
    /// tonight's alert.
    @Test mutating func aReplyFromBeforeThePanicDoesNotAcknowledgeIt() {
        reply(Self.mum, "Got the test, all fine x", 100)
        #expect(core.state.panic.aftercare.replies.count == 1)
        // Hours later, the display long asleep, the person presses PANIC.
        run(200, 3 * 3600, by: 60)
        panic(hm(3, 0))
        news(0, .sent, hm(3, 0) + 5); news(2, .sent, hm(3, 0) + 5)
        // Regression: a reply from before the alert marking Mum "REPLIED" and the ladder skipping her (nobody rung while no-one answers).
        #expect(core.state.panic.progress.first { $0.slot == 0 }?.acknowledged == false)
        run(hm(3, 0) + 6, hm(3, 0) + 400)
        #expect(dialled.contains(Self.mum))
    }

    /// A contact stored in national form is the sender only in its own country: the device's
    /// international numbers (+1 contacts, the +1 counselling line) say which country that is.
    @Test func aStrangerAbroadWithTheSameNationalDigitsIsNotAContact() throws {
        let samNational = try PhoneNumber(Self.sam)   // 604 555 7654, stored without a country code
        // Regression: a national form matching any country's number ending in the same digits.
        let northAmerica = ["17785551234", "17787824615"], britain = ["447700900999"]
        #expect(samNational.isSameNumber(asSender: "+16045557654", known: northAmerica))
        #expect(!samNational.isSameNumber(asSender: "+446045557654", known: northAmerica))
        let ukNational = try PhoneNumber("07700900123")
        #expect(ukNational.isSameNumber(asSender: "+447700900123", known: britain))
        #expect(!ukNational.isSameNumber(asSender: "+17700900123", known: britain))
    }

    @Test(arguments: ["", "+", "++17785551234", "+-1", String(repeating: "9", count: 5000), "\u{0}", "١٧٧٨٥٥٥١٢٣٤", "+1778555123\u{301}4"])
    func hostileSendersNeverMatchOrTrap(_ sender: String) throws {
        let mum = try PhoneNumber(Self.mum)
        #expect(!mum.isSameNumber(asSender: sender))
    }

    @Test mutating func hostileReplyTextsAreShownSafely() {
        panic(0)
        let texts = ["", String(repeating: "\u{202E}", count: 500), String(repeating: "a", count: 100_000), "\u{1B}[2J\u{7}\r\n",
                     String(repeating: "👩‍👩‍👧‍👦", count: 300)]
        for (i, t) in texts.enumerated() { reply(Self.mum, t, id: "x\(i)", Double(10 + i)) }
        #expect(core.state.panic.aftercare.replies.count == texts.count)
        for r in core.state.panic.aftercare.replies {
            #expect(!r.lines.isEmpty && r.lines.count <= ContactReply.shownLines)
            #expect(r.lines.allSatisfy { $0.count <= ContactReply.columns })
        }
    }

    // MARK: Modem news that does not fit

    @Test mutating func newsForSlotsThatDoNotExistIsIgnored() {
        panic(0)
        for slot in [-1, 5, 7, 8, 63, 64, Int.max, Int.min] {
            news(slot, .delivered, 5)
            news(slot, .failed("x"), 5)
            core.apply(.followUpDelivery(slot: slot, purpose: .allClear, .delivered), at: at(6), effects: &effects)
            core.apply(.followUpDelivery(slot: slot, purpose: .panic, .delivered), at: at(6), effects: &effects)
            core.apply(.followUpDelivery(slot: slot, purpose: .checkIn, .sent), at: at(6), effects: &effects)
        }
        #expect(core.state.panic.progress.map(\.slot) == [0, 2])
        #expect(core.state.panic.progress.allSatisfy { $0.delivery == .queued })
    }

    /// A status report must not say "DELIVERED" for a contact nobody sent anything to.
    @Test mutating func deliveredForAnEmptySlotIsNotShown() {
        panic(0)
        news(1, .delivered, 5)
        #expect(core.state.panic.progress(ofSlot: 1) == nil)
    }

    @Test mutating func newsWithoutAnyAlertChangesNothing() {
        news(0, .delivered, 5)
        core.apply(.followUpDelivery(slot: 0, purpose: .test, .delivered), at: at(6), effects: &effects)
        core.apply(.callChanged(active: false), at: at(7), effects: &effects)
        #expect(core.state.panic.progress.isEmpty)
        #expect(core.state.overlay == .none)
        #expect(core.state.panic.readiness.lastTest == nil)
    }

    /// A contact's SMS with no alert going on, in the quiet hours: the sleeping
    /// screen stays dark and the motor still; the reply waits for the person's next wake. By
    /// day it is shown at once.
    @Test mutating func aReplyAtNightWithNoAlertWaitsForTheNextWake() {
        trusted(true, 0)
        run(1, 200, by: 10)
        #expect(core.state.display.asleep)
        effects = []
        reply(Self.mum, "Sleep well x", id: "n1", hm(3, 0))
        #expect(core.state.display.asleep, "woke the screen at night")
        #expect(!effects.contains { if case .displayPower(true) = $0 { true } else { false } })
        #expect(!effects.contains { if case .motor = $0 { true } else { false } })
        #expect(core.state.panic.aftercare.replies.map(\.id) == ["n1"], "kept")
        // The person wakes the screen: the reply is there.
        press(.down(.left), hm(3, 5))
        #expect(!core.state.display.asleep)
        #expect(core.state.overlay == .alertStatus && core.state.panic.aftercare.replies.first?.id == "n1")
    }

    /// By day the same SMS lights the sleeping screen at once.
    @Test mutating func aReplyByDayWakesTheScreen() {
        trusted(true, 0)
        run(hm(12, 0), hm(12, 0) + 200, by: 10)
        #expect(core.state.display.asleep)
        reply(Self.mum, "Lunch?", id: "d1", hm(12, 10))
        #expect(!core.state.display.asleep)
    }

    // MARK: "I'm OK now"

    /// PANIC by mistake, then at once "I'm OK now" (two presses) while the modem is still sending:
    /// the screen says "Nobody had the alert", but the SMS in the modem goes out anyway.
    @Test mutating func anAlertAlreadyOnTheWireWhenNobodyHadItYetStillGetsImOK() {
        panic(0)
        news(0, .sending, 2)
        press(.down(.select), 3); press(.long(.select), 3.8); press(.up(.select, heldFor: .seconds(1)), 4)
        press(.down(.select), 5)
        #expect(core.state.panic.notice == .allClearNobody)
        effects = []
        // Mum's alert had already left the modem: the network accepts it a second later.
        news(0, .sent, 6)
        // Regression: "I'm OK now" with nobody reached yet leaving aftercare.allClear empty, so that Mum gets the panic SMS and never the "I'm OK".
        #expect(sent.contains { $0.slot == 0 && $0.purpose == .allClear })
    }

    @Test mutating func imOKGoesOnlyToContactsTheAlertReached() {
        panic(0)
        news(0, .sent, 5)
        news(2, .failed("unassigned number"), 5)
        effects = []
        press(.down(.select), 10); press(.long(.select), 10.8); press(.up(.select, heldFor: .seconds(1)), 11)
        press(.down(.select), 12)
        #expect(sent.map(\.slot) == [0])
        // A late "sent" for the failed one never adds it twice, nor a stranger's slot.
        news(2, .cancelled, 13)
        news(0, .delivered, 14)
        #expect(sent.map(\.slot) == [0])
    }

    @Test mutating func imOKCannotBeSentTwice() {
        panic(0)
        news(0, .sent, 5); news(2, .sent, 5)
        for k in 0..<3 {
            let t = 10.0 + Double(k) * 5
            press(.down(.select), t); press(.long(.select), t + 0.8); press(.up(.select, heldFor: .seconds(1)), t + 1)
            press(.down(.select), t + 2)
        }
        #expect(sent.filter { $0.purpose == .allClear }.count == 2)
    }

    // MARK: The ladder

    /// At 3 a.m. the person, waiting for someone to answer, calls the counselling line (a daytime
    /// service): nobody picks up. The calls to the contacts must go on, not end for good.
    @Test mutating func aFailedCounsellingCallDoesNotEndTheLadderForGood() {
        panic(0)
        news(0, .sent, 5); news(2, .sent, 5)
        tap(.left, 20)                                   // closes the status screen
        for k in 0..<3 { tap(.page, 21 + Double(k)) }     // to the panic page
        #expect(core.state.page == .panic)
        press(.down(.left), 25)                          // the counselling line
        #expect(core.state.panic.isCounsellingSelected)
        press(.short(.select), 26)
        core.apply(.callChanged(active: true), at: at(27), effects: &effects)
        core.apply(.callChanged(active: false), at: at(60), effects: &effects)   // no answer
        run(61, 600)
        // Regression: dialling the counselling line ending the escalation as .stopped, nobody rung when that call fails.
        #expect(dialled.contains(Self.mum))
    }

    @Test mutating func aStuckCallStateDoesNotBlockPanic() {
        panic(0)
        news(0, .sent, 5); news(2, .sent, 5)
        // The modem says a call is up and never that it ended.
        core.apply(.callChanged(active: true), at: at(10), effects: &effects)
        run(11, 1000, by: 5)
        // The ladder waits for the call, but PANIC again still works (nothing twice, the status shows).
        effects = []
        panic(1001)
        #expect(core.state.overlay == .alertStatus)
        #expect(sent.map(\.slot) == [0, 2])
    }

    @Test mutating func callNewsInEveryOrderNeverTraps() {
        panic(0)
        run(1, 181.5, by: 0.5)
        for k in 0..<50 {
            core.apply(.callChanged(active: k % 3 == 0), at: at(182 + Double(k)), effects: &effects)
            tick(182 + Double(k) + 0.5)
        }
        run(240, 2000, by: 2)
        #expect(!core.state.panic.aftercare.escalation.isActive)
    }

    // MARK: Check-in

    /// A check-in record dated in the future (a restored backup, a clock that was wrong once)
    /// must not silently switch "send help if I don't check in" off for years: today is still
    /// prompted for, and help still goes.
    @Test mutating func aCheckInRecordFromTheFutureDoesNotDisableTheCheckIn() throws {
        var s = DeviceSettings()
        s.checkIn.deadline = 9 * 60
        self = try HelpIsComingHostileInputTests(settings: s, checkIn: CheckInRecord(day: CivilDate.day(year: 2099, month: 1, day: 1), outcome: .confirmed))
        trusted(true, 0)
        run(hm(9, 0) - 2, hm(9, 0) + 2)
        // Regression: `last.day >= today` taking a future day for today already settled (no prompt, no reminder, no help, ever).
        #expect(core.state.checkIn.showing)
        run(hm(9, 0) + 3, hm(9, 31))
        #expect(sent.contains { $0.purpose == .checkIn })
    }

    /// The clock loses its sync while the person is being reminded: the prompt vanishes (a press
    /// is no longer a check-in); the person then uses the device for an hour; sync returns.
    @Test mutating func aPersonAtTheDeviceIsNotReportedMissingAfterTheClockWasUntrusted() throws {
        var s = DeviceSettings()
        s.checkIn.deadline = 9 * 60
        self = try HelpIsComingHostileInputTests(settings: s)
        trusted(true, 0)
        run(hm(9, 0) - 1, hm(9, 0) + 1)
        #expect(core.state.checkIn.sendsAt != nil)
        trusted(false, hm(9, 5))
        run(hm(9, 5), hm(9, 6))
        // The person is clearly here: breathing for ten minutes.
        tap(.select, hm(9, 7))
        run(hm(9, 7) + 1, hm(9, 17), by: 5)
        tap(.select, hm(9, 17) + 1)
        trusted(true, hm(10, 0))
        effects = []
        run(hm(10, 0), hm(10, 0) + 5)
        // Regression: the prompt hidden and no press counted while the clock was untrusted, then the stale sendsAt sending help at once, without a single new reminder.
        #expect(!sent.contains { $0.purpose == .checkIn })
    }

    @Test mutating func anUntrustedClockNeverSendsACheckIn() throws {
        var s = DeviceSettings()
        s.checkIn.deadline = 9 * 60
        self = try HelpIsComingHostileInputTests(settings: s)
        trusted(false, 0)
        run(0, 2 * 86_400, by: 30)
        #expect(sent.isEmpty)
        #expect(!core.state.checkIn.showing)
    }

    @Test mutating func aMissedCheckInSendsOnceEvenWithClockJumps() throws {
        var s = DeviceSettings()
        s.checkIn.deadline = 23 * 60 + 50
        self = try HelpIsComingHostileInputTests(settings: s)
        trusted(true, 0)
        run(hm(23, 49), hm(23, 50) + 30 * 60 + 2)
        #expect(sent.filter { $0.purpose == .checkIn }.count == 2)   // two contacts, once
        // The clock steps back an hour and forward again (a trusted NTP correction).
        core.apply(.wallClockChanged, at: at(hm(0, 21, day: 1)), effects: &effects)
        var t = hm(0, 21, day: 1)
        for _ in 0..<120 {
            core.apply(.tick, at: Moment(.seconds(t), wall: WallTime(secondsSinceEpoch: Self.midnight + Int64(t) - 3600)), effects: &effects)
            t += 30
        }
        #expect(sent.filter { $0.purpose == .checkIn }.count == 2)
    }

    /// With check-in on and no contacts, a missed check-in sends nothing: the person must not
    /// believe help was sent (and the maintainer should hear of it).
    @Test mutating func aMissedCheckInWithNoContactsIsNotSilent() throws {
        var s = DeviceSettings()
        s.checkIn.deadline = 9 * 60
        self = try HelpIsComingHostileInputTests(settings: s)
        core.alertSlotsChanged([])
        trusted(true, 0)
        run(hm(8, 59), hm(9, 31))
        #expect(sent.isEmpty)
        #expect(effects.contains { if case .log(let l) = $0 { l.contains("0 contact") } else { false } })
    }

    // MARK: Monthly test

    /// A test record from the future does not stop the monthly test: the test goes when due.
    @Test mutating func aMonthlyTestRecordFromTheFutureDoesNotStopTheTests() throws {
        var s = DeviceSettings()
        s.panic.monthlyTest = true
        s.timeZone = .utc
        self = try HelpIsComingHostileInputTests(settings: s, alertTest: AlertTestRecord(at: WallTime(secondsSinceEpoch: (1 << 40) - 1), outcome: .delivered))
        trusted(true, 0)
        run(hm(10, 0), hm(10, 0) + 5)
        // Regression: `now - last.at < 30 days`, always true for a date in the future (no test ever sent again).
        #expect(sent.contains { $0.purpose == .test })
    }

    /// Odd and hostile `alertTest.txt` contents: refused (the device sets the file aside), or
    /// read as exactly the one record they hold (nil: no test yet). A reason is kept as written;
    /// `format` makes it one safe line.
    @Test(arguments: [
        ("", false, nil), ("\n", false, nil),
        ("1795000000 delivered", false, AlertTestRecord(at: WallTime(secondsSinceEpoch: 1_795_000_000), outcome: .delivered)),
        ("1795000000 failed", false, AlertTestRecord(at: WallTime(secondsSinceEpoch: 1_795_000_000), outcome: .failed(""))),
        ("1795000000 failed \u{1B}[2J" + String(repeating: "x", count: 400), false,
         AlertTestRecord(at: WallTime(secondsSinceEpoch: 1_795_000_000), outcome: .failed("\u{1B}[2J" + String(repeating: "x", count: 400)))),
        ("-1 sent", true, nil), ("+5 sent", false, AlertTestRecord(at: WallTime(secondsSinceEpoch: 5), outcome: .sent)),
        ("1099511627776 sent", true, nil), ("99999999999999999999999 sent", true, nil), ("1795000000 sent extra", true, nil),
        ("1795000000  sent", true, nil), ("1795000000 sent\n1795000001 sent", true, nil), ("\u{FEFF}1795000000 sent", true, nil),
        ("1795000000\tsent", true, nil),
    ] as [(String, Bool, AlertTestRecord?)])
    func hostileAlertTestFilesAreRefusedOrReadExactly(_ text: String, _ refused: Bool, _ record: AlertTestRecord?) throws {
        if refused {
            #expect(throws: AlertTestFile.Problem.self, "\(String(reflecting: text)) was read") { try AlertTestFile.parse(Array(text.utf8)) }
        } else {
            #expect(try AlertTestFile.parse(Array(text.utf8)) == record, "\(String(reflecting: text))")
        }
    }

    /// Odd and hostile `checkIn.txt` contents: refused, or read as exactly the day they hold.
    @Test(arguments: [
        ("", false, nil), ("2026-11-22 confirmed", false, CheckInRecord(day: CivilDate.day(year: 2026, month: 11, day: 22), outcome: .confirmed)),
        ("2026-02-29 confirmed", true, nil), ("2024-02-29 missed", false, CheckInRecord(day: CivilDate.day(year: 2024, month: 2, day: 29), outcome: .missed)),
        ("1969-12-31 confirmed", true, nil),
        ("9999-12-31 confirmed", false, CheckInRecord(day: CivilDate.day(year: 9999, month: 12, day: 31), outcome: .confirmed)),
        ("0000-01-01 confirmed", true, nil), ("2026-13-01 missed", true, nil), ("2026-1-01 missed", true, nil), ("２０２６-11-22 confirmed", true, nil),
        ("2026-11-22 confirmed extra", true, nil), ("2026-11-22 CONFIRMED", true, nil), ("2026-11-22 confirmed\r", true, nil),
    ] as [(String, Bool, CheckInRecord?)])
    func hostileCheckInFilesAreRefusedOrReadExactly(_ text: String, _ refused: Bool, _ record: CheckInRecord?) throws {
        if refused {
            #expect(throws: CheckInFile.Problem.self, "\(String(reflecting: text)) was read") { try CheckInFile.parse(Array(text.utf8)) }
        } else {
            #expect(try CheckInFile.parse(Array(text.utf8)) == record, "\(String(reflecting: text))")
        }
    }

    // MARK: Overlays and PANIC

    /// PANIC in the hour before the check-in deadline (the prompt is up): the alerts go and the
    /// alert status screen shows; the check-in prompt leaves it, so it cannot eat the next press.
    @Test mutating func panicDuringTheCheckInWindowShowsTheAlertStatus() throws {
        var s = DeviceSettings()
        s.checkIn.deadline = 9 * 60
        self = try HelpIsComingHostileInputTests(settings: s)
        trusted(true, 0)
        run(hm(8, 0), hm(8, 0) + 1)
        #expect(core.state.checkIn.showing)
        panic(hm(8, 0) + 2)
        #expect(sent.map(\.slot) == [0, 2])
        #expect(core.state.overlay == .alertStatus)
        // Regression: the check-in prompt (drawn over everything, Screen.swift) staying up after PANIC, hiding whether the alerts went out and taking the next press (e.g. SELECT held for "I'm OK now") as the check-in.
        #expect(!core.state.checkIn.showing)
    }

    /// PANIC over the "I'm OK now" confirmation still reaches the panic path.
    @Test mutating func panicWorksOverTheImOKConfirmation() {
        panic(0)
        news(0, .sent, 5); news(2, .sent, 5)
        press(.down(.select), 10); press(.long(.select), 10.8); press(.up(.select, heldFor: .seconds(1)), 11)
        #expect(core.state.panic.aftercare.confirmingAllClear)
        effects = []
        panic(20)
        #expect(sent.map(\.slot) == [0, 2])
        #expect(core.state.overlay == .alertStatus)
    }

    /// The status screen always has a way out that is not "I'm OK now".
    @Test mutating func theStatusScreenNeverTrapsThePerson() {
        panic(0)
        reply(Self.mum, "coming", id: "a", 3)
        reply(Self.sam, "me too", id: "b", 4)
        for (k, b) in [Button.page, .left].enumerated() { tap(b, 5 + Double(k)) }
        #expect(core.state.panic.aftercare.replies.isEmpty)
        tap(.page, 8)
        #expect(core.state.overlay == .none)
    }
}
