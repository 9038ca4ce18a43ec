import Logging
import UnwindCore

/// The next command: which message goes, when, and with which waits.
extension Delivery {
    /// The next command for the message whose turn it is, if one is due. `heldUntil`: sending
    /// waits for registration (a message whose parts are under way still finishes).
    /// `writing`: whether a write of that message is still on its way to the card; no command
    /// for it goes out until it has landed (`heldForCard` then says one waits for it).
    mutating func next(heldUntil: Instant?, writing: (MessageID) -> Bool = { _ in false },
                       _ ctx: inout PolicyContext) -> (ATRequest, Job)? {
        heldForCard = false
        dropStaleNotices(&ctx)
        guard let k = nextMessage(canSend: heldUntil == nil, now: ctx.now, writing: writing) else { return nil }
        let t = configuration.timeouts
        let id = tracked[k].entry.id
        if tracked[k].inAttempt {
            let part = tracked[k].partToWrite
            let first = tracked[k].entry.attempts <= 1
            var wait = first ? min(t.firstSubmit, t.submit) : t.submit
            var promptWait = t.prompt
            // Other contacts' first attempts wait behind this one: it waits no longer than lets
            // theirs go out within the budget of the oldest (a late answer still counts, above).
            if first, let oldest = tracked.filter({ $0.entry.id != id && $0.entry.attempts == 0 && !$0.cancelRequested && !Self.isFailed($0.state) && !$0.notice })
                .map(\.queuedAt).min() {
                let left = oldest + Self.firstAttemptBudget - Self.resynchroniseAllowance - ctx.now
                let capped = max(Self.shortestFirstWait, left)
                wait = min(wait, capped)
                promptWait = min(promptWait, capped)
            }
            // A notice never holds the line long: an alert may be asked for while it waits.
            if tracked[k].notice {
                wait = min(wait, Self.shortestFirstWait)
                promptWait = min(promptWait, Self.shortestFirstWait)
            }
            // A repeat of the previous reference is dropped on a first attempt only: a modem
            // that always answers the same reference then costs one resend, not forever.
            tracked[k].partsWritten = max(tracked[k].partsWritten, part + 1)
            let request = ATRequest(.submit(tracked[k].pdus[part]), timeout: wait,
                                    promptTimeout: promptWait, staleReference: first ? ledger.lastSubmitReference : nil)
            return (request, .submit(id, part: part + 1))
        }
        if tracked[k].entry.partsSent == 0, !tracked[k].mayHaveGone, !tracked[k].notice, !judgeLateness(k, &ctx) { return nil }
        tracked[k].entry.attempts += 1
        setState(k, .sending, &ctx)
        // On the card before the AT+CMGS goes out: the outbox never says "0 attempts" of a
        // message already on the line.
        persist(k, &ctx)
        return (ATRequest(.pduMode, timeout: t.command), .pduMode(id))
    }

    /// Before an attempt none of whose text can be on a phone yet: an alert asked for long ago
    /// goes with a note saying so, or not at all (`LateAlerts`). False: it is not sent.
    private mutating func judgeLateness(_ k: Int, _ ctx: inout PolicyContext) -> Bool {
        let e = tracked[k].entry
        switch LateAlerts.verdict(created: e.created, now: ctx.wall, purpose: e.purpose) {
        case .asWritten:
            return true
        case .late(let note):
            // Made again at each such attempt: the note says how late this attempt is.
            do {
                tracked[k].pdus = try SMSPDU.encode(note + "\n" + e.alert.message, to: e.alert.number, reference: e.reference,
                                                    options: SMSSubmitOptions(validity: configuration.validity, statusReport: true))
                logger.notice("\(e.id): asked for at \(e.created.secondsSinceEpoch), sent late with a note: \(note)")
            } catch {
                logger.error("\(e.id): the late note could not be encoded (\(error)); sent as written")
            }
            return true
        case .tooOld(let age):
            if !(e.history.last?.problem.hasPrefix("not sent: asked for") ?? false) {
                tracked[k].entry.history.append(OutboxAttempt(at: ctx.wall, problem: SendProblem.tooOld(age: age).description))
            }
            tracked[k].entry.failure = SendProblem.tooOld(age: age).description
            tracked[k].state = .failed(.tooOld(age: age))
            tracked[k].lastProblem = .tooOld(age: age)
            logger.error("\(e.id): \(SendProblem.tooOld(age: age))")
            ctx.events.append(.messageFailed(e.id, .tooOld(age: age)))
            persist(k, &ctx)
            ctx.statusChanged()
            return false
        }
    }

