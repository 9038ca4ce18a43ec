import Logging
import UnwindCore

/// Sending what the outbox holds, with the exact truth about each message.
///
/// - Every attempt starts with AT+CMGF=0 (PDU mode, whatever happened to the modem since),
///   then AT+CMGS per part. Only `+CMGS: <mr>` counts as sent.
/// - Of the due messages, the one tried least often goes first (among equals the newest call
///   for help, then each batch in its order), so every contact's first attempt goes out before
///   anyone's second, one contact's trouble never holds the others back, and a new PANIC never
///   waits behind alerts left from long ago (those go with a note, or not at all: `LateAlerts`). A message's first attempt waits `firstSubmit` for its
///   confirmation, later ones the modem's full `submit`.
/// - A PDU without `+CMGS` in time is in doubt and sent again (a duplicate beats a loss). Its
///   answer may still come until its write + the submit timeout: it stays *open* until then.
///   27.005 gives an answer nothing to match, so a `+CMGS` while other contacts' PDUs are open
///   is counted, not credited: it answers one of them or this one (`SubmitLedger` keeps the
///   count and says what it credits). What stays ambiguous is in doubt and sent again once the
///   window has closed. First attempts still go out meanwhile: every contact gets the alert at
///   once, the screen says "retrying" until a confirmation can be trusted.
/// - What an error means is `SubmitVerdict`'s table; retries never stop on their own, except
///   for an unassigned number.
/// - Texts that are not alerts (a STATUS answer, the maintainer's: *notices*) come last: one
///   goes only while no other message waits and no alert's answer may still come — a PANIC
///   batch pending holds them all — its confirmation is waited for no longer than
///   `shortestFirstWait`, and one not sent within `noticePatience` or `noticeAttempts` is
///   dropped: news that old is wrong news, and each copy costs.
/// - A notice never makes an alert wait or doubt. An alert asked for while a notice is on the
///   wire takes the line: a notice still waiting for its prompt is withdrawn (the prompt closed
///   with ESC, nothing of it sent; it goes again after the alerts), one whose PDU went is not
///   waited for. A notice whose confirmation did not come is *unconfirmed* — it may have gone,
///   it is not sent again (a copy costs, and the contact can ask again) — and is never *open*:
///   the line is resynchronised (`AT` until a clean `OK`: a modem that takes one command at a
///   time has then finished it, and its late `+CMGS` came before that `OK`), and the alerts'
///   answers are theirs.
struct Delivery {
    enum Job: Equatable {
        case pduMode(MessageID)
        case submit(MessageID, part: Int)

        var message: MessageID {
            switch self {
            case .pduMode(let id), .submit(let id, _): id
            }
        }
    }

    struct Tracked {
        var entry: OutboxEntry
        var pdus: [SMSSubmitPDU]
        var state: MessageState
        var nextAttempt: Instant
        /// When it was asked for (this run): its first attempt is due within `firstAttemptBudget`.
        var queuedAt: Instant = .zero
        var streak = 0
        /// AT+CMGF=0 answered for this attempt: the parts go next.
        var inAttempt = false
        var journaled = true
        var lastProblem: SendProblem?
        var cancelRequested = false
        /// Some part may have reached the recipient (accepted, or written and in doubt).
        var mayHaveGone = false
        /// A notice: sent only when nothing else waits, dropped at `expiresAt`.
        var notice = false
        var expiresAt: Instant?
        /// The highest part whose PDU was (or may have been) written: a part beyond it has never
        /// been on the wire, so sending it is no copy of anything.
        var partsWritten = 0
        /// The next part has never been written: it goes as a first attempt does, even while
        /// another PDU's answer may still come: a two-part alert whose first part is in doubt
        /// must not hold its second part for another contact's 60 s window.
        var nextPartNeverWritten: Bool { entry.partsSent >= partsWritten }
        /// The part this attempt writes next (0-based), when it runs ahead of the parts
        /// credited: a part whose `+CMGS` was counted, not credited, is open, and the parts
        /// after it have never been written, so they go at once rather than after its window.
        var aheadPart: Int?
        var partToWrite: Int { aheadPart ?? entry.partsSent }
    }

    /// A notice not sent by then after it was asked for is dropped.
    static let noticePatience: Duration = .seconds(600)
    static let noticeAttempts = 3

    let configuration: ModemConfiguration
    let logger: Logger
    var tracked: [Tracked] = []
    /// The last `next` found a message due whose write had not reached the card yet.
    var heldForCard = false
    var finished: [MessageStatus] = []
    var modemErrorStreak = 0
    /// When the last PDU was written (its answer may come until then + the submit timeout).
    var lastPDUWrittenAt: Instant?
    /// Which PDUs' answers may still come, and which answer was whose.
    var ledger = SubmitLedger()
    /// The message whose PDU was written last and has had no answer yet.
    var pduWrittenFor: MessageID?
    /// The part whose answer is being judged (set around `apply`, for the doubt window).
    var inDoubtPart: Int?

    init(configuration: ModemConfiguration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
    }

    var isIdle: Bool { tracked.isEmpty }

    // MARK: Messages asked for

