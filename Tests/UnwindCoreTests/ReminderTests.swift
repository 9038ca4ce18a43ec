import Foundation
import Testing
@testable import UnwindCore

/// Seconds since the epoch of a UTC calendar time (days-from-civil, proleptic Gregorian).
func utc(_ y: Int, _ m: Int, _ d: Int, _ h: Int = 0, _ mi: Int = 0, _ s: Int = 0) -> Int64 {
    let yy = m <= 2 ? y - 1 : y
    let era = (yy >= 0 ? yy : yy - 399) / 400
    let yoe = yy - era * 400
    let doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
    let days = era * 146_097 + doe - 719_468
    return Int64(days) * 86_400 + Int64(h * 3600 + mi * 60 + s)
}

func wall(_ t: Int64) -> WallTime { WallTime(secondsSinceEpoch: t) }

/// A zone of the system's tz database, read as the device reads it.
func systemZone(_ name: String) -> LocalTimeZone {
    let bytes = FileManager.default.contents(atPath: "/usr/share/zoneinfo/" + name).map { [UInt8]($0) } ?? []
    do { return try LocalTimeZone(name: name, tzif: bytes) } catch { fatalError("\(name): \(error) (is tzdata installed?)") }
}

/// Vancouver as these tests were written for it: PST/PDT, changing on the second Sunday of March
/// and the first of November. Pinned as a rule, not read from the system: British Columbia's move
/// to permanent daylight time is in newer tz releases (Debian sid's), and the tests are about
/// the changes, not about one year's law.
let vancouver = LocalTimeZone(name: "America/Vancouver", transitions: [], offsetsFrom: [], initialOffset: -28_800,
                              rule: ZoneRule(posix: "PST8PDT,M3.2.0,M11.1.0"))
let berlin = systemZone("Europe/Berlin")
let kolkata = systemZone("Asia/Kolkata")
let utcZone = LocalTimeZone.utc

@Suite struct ReminderScheduleTests {
    func next(_ s: ReminderSchedule, after t: Int64, _ zone: LocalTimeZone = utcZone) -> Int64? {
        s.nextDue(after: wall(t), in: zone)?.secondsSinceEpoch
    }

    @Test func calendarHelperIsRight() {
        #expect(utc(1970, 1, 1) == 0)
        #expect(utc(2026, 1, 1) == 1_767_225_600)
        #expect(Weekday.of(localDay: 0) == .thursday)
        #expect(Weekday.of(localDay: utc(2026, 3, 8) / 86_400) == .sunday)
    }

    @Test func neverIsNeverDue() {
        #expect(next(.never, after: utc(2026, 5, 5)) == nil)
    }

    @Test func dailyDueTimes() {
        let s = ReminderSchedule.daily(hour: 21, minute: 30)
        #expect(next(s, after: utc(2026, 5, 5, 12)) == utc(2026, 5, 5, 21, 30))
        #expect(next(s, after: utc(2026, 5, 5, 21, 29, 59)) == utc(2026, 5, 5, 21, 30))
        #expect(next(s, after: utc(2026, 5, 5, 21, 30)) == utc(2026, 5, 6, 21, 30))   // strictly after
        #expect(next(s, after: utc(2026, 12, 31, 22)) == utc(2027, 1, 1, 21, 30))
        // In Vancouver (PDT, UTC-7, in May): 21:30 local is 04:30 UTC the next day.
        #expect(next(s, after: utc(2026, 5, 5, 12), vancouver) == utc(2026, 5, 6, 4, 30))
    }

    @Test func weeklyDueTimes() {
        let s = ReminderSchedule.weekly(.monday, hour: 9, minute: 0)
        // 2026-05-04 is a Monday.
        #expect(Weekday.of(localDay: utc(2026, 5, 4) / 86_400) == .monday)
        #expect(next(s, after: utc(2026, 5, 1)) == utc(2026, 5, 4, 9))
        #expect(next(s, after: utc(2026, 5, 4, 8, 59)) == utc(2026, 5, 4, 9))
        #expect(next(s, after: utc(2026, 5, 4, 9)) == utc(2026, 5, 11, 9))
        #expect(next(.weekly(.sunday, hour: 23, minute: 59), after: utc(2026, 5, 4, 9)) == utc(2026, 5, 10, 23, 59))
        // Berlin (CEST, UTC+2): Monday 09:00 local is 07:00 UTC.
        #expect(next(s, after: utc(2026, 5, 1), berlin) == utc(2026, 5, 4, 7))
    }

