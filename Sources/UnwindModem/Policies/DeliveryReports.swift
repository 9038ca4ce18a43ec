import Logging
import UnwindCore

/// What became of each message the network accepted, from its status reports (TS 23.040
/// §9.2.2.3, asked for with TP-SRR in every SMS-SUBMIT).
///
/// - A report names its message by TP-MR (the `+CMGS: <mr>` of one part) and TP-RA (the
///   recipient). Both must match; a reference a newer message to the same number took over (TP-MR
///   wraps at 256) no longer matches the older one, so a report never credits the wrong message.
/// - TP-ST 0x00: that part is on the phone. A message is delivered when every part is.
/// - 0x01–0x1F, the other "completed" values (forwarded but not confirmed, replaced, the
///   centre's own): no more reports will come for the part, and none of them says the phone has
///   it — the message stays "sent".
/// - 0x20–0x3F: the centre is still trying; it stays "sent", waiting.
/// - 0x40–0x7F (and the reserved 0x80–0xFF): it will not arrive; the message has failed, with the
///   reason (0x46: expired). One failed part fails the message.
/// - No report in `ModemTimeouts.reports`, or a modem that routes none: "sent" stands.
/// Every change is journaled with the outbox entry, so a report that comes after a restart
/// still finds its message.
struct DeliveryReports {
    struct Awaiting {
        var entry: OutboxEntry
        var status: MessageStatus
        var journaled: Bool
        /// When it stops waiting; set at the first look, from the message's age on the wall clock.
        var settleBy: Instant?
        /// Parts whose reference a newer message to the same number took.
        var unmatchable: Set<Int> = []
    }

    let configuration: ModemConfiguration
    let logger: Logger
    private(set) var awaiting: [Awaiting] = []
    private(set) var settled: [MessageStatus] = []
    /// Reports that matched no message yet, newest last: a long message's first parts are
    /// reported while its last ones are still being sent (or an answer in doubt is told apart
    /// by its report). Tried again when a message is accepted; at most `earlyKept`.
    private(set) var early: [(report: SMSStatusReport, at: WallTime)] = []
    static let earlyKept = 64

    init(configuration: ModemConfiguration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
    }

    // MARK: Messages

    /// Every part of `entry` got `+CMGS` (its references are in the entry). With reports routed
    /// it waits for them, journaled; without, "sent" is the end of it and the journal lets go.
    mutating func accepted(_ entry: OutboxEntry, _ status: MessageStatus, _ ctx: inout PolicyContext) {
        var s = status
        s.state = .sent(at: ctx.wall)
        guard ctx.status.statusReports.reportsArrive else {
            if status.journaled { ctx.requests.append(.journal(.sent(entry.id))) }
            logger.notice("\(entry.id): sent; this modem routes no status reports, so \"sent\" is all that can be known")
            remember(s)
            return
        }
        var e = entry
        e.sentAt = ctx.wall
        e.reports = Array(repeating: nil, count: e.references.count)
        s.awaitingReports = true
        take(Awaiting(entry: e, status: s, journaled: status.journaled))
        if status.journaled { ctx.requests.append(.journal(.save(e))) }
        // Reports that came before the last part was accepted: theirs now, if they name it
        // (only those that came after the message was asked for).
        let k = awaiting.count - 1
        var i = 0
        while i < early.count {
            let (r, at) = early[i]
            if at.secondsSinceEpoch >= entry.created.secondsSinceEpoch, r.recipient.sameSubscriber(as: e.alert.number),
               e.references.contains(r.messageReference), awaiting.indices.contains(k), awaiting[k].entry.id == e.id {
                early.remove(at: i)
                logger.notice("\(e.id): a status report that came while its parts were still being sent is its own")
                received(r, &ctx)
            } else {
                i += 1
            }
        }
    }

    /// A report that matched nothing: kept for a message not yet accepted whole.
    mutating func keepEarly(_ report: SMSStatusReport, at wall: WallTime) {
        early.append((report, wall))
        if early.count > Self.earlyKept { early.removeFirst(early.count - Self.earlyKept) }
    }

    /// A message a previous run sent, still waiting for its reports.
    mutating func resume(_ entry: OutboxEntry) {
        let sentAt = entry.sentAt ?? entry.created
        let delivered = entry.reports.filter { $0 == 0 }.count
        let s = MessageStatus(id: entry.id, slot: entry.slot, contactName: entry.alert.name, number: entry.alert.number,
                              state: .sent(at: sentAt), attempts: entry.attempts, partsSent: entry.references.count,
                              parts: entry.references.count, lastProblem: nil, journaled: true, purpose: entry.purpose,
                              awaitingReports: true, partsDelivered: delivered)
        take(Awaiting(entry: entry, status: s, journaled: true))
    }

    /// A newer message takes over any reference an older one to the same phone still waits on.
    private mutating func take(_ a: Awaiting) {
        for k in awaiting.indices where awaiting[k].entry.alert.number.isSameNumber(asSender: a.entry.alert.number.text) {
            for (part, r) in awaiting[k].entry.references.enumerated() where r != nil && a.entry.references.contains(r) {
                if awaiting[k].unmatchable.insert(part).inserted {
                    logger.notice("\(awaiting[k].entry.id): part \(part + 1)'s reference \(r ?? 0) was reused by \(a.entry.id); a report for it can no longer be told apart")
                }
            }
        }
        awaiting.append(a)
    }

