import Logging
import UnwindCore
import UnwindSeams

/// The modem session: start-up, SIM and registration, sending from the outbox with retries, the
/// counselling call — driven from the device loop without ever blocking.
///
/// The loop polls `pollDescriptors`, wakes at `nextDeadline` at the latest and calls
/// `step(at:)`; `step` reads what arrived, runs the AT engine and the session, and writes what
/// the line takes. Nothing in here sleeps or waits.
///
/// The shape: one arbiter (this class) owns the line and the one AT command in flight (the
/// `ATEngine`), and asks small policies — each state and rules, no I/O, no clock — what the
/// next command is, then tells the one that asked how it ended:
/// - `LineRecovery`: reopening a tty that failed, with backoff.
/// - `BringUp`: `AT` until it answers, start-up, the SIM and its PIN, modem restarts.
/// - `StatusRefresh`: registration, signal, operator; healing a modem changed by hand.
/// - `Delivery`: the outbox's messages, least tried first, with the exact truth about each
///   (what an error means is `SubmitVerdict`'s table).
/// - `TechnicianQueue`: `unwind modem at` and `unwind modem check`.
/// - `Calls`: the counselling call, and the escalation ladder's calls.
/// - `DeliveryReports`: status reports, what became of each message the network accepted.
/// - `Replies`: messages (and stored reports) from the SIM's store to the card, the store kept clean.
/// - `Readiness`: whether a PANIC could go out now.
/// Who goes first when several want the line is written in one place, `pump`.
public final class GSMModem {
    public let configuration: ModemConfiguration
    public let port: SerialTransport
    public let outbox: Outbox
    /// Where received messages go (nil: none is deleted from the SIM, having nowhere safe to go).
    public let inbox: Inbox?
    public var status: ModemStatus { ctx.status }
    public var call: CallState { calls.state }

    let logger: Logger
    var engine: ATEngine
    /// The time, status, events, random source and requests the policies share.
    var ctx: PolicyContext

    // The policies.
    var line: LineRecovery
    var bringUp: BringUp
    var refresh: StatusRefresh
    var delivery: Delivery
    var technician: TechnicianQueue
    var calls: Calls
    var reports: DeliveryReports
    var replies: Replies
    var readiness: Readiness
    /// A self-test under way: its checks' tickets and when it began.
    var selfTest: (tickets: [TechnicianTicket], results: [TechnicianResult], since: Instant)?

    /// Who asked for the command in flight: its answer goes back there.
    enum Job: Equatable {
        case bringUp(BringUp.Job)
        case refresh(StatusRefresh.Job)
        case delivery(Delivery.Job)
        case call(Calls.Job)
        case technician(Int)
        case replies(Replies.Job)
    }
    var job: Job?
    /// Why commands end `.abandoned` during this step (the modem restarted, the line was lost).
    var abandonReason: SendProblem?

    // The line's bytes.
    var pending: [UInt8] = []
    var incoming: [UInt8] = []
    var atEvents: [ATEvent] = []

    /// Takes over the messages already in `outbox` (a restart): they are sent first.
    public init(port: SerialTransport, outbox: Outbox, inbox: Inbox? = nil, configuration: ModemConfiguration = ModemConfiguration(),
                random: some RandomNumberGenerator = SystemRandomNumberGenerator(),
                logger: Logger = Logger(label: "unwind.modem")) {
        self.port = port
        self.outbox = outbox
        self.inbox = inbox
        self.configuration = configuration
        self.logger = logger
        ctx = PolicyContext(status: ModemStatus(port: port.name), random: AnyRandom(random))
        engine = ATEngine(settings: ATEngine.Settings(drain: configuration.timeouts.drain,
                                                      resultGrace: configuration.timeouts.resultGrace))
        line = LineRecovery(backoff: configuration.backoff)
        bringUp = BringUp(configuration: configuration, portName: port.name, logger: logger)
        refresh = StatusRefresh(configuration: configuration, logger: logger)
        delivery = Delivery(configuration: configuration, logger: logger)
        technician = TechnicianQueue(timeouts: configuration.timeouts, logger: logger)
        calls = Calls(timeouts: configuration.timeouts)
        reports = DeliveryReports(configuration: configuration, logger: logger)
        replies = Replies(configuration: configuration, logger: logger)
        readiness = Readiness(configuration: configuration, logger: logger)
        for e in outbox.entries {
            if e.sentAt != nil { reports.resume(e) } else { delivery.track(e, journaled: true) }
        }
        if !delivery.isIdle { logger.notice("outbox: \(delivery.tracked.count) message(s) from before the restart will be sent") }
        if !reports.awaiting.isEmpty { logger.notice("outbox: \(reports.awaiting.count) sent message(s) still wait for status reports") }
        for p in outbox.problems { logger.error("outbox: \(p)") }
        for p in inbox?.problems ?? [] { logger.error("replies: \(p)") }
        incoming.reserveCapacity(1024)
    }

