import Testing
@testable import UnwindCore

/// The weekly self-check reminder through the core, on a handed-in wall clock: set like the
/// mantra reminder (never or weekly), fired by the same alarm at its own second, shown at once
/// with the gentle pattern, never during a breathing session or an alert (it waits for their
/// end), and SELECT starts the quick check.
@Suite struct SelfCheckReminderTests {
    /// Tuesday 2026-05-05 18:00 UTC; the reminder is Tuesdays at 18:30.
    static let base = utc(2026, 5, 5, 18, 0)
    static let due = base + 1800
    var core: DeviceCore
    var effects: [Effect] = []

    init() throws {
        core = DeviceCore(settings: DeviceSettings(timeZone: utcZone), mantras: ["Breathe."], reminder: .daily(hour: 21, minute: 0),
                          selfCheck: SelfCheckRecords(reminder: .weekly(.tuesday, hour: 18, minute: 30)))
        core.alertSlotsChanged([.ready(try AlertSlot(name: "Mum", number: "+15551234567", message: "Please call me"))])
        core.apply(.wallClockSynchronised(true), at: at(0), effects: &effects)
    }

    func at(_ s: Double) -> Moment { Moment(.seconds(s), wall: wall(Self.base + Int64(s.rounded(.down)))) }
    mutating func apply(_ e: DeviceEvent, _ s: Double) { core.apply(e, at: at(s), effects: &effects) }
    mutating func tap(_ b: Button, _ s: Double) {
        apply(.button(.down(b)), s); apply(.button(.short(b)), s + 0.05); apply(.button(.up(b, heldFor: .milliseconds(50))), s + 0.05)
    }
    var showing: Bool { core.state.selfCheck.reminder.isShowing }
    var motorOnsets: [Instant] { effects.compactMap { if case .motor(let e) = $0, e.on { e.at } else { nil } } }

    @Test mutating func theAlarmIsArmedForWhicheverReminderComesFirst() {
        #expect(core.state.selfCheck.reminder.nextDue == wall(Self.due))
        #expect(core.state.reminders.nextDue == wall(utc(2026, 5, 5, 21, 0)))
        #expect(core.state.nextReminderDue == wall(Self.due))
        apply(.maintainer(.setSelfCheckReminder(.never)), 1)
        #expect(effects.contains(.save(.selfCheckReminder, "never\n")))
        #expect(core.state.nextReminderDue == wall(utc(2026, 5, 5, 21, 0)))
        apply(.maintainer(.setSelfCheckReminder(.weekly(.wednesday, hour: 9, minute: 5))), 2)
        #expect(effects.contains(.save(.selfCheckReminder, "weekly wed 09:05\n")))
        #expect(core.state.selfCheck.reminder.nextDue == wall(utc(2026, 5, 6, 9, 5)))
        apply(.wallClockSynchronised(false), 3)
        #expect(core.state.nextReminderDue == nil)
    }

    @Test mutating func atItsSecondTheScreenWakesAndTheMotorSwellsAndSelectStartsTheQuickCheck() {
        apply(.tick, 0)
        apply(.tick, 200)
        #expect(core.state.display.asleep)
        effects = []
        apply(.reminderDue(wall(Self.due)), 1800.02)
        #expect(showing && !core.state.display.asleep && effects.contains(.displayPower(true)))
        let t0 = Instant.seconds(1800.02)
        #expect(motorOnsets == [t0, t0 + .milliseconds(800), t0 + .milliseconds(2600), t0 + .milliseconds(3400)])
        #expect(core.state.selfCheck.reminder.nextDue == wall(utc(2026, 5, 12, 18, 30)))
        #expect(!core.state.reminders.isShowing)            // not the mantra's
        tap(.select, 1801)
        #expect(!showing && core.state.page == .howAmIDoing)
        guard case .selfCheck(.questionnaire(let r)) = core.state.overlay else { Issue.record("no questionnaire"); return }
        #expect(r.kind == .quick && r.step == 0 && r.answer == nil)
    }

    @Test mutating func anyOtherButtonClosesItAndDoesNothingElse() {
        apply(.reminderDue(wall(Self.due)), 1800)
        tap(.page, 1801)
        #expect(!showing && core.state.page == .breathing && core.state.overlay == .none)
    }

    @Test mutating func aBreathingSessionIsNeverInterrupted() {
        tap(.select, 1700)                                   // a session starts
        effects = []
        apply(.reminderDue(wall(Self.due)), 1800)
        #expect(!showing && core.state.selfCheck.reminder.waiting && motorOnsets.isEmpty)
        apply(.tick, 1850)
        #expect(!showing)
        tap(.select, 1900.5)                                 // the session stops
        effects = []
        apply(.tick, 1900.6)
        #expect(showing && motorOnsets.first == .seconds(1900.6))
    }

    @Test mutating func anAlertIsNeverInterrupted() throws {
        var settings = DeviceSettings(timeZone: utcZone)
        settings.panic.escalateAfter = .zero                 // no calls to ring after the alerts
        core = DeviceCore(settings: settings, selfCheck: SelfCheckRecords(reminder: .weekly(.tuesday, hour: 18, minute: 30)))
        core.alertSlotsChanged([.ready(try AlertSlot(name: "Mum", number: "+15551234567", message: "Please call me"))])
        apply(.wallClockSynchronised(true), 0)
        apply(.button(.down(.panic)), 1790)
        apply(.tick, 1791.6)
        #expect(core.state.overlay == .alertStatus)
        apply(.reminderDue(wall(Self.due)), 1800)
        #expect(!showing && core.state.selfCheck.reminder.waiting)
        apply(.tick, 1804)
        #expect(!showing)                                    // the alert is still on its way
        apply(.alertDelivery(slot: 0, .sent), 1805)
        apply(.tick, 1806)
        #expect(!showing)                                    // its status is still on screen
        tap(.left, 1810)                                     // the person closes it
        #expect(core.state.overlay == .none && !core.state.alertUnderWay)
        apply(.tick, 1811)
        #expect(showing && !core.state.selfCheck.reminder.waiting)
    }

    @Test mutating func itIsNotShownToSomeoneAnsweringASelfCheck() {
        core.state.page = .howAmIDoing
        core.state.selfCheck.entry = .anxietyCheck
        tap(.select, 1790)
        apply(.reminderDue(wall(Self.due)), 1800)
        apply(.tick, 1801)
        #expect(!showing && !core.state.selfCheck.reminder.waiting)
    }

    @Test mutating func thePageSetsItNeverOrWeekly() {
        core.state.page = .howAmIDoing
        core.state.selfCheck.entry = .reminder
        tap(.select, 1)
        guard case .selfCheck(.reminder(let e)) = core.state.overlay else { Issue.record("no editor"); return }
        #expect(e.offered == [.never, .weekly] && e.frequency == .weekly)
        tap(.right, 2)                                       // weekly → never (only two)
        tap(.right, 3)                                       // → weekly
        tap(.select, 4)                                      // the day
        tap(.right, 5)                                       // Wednesday
        tap(.select, 6); tap(.select, 7); tap(.select, 8)    // hour, minute, saved
        #expect(core.state.overlay == .none)
        #expect(effects.contains(.save(.selfCheckReminder, "weekly wed 18:30\n")))
        #expect(core.state.selfCheck.reminder.nextDue == wall(utc(2026, 5, 6, 18, 30)))
    }
}
