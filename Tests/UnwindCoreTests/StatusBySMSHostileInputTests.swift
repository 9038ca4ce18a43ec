import Foundation
import Testing
@testable import UnwindCore

/// STATUS by SMS against hostile input, in the pure core: forged senders, odd words, clock
/// changes, restarts and hostile `statusTexts.txt` contents. Wall clock in UTC; the day
/// starts at 2026-11-22 00:00. Monotonic time (`Instant`) goes on across a wall-clock step.
struct StatusRequestCore {
    static let midnight: Int64 = CivilDate.day(year: 2026, month: 11, day: 22) * 86_400
    static let mum = "+17785551234", sam = "+16045557654"
    var core: DeviceCore
    var effects: [Effect] = []
    var sent = 0
    /// Added to every wall-clock reading (a clock stepped by hand, NTP, a board without RTC).
    var wallShift: Int64 = 0

    init(settings change: (inout DeviceSettings) -> Void = { _ in }, records: [StatusTextRecord] = [],
         slots: [AlertSlotState]? = nil, wallShift: Int64 = 0) throws {
        var s = DeviceSettings()
        change(&s)
        var c = DeviceCore(settings: s, statusTexts: records)
        c.alertSlotsChanged(try slots ?? [
            .ready(try AlertSlot(name: "Mum", number: Self.mum, message: "Having a panic attack, please call")),
            .ready(try AlertSlot(name: "Sam", number: Self.sam, message: "Please come over")),
        ])
        core = c
        self.wallShift = wallShift
        core.apply(.wallClockSynchronised(true), at: at(0), effects: &effects)
        effects = []
    }

    func at(_ s: Double) -> Moment {
        Moment(.seconds(s), wall: WallTime(secondsSinceEpoch: Self.midnight + Int64(s.rounded(.down)) + wallShift))
    }

    mutating func text(_ body: String, from: String = mum, _ s: Double) {
        sent += 1
        let k = effects.count
        core.apply(.replyReceived(IncomingReply(id: "r\(sent)", from: from, text: body)), at: at(s), effects: &effects)
        // A network that takes every text: the core records a text only once told it went.
        for case .sendText(let t) in Array(effects[k...]) {
            core.apply(.deviceTextOutcome(token: t.token, .sent), at: at(s), effects: &effects)
        }
    }

    var answers: [DeviceText] { effects.compactMap { if case .sendText(let t) = $0 { t } else { nil } } }
}

/// Forged senders, lookalike words, clock steps and hostile records: nobody but a contact is
/// answered, the limits hold, and the answer tells nothing of the person.
@Suite("STATUS by SMS in the core against hostile input")
struct StatusBySMSHostileInputTests {
    /// Senders that are not Mum's number in any form a network gives: never answered, never
    /// a write to the card, never on the person's screen. (Spaces and dashes are not how a
    /// network gives a number: they match nobody, which is the safe side.)
    @Test(arguments: [
        "+177855512345", "+1778555123", "+27785551234", "+177855512340000000000000000000000000",
        "177855512349", "Mum", "MUM", "", "+", "++17785551234", "+1 778 555 1234", "+1-778-555-1234",
        "+17785551234 ", " +17785551234", "+17785551234\u{0}", "+１７７８５５５１２３４", "+17785551234;ATD112;",
        "\"+17785551234\"", "5551234", "1234", "0", "000", "00000000000",
    ])
    func aForgedSenderIsNeverAnswered(_ from: String) throws {
        var t = try StatusRequestCore()
        t.text("STATUS", from: from, 60)
        #expect(t.answers.isEmpty, "answered \(String(reflecting: from))")
        #expect(!t.effects.contains { if case .save(.statusTexts, _) = $0 { true } else { false } })
        #expect(t.core.state.panic.aftercare.replies.isEmpty)
        #expect(t.core.state.statusTexts.requests.map(\.outcome) == [.notAContact])
    }

    /// Mum's number in the forms a network really gives is answered — always at the number the
    /// slot stores, never at the sender's form (so nothing of the request reaches a command line).
    @Test(arguments: ["+17785551234", "17785551234", "0017785551234", "01117785551234", "7785551234", "07785551234"])
    func mumInAnyFormIsAnsweredAtTheStoredNumber(_ from: String) throws {
        var t = try StatusRequestCore()
        t.text("STATUS", from: from, 60)
        #expect(t.answers.map(\.message.number.text) == [StatusRequestCore.mum])
    }