    // MARK: - Loop interface

    /// The tty, while open.
    public var pollDescriptors: [Int32] { port.descriptor.map { [$0] } ?? [] }

    /// When `step` must run again at the latest (it also runs whenever the tty is readable).
    public var nextDeadline: Instant? {
        var d: Instant?
        func consider(_ t: Instant?) { if let t, d == nil || t < d! { d = t } }
        let now = ctx.now
        consider(calls.deadline)
        consider(reports.nextDeadline)
        consider(readiness.deadline)
        consider(selfTest.map { $0.since + Self.selfTestPatience })
        consider(inbox?.partsDeadline(patience: configuration.timeouts.replyParts))
        guard line.isOpen else {
            consider(line.deadline(now: now))
            return d
        }
        consider(engine.nextDeadline)
        if !pending.isEmpty { consider(now + .milliseconds(2)) }
        // A write on its way to the card: looked for again shortly, a message may wait for it.
        if outbox.writer.isWriting { consider(now + .milliseconds(2)) }
        guard engine.isIdle else { return d }
        if let w = bringUp.waitUntil {
            consider(w)
            if bringUp.isWaitingForSIM && !technician.isEmpty { consider(now) }
            return d
        }
        if bringUp.stage == .ready {
            if !technician.isEmpty || calls.hasWork(at: now) || refresh.hasWork || bringUp.restartRequested || replies.hasWork {
                consider(now)
            }
            consider(delivery.nextDeadline(heldUntil: refresh.sendingHeldUntil(ctx), writing: outbox.writer.isWritingMessage))
            consider(refresh.nextRefresh)
            consider(replies.nextSweep)
        }
        return d
    }

    /// Does whatever is due at `moment`: reads, runs the engine and the session, writes.
    public func step(at moment: Moment) {
        ctx.now = moment.instant
        ctx.wall = moment.wall
        calls.expire(&ctx)
        timers()
        collectWrites()
        defer { afterStep() }
        if !line.isOpen {
            openIfDue()
            if !line.isOpen { return }
        }
        incoming.removeAll(keepingCapacity: true)
        do {
            _ = try port.read(into: &incoming)
        } catch {
            if !incoming.isEmpty { engine.receive(incoming, at: ctx.now, into: &atEvents) }
            lineLost(error)
            return
        }
        if !incoming.isEmpty { engine.receive(incoming, at: ctx.now, into: &atEvents) }
        engine.advance(to: ctx.now, into: &atEvents)
        process()
        flush()
    }

    /// Closes the tty (shutdown). Messages stay in the outbox for the next start; a later
    /// `step` opens the line again.
    public func close() {
        // What is on its way to the card gets there before the device stops.
        outbox.writer.flush()
        collectWrites()
        dropLine()
        ctx.status.link = .closed("closed")
    }

    /// Events since the last call, oldest first.
    public func takeEvents() -> [ModemEvent] {
        defer { ctx.events.removeAll() }
        return ctx.events
    }

    // MARK: - Messages

    /// Asks for an alert: written to the outbox (and fsynced) before any AT traffic for it, then
    /// sent as soon as the modem can. A failed outbox write is reported and the message sent anyway.
    /// With a background `OutboxWriter` this returns at once and the message waits, queued, for
    /// its write to land (`collectWrites`).
    @discardableResult
    public func send(_ alert: AlertSlot, slot: Int?, purpose: AlertPurpose = .panic, at moment: Moment) -> MessageID {
        let reference = UInt16.random(in: 0...UInt16.max, using: &ctx.random)
        let nonce = UInt16.random(in: 0...UInt16.max, using: &ctx.random)
        let (entry, error) = outbox.add(alert, slot: slot, at: moment.wall, reference: reference, nonce: nonce, purpose: purpose)
        delivery.track(entry, journaled: error == nil, at: moment.instant)
        if let error {
            logger.error("outbox: could not save \(entry.id): \(error); sending anyway")
            delivery.notJournaled(entry.id, error.description)
        } else {
            logger.notice("alert \(entry.id) to \(alert.name) (\(alert.number.text)) queued; \(alert.encoding)")
        }
        ctx.statusChanged()
        noticeGivesWay(at: moment)
        return entry.id
    }

