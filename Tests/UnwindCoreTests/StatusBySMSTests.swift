import Foundation
import Testing
@testable import UnwindCore

/// STATUS by SMS and the maintainer's texts, in the pure core on simulated time and
/// a simulated wall clock (UTC; the day starts at 2026-11-22 00:00): what is a request, who is
/// answered, the limits, the words, and what the person never sees.
@Suite struct StatusBySMSTests {
    static let midnight: Int64 = CivilDate.day(year: 2026, month: 11, day: 22) * 86_400
    var core: DeviceCore
    var effects: [Effect] = []
    var replies = 0

    static let mum = "+17785551234", sam = "6045557654"

    init(settings change: (inout DeviceSettings) -> Void = { _ in }, records: [StatusTextRecord] = [],
         slots: [AlertSlotState]? = nil) throws {
        var s = DeviceSettings()
        change(&s)
        var c = DeviceCore(settings: s, statusTexts: records)
        c.alertSlotsChanged(try slots ?? [
            .ready(try AlertSlot(name: "Mum", number: Self.mum, message: "Having a panic attack, please call")),
            .ready(try AlertSlot(name: "Sam", number: Self.sam, message: "Please come over")),
        ])
        core = c
        core.apply(.wallClockSynchronised(true), at: at(0), effects: &effects)
        effects = []
    }

    init() throws { try self.init(settings: { _ in }) }

    func at(_ s: Double) -> Moment {
        Moment(.seconds(s), wall: WallTime(secondsSinceEpoch: Self.midnight + Int64(s.rounded(.down))))
    }

    mutating func text(_ body: String, from: String = mum, _ s: Double) {
        replies += 1
        let k = effects.count
        core.apply(.replyReceived(IncomingReply(id: "r\(replies)", from: from, text: body)), at: at(s), effects: &effects)
        confirmTexts(since: k, at: s)
    }

    /// A network that takes every text: each `.sendText` from `effects[k...]` is reported sent.
    mutating func confirmTexts(since k: Int, at s: Double) {
        for case .sendText(let t) in Array(effects[k...]) {
            core.apply(.deviceTextOutcome(token: t.token, .sent), at: at(s), effects: &effects)
        }
    }

    var answers: [DeviceText] { effects.compactMap { if case .sendText(let t) = $0 { t } else { nil } } }
    var saves: [String] { effects.compactMap { if case .save(.statusTexts, let t) = $0 { t } else { nil } } }

    // MARK: What is a request

    @Test(arguments: ["STATUS", "status", "  Status \n", "sTaTuS", "\tSTATUS\r\n"])
    func theWordInAnyCaseWithSpacesAround(_ body: String) throws {
        var t = try StatusBySMSTests()
        t.text(body, 60)
        #expect(t.answers.count == 1)
    }

    /// Anything more than the word is an ordinary reply: shown to the person, never answered
    /// (a contact's real words are not swallowed because they begin like a command).
    @Test(arguments: ["status please", "Status?", "STATUS.", "my status", "S T A T U S", "ＳＴＡＴＵＳ", "",
                      "STATUS" + String(repeating: " ", count: 200)])
    func moreThanTheWordIsAReply(_ body: String) throws {
        var t = try StatusBySMSTests()
        t.text(body, 60)
        #expect(t.answers.isEmpty)
        #expect(t.core.state.statusTexts.requestCount == 0)
        #expect(t.core.state.panic.aftercare.replies.count == 1, "shown to the person as a reply")
    }

    @Test func configuredWordsInAnyCase() throws {
        var t = try StatusBySMSTests(settings: { $0.statusTexts.statusWords = ["ESTADO", "ÉTAT"] })
        t.text("estado", 0)
        t.text("état", 700)
        t.text("E\u{301}TAT", 1400)   // decomposed: the same word
        t.text("etat", 2100)          // no accent: another word, a reply
        #expect(t.answers.count == 3)
    }

    // MARK: Who is answered