    /// Every contact's first attempt goes out within this of the alerts being asked for, whenever
    /// the modem answers at all: a slow first confirmation is waited for only so long while
    /// others wait behind it.
    static let firstAttemptBudget: Duration = .seconds(10)
    /// What giving up on a wait costs before the next command: ESC, the drain, `AT`.
    static let resynchroniseAllowance: Duration = .seconds(2)
    /// A first attempt's confirmation is always given this long (a network's usual round trip).
    static let shortestFirstWait: Duration = .seconds(3)

    static func isFailed(_ s: MessageState) -> Bool {
        if case .failed = s { return true }
        return false
    }

    /// When a message falls due (`heldUntil`: sending waits for registration until then). One
    /// whose write is on its way to the card (`writing`) is due when that lands, which the
    /// arbiter looks for itself.
    func nextDeadline(heldUntil: Instant?, writing: (MessageID) -> Bool = { _ in false }) -> Instant? {
        var d: Instant?
        let doubt = ledger.doubtfulUntil
        let held = alertWaiting
        for t in tracked where t.state != .cancelled && !writing(t.entry.id) {
            if let e = t.expiresAt, d == nil || e < d! { d = e }
            if case .failed = t.state { continue }
            // A notice behind an alert is due when the alert is done, not before.
            if t.notice && held { continue }
            var due = t.inAttempt || heldUntil == nil ? t.nextAttempt : max(t.nextAttempt, heldUntil ?? t.nextAttempt)
            if !t.inAttempt, t.entry.attempts > 0, !t.nextPartNeverWritten, let doubt { due = max(due, doubt) }
            if t.notice || (t.entry.purpose == .allClear && !t.inAttempt), let doubt { due = max(due, doubt) }
            if d == nil || due < d! { d = due }
        }
        return d
    }

    /// Whether `id` is a notice (a text that is not an alert).
    func isNotice(_ id: MessageID) -> Bool { index(id).map { tracked[$0].notice } ?? false }

    /// Some message that is not a notice is still to be sent (or retried).
    var alertWaiting: Bool { tracked.contains { !$0.notice && !$0.cancelRequested && !Self.isFailed($0.state) } }

    private mutating func nextMessage(canSend: Bool, now: Instant, writing: (MessageID) -> Bool) -> Int? {
        ledger.expire(at: now)
        // A notice waits while an alert is to be sent, or an alert's answer may still come (its
        // own answer would be one more that cannot be told apart).
        let held = alertWaiting || !ledger.open.isEmpty
        if let k = tracked.firstIndex(where: { $0.inAttempt && $0.nextAttempt <= now && !$0.cancelRequested && !($0.notice && held) }) {
            // Its next part waits for the progress it has made to be on the card.
            if writing(tracked[k].entry.id) {
                heldForCard = true
                return nil
            }
            return k
        }
        guard canSend else { return nil }
        var best: Int?
        for (k, t) in tracked.enumerated() {
            if case .failed = t.state { continue }
            if t.notice && held { continue }
            // An all-clear waits while any PDU's answer may still come: its own answer could not
            // be told from that one, and an all-clear not credited would go again. A contact gets
            // "I'm OK now" exactly once; the window closes within the modem's 60 s.
            if t.entry.purpose == .allClear && !ledger.open.isEmpty { continue }
            guard t.nextAttempt <= now, !t.cancelRequested else { continue }
            if writing(t.entry.id) {
                heldForCard = true
                continue
            }
            // An attempt again waits while any PDU's answer may still come: its own answer would
            // be one more that cannot be told apart (and a late answer to it could make it one
            // more copy). First attempts go at once, and so does a part never written.
            if t.entry.attempts > 0 && !ledger.open.isEmpty && !t.nextPartNeverWritten { continue }
            if let b = best {
                let (chosen, other) = (tracked[b].entry, t.entry)
                if chosen.attempts < other.attempts { continue }
                // Among equals the newest call for help first, each batch in its own order.
                if chosen.attempts == other.attempts && chosen.created >= other.created { continue }
            }
            best = k
        }
        return best
    }

    /// Notices past their time (or their attempts) are dropped, once no command is in flight.
    private mutating func dropStaleNotices(_ ctx: inout PolicyContext) {
        while let k = tracked.firstIndex(where: { t in t.expiresAt.map { ctx.now >= $0 } ?? false }) {
            logger.warning("\(tracked[k].entry.id): not an alert, and not sent in time (\(tracked[k].entry.attempts) attempt(s)); dropped")
            finishCancel(k, &ctx)
        }
    }
}