    /// An alert was asked for while a notice (a STATUS answer, the maintainer's text) is on the
    /// wire: the notice is withdrawn (before its prompt: the prompt is closed with ESC) or, its
    /// PDU written, no longer waited for (`Delivery`: unconfirmed, never doubted against an alert).
    private func noticeGivesWay(at moment: Moment) {
        guard case .delivery(.submit(let id, _))? = job, delivery.isNotice(id) else { return }
        ctx.now = max(ctx.now, moment.instant)
        ctx.wall = moment.wall
        let written = engine.withdraw(into: &atEvents)
        logger.notice("\(id): an alert needs the line; the text \(written ? "is not waited for" : "is withdrawn at its prompt")")
        guard written else { return }
        process()
        flush()
    }

    /// What the outbox's background writer finished: a message whose first write failed is
    /// sent anyway and says it was not saved, as when the write failed at once.
    func collectWrites() {
        for f in outbox.writer.collect() {
            switch f.kind {
            case .added:
                logger.error("outbox: could not save \(f.id): \(f.error); sending anyway")
                delivery.notJournaled(f.id, f.error.description)
                ctx.statusChanged()
            case .saved: logger.error("outbox: could not update \(f.id): \(f.error)")
            case .sent: logger.error("outbox: \(f.id) was sent but could not be removed (\(f.error)); it may be sent again after a restart")
            case .cancelled: logger.error("outbox: could not remove cancelled \(f.id): \(f.error)")
            case .replySeen: logger.error("replies: could not mark \(f.id) seen: \(f.error)")
            }
        }
    }

    /// A maintainer's test message: sent like an alert but never journaled, so it cannot be
    /// resent after a restart; cancel it when its wait is over.
    @discardableResult
    public func sendTest(_ alert: AlertSlot, at moment: Moment) -> MessageID {
        let reference = UInt16.random(in: 0...UInt16.max, using: &ctx.random)
        let nonce = UInt16.random(in: 0...UInt16.max, using: &ctx.random)
        let entry = outbox.transient(alert, at: moment.wall, reference: reference, nonce: nonce)
        delivery.track(entry, journaled: false, at: moment.instant)
        logger.notice("test message \(entry.id) to \(alert.name) (\(alert.number.text)) queued, not journaled; \(alert.encoding)")
        ctx.statusChanged()
        return entry.id
    }

    /// A text that is not an alert (a STATUS answer, the maintainer's): never journaled (a
    /// restart must not send stale news), sent only while no other message waits, dropped when
    /// not sent in time (`Delivery`). `alert` holds the recipient's stored, validated number.
    @discardableResult
    public func sendNotice(_ alert: AlertSlot, at moment: Moment) -> MessageID {
        let reference = UInt16.random(in: 0...UInt16.max, using: &ctx.random)
        let nonce = UInt16.random(in: 0...UInt16.max, using: &ctx.random)
        let entry = outbox.transient(alert, at: moment.wall, reference: reference, nonce: nonce, kind: "text")
        delivery.track(entry, journaled: false, at: moment.instant, notice: true)
        logger.notice("text \(entry.id) to \(alert.name) (\(alert.number.text)) queued behind any alert, not journaled; \(alert.encoding)")
        ctx.statusChanged()
        return entry.id
    }

    /// PANIC: every configured alert, in slot order.
    @discardableResult
    public func sendAll(_ alerts: [(slot: Int, alert: AlertSlot)], purpose: AlertPurpose = .panic, at moment: Moment) -> [MessageID] {
        alerts.map { send($0.alert, slot: $0.slot, purpose: purpose, at: moment) }
    }

    /// Cancels a message (the person or the maintainer): removed from the outbox. A part already
    /// on the wire cannot be called back; the rest is not sent.
    public func cancel(_ id: MessageID) {
        if case .delivery(let j) = job {
            delivery.cancel(id, inFlight: j.message, &ctx)
        } else {
            delivery.cancel(id, inFlight: nil, &ctx)
        }
        carryOut()
    }

    /// Sends a failed or waiting message again now (clears a permanent failure).
    public func retryNow(_ id: MessageID) {
        delivery.retryNow(id, &ctx)
        carryOut()
    }

