import Foundation
import Testing
@testable import UnwindCore

/// The daily check-in and the readiness watch, on simulated time and a simulated wall clock
/// (UTC; the day starts at 2026-11-22 00:00).
@Suite struct CheckInAndReadinessTests {
    static let midnight: Int64 = CivilDate.day(year: 2026, month: 11, day: 22) * 86_400
    var core: DeviceCore
    var effects: [Effect] = []

    init(checkIn deadline: Int? = 9 * 60, monthlyTest: Bool = false, trusted: Bool = true) throws {
        var s = DeviceSettings()
        s.checkIn.deadline = deadline
        s.panic.monthlyTest = monthlyTest
        var c = DeviceCore(settings: s)
        c.alertSlotsChanged([
            .ready(try AlertSlot(name: "Mum", number: "+17785551234", message: "Having a panic attack, please call")),
            .ready(try AlertSlot(name: "Sam", number: "6045557654", message: "Please come over")),
        ])
        core = c
        core.apply(.wallClockSynchronised(trusted), at: at(0), effects: &effects)
        effects = []
    }

    init() throws { try self.init(checkIn: 9 * 60) }

    /// `s` seconds after 2026-11-22 00:00 UTC, on both clocks.
    func at(_ s: Double) -> Moment {
        Moment(.seconds(s), wall: WallTime(secondsSinceEpoch: Self.midnight + Int64(s.rounded(.down))))
    }
    func hm(_ h: Int, _ m: Int, day: Int = 0) -> Double { Double(day * 86_400 + h * 3600 + m * 60) }
    mutating func tick(_ s: Double) { core.apply(.tick, at: at(s), effects: &effects) }
    mutating func press(_ g: ButtonGesture, _ s: Double) { core.apply(.button(g), at: at(s), effects: &effects) }
    /// Ticks once a second from `a` to `b`.
    mutating func run(_ a: Double, _ b: Double) { for t in stride(from: a, through: b, by: 1) { tick(t) } }

    var sent: [AlertRequest] { effects.flatMap { e -> [AlertRequest] in if case .sendAlerts(let r) = e { r } else { [] } } }
    var saves: [(StateFile, String)] { effects.compactMap { if case .save(let f, let t) = $0 { (f, t) } else { nil } } }
    var motorOnsets: [Instant] { effects.compactMap { if case .motor(let m) = $0, m.on { m.at } else { nil } } }

    // MARK: Check-in

    @Test mutating func aPressBeforeTheDeadlineIsTheCheckIn() {
        run(hm(7, 59) - 5, hm(7, 59) + 59)
        #expect(!core.state.checkIn.showing)
        tick(hm(8, 0))
        #expect(core.state.checkIn.showing)
        #expect(motorOnsets.isEmpty)   // an hour early: quietly
        press(.down(.right), hm(8, 30))
        #expect(!core.state.checkIn.showing)
        #expect(saves.map(\.1) == ["2026-11-22 confirmed\n"])
        #expect(saves.map(\.0) == [.checkIn])
        effects = []
        run(hm(9, 0), hm(10, 0))
        #expect(sent.isEmpty && motorOnsets.isEmpty && !core.state.checkIn.showing)
        // The next day asks again.
        tick(hm(8, 0, day: 1))
        #expect(core.state.checkIn.showing)
    }

    @Test mutating func noPressSendsHelpAfterTheGracePeriod() {
        run(hm(8, 59), hm(9, 0))
        #expect(core.state.checkIn.sendsAtClock == "09:30")
        let first = motorOnsets
        #expect(first.count == 4)   // long, short, long, short
        effects = []
        run(hm(9, 0) + 1, hm(9, 10))
        #expect(motorOnsets.count == 4)   // again after ten minutes
        effects = []
        run(hm(9, 10) + 1, hm(9, 29) + 59)
        #expect(sent.isEmpty)
        tick(hm(9, 30))
        #expect(sent.map(\.slot) == [0, 1])
        #expect(sent.allSatisfy { $0.purpose == .checkIn && $0.alert.message == CheckInSettings.defaultMessage })
        // Saved before the alerts go: a restart never sends them twice.
        let saveIndex = effects.firstIndex { if case .save(.checkIn, "2026-11-22 missed\n") = $0 { true } else { false } }
        let sendIndex = effects.firstIndex { if case .sendAlerts = $0 { true } else { false } }
        #expect(saveIndex != nil && sendIndex != nil && saveIndex! < sendIndex!)
        #expect(core.state.panic.aftercare.purpose == .checkIn)
        #expect(core.state.overlay == .alertStatus)
        #expect(!core.state.checkIn.showing)
        effects = []
        run(hm(9, 30) + 1, hm(12, 0))
        #expect(sent.isEmpty)
    }

