import Testing
import UnwindCore
@testable import UnwindModem

/// Which PDU a `+CMGS` answer was for, on its own: no modem, no messages, no clock — PDUs opened
/// with their windows, answers and status reports in, what they credit out.
@Suite struct SubmitLedgerTests {
    static let a = MessageID("alert-a"), b = MessageID("alert-b"), c = MessageID("alert-c")

    static func at(_ seconds: Int64) -> Instant { Instant(nanoseconds: seconds * 1_000_000_000) }

    static func pdu(_ id: MessageID, part: Int = 1, until seconds: Int64 = 60) -> SubmitLedger.OpenPDU {
        SubmitLedger.OpenPDU(id: id, part: part, until: at(seconds))
    }

    /// A ledger sending `ids`, with `open` PDUs whose answers may still come.
    static func ledger(sending ids: [MessageID] = [a, b, c], open: [SubmitLedger.OpenPDU]) -> SubmitLedger {
        var l = SubmitLedger()
        for id in ids { l.track(id) }
        for o in open { l.opened(o) }
        return l
    }

    /// `+CMGS` answers with no submit waiting, at `seconds`, one a second: what each one answered.
    static func late(_ l: inout SubmitLedger, _ references: [Int], from seconds: Int64 = 10) -> [SubmitLedger.LateAnswer] {
        references.enumerated().map { k, mr in l.lateConfirmation(mr, at: at(seconds + Int64(k))) }
    }

    @Test func oneOpenPartAndALateAnswerCreditsIt() {
        var l = Self.ledger(open: [Self.pdu(Self.a)])
        let answers = Self.late(&l, [7])
        #expect(answers == [.onlyPart(Self.pdu(Self.a))])
        #expect(l.open.isEmpty && l.doubtfulUntil == nil)
    }

    @Test func copiesOfOnePartAreOnePartToCredit() {
        var l = Self.ledger(open: [Self.pdu(Self.a, until: 30), Self.pdu(Self.a, until: 60)])
        let answers = Self.late(&l, [7])
        #expect(answers == [.onlyPart(Self.pdu(Self.a, until: 30))])
        #expect(l.open.isEmpty)
    }

    @Test func twoOpenPDUsAndOneAnswerCreditNone() {
        var l = Self.ledger(open: [Self.pdu(Self.a), Self.pdu(Self.b)])
        let answers = Self.late(&l, [7])
        #expect(answers == [.counted(nil)])
        #expect(l.open == [Self.pdu(Self.a), Self.pdu(Self.b)])
        #expect(l.doubtfulUntil == Self.at(60))
    }

    @Test func asManyAnswersAsOpenPDUsCreditEveryOne() {
        var l = Self.ledger(open: [Self.pdu(Self.a), Self.pdu(Self.b), Self.pdu(Self.c)])
        let answers = Self.late(&l, [7, 8, 9])
        #expect(answers == [.counted(nil), .counted(nil), .counted([Self.pdu(Self.a), Self.pdu(Self.b), Self.pdu(Self.c)])])
        #expect(l.open.isEmpty && l.unattributed.isEmpty && l.doubtfulUntil == nil)
    }

    @Test func aRepeatedReferenceIsNotCountedTwice() {
        var l = Self.ledger(open: [Self.pdu(Self.a), Self.pdu(Self.b)])
        let repeated = Self.late(&l, [7, 7])
        #expect(repeated == [.counted(nil), .counted(nil)])
        #expect(l.open.count == 2 && l.unattributed == [7])
        let another = Self.late(&l, [8], from: 12)
        #expect(another == [.counted([Self.pdu(Self.a), Self.pdu(Self.b)])])
    }

