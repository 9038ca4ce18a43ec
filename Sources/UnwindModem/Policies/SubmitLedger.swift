import UnwindCore

/// Which PDU a `+CMGS` answer was for. 27.005 gives an answer nothing to match it with, so
/// while more than one PDU's answer may still come (each is *open* until its write + the submit
/// timeout), an answer is counted, not credited: it answers one of them. Copies of the same part
/// answer for each other (either way one went), a late `+CMGS` when only one part is open is
/// that part's, and once as many answers came as PDUs are open, every one of them went. A
/// status report naming a part's recipient and one of the answers it may have had says that
/// answer was the part's. What stays ambiguous is left in doubt: `Delivery` sends it again once
/// the window has closed.
///
/// It only keeps the count; `Delivery` acts on what it credits.
struct SubmitLedger: Equatable {
    /// A PDU written whose answer was not seen (or not told apart): its `+CMGS` may still come.
    struct OpenPDU: Equatable {
        var id: MessageID
        var part: Int
        var until: Instant
    }

    /// PDUs whose answer may still come, oldest first.
    private(set) var open: [OpenPDU] = []
    /// `+CMGS` answers that came while PDUs were open and could not be told apart (their
    /// references, so a repeated one is not counted twice). Each answers a different open PDU.
    private(set) var unattributed: Set<Int> = []
    /// By message being sent (from `track` to `forget`), then by part: references of `+CMGS`
    /// answers that may have been this part's (not told apart). A status report naming one of
    /// them and this recipient says it was.
    private(set) var candidates: [MessageID: [Int: Set<Int>]] = [:]
    /// The reference of the last `+CMGS` credited: a repeat of it answers no later PDU.
    var lastSubmitReference: Int?

    /// A PDU's answer may still come until then (the last open one's window).
    var doubtfulUntil: Instant? { open.map(\.until).max() }

    /// A message being sent: the answers its parts may have had are kept until `forget`.
    mutating func track(_ id: MessageID) {
        if candidates[id] == nil { candidates[id] = [:] }
    }

    /// A message sent or cancelled: nothing of it is credited any more.
    mutating func forget(_ id: MessageID) {
        candidates[id] = nil
    }

    /// A PDU whose answer did not come in time: it may still come until `pdu.until`.
    mutating func opened(_ pdu: OpenPDU) {
        open.append(pdu)
    }

    /// Windows that have closed: those answers will not come. One of the answers counted may
    /// have been a closed PDU's, so one fewer counts (never crediting too much).
    mutating func expire(at now: Instant) {
        while let k = open.firstIndex(where: { $0.until <= now }) {
            open.remove(at: k)
            if let any = unattributed.first { unattributed.remove(any) }
        }
        if open.isEmpty { unattributed.removeAll() }
    }

    /// What a `+CMGS` answering the submit that waited for it means.
    enum Answer: Equatable {
        /// No other PDU's answer may still come (copies of this same part answer for it as
        /// well): it is this part's.
        case itsOwn
        /// Other PDUs are open: this one is open too, and the answer counted among them.
        /// `credited`: the PDUs it credited with the answers before it (nil: none yet);
        /// `othersUntil`: when the other PDUs' windows close.
        case counted(credited: [OpenPDU]?, othersUntil: Instant)
    }

    /// `+CMGS: mr` for part `part` of `id`, whose submit waited for it; `until`: when this PDU's
    /// own answer could come no longer.
    mutating func answered(_ mr: Int, id: MessageID, part: Int, until: Instant, at now: Instant) -> Answer {
        expire(at: now)
        let others = open.filter { $0.id != id || $0.part != part }
        guard let othersUntil = others.map(\.until).max() else { return .itsOwn }
        open.append(OpenPDU(id: id, part: part, until: until))
        for o in open { addCandidate(mr, o) }
        return .counted(credited: countAnswer(mr), othersUntil: othersUntil)
    }

    /// What a `+CMGS` that came while no submit waited for one answers.
    enum LateAnswer: Equatable {
        /// Nothing: no PDU is open, or it repeats the last reference credited.
        case nothing
        /// The part whose copies were the only PDUs open: it went.
        case onlyPart(OpenPDU)
        /// Counted among the open PDUs: those it credited with the answers before it (nil:
        /// none yet).
        case counted([OpenPDU]?)
    }

    /// A `+CMGS` that came while no submit waited for one: the late answer of an open PDU.
    mutating func lateConfirmation(_ mr: Int, at now: Instant) -> LateAnswer {
        expire(at: now)
        guard !open.isEmpty, mr != lastSubmitReference else { return .nothing }
        let first = open[0]
        if open.allSatisfy({ $0.id == first.id && $0.part == first.part }) {
            // Only copies of one part can be answered: it went.
            open.removeAll()
            unattributed.removeAll()
            return .onlyPart(first)
        }
        for o in open { addCandidate(mr, o) }
        return .counted(countAnswer(mr))
    }

    /// A `+CMGS` that answers one of the open PDUs (or the one just added), not told which.
    /// Returns the PDUs it credits once as many answers came as PDUs are open (every one of
    /// them went); nil before.
    private mutating func countAnswer(_ mr: Int) -> [OpenPDU]? {
        guard !unattributed.contains(mr) else { return nil }  // the same answer repeated
        unattributed.insert(mr)
        guard unattributed.count >= open.count else { return nil }
        let credited = open
        open.removeAll()
        unattributed.removeAll()
        return credited
    }

    private mutating func addCandidate(_ mr: Int, _ o: OpenPDU) {
        guard candidates[o.id] != nil else { return }
        candidates[o.id]?[o.part, default: []].insert(mr)
    }

    /// A status report no sent message claimed, naming the recipient of part `part` of `id` and
    /// `reference`: true when that part may have been answered with `reference` — that answer
    /// was the part's, it went, and it is no longer open.
    mutating func reportNamed(reference: Int, id: MessageID, part: Int) -> Bool {
        guard candidates[id]?[part]?.contains(reference) == true else { return false }
        if let o = open.firstIndex(where: { $0.id == id && $0.part == part }) { open.remove(at: o) }
        unattributed.remove(reference)
        if open.isEmpty { unattributed.removeAll() }
        return true
    }
}