    @Test func hourlyDueTimes() {
        let s = ReminderSchedule.hourly(minute: 15)
        #expect(next(s, after: utc(2026, 5, 5, 10, 0)) == utc(2026, 5, 5, 10, 15))
        #expect(next(s, after: utc(2026, 5, 5, 10, 15)) == utc(2026, 5, 5, 11, 15))
        #expect(next(s, after: utc(2026, 5, 5, 23, 20)) == utc(2026, 5, 6, 0, 15))
        // A half-hour zone: "every hour at :00" in Kolkata (UTC+5:30) is :30 UTC.
        #expect(next(.hourly(minute: 0), after: utc(2026, 5, 5, 10, 0), kolkata) == utc(2026, 5, 5, 10, 30))
    }

    // Vancouver 2026: clocks go 02:00 PST → 03:00 PDT on Sunday 8 March (10:00 UTC) and
    // 02:00 PDT → 01:00 PST on Sunday 1 November (09:00 UTC).

    @Test func springForwardFiresWhenTheGapEnds() {
        let s = ReminderSchedule.daily(hour: 2, minute: 30)
        #expect(next(s, after: utc(2026, 3, 7, 12), vancouver) == utc(2026, 3, 8, 10))    // 03:00 PDT
        #expect(next(s, after: utc(2026, 3, 8, 10), vancouver) == utc(2026, 3, 9, 9, 30)) // 02:30 PDT next day
        #expect(next(s, after: utc(2026, 3, 6, 12), vancouver) == utc(2026, 3, 7, 10, 30)) // 02:30 PST the day before
        #expect(next(.weekly(.sunday, hour: 2, minute: 30), after: utc(2026, 3, 4), vancouver) == utc(2026, 3, 8, 10))
        // A time just outside the gap is untouched.
        #expect(next(.daily(hour: 3, minute: 0), after: utc(2026, 3, 7, 12), vancouver) == utc(2026, 3, 8, 10))
        #expect(next(.daily(hour: 1, minute: 59), after: utc(2026, 3, 7, 12), vancouver) == utc(2026, 3, 8, 9, 59))
    }

    @Test func fallBackFiresOnce() {
        let s = ReminderSchedule.daily(hour: 1, minute: 30)
        let first = utc(2026, 11, 1, 8, 30)          // 01:30 PDT
        #expect(next(s, after: utc(2026, 10, 31, 20), vancouver) == first)
        // Not again at 01:30 PST (09:30 UTC): the next one is the next day's.
        #expect(next(s, after: first, vancouver) == utc(2026, 11, 2, 9, 30))
        #expect(next(.weekly(.sunday, hour: 1, minute: 30), after: first, vancouver) == utc(2026, 11, 8, 9, 30))
    }

    @Test func hourlyFollowsRealHoursAcrossDST() {
        let s = ReminderSchedule.hourly(minute: 30)
        // Fall back: both 01:30s, an hour apart, then 02:30 PST.
        var t = utc(2026, 11, 1, 7, 45)
        var got: [Int64] = []
        for _ in 0..<4 { t = next(s, after: t, vancouver)!; got.append(t) }
        #expect(got == [utc(2026, 11, 1, 8, 30), utc(2026, 11, 1, 9, 30), utc(2026, 11, 1, 10, 30), utc(2026, 11, 1, 11, 30)])
        // Spring forward: 01:30 PST, then 03:30 PDT — one real hour later.
        #expect(next(s, after: utc(2026, 3, 8, 9, 30), vancouver) == utc(2026, 3, 8, 10, 30))
        #expect(next(.hourly(minute: 0), after: utc(2026, 3, 8, 9, 0), vancouver) == utc(2026, 3, 8, 10, 0))
    }

    @Test func berlinTransitions() {
        // Europe: 29 March 2026 02:00 CET → 03:00 CEST (01:00 UTC); 25 October 03:00 CEST → 02:00 CET (01:00 UTC).
        #expect(next(.daily(hour: 2, minute: 15), after: utc(2026, 3, 28, 12), berlin) == utc(2026, 3, 29, 1))
        #expect(next(.daily(hour: 2, minute: 15), after: utc(2026, 10, 24, 12), berlin) == utc(2026, 10, 25, 0, 15))
        #expect(next(.daily(hour: 2, minute: 15), after: utc(2026, 10, 25, 0, 15), berlin) == utc(2026, 10, 26, 1, 15))
    }