    @Test mutating func aRestartAfterTheDayWasSettledAsksNothing() throws {
        var s = DeviceSettings()
        s.checkIn.deadline = 9 * 60
        core = DeviceCore(settings: s, checkIn: CheckInRecord(day: Self.midnight / 86_400, outcome: .missed))
        core.apply(.wallClockSynchronised(true), at: at(hm(9, 40)), effects: &effects)
        run(hm(9, 40), hm(10, 0))
        #expect(!core.state.checkIn.showing && sent.isEmpty)
    }

    @Test mutating func anUntrustedClockNeverChecksIn() throws {
        self = try CheckInAndReadinessTests(checkIn: 9 * 60, trusted: false)
        run(hm(7, 0), hm(11, 0))
        #expect(!core.state.checkIn.showing)
        #expect(sent.isEmpty && motorOnsets.isEmpty)
    }

    @Test mutating func offByDefault() throws {
        self = try CheckInAndReadinessTests(checkIn: nil)
        run(hm(0, 0), hm(23, 59))
        #expect(!core.state.checkIn.showing && sent.isEmpty)
    }

    @Test mutating func aSessionDelaysTheCheckInToItsEnd() {
        tick(hm(8, 0))
        press(.down(.right), hm(8, 0) + 1)   // closes nothing: it is the check-in... so confirm first day
        effects = []
        // Next day: breathing from 08:50 to 09:20.
        core.apply(.button(.down(.select)), at: at(hm(8, 50, day: 1)), effects: &effects)
        #expect(core.state.breathing.isRunning)
        run(hm(8, 50, day: 1), hm(9, 20, day: 1))
        #expect(!core.state.checkIn.showing)
        #expect(sent.isEmpty)
        core.apply(.button(.down(.select)), at: at(hm(9, 20, day: 1) + 0.5), effects: &effects)
        #expect(!core.state.breathing.isRunning)
        effects = []
        tick(hm(9, 20, day: 1) + 1)
        #expect(core.state.checkIn.showing)
        // The grace period counts from what the person could feel.
        #expect(core.state.checkIn.sendsAtClock == "09:50")
    }

    @Test mutating func aLateDeadlineSendsAfterMidnight() throws {
        self = try CheckInAndReadinessTests(checkIn: 23 * 60 + 50)
        run(hm(23, 49), hm(23, 50))
        #expect(core.state.checkIn.sendsAtClock == "00:20")
        run(hm(23, 50) + 1, hm(0, 20, day: 1) - 1)
        #expect(sent.isEmpty)
        tick(hm(0, 20, day: 1))
        #expect(sent.count == 2)
        #expect(saves.contains { $0.1 == "2026-11-22 missed\n" })
    }

    @Test mutating func panicStillWorksOverThePrompt() {
        tick(hm(8, 0))
        press(.down(.panic), hm(8, 1))
        tick(hm(8, 1) + 1.5)
        #expect(sent.map(\.purpose) == [.panic, .panic])
        // The alerts' status is on screen, not the prompt: the PANIC answered today's check-in.
        #expect(!core.state.checkIn.showing)
        #expect(core.state.overlay == .alertStatus)
        #expect(saves.contains { $0.1 == "2026-11-22 alerted\n" })
    }