    /// Every message not yet sent, then the recently finished ones (as their status reports
    /// left them), then those a previous run sent that still wait for reports.
    public var messages: [MessageStatus] {
        // By identifier, not by search: the outbox may hold hundreds after a long outage.
        var reported: [MessageID: MessageStatus] = [:]
        for m in reports.settled { reported[m.id] = m }  // the last settled wins, as `message` has it
        for m in reports.messages { reported[m.id] = m }  // still awaiting a report: before settled
        var shown = Set<MessageID>()
        var out: [MessageStatus] = []
        for m in delivery.messages {
            out.append(reported[m.id] ?? m)
            shown.insert(m.id)
        }
        for m in reports.messages where shown.insert(m.id).inserted { out.append(m) }
        return out
    }

    public func message(_ id: MessageID) -> MessageStatus? {
        if let t = delivery.trackedStatus(id) { return t }
        return reports.message(id) ?? delivery.message(id)
    }

    /// How status reports reach the device; "sent" is the last word when they do not.
    public var statusReports: ReportRouting { ctx.status.statusReports }

    // MARK: - Replies and readiness

    /// Replies on the card the person has not dismissed, oldest first.
    public var unseenReplies: [IncomingReply] { inbox?.unseen.map(\.reply) ?? [] }

    /// The person dismissed these replies: remembered on the card.
    public func markRepliesSeen(_ ids: [String]) {
        guard let inbox else { return }
        do { try inbox.markSeen(ids, writer: outbox.writer) } catch { logger.error("replies: could not mark \(ids.count) reply(ies) seen: \(error)") }
    }

    /// The last readiness reported (nil: not known yet).
    public var currentReadiness: AlertReadiness? { readiness.reported }

    /// Runs the modem's checks again (AT, SIM, registration, signal, operator, service centre),
    /// sending nothing; the outcome comes as a `.readiness(_, selfTest: true)` event.
    public func runSelfTest(at moment: Moment) {
        ctx.now = moment.instant
        ctx.wall = moment.wall
        if selfTest != nil { return }
        logger.notice("self-test: running the modem's checks")
        selfTest = (BringUp.checks.map { technician.enqueue($0) }, [], moment.instant)
    }

    /// A self-test gives up waiting for its checks after this (a modem that never gets set up).
    static let selfTestPatience: Duration = .seconds(120)

    /// Nothing left to send or cancel.
    public var isIdle: Bool { delivery.isIdle }

    // MARK: - Technician

    /// Queues a technician's command (`unwind modem at`). It runs once the modem is set up and
    /// no alert is due (alerts always go first), or while set-up waits for the SIM; its answer is
    /// then available from `takeTechnicianResult`.
    @discardableResult
    public func runTechnician(_ command: TechnicianCommand) -> TechnicianTicket {
        technician.enqueue(.technician(command))
    }

    /// Queues the start-up sequence's commands again, one ticket each, in order: `AT`, ATE0,
    /// AT+CMEE=1, AT+CPIN?, AT+CMGF=0, AT+CREG?, AT+CGREG?, AT+CEREG?, AT+CSQ, AT+COPS?
    /// (`unwind modem check`). They run like technician commands, between alerts; the answers
    /// also refresh `status` (SIM, registration, signal, operator).
    public func runStartupCheck() -> [(ticket: TechnicianTicket, command: String)] {
        ([ATCommand.attention] + bringUp.startupSteps).map { (technician.enqueue($0), $0.line) }
    }

    /// The answer to a ticket, once there is one (taken: asked again, nil).
    public func takeTechnicianResult(_ ticket: TechnicianTicket) -> TechnicianResult? {
        technician.take(ticket)
    }

    /// Forgets a ticket: dropped if it has not run, its answer discarded if it has.
    public func cancelTechnician(_ ticket: TechnicianTicket) {
        technician.cancel(ticket)
    }

    // MARK: - Calls

    /// Dials `number` (the counselling line) as soon as the modem is ready.
    public func dial(_ number: PhoneNumber, at instant: Instant) {
        calls.dial(number, at: instant, &ctx)
    }

    /// Hangs up (or drops a dial that has not gone out yet).
    public func hangUp() {
        calls.hangUp(dialInFlight: job == .call(.dial), &ctx)
    }

    /// Started again while the ladder rang a contact: the call the earlier run left up is looked
    /// for (`AT+CLCC`) and followed as this run's own.
    public func followCallLeftUp() {
        calls.lookForLeftover()
    }

    /// SELECT on the counselling line: dial, or hang up when a call is on.
    public func toggleCall(_ number: PhoneNumber, at instant: Instant) {
        if call.isInCall { hangUp() } else { dial(number, at: instant) }
    }
}

/// SplitMix64: a small seeded generator for reproducible jitter in tests and simulations.
public struct SeededRandom: RandomNumberGenerator, Sendable {
    var state: UInt64
    public init(seed: UInt64) { state = seed }
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