    @Test func anyOffsetFunctionWorks() {
        // A made-up zone that jumps forward 2 h at t = 100_000 (local 02:00 → 04:00).
        let rules = ZoneRules { $0 < 100_000 ? 0 : 7200 }
        let s = ReminderSchedule.daily(hour: 3, minute: 0)
        // The jump is after the first 03:00: that one is plain.
        #expect(s.nextDue(after: wall(0), rules: rules)?.secondsSinceEpoch == 10_800)
        let gapDay = ZoneRules { $0 < 86_400 + 7200 ? 0 : 7200 }       // at local 02:00 of day 1, jump to 04:00
        let gapDue = s.nextDue(after: wall(86_400), rules: gapDay)?.secondsSinceEpoch
        #expect(gapDue == Int64(93_600))
    }
}

@Suite struct RemindersFileTests {
    @Test(arguments: [
        (ReminderSchedule.never, "never\n"),
        (.hourly(minute: 5), "hourly :05\n"),
        (.daily(hour: 7, minute: 30), "daily 07:30\n"),
        (.weekly(.sunday, hour: 21, minute: 0), "weekly sun 21:00\n"),
        (.weekly(.wednesday, hour: 0, minute: 59), "weekly wed 00:59\n"),
    ])
    func formatsAndRoundTrips(_ s: ReminderSchedule, _ text: String) throws {
        #expect(RemindersFile.format(s) == text)
        #expect(try RemindersFile.parse(Array(text.utf8)) == s)
        #expect(try RemindersFile.parse(Array(text.utf8.dropLast())) == s)   // final newline optional
    }

    @Test(arguments: ["", "\n", "sometimes\n", "daily 7:30\n", "daily 24:00\n", "daily 21:60\n", "hourly 15\n",
                      "hourly :5\n", "weekly sunday 21:00\n", "weekly sun\n", "Daily 21:30\n", "daily  21:30\n",
                      "daily 21:30 \n", "never\nnever\n", "daily 21:30\r\n", String(repeating: "x", count: 70)])
    func badFilesAreRejected(_ text: String) {
        #expect(throws: RemindersFile.Problem.self) { try RemindersFile.parse(Array(text.utf8)) }
    }

    @Test func theMaintainersWordsAreTheFileLine() throws {
        #expect(try RemindersFile.parse(line: "weekly fri 18:45") == .weekly(.friday, hour: 18, minute: 45))
        #expect(RemindersFile.line(.hourly(minute: 0)) == "hourly :00")
        #expect(throws: RemindersFile.Problem.malformed("weekly takes a day: mon, tue, wed, thu, fri, sat or sun (e.g. 'weekly sun 21:30')")) {
            try RemindersFile.parse(line: "weekly xyz 18:45")
        }
    }
}

@Suite struct ReminderEditorTests {
    @Test func fieldsFollowTheFrequency() {
        var e = ReminderEditor(.never)
        #expect(e.isLastField)
        e.change(by: 1)
        #expect(e.frequency == .weekly)
        #expect(e.advance() && e.field == .day)
        #expect(e.advance() && e.field == .hour)
        #expect(e.advance() && e.field == .minute)
        #expect(e.isLastField && !e.advance())
        #expect(e.schedule == .weekly(.sunday, hour: 21, minute: 0))

        var h = ReminderEditor(.hourly(minute: 10))
        #expect(h.advance() && h.field == .minute)
        #expect(!h.applies(.day) && !h.applies(.hour))
    }

    @Test func valuesWrapBothWays() {
        var e = ReminderEditor(.weekly(.monday, hour: 0, minute: 0))
        e.change(by: -1)
        #expect(e.frequency == .never)
        e.change(by: -1)
        #expect(e.frequency == .hourly)
        e.change(by: 1); e.change(by: 1)
        #expect(e.frequency == .weekly)
        e.field = .day; e.change(by: -1)
        #expect(e.day == .sunday)
        e.change(by: 1)
        #expect(e.day == .monday)
        e.field = .hour; e.change(by: -1)
        #expect(e.hour == 23)
        e.field = .minute; e.change(by: -1)
        #expect(e.minute == 59)
        e.change(by: 1)
        #expect(e.minute == 0)
    }

    @Test func choicesSurviveAFrequencyChange() {
        var e = ReminderEditor(.daily(hour: 7, minute: 45))
        e.change(by: 1)            // daily → hourly
        #expect(e.schedule == .hourly(minute: 45))
        e.change(by: -1)           // back to daily
        #expect(e.schedule == .daily(hour: 7, minute: 45))
    }
}