    /// One of the answers counted may have been the closed PDU's: one fewer counts, so the
    /// ledger never credits more than can have gone.
    @Test func aClosedWindowCountsOneFewer() {
        let open = [Self.pdu(Self.a, until: 30), Self.pdu(Self.b), Self.pdu(Self.c)]
        var l = Self.ledger(open: open)
        let twoOfThree = Self.late(&l, [7, 8])
        #expect(twoOfThree == [.counted(nil), .counted(nil)])
        l.expire(at: Self.at(30))
        #expect(l.open == [Self.pdu(Self.b), Self.pdu(Self.c)])
        #expect(l.unattributed.count == 1, "two answers counted, one of them may have been a's")
        let third = Self.late(&l, [9], from: 40)
        #expect(third == [.counted([Self.pdu(Self.b), Self.pdu(Self.c)])])
        // Every window closed: nothing is open, and nothing counted is left over.
        var m = Self.ledger(open: open)
        _ = Self.late(&m, [7])
        m.expire(at: Self.at(60))
        #expect(m.open.isEmpty && m.unattributed.isEmpty)
        let afterwards = Self.late(&m, [8], from: 61)
        #expect(afterwards == [.nothing])
    }

    @Test func aStatusReportNamingACandidateReferenceAndRecipientCreditsThatPart() {
        var l = Self.ledger(open: [Self.pdu(Self.a), Self.pdu(Self.b, part: 2)])
        _ = Self.late(&l, [7])
        let unknownReference = l.reportNamed(reference: 9, id: Self.a, part: 1)
        let otherPart = l.reportNamed(reference: 7, id: Self.a, part: 2)
        #expect(!unknownReference, "9 answered nothing")
        #expect(!otherPart, "7 may have been a's part 1, not its part 2")
        let named = l.reportNamed(reference: 7, id: Self.a, part: 1)
        #expect(named)
        #expect(l.open == [Self.pdu(Self.b, part: 2)] && l.unattributed.isEmpty)
        // Once a message is no longer being sent, no report credits it.
        var m = Self.ledger(open: [Self.pdu(Self.a), Self.pdu(Self.b)])
        _ = Self.late(&m, [7])
        m.forget(Self.a)
        let forgotten = m.reportNamed(reference: 7, id: Self.a, part: 1)
        #expect(!forgotten)
        // A message never tracked gathers no candidates.
        var n = Self.ledger(sending: [Self.b], open: [Self.pdu(Self.a), Self.pdu(Self.b)])
        _ = Self.late(&n, [7])
        #expect(n.candidates[Self.a] == nil && n.candidates[Self.b] == [1: [7]])
    }

    @Test func aRepeatOfTheLastCreditedReferenceAnswersNothing() {
        var l = Self.ledger(open: [Self.pdu(Self.a), Self.pdu(Self.b)])
        l.lastSubmitReference = 7
        let answers = Self.late(&l, [7])
        #expect(answers == [.nothing])
        #expect(l.open.count == 2 && l.unattributed.isEmpty)
    }

    /// The answer to the submit that waited for it: its own unless another PDU's answer may
    /// still come; then it is open too, and counted.
    @Test func anAnswerToItsSubmitIsItsOwnUnlessOthersAreOpen() {
        var alone = Self.ledger(open: [Self.pdu(Self.a, until: 20)])
        let own = alone.answered(7, id: Self.a, part: 1, until: Self.at(70), at: Self.at(10))
        #expect(own == .itsOwn, "an open copy of the same part answers for it as well")
        var l = Self.ledger(open: [Self.pdu(Self.b, until: 50)])
        let first = l.answered(7, id: Self.a, part: 1, until: Self.at(70), at: Self.at(10))
        #expect(first == .counted(credited: nil, othersUntil: Self.at(50)))
        #expect(l.open == [Self.pdu(Self.b, until: 50), Self.pdu(Self.a, until: 70)])
        let second = l.answered(8, id: Self.c, part: 1, until: Self.at(80), at: Self.at(11))
        #expect(second == .counted(credited: nil, othersUntil: Self.at(70)))
        let third = Self.late(&l, [9], from: 12)
        #expect(third == [.counted([Self.pdu(Self.b, until: 50), Self.pdu(Self.a, until: 70), Self.pdu(Self.c, until: 80)])])
    }
}
