import Logging
import UnwindCore
import UnwindSeams

/// The arbiter's side of `GSMModem`: the line, the engine's events, who goes next, and the
/// requests the policies make of each other.
extension GSMModem {
    // MARK: - Who goes next

    /// Starts the next command when the line is free. Bring-up first (nothing else goes before
    /// the modem is set up, except a technician's command while the SIM is waited for); then,
    /// once it is ready: a restart bring-up asked for, a call (a person waits on it), an
    /// acknowledgement the network waits for, a heal, the alerts, the SIM's store (listing,
    /// reads, deletions), the technician, and last the status refresh.
    func pump() {
        guard line.isOpen, engine.isIdle else { return }
        if bringUp.isWaitingForSIM, case let (request, id)? = technician.next() {
            start(request, .technician(id))
            return
        }
        let next = bringUp.next(&ctx, &refresh)
        carryOut()
        switch next {
        case .send(let request, let j):
            start(request, .bringUp(j))
            return
        case .hold:
            return
        case .ready:
            break
        }
        if case let (request, j)? = calls.next(at: ctx.now) {
            start(request, .call(j))
        } else if case let (request, j)? = replies.nextUrgent() {
            start(request, .replies(j))
        } else if case let (request, j)? = refresh.nextHeal() {
            start(request, .refresh(j))
        } else if case let (request, j)? = delivery.next(heldUntil: refresh.sendingHeldUntil(ctx), writing: outbox.writer.isWritingMessage, &ctx) {
            carryOut()
            start(request, .delivery(j))
        } else if delivery.heldForCard {
            // An alert is due as soon as its write lands (a few milliseconds): the line stays
            // free for it rather than going to a slower command first.
        } else if case let (request, j)? = replies.next(&ctx) {
            start(request, .replies(j))
        } else if case let (request, id)? = technician.next() {
            start(request, .technician(id))
        } else if case let (request, j)? = refresh.nextQuery(&ctx) {
            start(request, .refresh(j))
        }
    }

    private func start(_ request: ATRequest, _ job: Job) {
        self.job = job
        engine.start(request, at: ctx.now)
    }

    // MARK: - Events

    func process() {
        var i = 0
        while true {
            while i < atEvents.count {
                handle(atEvents[i])
                i += 1
            }
            pump()
            if i == atEvents.count { break }
        }
        atEvents.removeAll(keepingCapacity: true)
        abandonReason = nil
    }

    private func handle(_ event: ATEvent) {
        switch event {
        case .completed(let command, let response):
            completed(command, response)
        case .unsolicited(let code):
            unsolicited(code)
        case .promptAnswered(let command):
            if case .delivery(let j) = job { delivery.pduWritten(j.message, at: ctx.now) } else { delivery.pduWritten(nil, at: ctx.now) }
            logger.debug("prompt seen; PDU written for \(command.line)")
        case .strayPrompt:
            logger.warning("a '> ' prompt nobody asked for: closed with ESC, nothing typed into it")
            bringUp.strayPrompt()
        case .drained:
            break
        case .unrecognized(let line):
            logger.debug("modem said: \(line)")
        case .lateConfirmation(let mr):
            delivery.lateConfirmation(mr, &ctx)
            carryOut()
        }
    }

    /// The answer goes back to whoever asked.
    private func completed(_ command: ATCommand, _ response: ATResponse) {
        let finishedJob = job
        job = nil
        logger.trace("\(command.logged) → \(response.outcome) \(response.lines)")
        guard let finishedJob else { return }
        switch finishedJob {
        case .bringUp(let j): bringUp.completed(j, command, response, &ctx, &refresh)
        case .refresh(let j): refresh.completed(j, command, response, &ctx)
        case .delivery(let j): delivery.completed(j, response, abandonedBecause: abandonReason, &ctx)
        case .call(let j): calls.completed(j, response, &ctx)
        case .technician(let id): technician.completed(id, command, response, &ctx)
        case .replies(let j): replies.completed(j, response, &ctx)
        }
        // The store is full, whoever heard it (27.005 §3.2.5: 322, memory full).
        if case .cmsError(let c) = response.outcome, c.number == 322 {
            if case .replies = finishedJob {} else { replies.storeFull("+CMS ERROR: 322 to \(command.logged)") }
        }
        // What an answer says of the network or the SIM counts for readiness at once, whoever
        // asked: 27.005's 331 "no network service", 27.007's 10 "SIM not inserted".
        if case .cmsError(let c) = response.outcome, c.number == 331 {
            refresh.networkRefused("+CMS ERROR: 331 (no network service) to \(command.logged)", &ctx)
        }
        if case .cmeError(let c) = response.outcome, c.number == 10, ctx.status.sim != .absent {
            logger.warning("SIM: +CME ERROR: 10 (not inserted) to \(command.logged)")
            ctx.status.sim = .absent
            ctx.statusChanged()
        }
        carryOut()
    }