/// The reminder through the core: a simulated wall clock, handed in.
@Suite struct ReminderCoreTests {
    static let base = utc(2026, 5, 5, 21, 0)     // 21:00 UTC
    var core = DeviceCore(settings: DeviceSettings(timeZone: utcZone), mantras: ["Breathe.", "Rest."],
                          reminder: .daily(hour: 21, minute: 30))
    var effects: [Effect] = []

    /// `s` seconds after `base`, on both clocks.
    func at(_ s: Double) -> Moment { Moment(.seconds(s), wall: wall(Self.base + Int64(s.rounded(.down)))) }

    var due: Int64? { core.state.reminders.nextDue?.secondsSinceEpoch }
    var motorOnsets: [Instant] { effects.compactMap { if case .motor(let e) = $0, e.on { e.at } else { nil } } }

    @Test mutating func anUnsynchronisedClockNeverFires() {
        core.apply(.wallClockSynchronised(false), at: at(0), effects: &effects)
        #expect(due == nil)
        core.apply(.reminderDue(wall(Self.base + 1800)), at: at(1800), effects: &effects)
        #expect(!core.state.reminders.isShowing && effects.isEmpty)
        core.apply(.wallClockSynchronised(true), at: at(1900), effects: &effects)
        #expect(due == utc(2026, 5, 6, 21, 30))      // today's, missed while unsynchronised, is not made up
        core.apply(.wallClockSynchronised(false), at: at(2000), effects: &effects)
        #expect(due == nil)
    }

    @Test mutating func aTrustedClockNeedsNoSync() {
        core = DeviceCore(settings: DeviceSettings(timeZone: utcZone, trustUnsynchronisedClock: true),
                          mantras: ["x"], reminder: .daily(hour: 21, minute: 30))
        core.apply(.wallClockSynchronised(false), at: at(0), effects: &effects)
        #expect(due == Self.base + 1800)
    }

    @Test mutating func dueReminderWakesShowsAndBuzzesGently() {
        core.apply(.wallClockSynchronised(true), at: at(0), effects: &effects)
        #expect(due == Self.base + 1800)
        core.apply(.tick, at: at(0), effects: &effects)
        core.apply(.tick, at: at(200), effects: &effects)     // idle: the display sleeps after 2 minutes
        #expect(core.state.display.asleep)
        effects = []
        core.apply(.reminderDue(wall(Self.base + 1800)), at: at(1800.02), effects: &effects)
        #expect(core.state.reminders.isShowing)
        #expect(!core.state.display.asleep)
        #expect(effects.contains(.displayPower(true)))
        let t0 = Instant.seconds(1800.02)
        #expect(motorOnsets == [t0, t0 + .milliseconds(800), t0 + .milliseconds(2600), t0 + .milliseconds(3400)])
        #expect(effects.last == .motor(MotorEdge(at: t0 + .milliseconds(3700), on: false)))
        #expect(due == utc(2026, 5, 6, 21, 30))
        // It stays on screen (no sleep) until a button.
        core.apply(.tick, at: at(2400), effects: &effects)
        #expect(!core.state.display.asleep && core.state.reminders.isShowing)
        core.apply(.button(.down(.right)), at: at(2401), effects: &effects)
        #expect(!core.state.reminders.isShowing)
        core.apply(.button(.short(.right)), at: at(2401.1), effects: &effects)
        #expect(core.state.overlay == .none && core.state.page == .breathing)   // the closing press did nothing else
    }

    @Test mutating func aStaleOrRepeatedAlarmIsIgnored() {
        core.apply(.wallClockSynchronised(true), at: at(0), effects: &effects)
        core.apply(.reminderDue(wall(Self.base + 1700)), at: at(1700), effects: &effects)
        #expect(!core.state.reminders.isShowing)
        core.apply(.reminderDue(wall(Self.base + 1800)), at: at(1800), effects: &effects)
        core.apply(.button(.down(.select)), at: at(1801), effects: &effects)
        effects = []
        core.apply(.reminderDue(wall(Self.base + 1800)), at: at(1802), effects: &effects)
        #expect(!core.state.reminders.isShowing && effects.isEmpty)
    }

