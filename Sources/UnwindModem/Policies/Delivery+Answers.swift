import Logging
import UnwindCore

/// What each answer means for the message it answers, and what follows.
extension Delivery {
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
}