    /// The answer goes to the number the slot stores, never to the sender's form of it; the
    /// person sees and feels nothing, and the request is marked seen (not shown after a restart).
    @Test func aContactIsAnsweredAtTheStoredNumberAndThePersonSeesNothing() throws {
        var t = try StatusBySMSTests()
        let before = t.core.state
        t.text("STATUS", from: "7785551234", 60)   // national form of Mum's number
        #expect(t.answers.map(\.message.number.text) == [Self.mum])
        #expect(t.answers.map(\.kind) == [.statusAnswer(slot: 0)])
        #expect(t.effects.contains(.markRepliesSeen(["r1"])))
        #expect(!t.effects.contains { if case .motor = $0 { true } else { false } })
        #expect(!t.effects.contains { if case .displayPower = $0 { true } else { false } })
        #expect(t.core.state.overlay == before.overlay && t.core.state.panic.aftercare == before.panic.aftercare)
        #expect(t.core.state.display == before.display)
        #expect(t.saves == ["\(Self.midnight + 60) answer 1\n"])
    }

    @Test func aStrangerIsNeverAnswered() throws {
        var t = try StatusBySMSTests()
        t.text("STATUS", from: "+19995550000", 60)
        t.text("STATUS", from: "Operator X", 61)
        t.text("STATUS", from: "+1778555123", 62)   // one digit short of Mum's
        #expect(t.answers.isEmpty && t.saves.isEmpty)
        #expect(t.core.state.statusTexts.requests.map(\.outcome) == [.notAContact, .notAContact, .notAContact])
        #expect(t.core.state.panic.aftercare.replies.isEmpty)
    }

    /// One person in two slots: one answer. A national number two different contacts could
    /// have sent (the same digits under two country codes): nobody's, so nobody is answered.
    @Test func aNumberMatchingTwoSlots() throws {
        let mum = try AlertSlot(name: "Mum", number: "+17785551234", message: "Help")
        var same = try StatusBySMSTests(slots: [.ready(mum), .ready(try AlertSlot(name: "Mum again", number: "+17785551234", message: "Help"))])
        same.text("STATUS", from: "+17785551234", 60)
        #expect(same.answers.map(\.kind) == [.statusAnswer(slot: 0)])

        var two = try StatusBySMSTests(slots: [.ready(mum), .ready(try AlertSlot(name: "Tom", number: "+447785551234", message: "Help"))])
        two.text("STATUS", from: "7785551234", 60)
        #expect(two.answers.isEmpty)
        #expect(two.core.state.statusTexts.requests.map(\.outcome) == [.ambiguous([0, 1])])
        // Each in its international form is answered.
        two.text("STATUS", from: "+447785551234", 120)
        #expect(two.answers.map(\.message.number.text) == ["+447785551234"])
    }

    // MARK: The limits

    @Test func oneAnswerPerContactPerTenMinutes() throws {
        var t = try StatusBySMSTests()
        t.text("STATUS", 0)
        t.text("STATUS", 599)
        t.text("STATUS", from: Self.sam, 300)   // another contact is not held back
        t.text("STATUS", 600)
        #expect(t.answers.map(\.kind) == [.statusAnswer(slot: 0), .statusAnswer(slot: 1), .statusAnswer(slot: 0)])
        #expect(t.core.state.statusTexts.requests.map(\.outcome) == [.answered, .tooSoon, .answered, .answered])
    }

    @Test func tenAnswersADayInAll() throws {
        var t = try StatusBySMSTests()
        for k in 0..<12 { t.text("STATUS", from: k % 2 == 0 ? Self.mum : Self.sam, Double(k / 2) * 600 + Double(k % 2)) }
        #expect(t.answers.count == 10)
        #expect(t.core.state.statusTexts.requests.suffix(2).map(\.outcome) == [.dailyLimit, .dailyLimit])
        // A day after the first answer, one more may go.
        t.text("STATUS", 86_400)
        #expect(t.answers.count == 11)
    }