    @Test mutating func aBreathingSessionIsNeverInterrupted() {
        core.apply(.wallClockSynchronised(true), at: at(0), effects: &effects)
        core.apply(.button(.down(.select)), at: at(1700), effects: &effects)     // a session starts
        effects = []
        core.apply(.reminderDue(wall(Self.base + 1800)), at: at(1800), effects: &effects)
        #expect(!core.state.reminders.isShowing && core.state.reminders.waiting)
        #expect(effects.isEmpty)
        core.apply(.button(.down(.select)), at: at(1900.5), effects: &effects)    // the session stops
        #expect(!core.state.breathing.isRunning)
        #expect(core.state.reminders.isShowing && !core.state.reminders.waiting)
        #expect(motorOnsets.first == .seconds(1900.5))
    }

    @Test mutating func noMantrasNoReminder() {
        core = DeviceCore(settings: DeviceSettings(timeZone: utcZone), reminder: .daily(hour: 21, minute: 30))
        core.apply(.wallClockSynchronised(true), at: at(0), effects: &effects)
        core.apply(.reminderDue(wall(Self.base + 1800)), at: at(1800), effects: &effects)
        #expect(!core.state.reminders.isShowing && effects.isEmpty)
        #expect(due == utc(2026, 5, 6, 21, 30))      // the schedule goes on
    }

    @Test mutating func clockSteppedForwardSkipsWhatItJumpedOver() {
        core.apply(.wallClockSynchronised(true), at: at(0), effects: &effects)
        // The clock jumps an hour ahead at 100 s: 21:31:40 — today's 21:30 was jumped over.
        core.apply(.wallClockChanged, at: Moment(.seconds(100), wall: wall(Self.base + 3700)), effects: &effects)
        #expect(due == utc(2026, 5, 6, 21, 30))
    }

    @Test mutating func clockSteppedBackRecomputes() {
        core.apply(.wallClockSynchronised(true), at: at(0), effects: &effects)
        // Back an hour before it was due: 20:00, the 21:30 still comes.
        core.apply(.wallClockChanged, at: Moment(.seconds(10), wall: wall(Self.base - 3600)), effects: &effects)
        #expect(due == Self.base + 1800)
        // It fires; then a small step back (30 s) does not give it again.
        core.apply(.reminderDue(wall(Self.base + 1800)), at: Moment(.seconds(5410), wall: wall(Self.base + 1800)), effects: &effects)
        #expect(core.state.reminders.isShowing)
        core.apply(.wallClockChanged, at: Moment(.seconds(5420), wall: wall(Self.base + 1780)), effects: &effects)
        #expect(due == utc(2026, 5, 6, 21, 30))
        // A big step back (the clock was days ahead) starts the schedule again from the right time.
        core.apply(.wallClockChanged, at: Moment(.seconds(5430), wall: wall(utc(2026, 5, 1, 12))), effects: &effects)
        #expect(due == utc(2026, 5, 1, 21, 30))
    }

    var clock = 1.0

    mutating func tap(_ b: Button) {
        core.apply(.button(.down(b)), at: at(clock), effects: &effects)
        core.apply(.button(.short(b)), at: at(clock + 0.08), effects: &effects)
        core.handle(.up(b, heldFor: .milliseconds(80)), at: at(clock + 0.08), effects: &effects)
        clock += 1
    }

    @Test mutating func settingsScreenSavesTheSchedule() {
        core.state.page = .affirmations
        core.apply(.wallClockSynchronised(true), at: at(0), effects: &effects)
        tap(.select)                      // open: Repeat = Daily
        #expect(core.state.overlay == .reminderSettings(ReminderEditor(.daily(hour: 21, minute: 30))))
        tap(.right)                       // Daily → Hourly
        tap(.select)                      // to the minute
        tap(.left)                        // :29
        #expect(core.state.overlay != .none)
        tap(.select)                      // last field: save
        #expect(core.state.overlay == .none)
        #expect(core.state.reminders.schedule == .hourly(minute: 29))
        #expect(effects.contains(.save(.reminders, "hourly :29\n")))
        #expect(due == Self.base + 29 * 60)
        // PAGE leaves without saving (and does not change the page).
        effects = []
        tap(.select)
        tap(.right)
        tap(.page)
        #expect(core.state.overlay == .none && core.state.page == .affirmations)
        #expect(core.state.reminders.schedule == .hourly(minute: 29))
        #expect(!effects.contains { if case .save = $0 { true } else { false } })
    }
}

@Suite struct ScreenCareTests {
    var core = DeviceCore(settings: DeviceSettings(timeZone: utcZone))
    var effects: [Effect] = []
    static let evening = utc(2026, 5, 5, 20, 0)

    func at(_ s: Double) -> Moment { Moment(.seconds(s), wall: wall(Self.evening + Int64(s))) }