    @Test(arguments: [
        ("2026-11-22 confirmed\n", CheckInRecord(day: CivilDate.day(year: 2026, month: 11, day: 22), outcome: .confirmed)),
        ("2024-02-29 missed", CheckInRecord(day: CivilDate.day(year: 2024, month: 2, day: 29), outcome: .missed)),
    ])
    func checkInFileRoundTrips(_ text: String, _ record: CheckInRecord) throws {
        #expect(try CheckInFile.parse(Array(text.utf8)) == record)
        #expect(try CheckInFile.parse(Array(CheckInFile.format(record).utf8)) == record)
    }

    @Test(arguments: [
        "2025-02-29 confirmed", "2026-13-01 missed", "2026-11-22", "2026-11-22 maybe", "2026-11-22  confirmed",
        "26-11-22 confirmed", "2026-11-22 confirmed\n2026-11-23 missed", "１２３４-11-22 confirmed",
        "-2026-11-22 confirmed", "1969-12-31 confirmed", "2026-11-2x confirmed", String(repeating: "9", count: 300),
    ])
    func hostileCheckInFiles(_ text: String) {
        #expect(throws: CheckInFile.Problem.self) { try CheckInFile.parse(Array(text.utf8)) }
    }

    @Test func hostileBytesInACheckInFile() throws {
        #expect(throws: CheckInFile.Problem.notText) { try CheckInFile.parse([0xFF, 0xFE, 0x20]) }
        #expect(try CheckInFile.parse([]) == nil)
        #expect(try CheckInFile.parse(Array("\n\n".utf8)) == nil)
    }

    @Test func civilDatesRoundTrip() {
        for day in stride(from: Int64(0), through: 80_000, by: 37) {
            let c = CivilDate.civil(ofDay: day)
            #expect(CivilDate.day(year: c.year, month: c.month, day: c.day) == day)
            #expect(CivilDate.day(ofText: Substring(CivilDate.text(ofDay: day))) == day)
        }
        #expect(CivilDate.text(ofDay: 0) == "1970-01-01")
    }

    // MARK: Readiness

    @Test mutating func notReadyIsToldOnceAfterTwoMinutes() throws {
        self = try CheckInAndReadinessTests(checkIn: nil)
        let noSignal = AlertReadiness(problems: [.weakSignal(2)])
        core.apply(.alertReadiness(noSignal), at: at(hm(12, 0)), effects: &effects)
        #expect(effects.contains { if case .log(let l) = $0 { l.contains("signal too weak") } else { false } })
        effects = []
        run(hm(12, 0), hm(12, 1) + 59)
        #expect(core.state.panic.readiness.notice == nil)
        tick(hm(12, 2))
        #expect(core.state.panic.readiness.notice == .cannotSend(.weakSignal(2)))
        #expect(core.state.panic.readiness.showsNotice(at: .seconds(hm(12, 2))))
        #expect(motorOnsets.count == 2)
        effects = []
        run(hm(12, 2) + 1, hm(13, 0))
        #expect(motorOnsets.isEmpty)   // once
        core.apply(.alertReadiness(.ready), at: at(hm(13, 0)), effects: &effects)
        core.apply(.alertReadiness(noSignal), at: at(hm(13, 1)), effects: &effects)
        effects = []
        run(hm(13, 1), hm(13, 3) + 1)
        #expect(motorOnsets.count == 2)   // a new "no" is told again
    }

    @Test mutating func aShortOutageIsNotNews() throws {
        self = try CheckInAndReadinessTests(checkIn: nil)
        core.apply(.alertReadiness(AlertReadiness(problems: [.notRegistered])), at: at(hm(12, 0)), effects: &effects)
        run(hm(12, 0), hm(12, 1))
        core.apply(.alertReadiness(.ready), at: at(hm(12, 1) + 1), effects: &effects)
        effects = []
        run(hm(12, 1) + 1, hm(12, 10))
        #expect(core.state.panic.readiness.notice == nil && motorOnsets.isEmpty)
    }