    /// Words that look like STATUS but are not it (homoglyphs, zero-width and control characters,
    /// full-width letters, a long s): never answered. (A zero-width space *after* the word is
    /// trimmed as a space by Foundation and the text answered: harmless, it is Mum asking.)
    @Test(arguments: ["STATU\u{0405}", "\u{0405}TATUS", "ST\u{0391}TUS", "STA\u{200B}TUS", "\u{FEFF}STATUS",
                      "STATUS\u{0}", "ſtatus", "ＳＴＡＴＵＳ", "STATUS\u{301}", "S\u{0}TATUS", "STATUS\u{1B}", "STATUSSTATUS",
                      "STATUS STATUS", "STATUS" + String(repeating: "\n", count: 59)])
    func lookalikeWordsAreNotRequests(_ body: String) throws {
        var t = try StatusRequestCore()
        t.text(body, 60)
        #expect(t.answers.isEmpty, "answered \(String(reflecting: body))")
    }

    /// The answer says nothing of the person, nor of any other contact: no names, no numbers, no
    /// sessions or moods, whoever asks and whatever the state.
    @Test func theAnswerTellsNothingOfThePersonOrOtherContacts() throws {
        var t = try StatusRequestCore()
        t.core.apply(.alertReadiness(AlertReadiness(problems: [.sim("SIM PIN +CPIN: SIM PIN for Mum"), .notRegistered, .weakSignal(2)])),
                     at: t.at(10), effects: &t.effects)
        t.core.apply(.modemSignal(3), at: t.at(11), effects: &t.effects)
        t.text("STATUS", from: StatusRequestCore.sam, 60)
        t.text("STATUS", from: StatusRequestCore.mum, 61)
        #expect(t.answers.count == 2)
        for a in t.answers {
            let words = a.message.message
            for secret in ["Mum", "Sam", "7785551234", "6045557654", "panic attack", "come over", "session", "mood", "breath", "+CPIN"] {
                #expect(!words.localizedCaseInsensitiveContains(secret), "\(secret) in \(words)")
            }
            #expect(words.count <= 160)
        }
    }

    /// A request while the limits are used up by strangers: strangers count nothing (they never
    /// use up the day's ten answers).
    @Test func strangersNeverUseUpTheDailyLimit() throws {
        var t = try StatusRequestCore()
        for k in 0..<1_000 { t.text("STATUS", from: "+1999555\(String(format: "%04d", k))", Double(k) * 0.05) }
        t.text("STATUS", 100)
        #expect(t.answers.map(\.message.number.text) == [StatusRequestCore.mum])
        #expect(t.core.state.statusTexts.requests.count <= 20, "notes kept in memory are bounded")
        #expect(t.core.state.statusTexts.requestCount == 1_001)
    }

    /// The limits hold across a restart (the records as `statusTexts.txt` gives them back), and
    /// records up to a day in the future (a clock set back a few hours) still count.
    @Test func limitsHoldAcrossARestartAndASmallClockStepBack() throws {
        var a = try StatusRequestCore()
        for k in 0..<10 { a.text("STATUS", from: k % 2 == 0 ? StatusRequestCore.mum : StatusRequestCore.sam, Double(k / 2) * 600 + Double(k % 2)) }
        #expect(a.answers.count == 10)
        let file = StatusTextsFile.format(a.core.state.statusTexts.sent)
        let records = try StatusTextsFile.parse(Array(file.utf8))
        // Restarted a minute after the last answer, then with the clock 6 hours behind.
        var b = try StatusRequestCore(records: records)
        b.text("STATUS", 2_460)
        b.text("STATUS", from: StatusRequestCore.sam, 3_100)
        #expect(b.answers.isEmpty)
        var c = try StatusRequestCore(records: records, wallShift: -6 * 3600)
        c.text("STATUS", 3_100)
        #expect(c.answers.isEmpty)
    }

    /// Hostile `statusTexts.txt` contents are refused as a whole by the parser (the device sets
    /// the file aside); what it accepts is bounded.
    @Test(arguments: [
        "1 answer 0\n", "1 answer 6\n", "1 answer -1\n", "-5 answer 1\n", "99999999999999 answer 1\n", "1 answer 1 x\n",
        "1  answer 1\n", "1 problem nope\n", "1 recovered \n", "x answer 1\n", "1 answer 1\r\n", "1e3 answer 1\n",
        "\u{FEFF}1 answer 1\n",
    ])
    func hostileRecordsAreRefused(_ text: String) {
        #expect(throws: StatusTextsFile.Problem.self) { try StatusTextsFile.parse(Array(text.utf8)) }
    }

    @Test func aHugeOrBinaryFileIsRefusedAndAManyLinedOneIsBounded() throws {
        #expect(throws: StatusTextsFile.Problem.self) { try StatusTextsFile.parse(Array(repeating: 0x31, count: 4097)) }
        #expect(throws: StatusTextsFile.Problem.self) { try StatusTextsFile.parse([0xFF, 0xFE, 0x00]) }
        var lines = ""
        for k in 0..<400 { lines += "\(k) answer 1\n" }
        let bytes = Array(lines.prefix(4096).utf8)
        let parsed = try StatusTextsFile.parse(Array(bytes.prefix(upTo: bytes.lastIndex(of: 0x0A)! + 1)))
        #expect(parsed.count <= 40)
    }