    @Test mutating func sleepsWhenIdleAndTheFirstPressOnlyWakes() {
        core.apply(.tick, at: at(10), effects: &effects)           // the first tick starts the idle timer
        core.apply(.tick, at: at(129), effects: &effects)
        #expect(!core.state.display.asleep)
        core.apply(.tick, at: at(130), effects: &effects)
        #expect(core.state.display.asleep)
        #expect(effects.contains(.displayPower(false)))
        effects = []
        core.apply(.button(.down(.select)), at: at(200), effects: &effects)
        core.apply(.button(.short(.select)), at: at(200.1), effects: &effects)
        core.handle(.up(.select, heldFor: .milliseconds(100)), at: at(200.1), effects: &effects)
        #expect(!core.state.display.asleep)
        #expect(effects == [.displayPower(true)])
        #expect(!core.state.breathing.isRunning)           // the waking press started nothing
        core.apply(.button(.down(.select)), at: at(201), effects: &effects)
        #expect(core.state.breathing.isRunning)            // the next one does
    }

    @Test mutating func neverSleepsDuringASession() {
        core.apply(.tick, at: at(0), effects: &effects)
        core.apply(.button(.down(.select)), at: at(1), effects: &effects)
        var t = 2.0
        while t < 900 { core.apply(.tick, at: at(t), effects: &effects); t += 10 }
        #expect(!core.state.display.asleep)
        core.apply(.button(.down(.select)), at: at(900), effects: &effects)
        core.apply(.tick, at: at(1019), effects: &effects)
        #expect(!core.state.display.asleep)
        core.apply(.tick, at: at(1020), effects: &effects)
        #expect(core.state.display.asleep)
    }

    @Test mutating func panicIsNeverSwallowed() {
        core.apply(.tick, at: at(0), effects: &effects)
        core.apply(.tick, at: at(500), effects: &effects)
        #expect(core.state.display.asleep)
        core.apply(.button(.down(.panic)), at: at(501), effects: &effects)
        #expect(!core.state.display.asleep)
        #expect(core.state.swallowed == 0)
    }

    @Test mutating func nightDimmingFollowsATrustedClock() {
        core = DeviceCore(settings: DeviceSettings(timeZone: utcZone, screen: ScreenCareSettings(sleepAfter: nil)))
        core.apply(.tick, at: at(0), effects: &effects)
        #expect(effects == [.displayContrast(0xCF)])       // 20:00: day
        effects = []
        core.apply(.tick, at: at(7200), effects: &effects)         // 22:00 but the clock is not synchronised
        #expect(effects.isEmpty)
        core.apply(.wallClockSynchronised(true), at: at(7200), effects: &effects)
        core.apply(.tick, at: at(7200.5), effects: &effects)
        #expect(effects.contains(.displayContrast(0x01)))
        effects = []
        core.apply(.tick, at: at(7201), effects: &effects)
        #expect(!effects.contains { if case .displayContrast = $0 { true } else { false } })   // only on change
        core.apply(.tick, at: at(11 * 3600), effects: &effects)    // 07:00 the next morning
        #expect(effects.contains(.displayContrast(0xCF)))
    }

    @Test func nightMayCrossMidnight() {
        let s = ScreenCareSettings()
        #expect(s.isNight(minute: 22 * 60) && s.isNight(minute: 0) && s.isNight(minute: 6 * 60 + 59))
        #expect(!s.isNight(minute: 7 * 60) && !s.isNight(minute: 21 * 60 + 59))
        let day = ScreenCareSettings(nightStart: 60, nightEnd: 120)
        #expect(day.isNight(minute: 90) && !day.isNight(minute: 150))
        #expect(ScreenCareSettings(nightStart: 60, nightEnd: nil).problem != nil)
        #expect(ScreenCareSettings().problem == nil)
    }

    @Test func pixelShiftCyclesThroughFourPositions() {
        let d = DeviceCore().state.display
        let p = 180.0
        let shifts = (0..<5).map { d.pixelShift(at: .seconds(Double($0) * p + 1)) }
        #expect(shifts.map(\.dx) == [0, 1, 1, 0, 0])
        #expect(shifts.map(\.dy) == [0, 0, 1, 1, 0])
        let off = DeviceCore(settings: DeviceSettings(screen: ScreenCareSettings(pixelShiftPeriod: nil))).state.display
        #expect(off.pixelShift(at: .seconds(200)).dx == 0 && off.pixelShift(at: .seconds(400)).dy == 0)
    }
}