    private func unsolicited(_ code: UnsolicitedCode) {
        switch code {
        case .boot(let line):
            modemBooted(line)
        case .registration(let domain, let state):
            refresh.registrationAnnounced(domain, state, &ctx)
        case .callEnded(let why):
            calls.ended(why, &ctx)
        case .simStatus(let line):
            if bringUp.simAnnounced(line, &ctx) { ctx.requests.append(.checkSIMAgain) }
        case .power(let line):
            refresh.powerWarning(line, &ctx)
        case .newMessage(let line), .statusReport(let line):
            replies.announced(line, &ctx)
        case .statusReportPDU(let header, let pdu):
            replies.inline(header: header, pdu: pdu, report: true, &ctx)
        case .messagePDU(let header, let pdu):
            replies.inline(header: header, pdu: pdu, report: false, &ctx)
        case .storeFull(let line):
            replies.storeFull(line)
        case .ring, .signal, .other:
            logger.debug("modem: \(code)")
        }
        carryOut()
    }

    /// Boot messages (RDY, Call Ready, …) nobody expected: the modem restarted, so whatever was
    /// in flight is abandoned (a message on its way is sent again), a call is over, and the
    /// modem is set up again from the top.
    private func modemBooted(_ line: String) {
        switch bringUp.booted(line, restartInFlight: job == .bringUp(.restart), &ctx) {
        case .sameBoot:
            return
        case .afterRestart:
            engine.abandon(into: &atEvents)
        case .unexpected:
            abandonReason = .modemRestarted
            engine.abandon(into: &atEvents)
            delivery.restartAttempts()
            ctx.status.sim = .unknown
            ctx.status.registration = [:]
            refresh.notRegisteredSince = nil
            calls.ended("modem restarted", &ctx)
        }
        bringUp.beginSync(fullInit: true, &ctx)
    }

    // MARK: - Requests between policies

    /// Carries out what the policies asked for, in order; a request may lead to more.
    func carryOut() {
        while !ctx.requests.isEmpty {
            let request = ctx.requests.removeFirst()
            switch request {
            case .escape(let carriageReturn):
                engine.escape(at: ctx.now, carriageReturn: carriageReturn, into: &atEvents)
            case .resynchronise(let afterSubmit):
                if engine.drainingUntil == nil { engine.escape(at: ctx.now, into: &atEvents) }
                bringUp.resynchronise(afterSubmit: afterSubmit)
            case .checkSIMAgain:
                bringUp.checkSIMAgain(&ctx)
                delivery.restartAttempts()
            case .restartModem:
                bringUp.restartRequested = true
            case .setServiceCentre:
                refresh.serviceCentreRequested = true
            case .statusAnswer(let command, let response):
                refresh.technicianAnswered(command, response, &ctx)
            case .journal(let change):
                write(change)
            case .accepted(let entry, let status):
                reports.accepted(entry, status, &ctx)
            case .incoming(let tpdu, let index):
                replies.handled(index, stored: take(tpdu), &ctx)
            case .unreadable(let pdu, let problem, let index):
                replies.handled(index, stored: keepUnreadable(pdu, problem), &ctx)
            case .modemReady:
                replies.modemReady(&ctx)
            }
        }
    }

    /// The outbox on the card; a failure is logged, never stops sending.
    private func write(_ change: JournalChange) {
        switch change {
        case .save(let entry):
            do { try outbox.save(entry) } catch { logger.error("outbox: could not update \(entry.id): \(error)") }
        case .sent(let id):
            do { try outbox.remove(id) } catch {
                logger.error("outbox: \(id) was sent but could not be removed (\(error)); it may be sent again after a restart")
            }
        case .cancelled(let id):
            do { try outbox.remove(id, cancelled: true) } catch { logger.error("outbox: could not remove cancelled \(id): \(error)") }
        }
    }

    // MARK: - The line

    func openIfDue() {
        guard line.isDue(at: ctx.now) else { return }
        do {
            try port.open()
        } catch {
            line.openFailed(at: ctx.now, random: &ctx.random)
            let why = error.description
            if ctx.status.link != .closed(why) {
                logger.error("\(why); trying again")
                ctx.status.link = .closed(why)
                ctx.statusChanged()
            }
            return
        }
        logger.notice("modem line \(port.name) open")
        line.opened()
        bringUp.lastBoot = nil
        pending.removeAll()
        bringUp.beginSync(fullInit: true, &ctx)
        carryOut()
    }

    func lineLost(_ error: DeviceError) {
        logger.error("\(error)")
        dropLine()
        ctx.status.link = .closed(error.description)
        line.lost(at: ctx.now, random: &ctx.random)
        ctx.statusChanged()
    }

    /// Closes the tty and forgets the conversation: what was in flight is abandoned (a message
    /// on its way is sent again after the reopen), nothing stale is written later.
    func dropLine() {
        port.close()
        abandonReason = .lineLost
        engine.reset(into: &atEvents)
        for e in atEvents { handle(e) }
        atEvents.removeAll()
        engine.reset(into: &atEvents)  // whatever the handlers queued belongs to the closed line
        atEvents.removeAll()
        abandonReason = nil
        job = nil
        pending.removeAll()
        delivery.restartAttempts()
        calls.ended("the modem's line was lost", &ctx)
        line.closed()
        ctx.status.sim = .unknown
        ctx.status.registration = [:]
        ctx.statusChanged()
    }

    func flush() {
        engine.takeOutput(into: &pending)
        guard !pending.isEmpty, line.isOpen else { return }
        do {
            while !pending.isEmpty {
                let n = try port.write(pending[...])
                if n == 0 { break }
                pending.removeFirst(n)
            }
        } catch {
            lineLost(error)
        }
    }
}