    @Test mutating func neverAtNight() throws {
        self = try CheckInAndReadinessTests(checkIn: nil)
        core.apply(.alertReadiness(AlertReadiness(problems: [.modemSilent])), at: at(hm(23, 0)), effects: &effects)
        effects = []
        run(hm(23, 0), hm(23, 30))
        #expect(motorOnsets.isEmpty)
        // Told in the morning (night ends 07:00) if it is still so.
        for t in stride(from: hm(6, 59, day: 1), through: hm(7, 0, day: 1) + 1, by: 1) { tick(t) }
        #expect(core.state.panic.readiness.notice == .cannotSend(.modemSilent))
        #expect(motorOnsets.count == 2)
    }

    @Test mutating func aSelfTestEveryDay() {
        tick(0)
        run(1, 10)
        #expect(!effects.contains(.runSelfTest))
        tick(86_400)
        #expect(effects.filter { $0 == .runSelfTest }.count == 1)
        tick(86_401)
        #expect(effects.filter { $0 == .runSelfTest }.count == 1)
        tick(2 * 86_400)
        #expect(effects.filter { $0 == .runSelfTest }.count == 2)
    }

    // MARK: The monthly test

    @Test mutating func theMonthlyTestGoesOnceAMonthByDay() throws {
        self = try CheckInAndReadinessTests(checkIn: nil, monthlyTest: true)
        run(hm(9, 0), hm(9, 59) + 59)
        #expect(sent.isEmpty)
        tick(hm(10, 0))
        #expect(sent.map(\.slot) == [0])
        #expect(sent.first?.purpose == .test)
        #expect(sent.first?.alert.message.hasPrefix("[TEST]") == true)
        let started = Self.midnight + 10 * 3600
        #expect(saves.map(\.1) == ["\(started) sending\n"])
        core.apply(.followUpDelivery(slot: 0, purpose: .test, .delivered), at: at(hm(10, 1)), effects: &effects)
        #expect(saves.last?.1 == "\(started) delivered\n")
        effects = []
        run(hm(10, 2), hm(17, 0))
        for d in 1...29 { tick(hm(12, 0, day: d)) }
        #expect(sent.isEmpty)
        tick(hm(12, 0, day: 30))
        #expect(sent.count == 1)
    }

    @Test mutating func aFailedMonthlyTestIsSaid() throws {
        self = try CheckInAndReadinessTests(checkIn: nil, monthlyTest: true)
        tick(hm(10, 0))
        effects = []
        core.apply(.followUpDelivery(slot: 0, purpose: .test, .failed("+CMS ERROR: 38")), at: at(hm(10, 1)), effects: &effects)
        #expect(core.state.panic.readiness.notice == .testFailed("+CMS ERROR: 38"))
        #expect(saves.last?.1 == "\(Self.midnight + 10 * 3600) failed +CMS ERROR: 38\n")
    }

    @Test(arguments: ["1795000000 delivered", "1795000000 sent\n", "0 sending", "1795000000 failed no signal"])
    func alertTestFileRoundTrips(_ text: String) throws {
        let r = try AlertTestFile.parse(Array(text.utf8))
        #expect(r != nil)
        #expect(try AlertTestFile.parse(Array(AlertTestFile.format(r).utf8)) == r)
    }

    @Test(arguments: ["x delivered", "-1 sent", "1795000000", "1795000000 lost", "1795000000 sent extra",
                      "99999999999999999999 sent", "1795000000 sent\n1795000001 sent", String(repeating: "1", count: 600)])
    func hostileAlertTestFiles(_ text: String) {
        #expect(throws: AlertTestFile.Problem.self) { try AlertTestFile.parse(Array(text.utf8)) }
    }

    @Test func aFailureReasonCannotBreakTheFile() {
        let r = AlertTestRecord(at: WallTime(secondsSinceEpoch: 5), outcome: .failed("bad\nline\u{1B}[2J"))
        let text = AlertTestFile.format(r)
        #expect(text.filter { $0 == "\n" }.count == 1)
        #expect(throws: Never.self) { try AlertTestFile.parse(Array(text.utf8)) }
    }
}