    func message(_ id: MessageID) -> MessageStatus? {
        if let a = awaiting.first(where: { $0.entry.id == id }) { return a.status }
        return settled.last { $0.id == id }
    }

    var messages: [MessageStatus] { awaiting.map(\.status) }

    var nextDeadline: Instant? { awaiting.compactMap(\.settleBy).min() }

    // MARK: Reports

    /// A status report. Returns whether it matched a message (either way it has been dealt with).
    @discardableResult
    mutating func received(_ report: SMSStatusReport, _ ctx: inout PolicyContext) -> Bool {
        var matches: [(Int, Int)] = []
        for (k, a) in awaiting.enumerated() where report.recipient.sameSubscriber(as: a.entry.alert.number) {
            for (part, r) in a.entry.references.enumerated() where r == report.messageReference && !a.unmatchable.contains(part) {
                matches.append((k, part))
            }
        }
        guard matches.count == 1, let (k, part) = matches.first else {
            logger.notice("status report (reference \(report.messageReference), \(report.recipient), status \(report.status)) \(matches.isEmpty ? "matches no message waiting for one yet; kept for one still being sent" : "matches \(matches.count) parts; none is credited"); ignored")
            return false
        }
        let st = Int(report.status)
        if part < awaiting[k].entry.reports.count { awaiting[k].entry.reports[part] = st }
        let id = awaiting[k].entry.id
        logger.notice("\(id): status report for part \(part + 1)/\(awaiting[k].entry.references.count): \(Self.describe(st))")
        evaluate(k, &ctx)
        return true
    }

    /// Settles a message as soon as its reports allow: a failed part fails it, all parts final
    /// decide it; otherwise it goes on waiting, journaled as it stands.
    private mutating func evaluate(_ k: Int, _ ctx: inout PolicyContext) {
        let reports = awaiting[k].entry.reports
        awaiting[k].status.partsDelivered = reports.filter { $0 == 0 }.count
        if let failed = reports.compactMap({ $0 }).first(where: { $0 >= 0x40 }) {
            let problem = SendProblem.notDelivered(status: failed)
            awaiting[k].status.state = .failed(problem)
            awaiting[k].status.lastProblem = problem
            ctx.events.append(.messageFailed(awaiting[k].entry.id, problem))
            logger.error("\(awaiting[k].entry.id) to \(awaiting[k].entry.alert.number.text): \(problem)")
            settle(k, &ctx)
        } else if reports.allSatisfy({ $0 == 0 }) {
            awaiting[k].status.state = .delivered(at: ctx.wall)
            ctx.events.append(.messageDelivered(awaiting[k].entry.id))
            logger.notice("\(awaiting[k].entry.id) delivered to \(awaiting[k].entry.alert.number.text)")
            settle(k, &ctx)
        } else if reports.allSatisfy({ $0.map { $0 < 0x20 } ?? false }) {
            logger.notice("\(awaiting[k].entry.id): the message centre finished without confirming delivery; it stays \"sent\"")
            settle(k, &ctx)
        } else {
            if awaiting[k].journaled { ctx.requests.append(.journal(.save(awaiting[k].entry))) }
            ctx.statusChanged()
        }
    }

    /// Messages that waited long enough: "sent" stands, and the journal lets them go. The wait
    /// counts from when each was sent (the wall clock, which may have been wrong: then from now).
    mutating func expire(_ ctx: inout PolicyContext) {
        let patience = configuration.timeouts.reports
        var k = 0
        while k < awaiting.count {
            if awaiting[k].settleBy == nil {
                let sent = awaiting[k].entry.sentAt ?? ctx.wall
                let age = Duration.seconds(max(0, ctx.wall.secondsSinceEpoch - sent.secondsSinceEpoch))
                awaiting[k].settleBy = ctx.now + (age < patience ? patience - age : .zero)
            }
            if let by = awaiting[k].settleBy, ctx.now >= by {
                logger.notice("\(awaiting[k].entry.id): no status report settled it in \(patience); it stays \"sent\"")
                settle(k, &ctx)
                continue
            }
            k += 1
        }
    }

    private mutating func settle(_ k: Int, _ ctx: inout PolicyContext) {
        var a = awaiting.remove(at: k)
        a.status.awaitingReports = false
        if a.journaled { ctx.requests.append(.journal(.sent(a.entry.id))) }
        remember(a.status)
        ctx.statusChanged()
    }

    private mutating func remember(_ s: MessageStatus) {
        settled.append(s)
        if settled.count > 40 { settled.removeFirst(settled.count - 40) }
    }

    static func describe(_ st: Int) -> String {
        switch st {
        case 0x00: "received by the phone"
        case 0x01...0x1F: "completed without confirmation (status \(st))"
        case 0x20...0x3F: "the centre is still trying (status \(st))"
        default: SendProblem.reportText(st)
        }
    }
}
