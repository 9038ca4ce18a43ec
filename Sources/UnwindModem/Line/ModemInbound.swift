import Logging
import UnwindCore

/// The arbiter's side of what comes in: messages to the card, status reports to the outbox,
/// long replies whose parts stopped coming, readiness and the self-test.
extension GSMModem {
    /// Before the line is read: reports waited on long enough, long replies waited on long enough.
    func timers() {
        reports.expire(&ctx)
        if let inbox {
            let (done, errors) = inbox.flushStale(now: ctx.now, patience: configuration.timeouts.replyParts, at: ctx.wall)
            for r in done { announce(r, partial: true) }
            for e in errors { logger.error("replies: a long reply waiting for parts could not be stored: \(e)") }
        }
        carryOut()
    }

    /// After everything else in a step: the self-test's outcome, readiness.
    func afterStep() {
        if let test = selfTest {
            var results = test.results
            for t in test.tickets { if let r = technician.take(t) { results.append(r) } }
            selfTest?.results = results
            let timedOut = ctx.now - test.since >= Self.selfTestPatience
            if !line.isOpen || results.count == test.tickets.count || timedOut {
                for t in test.tickets { technician.cancel(t) }
                selfTest = nil
                let answered = results.contains { $0.command == ATCommand.attention.line && $0.response.outcome.isOK }
                let verdict = answered && line.isOpen
                    ? Readiness.assess(ctx.status, configuration) ?? AlertReadiness(problems: [.modemSilent])
                    : AlertReadiness(problems: [.modemSilent])
                readiness.report(verdict, selfTest: true, &ctx)
            }
        }
        readiness.update(&ctx)
    }

    /// A message or report read from the modem. True when it is safe on the card (or applied
    /// to the outbox): only then may the SIM let go of it.
    func take(_ tpdu: IncomingTPDU) -> Bool {
        switch tpdu {
        case .statusReport(let r):
            if !reports.received(r, &ctx) {
                // Not for a message sent whole: it may be for a part of one still being sent, or
                // name the answer a `+CMGS` in doubt was (its reference and its recipient).
                reports.keepEarly(r, at: ctx.wall)
                delivery.reportNamed(r, &ctx)
            }
            return true
        case .deliver(let d):
            guard let inbox else {
                logger.warning("a message from \(d.sender) arrived; with no inbox it stays on the SIM")
                return false
            }
            do {
                for r in try inbox.accept(d, at: ctx.wall, instant: ctx.now) { announce(r, partial: false) }
                return true
            } catch {
                logger.error("replies: a message from \(d.sender) could not be stored (\(error)); it stays on the SIM")
                return false
            }
        }
    }

    func keepUnreadable(_ pdu: String, _ problem: String) -> Bool {
        guard let inbox else { return false }
        do {
            if let r = try inbox.acceptUnreadable(pdu, problem: problem, at: ctx.wall) { announce(r, partial: false) }
            return true
        } catch {
            logger.error("replies: an unreadable message could not be kept (\(error)); it stays on the SIM")
            return false
        }
    }

    private func announce(_ r: StoredReply, partial: Bool) {
        let parts = r.parts > 1 ? " (\(r.parts - r.missingParts)/\(r.parts) parts\(r.missingParts > 0 ? ", the rest never came" : ""))" : ""
        logger.notice("reply \(r.id) from \(r.from.isEmpty ? "an unknown sender" : r.from) stored\(parts)")
        ctx.events.append(.replyReceived(r.reply))
        ctx.statusChanged()
    }
}
