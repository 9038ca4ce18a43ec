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
///   count and says what it credits). What
///   stays ambiguous is in doubt and sent again once the window has closed. First attempts
///   still go out meanwhile: every contact gets the alert at once, the screen says "retrying"
///   until a confirmation can be trusted.
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

    // MARK: The next command

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
            if t.notice, let doubt { due = max(due, doubt) }
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

    // MARK: Answers

    /// The `> ` prompt came and the PDU went out: its answer may come until now + the timeout.
    mutating func pduWritten(_ id: MessageID?, at now: Instant) {
        lastPDUWrittenAt = now
        pduWrittenFor = id
    }

    /// `abandonedBecause`: why a command ended `.abandoned` (the modem restarted, the line was
    /// lost), when the arbiter knows.
    mutating func completed(_ job: Job, _ r: ATResponse, abandonedBecause: SendProblem?, _ ctx: inout PolicyContext) {
        switch job {
        case .pduMode(let id): pduModeCompleted(id, r, abandonedBecause, &ctx)
        case .submit(let id, let part): submitCompleted(id, part: part, r, abandonedBecause, &ctx)
        }
    }

    private mutating func pduModeCompleted(_ id: MessageID, _ r: ATResponse, _ abandoned: SendProblem?, _ ctx: inout PolicyContext) {
        guard let k = index(id) else { return }
        if r.outcome == .ok {
            tracked[k].inAttempt = true
            tracked[k].aheadPart = nil
            if tracked[k].cancelRequested { finishCancel(k, &ctx) }
        } else if r.outcome == .abandoned {
            failed(k, abandoned ?? .noConfirmation, atOnce: true, &ctx)
        } else if let verdict = SubmitVerdict.pduMode(r.outcome) {
            apply(verdict, to: k, &ctx)
        }
    }

    private mutating func submitCompleted(_ id: MessageID, part: Int, _ r: ATResponse, _ abandoned: SendProblem?,
                                          _ ctx: inout PolicyContext) {
        let written = pduWrittenFor == id
        pduWrittenFor = nil
        // Anything but a refusal after the PDU was written: some of it may be on the phone.
        if written, let k = index(id) {
            switch r.outcome {
            case .cmsError, .error, .cmeError, .callEnded, .promptTimedOut: break
            default: tracked[k].mayHaveGone = true
            }
        }
        guard let k = index(id) else {
            if case .submitted = r.outcome { logger.notice("\(id): a cancelled message's part \(part) had already gone") }
            return
        }
        if tracked[k].notice, noticeEnded(k, written: written, r, &ctx) { return }
        switch r.outcome {
        case .submitted(let mr):
            let written = lastPDUWrittenAt ?? ctx.now
            let answer = ledger.answered(mr, id: id, part: part, until: written + configuration.timeouts.submit, at: ctx.now)
            guard case .counted(let credited, let until) = answer else {
                partSent(k, part: part, reference: mr, &ctx)
                return
            }
            if credit(credited, &ctx) {
                // Credited with the others: the next part is written by the same attempt.
                if let k = index(id), tracked[k].inAttempt, tracked[k].aheadPart != nil {
                    tracked[k].aheadPart = tracked[k].entry.partsSent < part ? part : nil
                }
                return
            }
            guard let k = index(id) else { return }
            if part < tracked[k].pdus.count, !tracked[k].cancelRequested {
                // This part is open; the next has never been written: it goes now. Whatever
                // of this message stays uncredited when the windows close is sent again then.
                tracked[k].aheadPart = part
                logger.notice("\(id): +CMGS: \(mr) for part \(part) came while another message's answer may still come; counted, and part \(part + 1) goes now")
                return
            }
            logger.warning("\(id): +CMGS: \(mr) came while another message's answer may still come (until \(until)); it may be that one's — this one is in doubt too, sent again after the wait")
            failed(k, .noConfirmation, atOnce: false, &ctx)
            tracked[k].nextAttempt = until
            if case .retrying(let p, _) = tracked[k].state { tracked[k].state = .retrying(p, next: until) }
            return
        case .abandoned:
            failed(k, abandoned ?? .noConfirmation, atOnce: true, &ctx)
        default:
            let number = tracked[k].entry.alert.number
            if let verdict = SubmitVerdict.submit(r.outcome, to: number, serviceCentreConfigured: configuration.serviceCentre != nil,
                                                  simCentre: ctx.status.simServiceCentre, configuredCentre: configuration.serviceCentre?.text) {
                inDoubtPart = part
                apply(verdict, to: k, &ctx)
                inDoubtPart = nil
            }
        }
        if let k = index(id), tracked[k].cancelRequested { finishCancel(k, &ctx) }
    }

    private mutating func apply(_ verdict: SubmitVerdict, to k: Int, _ ctx: inout PolicyContext) {
        switch verdict.followUp {
        case .setServiceCentre:
            ctx.requests.append(.setServiceCentre)
            ctx.status.serviceCentre = (ctx.status.simServiceCentre.map { "the network answered +CMS ERROR: 330 (message centre unknown) with \($0) on the SIM" } ?? "the SIM had none")
                + "; setting \(configuration.serviceCentre?.text ?? "?") from the configuration"
        case .serviceCentreMissing:
            ctx.status.serviceCentre = "missing: the SIM has none; set modem.service_centre in the configuration (/etc/unwind/unwind.conf) and restart unwind"
        case .serviceCentreRefused:
            let n = ctx.status.simServiceCentre ?? "?"
            ctx.status.serviceCentre = "refused: the network answers +CMS ERROR: 330 (message centre unknown) to \(n), the centre \(configuration.serviceCentre == nil ? "on the SIM" : "set from the configuration"); ask the operator for the right number, set modem.service_centre in the configuration (/etc/unwind/unwind.conf) and restart unwind"
        default:
            break
        }
        failed(k, verdict.problem, atOnce: verdict.atOnce, &ctx)
        switch verdict.followUp {
        case .resynchronise:
            ctx.requests.append(.resynchronise(afterSubmit: false))
        case .resynchroniseAfterSubmit:
            ctx.requests.append(.resynchronise(afterSubmit: true))
        case .resynchroniseInDoubt:
            if let written = lastPDUWrittenAt, let part = inDoubtPart {
                ledger.opened(SubmitLedger.OpenPDU(id: tracked[k].entry.id, part: part, until: written + configuration.timeouts.submit))
            }
            ctx.requests.append(.resynchronise(afterSubmit: true))
        case .checkSIMAgain:
            ctx.requests.append(.checkSIMAgain)
        case .countTowardsRestart:
            modemErrorStreak += 1
            if modemErrorStreak >= configuration.backoff.resetAfterModemErrors {
                modemErrorStreak = 0
                ctx.requests.append(.restartModem)
            }
        case .none, .setServiceCentre, .serviceCentreMissing, .serviceCentreRefused:
            break
        }
    }

    // MARK: Answers that cannot be told apart

    /// The part whose answer is being judged (set around `apply`, for the doubt window).
    private var inDoubtPart: Int?

    /// The PDUs the ledger credited (nil: none yet): each is sent, unless more of its message
    /// was already. Returns whether the message just judged was credited by it.
    private mutating func credit(_ credited: [SubmitLedger.OpenPDU]?, _ ctx: inout PolicyContext) -> Bool {
        guard let credited else { return false }
        logger.notice("as many +CMGS answers as PDUs waiting for one (\(credited.count)): every one of them went")
        var judgedCredited = false
        for o in credited {
            guard let k = index(o.id), tracked[k].entry.partsSent < o.part else { continue }
            if tracked[k].entry.partsSent == o.part - 1 {
                judgedCredited = true
                partSent(k, part: o.part, reference: nil, &ctx)
            }
        }
        return judgedCredited
    }

    /// A `+CMGS` that came while no submit waited for one: the late answer of an open PDU.
    mutating func lateConfirmation(_ mr: Int, _ ctx: inout PolicyContext) {
        switch ledger.lateConfirmation(mr, at: ctx.now) {
        case .nothing:
            logger.notice("+CMGS: \(mr) came with no submit waiting for it and none in doubt; ignored")
        case .onlyPart(let first):
            logger.notice("\(first.id): the late +CMGS: \(mr) answers part \(first.part), the only one in doubt")
            // Its resend, if not yet on the wire, is not needed any more.
            if let k = index(first.id), tracked[k].entry.partsSent == first.part - 1 {
                partSent(k, part: first.part, reference: mr, &ctx)
            }
        case .counted(let credited):
            _ = credit(credited, &ctx)
        }
    }

    /// A status report no sent message claimed: when it names a part's recipient and one of the
    /// references that part may have been answered with, that answer was the part's — it went.
    mutating func reportNamed(_ report: SMSStatusReport, _ ctx: inout PolicyContext) {
        for k in tracked.indices where report.recipient.sameSubscriber(as: tracked[k].entry.alert.number) {
            let part = tracked[k].entry.partsSent + 1
            let id = tracked[k].entry.id
            guard ledger.reportNamed(reference: report.messageReference, id: id, part: part) else { continue }
            logger.notice("\(id): a status report names this recipient and +CMGS: \(report.messageReference): part \(part) went")
            partSent(k, part: part, reference: report.messageReference, &ctx)
            return
        }
    }

    private mutating func partSent(_ k: Int, part: Int, reference: Int?, _ ctx: inout PolicyContext) {
        if let reference { ledger.lastSubmitReference = reference }
        modemErrorStreak = 0
        tracked[k].streak = 0
        tracked[k].entry.partsSent = max(tracked[k].entry.partsSent, part)
        // The reference its status report will name (a part sent again takes the new one).
        if tracked[k].entry.references.count != tracked[k].pdus.count {
            tracked[k].entry.references = Array(tracked[k].entry.references.prefix(tracked[k].pdus.count))
            tracked[k].entry.references += Array(repeating: nil, count: tracked[k].pdus.count - tracked[k].entry.references.count)
        }
        if (1...tracked[k].pdus.count).contains(part), let reference { tracked[k].entry.references[part - 1] = reference }
        tracked[k].mayHaveGone = true
        let t = tracked[k]
        logger.notice("\(t.entry.id): part \(part)/\(t.pdus.count) to \(t.entry.alert.number.text) accepted (+CMGS: \(reference.map(String.init) ?? "counted, not told apart"))")
        if t.entry.partsSent >= t.pdus.count {
            tracked[k].state = .sent(at: ctx.wall)
            ctx.requests.append(.accepted(tracked[k].entry, statusOf(tracked[k])))
            remember(statusOf(tracked[k]))
            tracked.remove(at: k)
            ledger.forget(t.entry.id)
            ctx.events.append(.messageSent(t.entry.id))
            ctx.statusChanged()
        } else if t.cancelRequested {
            finishCancel(k, &ctx)
        } else {
            // A part in doubt that turned out to have gone (its status report, or the answers
            // counted): the parts after it have never been written and go now, not after the
            // wait a resend would have.
            if !t.inAttempt && tracked[k].nextPartNeverWritten { tracked[k].nextAttempt = min(tracked[k].nextAttempt, ctx.now) }
            persist(k, &ctx)
        }
    }

    /// Records a failed attempt and schedules the next: now for the first in-doubt or no-prompt
    /// failure in a row, otherwise after backoff with jitter. Only an unassigned number stops.
    private mutating func failed(_ k: Int, _ problem: SendProblem, atOnce: Bool, _ ctx: inout PolicyContext) {
        tracked[k].streak += 1
        tracked[k].inAttempt = false
        tracked[k].aheadPart = nil
        tracked[k].lastProblem = problem
        tracked[k].entry.history.append(OutboxAttempt(at: ctx.wall, problem: problem.description))
        let id = tracked[k].entry.id
        if problem.isPermanent {
            tracked[k].entry.failure = problem.description
            tracked[k].state = .failed(problem)
            logger.error("\(id): \(problem); not retried until asked")
            ctx.events.append(.messageFailed(id, problem))
        } else {
            // A notice tried often enough is dropped at the next turn (not here: the caller
            // still looks at it by index).
            if tracked[k].notice && tracked[k].entry.attempts >= Self.noticeAttempts { tracked[k].expiresAt = ctx.now }
            let streak = tracked[k].streak
            let delay = atOnce && streak <= 1 ? .zero : configuration.backoff.delay(after: streak, random: &ctx.random)
            tracked[k].nextAttempt = ctx.now + delay
            tracked[k].state = .retrying(problem, next: ctx.now + delay)
            logger.warning("\(id): \(problem); attempt \(tracked[k].entry.attempts) failed, next in \(delay)")
            ctx.events.append(.messageRetrying(id, problem))
        }
        persist(k, &ctx)
        ctx.statusChanged()
    }

    /// A notice's submit that ended withdrawn or without its confirmation (true: dealt with).
    /// Withdrawn before its prompt, nothing of it went: it goes again after the alerts, the
    /// attempt not counted. Its PDU written and no confirmation: unconfirmed, never open (see
    /// the type's notes) — finished, and the line resynchronised.
    private mutating func noticeEnded(_ k: Int, written: Bool, _ r: ATResponse, _ ctx: inout PolicyContext) -> Bool {
        let id = tracked[k].entry.id
        switch r.outcome {
        case .abandoned where !written:
            tracked[k].inAttempt = false
            tracked[k].entry.attempts = max(0, tracked[k].entry.attempts - 1)
            tracked[k].nextAttempt = ctx.now
            tracked[k].state = .queued
            logger.notice("\(id): withdrawn before its prompt (an alert needs the line); nothing of it went, it goes after the alerts")
            ctx.statusChanged()
            return true
        case .abandoned, .timedOut(afterPrompt: true), .ok:
            tracked[k].mayHaveGone = true
            tracked[k].inAttempt = false
            tracked[k].lastProblem = .noConfirmation
            logger.warning("\(id): not an alert, written and not confirmed (\(r.outcome)): it may have gone; not sent again, and no alert's answer is taken for it")
            ctx.requests.append(.resynchronise(afterSubmit: true))
            finishCancel(k, &ctx)
            return true
        default:
            return false
        }
    }

    /// Notices past their time (or their attempts) are dropped, once no command is in flight.
    private mutating func dropStaleNotices(_ ctx: inout PolicyContext) {
        while let k = tracked.firstIndex(where: { t in t.expiresAt.map { ctx.now >= $0 } ?? false }) {
            logger.warning("\(tracked[k].entry.id): not an alert, and not sent in time (\(tracked[k].entry.attempts) attempt(s)); dropped")
            finishCancel(k, &ctx)
        }
    }

    private mutating func finishCancel(_ k: Int, _ ctx: inout PolicyContext) {
        let id = tracked[k].entry.id
        ctx.requests.append(.journal(.cancelled(id)))
        tracked[k].state = .cancelled
        remember(statusOf(tracked[k]))
        tracked.remove(at: k)
        ledger.forget(id)
        logger.notice("\(id) cancelled")
        ctx.statusChanged()
    }

    private mutating func remember(_ s: MessageStatus) {
        finished.append(s)
        if finished.count > 20 { finished.removeFirst(finished.count - 20) }
    }

    private func persist(_ k: Int, _ ctx: inout PolicyContext) {
        guard tracked[k].journaled else { return }
        ctx.requests.append(.journal(.save(tracked[k].entry)))
    }

    private func index(_ id: MessageID) -> Int? { tracked.firstIndex { $0.entry.id == id } }

    private mutating func setState(_ k: Int, _ s: MessageState, _ ctx: inout PolicyContext) {
        tracked[k].state = s
        ctx.statusChanged()
    }

    private func statusOf(_ t: Tracked) -> MessageStatus {
        MessageStatus(id: t.entry.id, slot: t.entry.slot, contactName: t.entry.alert.name, number: t.entry.alert.number,
                      state: t.state, attempts: t.entry.attempts, partsSent: t.entry.partsSent, parts: t.pdus.count,
                      lastProblem: t.lastProblem, journaled: t.journaled, purpose: t.entry.purpose,
                      mayHaveReached: t.mayHaveGone || t.entry.partsSent > 0)
    }
}