    /// A wall clock set back by more than a day — what a board without an RTC does at boot
    /// (fake-hwclock's old time, or 1970) and what NTP does after a clock that ran ahead — opens
    /// no limit: records from the future are re-dated to now and count from then, so such a
    /// clock shuts a limit a day at most. Within one run the monotonic clock knows the answer
    /// went seconds ago.
    @Test func aClockSetBackMoreThanADayKeepsThePerContactLimit() throws {
        var t = try StatusRequestCore()
        t.text("STATUS", 60)
        #expect(t.answers.count == 1)
        t.wallShift = -2 * 86_400   // the wall clock steps back two days; 60 s pass
        t.core.apply(.wallClockChanged, at: t.at(100), effects: &t.effects)
        t.text("STATUS", 120)
        #expect(t.answers.count == 1, "answered again 60 s later, after the clock stepped back 2 days")
    }

    /// The same after a restart with the board's clock days behind: the day's ten stay used.
    @Test func aRestartWithAnOldClockKeepsTheDailyLimit() throws {
        var a = try StatusRequestCore()
        for k in 0..<10 { a.text("STATUS", from: k % 2 == 0 ? StatusRequestCore.mum : StatusRequestCore.sam, Double(k / 2) * 600 + Double(k % 2)) }
        #expect(a.answers.count == 10)
        let records = try StatusTextsFile.parse(Array(StatusTextsFile.format(a.core.state.statusTexts.sent).utf8))
        // Restart (power cut) and the board comes up with its clock 3 days behind (no RTC).
        var b = try StatusRequestCore(records: records, wallShift: -3 * 86_400)
        for k in 0..<10 { b.text("STATUS", from: k % 2 == 0 ? StatusRequestCore.mum : StatusRequestCore.sam, 3_000 + Double(k / 2) * 600 + Double(k % 2)) }
        #expect(b.answers.isEmpty, "\(b.answers.count) more answers the same real day after a restart with an old clock")
    }

    /// A national form is the whole national significant number after the E.164 country code,
    /// alone or after a trunk prefix. A number that is not the contact's in any form — the last
    /// 8 or 9 digits of Mum's +1 778 555 1234, a 7–9 digit national number (North American
    /// national numbers have 10 digits) — is nobody: taken for Mum (the "country code" left
    /// over, 177 or 17, begins some known international number, as Mum's own always does), a
    /// stranger with such a number (or forging it) would use up Mum's 10 minutes and Mum's own
    /// STATUS a minute later would be refused. (The same rule keeps a stranger's SMS from being
    /// shown to the person as Mum's.)
    @Test(arguments: ["85551234", "785551234", "085551234", "0785551234"])
    func aShortStrangerNumberIsNotTakenForAContact(_ from: String) throws {
        var t = try StatusRequestCore()
        t.text("STATUS", from: from, 60)
        #expect(t.answers.isEmpty, "\(from) was taken for Mum (+17785551234)")
        t.text("STATUS", from: StatusRequestCore.mum, 120)
        #expect(t.answers.count == 1 && t.core.state.statusTexts.requests.last?.outcome == .answered,
                "Mum's own request: \(t.core.state.statusTexts.requests.last?.outcome.words ?? "-")")
    }

    /// An answer is one SMS, whatever the device's name: a name outside GSM-7 (a Cyrillic or
    /// Greek name is a valid `device.name`) makes the answer UCS-2, so it is signed with the name
    /// only when it then fits one SMS (70 characters), else with "Unwind".
    @Test func anAnswerIsOneSMSWithANonGSMName() throws {
        let name = "Бабушкин Unwind"
        #expect(StatusTextSettings.nameProblem(name) == nil, "a valid device.name")
        var t = try StatusRequestCore(settings: { $0.statusTexts.deviceName = name })
        t.core.apply(.alertReadiness(AlertReadiness(problems: [.notRegistered])), at: t.at(10), effects: &t.effects)
        t.text("STATUS", 60)
        let answer = try #require(t.answers.first)
        #expect(answer.message.encoding.parts == 1, "\(answer.message.encoding.parts) parts: \(answer.message.message)")
    }

    /// Slots whose numbers are the same subscriber are one person: stored twice in two forms
    /// (slot 1 `+17785551234`, slot 2 `17785551234`), they are not "ambiguous" — one person in
    /// two slots gets one answer.
    @Test func onePersonStoredInTwoFormsIsAnsweredOnce() throws {
        let a = try AlertSlot(name: "Mum", number: "+17785551234", message: "Help")
        let b = try AlertSlot(name: "Mum mobile", number: "17785551234", message: "Help")
        var t = try StatusRequestCore(slots: [.ready(a), .ready(b)])
        t.text("STATUS", from: "+17785551234", 60)
        #expect(t.answers.count == 1, "\(t.core.state.statusTexts.requests.map(\.outcome.words))")
    }
}