    /// A thousand STATUS texts in a minute: one answer, one write to the card, every request
    /// counted and the newest kept for `unwind status`.
    @Test func aFloodOfAThousandTexts() throws {
        var t = try StatusBySMSTests()
        for k in 0..<1000 { t.text("STATUS", from: k % 3 == 0 ? "+19995550000" : Self.mum, Double(k) * 0.06) }
        #expect(t.answers.count == 1)
        #expect(t.saves.count == 1)
        #expect(t.core.state.statusTexts.requestCount == 1000)
        #expect(t.core.state.statusTexts.requests.count == StatusTexts.notesKept)
        #expect(t.core.state.panic.aftercare.replies.isEmpty)
    }

    /// The limits hold across a restart: the file the core wrote, read back by a new core.
    @Test func theLimitsHoldAcrossARestart() throws {
        var t = try StatusBySMSTests()
        t.text("STATUS", 0)
        let file = try #require(t.saves.last)
        let records = try StatusTextsFile.parse(Array(file.utf8))
        var after = try StatusBySMSTests(records: records)
        after.text("STATUS", 300)
        #expect(after.answers.isEmpty)
        #expect(after.core.state.statusTexts.requests.map(\.outcome) == [.tooSoon])
        after.text("STATUS", 600)
        #expect(after.answers.count == 1)
    }

    /// A clock set back does not open the limits; a record far in the future (a clock that was
    /// wrong when it was written, or is wrong now) does not close them for good: it is re-dated
    /// to now and counts for the limit's own length — a day for the daily limit — from then.
    /// (Ignored instead, a record over a day ahead would let a clock set back two days open
    /// every limit.)
    @Test func recordsFromTheFuture() throws {
        let soon = StatusTextRecord(at: WallTime(secondsSinceEpoch: Self.midnight + 3600), kind: .answer(slot: 0))
        var back = try StatusBySMSTests(records: [soon])
        back.text("STATUS", 60)
        #expect(back.answers.isEmpty)
        let far = StatusTextRecord(at: WallTime(secondsSinceEpoch: Self.midnight + 10 * 86_400), kind: .answer(slot: 0))
        var wrong = try StatusBySMSTests(records: Array(repeating: far, count: 10))
        wrong.text("STATUS", 60)
        #expect(wrong.answers.isEmpty, "ten answers count, from now")
        #expect(wrong.core.state.statusTexts.sent.allSatisfy { $0.at.secondsSinceEpoch == Self.midnight + 60 })
        wrong.text("STATUS", 86_400 + 61)
        #expect(wrong.answers.count == 1, "a day later, open again")
    }

    // MARK: The words

    @Test func theAnswerWhenReady() throws {
        var t = try StatusBySMSTests(settings: { $0.statusTexts.deviceName = "Gran's Unwind" })
        t.core.apply(.alertReadiness(.ready), at: t.at(10), effects: &t.effects)
        t.core.apply(.modemSignal(17), at: t.at(10), effects: &t.effects)
        t.text("STATUS", 60)
        #expect(t.answers.first?.message.message == "Gran's Unwind: a PANIC would go out now. Signal: good. No test yet.")
    }

    @Test(arguments: [
        (AlertReadiness.Problem.notRegistered, "no mobile network since 14:05"),
        (.sim("locked (SIM PIN)"), "SIM asks for its PIN since 14:05"),
        (.modemSilent, "modem not answering since 14:05"),
        (.weakSignal(2), "signal too weak since 14:05"),
    ])
    func theAnswerWhenNotReady(_ problem: AlertReadiness.Problem, _ words: String) throws {
        var t = try StatusBySMSTests()
        t.core.apply(.alertReadiness(AlertReadiness(problems: [problem])), at: t.at(14 * 3600 + 5 * 60 + 30), effects: &t.effects)
        t.core.apply(.modemSignal(99), at: t.at(14 * 3600 + 5 * 60 + 30), effects: &t.effects)
        t.text("STATUS", 15 * 3600)
        let text = try #require(t.answers.first?.message.message)
        #expect(text == "Unwind: a PANIC would NOT go out now: \(words). Signal: unknown. No test yet.")
    }