    /// A message to send (`at`: not before; a restart's messages are due at once).
    mutating func track(_ entry: OutboxEntry, journaled: Bool, at instant: Instant = .zero, notice: Bool = false) {
        var t = Tracked(entry: entry, pdus: [], state: .queued, nextAttempt: instant, queuedAt: instant, journaled: journaled)
        t.notice = notice
        if notice { t.expiresAt = instant + Self.noticePatience }
        do {
            t.pdus = try SMSPDU.encode(entry.alert.message, to: entry.alert.number, reference: entry.reference,
                                       options: SMSSubmitOptions(validity: configuration.validity, statusReport: true))
        } catch {
            t.state = .failed(.rejected(code: 0))
        }
        // After a restart: a part accepted, or an attempt that ended in doubt, may be on the phone.
        // So may an attempt whose end the card never heard of: it is counted on the card before
        // its AT+CMGS, and every failed attempt leaves a line, so more attempts than lines means
        // the device stopped while a PDU may have been on the wire (the network may have taken
        // it). Killed then, "I'm OK now" after the restart must still tell the contact: the
        // network may have the alert. A history cut to its limit counts as in
        // doubt too: an all-clear one too many is better than a worried contact never told.
        t.mayHaveGone = entry.partsSent > 0 || entry.references.contains { $0 != nil }
            || entry.history.contains { $0.problem == SendProblem.noConfirmation.description }
            || entry.attempts > entry.history.count
        if let failure = entry.failure {
            if failure == SendProblem.unassignedNumber(entry.alert.number).description {
                t.state = .failed(.unassignedNumber(entry.alert.number))
                t.lastProblem = .unassignedNumber(entry.alert.number)
            } else {
                t.entry.failure = nil  // too old: judged again before its turn (`LateAlerts`)
            }
        }
        if t.entry.partsSent >= t.pdus.count && !t.pdus.isEmpty { t.entry.partsSent = 0 }  // never trust a count beyond the parts
        // The part after the accepted ones may have been on the wire when the device stopped.
        t.partsWritten = t.entry.partsSent + (t.mayHaveGone && t.entry.partsSent < t.pdus.count ? 1 : 0)
        tracked.append(t)
        ledger.track(t.entry.id)
    }

    /// Its first write did not reach the card: it is sent anyway, its progress no longer
    /// written, and the person told it was not saved.
    mutating func notJournaled(_ id: MessageID, _ why: String) {
        guard let k = index(id) else { return }
        tracked[k].journaled = false
        tracked[k].lastProblem = .notJournaled(why)
    }

    /// Removed from the outbox; a part already on the wire (`inFlight`) cannot be called back,
    /// so the rest is dropped once its answer is in.
    mutating func cancel(_ id: MessageID, inFlight: MessageID?, _ ctx: inout PolicyContext) {
        guard let k = index(id) else { return }
        if inFlight == id {
            tracked[k].cancelRequested = true
            return
        }
        finishCancel(k, &ctx)
    }

    mutating func retryNow(_ id: MessageID, _ ctx: inout PolicyContext) {
        guard let k = index(id) else { return }
        tracked[k].entry.failure = nil
        tracked[k].streak = 0
        tracked[k].nextAttempt = ctx.now
        tracked[k].state = .queued
        persist(k, &ctx)
        ctx.statusChanged()
    }

    /// The modem restarted or the line was set up again: an attempt starts over with AT+CMGF=0.
    mutating func restartAttempts() {
        for t in tracked.indices {
            tracked[t].inAttempt = false
            tracked[t].aheadPart = nil
        }
    }

    var messages: [MessageStatus] { tracked.map(statusOf) + finished }

    /// A message still being sent.
    func trackedStatus(_ id: MessageID) -> MessageStatus? { index(id).map { statusOf(tracked[$0]) } }

    func message(_ id: MessageID) -> MessageStatus? {
        if let k = index(id) { return statusOf(tracked[k]) }
        return finished.last { $0.id == id }
    }

    // MARK: Bookkeeping

    mutating func finishCancel(_ k: Int, _ ctx: inout PolicyContext) {
        let id = tracked[k].entry.id
        ctx.requests.append(.journal(.cancelled(id)))
        tracked[k].state = .cancelled
        remember(statusOf(tracked[k]))
        tracked.remove(at: k)
        ledger.forget(id)
        logger.notice("\(id) cancelled")
        ctx.statusChanged()
    }

    mutating func remember(_ s: MessageStatus) {
        finished.append(s)
        if finished.count > 20 { finished.removeFirst(finished.count - 20) }
    }

    func persist(_ k: Int, _ ctx: inout PolicyContext) {
        guard tracked[k].journaled else { return }
        ctx.requests.append(.journal(.save(tracked[k].entry)))
    }

    func index(_ id: MessageID) -> Int? { tracked.firstIndex { $0.entry.id == id } }

    mutating func setState(_ k: Int, _ s: MessageState, _ ctx: inout PolicyContext) {
        tracked[k].state = s
        ctx.statusChanged()
    }

    func statusOf(_ t: Tracked) -> MessageStatus {
        MessageStatus(id: t.entry.id, slot: t.entry.slot, contactName: t.entry.alert.name, number: t.entry.alert.number,
                      state: t.state, attempts: t.entry.attempts, partsSent: t.entry.partsSent, parts: t.pdus.count,
                      lastProblem: t.lastProblem, journaled: t.journaled, purpose: t.entry.purpose,
                      mayHaveReached: t.mayHaveGone || t.entry.partsSent > 0)
    }
}