    /// The last monthly test, a problem from another day, what else is wrong: and never more
    /// than one SMS, never a word about the person or the other contacts.
    @Test func theAnswerTellsNothingAboutThePerson() throws {
        let test = AlertTestRecord(at: WallTime(secondsSinceEpoch: Self.midnight - 20 * 86_400), outcome: .delivered)
        var t = try StatusBySMSTests()
        t.core = DeviceCore(settings: DeviceSettings(), alertTest: test)
        t.core.alertSlotsChanged([.ready(try AlertSlot(name: "Mum", number: Self.mum, message: "Help me, I am panicking")),
                                  .ready(try AlertSlot(name: "Sam", number: Self.sam, message: "Come over"))])
        t.core.apply(.alertReadiness(AlertReadiness(problems: [.notRegistered])), at: t.at(-3600), effects: &t.effects)
        t.core.apply(.deviceProblem(.display, failing: true), at: t.at(0), effects: &t.effects)
        t.core.apply(.deviceProblem(.motor, failing: true), at: t.at(0), effects: &t.effects)
        for s in 1...3 { t.core.apply(.tick, at: t.at(Double(s)), effects: &t.effects) }
        t.text("STATUS", 60)
        let text = try #require(t.answers.first?.message.message)
        #expect(text.hasPrefix("Unwind: a PANIC would NOT go out now: no mobile network since 21 Nov 23:00. Signal: unknown. Last test 2 Nov: delivered."))
        #expect(text.contains("display is not working"))
        #expect(text.count <= AlertSlot.messageLimit)
        for secret in ["Sam", "Mum", "panick", "session", "anxious", Self.sam] { #expect(!text.contains(secret)) }
    }

    @Test func aLongNameStillMakesOneSMS() throws {
        var t = try StatusBySMSTests(settings: { $0.statusTexts.deviceName = String(repeating: "W", count: StatusTextSettings.nameLimit) })
        t.core.apply(.alertReadiness(AlertReadiness(problems: [.notRegistered, .noServiceCentre, .serviceCentreRefused])),
                     at: t.at(1), effects: &t.effects)
        for p in DeviceProblem.allCases where p != .noContacts { t.core.apply(.deviceProblem(p, failing: true), at: t.at(1), effects: &t.effects) }
        t.core.apply(.tick, at: t.at(2), effects: &t.effects)
        t.text("STATUS", 60)
        let text = try #require(t.answers.first?.message.message)
        #expect(text.count <= AlertSlot.messageLimit)
        #expect(text.contains("no message centre number"))
    }

    // MARK: statusTexts.txt

    @Test func theFileRoundTrips() throws {
        let records = [StatusTextRecord(at: WallTime(secondsSinceEpoch: 1_795_000_000), kind: .answer(slot: 4)),
                       StatusTextRecord(at: WallTime(secondsSinceEpoch: 1_795_000_100), kind: .problem(.stateDisk)),
                       StatusTextRecord(at: WallTime(secondsSinceEpoch: 1_795_000_200), kind: .recovered(.stateDisk))]
        let text = StatusTextsFile.format(records)
        #expect(text == "1795000000 answer 5\n1795000100 problem state-disk\n1795000200 recovered state-disk\n")
        #expect(try StatusTextsFile.parse(Array(text.utf8)) == records)
        #expect(try StatusTextsFile.parse([]) == [])
    }

    @Test(arguments: ["1795000000 answer 6\n", "1795000000 answer 0\n", "x answer 1\n", "1795000000 replied 1\n",
                      "1795000000 problem fire\n", "1795000000 answer 1 extra\n", "-5 answer 1\n", "99999999999999 answer 1\n",
                      "\u{FEFF}1795000000 answer 1\n"])
    func aBadFileIsRefused(_ text: String) {
        #expect(throws: StatusTextsFile.Problem.self) { try StatusTextsFile.parse(Array(text.utf8)) }
    }

    @Test func anOversizedOrBinaryFileIsRefused() {
        #expect(throws: StatusTextsFile.Problem.tooLong(5000)) { try StatusTextsFile.parse(Array(repeating: 0x31, count: 5000)) }
        #expect(throws: StatusTextsFile.Problem.notText) { try StatusTextsFile.parse([0xFF, 0xFE, 0x00]) }
    }

    // MARK: The maintainer

    static let maintainer = "+16045550100"

    static func withMaintainer(_ s: inout DeviceSettings) {
        s.statusTexts.maintainer = try? PhoneNumber(Self.maintainer)
        s.statusTexts.maintainerAfter = .seconds(3600)
    }

    mutating func run(_ a: Double, _ b: Double, every step: Double = 1) {
        for s in stride(from: a, through: b, by: step) {
            let k = effects.count
            core.apply(.tick, at: at(s), effects: &effects)
            confirmTexts(since: k, at: s)
        }
    }

    /// No contacts for an hour: one text; fixed: one more after five minutes; broken again the
    /// same day: nothing more (one text a day per problem).
    @Test func theMaintainerHearsOfAProblemOnceADayAndOfItsEnd() throws {
        var t = try StatusBySMSTests(settings: Self.withMaintainer, slots: [])
        t.run(0, 3599)
        #expect(t.answers.isEmpty)
        t.run(3600, 3601)
        #expect(t.answers.map(\.message.message) == ["Unwind needs attention: no alert contacts are set since 00:00."])
        #expect(t.answers.map(\.kind) == [.maintainer] && t.answers.map(\.message.number.text) == [Self.maintainer])
        t.run(3602, 7200, every: 10)
        #expect(t.answers.count == 1)
        t.core.alertSlotsChanged([.ready(try AlertSlot(name: "Mum", number: Self.mum, message: "Help"))])
        t.run(7210, 7500, every: 10)
        #expect(t.answers.count == 1, "five minutes away before it counts as over")
        t.run(7510, 7520, every: 10)
        #expect(t.answers.last?.message.message == "Unwind is fine again: an alert contact is set.")
        t.core.alertSlotsChanged([])
        t.run(7530, 7530 + 7200, every: 10)
        #expect(t.answers.count == 2, "at most one text a day per problem")
        #expect(t.saves.last == "\(Self.midnight + 3600) problem no-contacts\n\(Self.midnight + 7510) recovered no-contacts\n")
    }

    @Test func withoutAMaintainerNobodyIsTexted() throws {
        var t = try StatusBySMSTests(slots: [])
        t.core.apply(.deviceProblem(.stateDisk, failing: true), at: t.at(0), effects: &t.effects)
        t.run(0, 7200, every: 10)
        #expect(t.answers.isEmpty && t.saves.isEmpty)
        #expect(t.core.state.statusTexts.problems.map(\.problem) == [.noContacts, .stateDisk])
        #expect(t.core.state.statusTexts.problems.map(\.since) == Array(repeating: WallTime(secondsSinceEpoch: Self.midnight), count: 2))
    }

    /// A problem the maintainer was told of before a restart: its end is still told after it.
    @Test func aToldProblemsEndIsToldAfterARestart() throws {
        let told = StatusTextRecord(at: WallTime(secondsSinceEpoch: Self.midnight - 600), kind: .problem(.motor))
        var t = try StatusBySMSTests(settings: Self.withMaintainer, records: [told])
        t.run(0, 301, every: 1)
        #expect(t.answers.map(\.message.message) == ["Unwind is fine again: the motor works."])
    }

    /// The edge's problems, the clock and the monthly test are problems too.
    @Test func eachProblemIsTold() throws {
        var t = try StatusBySMSTests(settings: Self.withMaintainer)
        t.core.apply(.wallClockSynchronised(false), at: t.at(0), effects: &t.effects)
        for p in [DeviceProblem.display, .motor, .stateDisk] { t.core.apply(.deviceProblem(p, failing: true), at: t.at(0), effects: &t.effects) }
        t.run(0, 3601, every: 1)
        #expect(t.answers.map(\.message.message).sorted() == [
            "Unwind needs attention: the SD card is full or read-only since 00:00.",
            "Unwind needs attention: the clock is not set since 00:00.",
            "Unwind needs attention: the display is not working since 00:00.",
            "Unwind needs attention: the motor is not working since 00:00.",
        ].sorted())
    }
}
