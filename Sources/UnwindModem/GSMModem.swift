import Logging
import UnwindCore
import UnwindDevices

/// The modem session: start-up, SIM and registration, sending from the outbox with retries, the
/// counselling call — driven from the device loop without ever blocking.
///
/// The loop polls `pollDescriptors`, wakes at `nextDeadline` at the latest and calls
/// `step(at:)`; `step` reads what arrived, runs the AT engine and the session, and writes what
/// the line takes. Nothing in here sleeps or waits.
///
/// Rules the session keeps:
/// - Start-up: ESC + CR (a stuck prompt), `AT` until OK (autobaud), ATE0, AT+CMEE=1, AT+CPIN?
///   (waiting through "SIM busy"), AT+CMGF=0, registration from +CREG/+CGREG/+CEREG, AT+CSQ,
///   AT+COPS?. Optional commands that answer ERROR are skipped; any command that times out is
///   followed by ESC, drain and `AT` before anything else is sent.
/// - Every attempt at a message starts with AT+CMGF=0 (PDU mode, whatever happened to the modem
///   since), then AT+CMGS per part. Only `+CMGS: <mr>` counts as sent.
/// - No prompt: the engine writes ESC and drains; `AT` must answer OK; then the message is tried
///   again. A PDU without `+CMGS` in time is in doubt and sent again.
/// - +CMS ERROR 1 stops that message (shown as failed); 330 sets the service centre from the
///   configuration; 310–316 check PIN and registration again; 500 (and ERROR) retry, and restart
///   the modem after several in a row; everything else retries with backoff and jitter, forever.
/// - Boot messages (RDY, Call Ready, …) that were not expected: the modem restarted; whatever was
///   in flight is abandoned, the modem set up again, and the message sent again.
/// - A tty that fails is closed and reopened with backoff; a message in flight is sent again.
public final class GSMModem {
    public let configuration: ModemConfiguration
    public let port: SerialTransport
    public let outbox: Outbox
    public private(set) var status: ModemStatus
    public private(set) var call: CallState = .idle

    let logger: Logger
    var engine: ATEngine
    var random: AnyRandom

    // Line
    var reopenAt: Instant?
    var reopenFailures = 0
    var pending: [UInt8] = []
    var incoming: [UInt8] = []
    var atEvents: [ATEvent] = []
    var now = Instant.zero
    var wall = WallTime(secondsSinceEpoch: 0)

    // Session
    enum Stage: Equatable { case closed, syncing, initializing, ready, resetting }
    enum Job: Equatable {
        case sync, initStep, refresh, setServiceCentre, dial, hangUp, reset, heal
        case technician(Int)
        case pduMode(MessageID)
        case submit(MessageID, part: Int)
    }
    var stage: Stage = .closed
    var job: Job?
    var syncAttempts = 0
    var initSteps: [ATCommand] = []
    /// The configured PIN was sent since the modem last started; and whether the SIM refused it
    /// (then never again: a SIM locks after three wrong PINs).
    var pinEntered = false
    var pinRefused = false
    static let pinRefusedState = SIMState.locked("the SIM refused the configured PIN (modem.sim_pin); not tried again, so the SIM does not lock")
    var waitUntil: Instant?
    var lastBoot: Instant?
    var modemErrorStreak = 0
    /// The reference of the last `+CMGS` credited: a repeat of it answers no later PDU.
    var lastSubmitReference: Int?
    /// When the last PDU was written (its answer may come until then + the submit timeout).
    var lastPDUWrittenAt: Instant?
    /// A PDU ended in doubt and its answer may still come until then: a `+CMGS` before then
    /// cannot be told from that late answer (27.005 gives it nothing to match), so it credits
    /// nothing — the message it came for is "in doubt" too and is sent again once the window
    /// has closed. First attempts still go out meanwhile: every contact gets the alert at once,
    /// the screen says "retrying" until a confirmation can be trusted, and a contact gets at
    /// most one copy too many.
    var doubtfulUntil: Instant?
    /// The last time a power warning was logged (a modem can repeat it many times a second).
    var lastPowerWarning: Instant?
    /// Set by a submit that ended in doubt: its answer may still come, so the resynchronisation
    /// takes only a clean `OK` to `AT` (nothing else in its window) as the line being quiet.
    var resyncAfterSubmit = false
    /// AT answers during such a resynchronisation that came with someone else's lines.
    var contaminatedSyncs = 0
    var resetRequested = false
    var serviceCentreRequested = false
    /// The modem reported a manual or deregistered operator selection: AT+COPS=0 before anything.
    var automaticOperatorRequested = false
    var unsupported: Set<RegistrationDomain> = []
    var notRegisteredSince: Instant?
    var nextRefresh: Instant?
    var refreshQueue: [ATCommand] = []
    var abandonReason: SendProblem?

    // Messages
    struct Tracked {
        var entry: OutboxEntry
        var pdus: [SMSSubmitPDU]
        var state: MessageState
        var nextAttempt: Instant
        var streak = 0
        /// AT+CMGF=0 answered for this attempt: the parts go next.
        var inAttempt = false
        var journaled = true
        var lastProblem: SendProblem?
        var cancelRequested = false
    }
    var tracked: [Tracked] = []
    var finished: [MessageStatus] = []
    var events: [ModemEvent] = []

    // Technician's commands and start-up checks (`unwind modem at`, `unwind modem check`)
    var technicianQueue: [(id: Int, command: ATCommand)] = []
    var technicianResults: [Int: TechnicianResult] = [:]
    var nextTechnicianID = 1

    // Calls
    enum CallRequest: Equatable { case dial(PhoneNumber, since: Instant), hangUp }
    var callRequest: CallRequest?

    /// The full start-up after the line answers `AT`.
    static let startup: [ATCommand] = [
        .echoOff, .numericErrors, .pinStatus, .pduMode,
        .registration(.cs), .registration(.ps), .registration(.eps), .signalQuality, .operatorName,
    ]

    /// Every (re)initialisation asserts what the panic path needs, so a modem someone changed by
    /// hand heals itself: no echo, numeric errors, PDU mode, automatic operator selection (read
    /// with AT+COPS?, restored with AT+COPS=0), and the configured service centre (AT+CSCA?).
    var startupSteps: [ATCommand] {
        Self.startup + (configuration.serviceCentre == nil ? [] : [.serviceCentreQuery])
    }

    /// Takes over the messages already in `outbox` (a restart): they are sent first.
    public init(port: SerialTransport, outbox: Outbox, configuration: ModemConfiguration = ModemConfiguration(),
                random: some RandomNumberGenerator = SystemRandomNumberGenerator(),
                logger: Logger = Logger(label: "unwind.modem")) {
        self.port = port
        self.outbox = outbox
        self.configuration = configuration
        self.random = AnyRandom(random)
        self.logger = logger
        self.status = ModemStatus(port: port.name)
        self.engine = ATEngine(settings: ATEngine.Settings(drain: configuration.timeouts.drain,
                                                           resultGrace: configuration.timeouts.resultGrace))
        for e in outbox.entries { track(e, journaled: true) }
        if !tracked.isEmpty { logger.notice("outbox: \(tracked.count) message(s) from before the restart will be sent") }
        for p in outbox.problems { logger.error("outbox: \(p)") }
        incoming.reserveCapacity(1024)
    }

    // MARK: - Loop interface

    /// The tty, while open.
    public var pollDescriptors: [Int32] { port.descriptor.map { [$0] } ?? [] }

    /// When `step` must run again at the latest (it also runs whenever the tty is readable).
    public var nextDeadline: Instant? {
        var d: Instant?
        func consider(_ t: Instant?) { if let t, d == nil || t < d! { d = t } }
        if case .dial(_, let since) = callRequest { consider(since + configuration.timeouts.dialPatience) }
        if stage == .closed {
            consider(reopenAt ?? now)
            return d
        }
        consider(engine.nextDeadline)
        if !pending.isEmpty { consider(now + .milliseconds(2)) }
        guard engine.isIdle else { return d }
        if let w = waitUntil {
            consider(w)
            if stage == .initializing && !technicianQueue.isEmpty { consider(now) }
            return d
        }
        if stage == .ready {
            if !technicianQueue.isEmpty { consider(now) }
            for t in tracked where t.state != .cancelled {
                if case .failed = t.state { continue }
                consider(t.inAttempt || canSend ? t.nextAttempt : max(t.nextAttempt, sendingHeldUntil ?? t.nextAttempt))
            }
            consider(nextRefresh)
            if !refreshQueue.isEmpty || resetRequested || serviceCentreRequested { consider(now) }
        }
        return d
    }

    /// Does whatever is due at `moment`: reads, runs the engine and the session, writes.
    public func step(at moment: Moment) {
        now = moment.instant
        wall = moment.wall
        expireCallRequest()
        if stage == .closed {
            openIfDue()
            if stage == .closed { return }
        }
        incoming.removeAll(keepingCapacity: true)
        do {
            _ = try port.read(into: &incoming)
        } catch {
            if !incoming.isEmpty { engine.receive(incoming, at: now, into: &atEvents) }
            lineLost(error)
            return
        }
        if !incoming.isEmpty { engine.receive(incoming, at: now, into: &atEvents) }
        engine.advance(to: now, into: &atEvents)
        process()
        flush()
    }

    /// Closes the tty (shutdown). Messages stay in the outbox for the next start; a later
    /// `step` opens the line again.
    public func close() {
        dropLine()
        status.link = .closed("closed")
    }

    /// Events since the last call, oldest first.
    public func takeEvents() -> [ModemEvent] {
        defer { events.removeAll() }
        return events
    }

    // MARK: - Messages

    /// Asks for an alert: written to the outbox (and fsynced) before any AT traffic for it, then
    /// sent as soon as the modem can. A failed outbox write is reported and the message sent anyway.
    @discardableResult
    public func send(_ alert: AlertSlot, slot: Int?, at moment: Moment) -> MessageID {
        let reference = UInt16.random(in: 0...UInt16.max, using: &random)
        let nonce = UInt16.random(in: 0...UInt16.max, using: &random)
        let (entry, error) = outbox.add(alert, slot: slot, at: moment.wall, reference: reference, nonce: nonce)
        track(entry, journaled: error == nil, at: moment.instant)
        if let error {
            logger.error("outbox: could not save \(entry.id): \(error); sending anyway")
            tracked[tracked.count - 1].lastProblem = .notJournaled(error.description)
        } else {
            logger.notice("alert \(entry.id) to \(alert.name) (\(alert.number.text)) queued; \(alert.encoding)")
        }
        events.append(.statusChanged)
        return entry.id
    }

    /// A maintainer's test message: sent like an alert but never journaled, so it cannot be
    /// resent after a restart; cancel it when its wait is over.
    @discardableResult
    public func sendTest(_ alert: AlertSlot, at moment: Moment) -> MessageID {
        let reference = UInt16.random(in: 0...UInt16.max, using: &random)
        let nonce = UInt16.random(in: 0...UInt16.max, using: &random)
        let entry = outbox.transient(alert, at: moment.wall, reference: reference, nonce: nonce)
        track(entry, journaled: false, at: moment.instant)
        logger.notice("test message \(entry.id) to \(alert.name) (\(alert.number.text)) queued, not journaled; \(alert.encoding)")
        events.append(.statusChanged)
        return entry.id
    }

    /// PANIC: every configured alert, in slot order.
    @discardableResult
    public func sendAll(_ alerts: [(slot: Int, alert: AlertSlot)], at moment: Moment) -> [MessageID] {
        alerts.map { send($0.alert, slot: $0.slot, at: moment) }
    }

    /// Cancels a message (the person or the maintainer): removed from the outbox. A part already
    /// on the wire cannot be called back; the rest is not sent.
    public func cancel(_ id: MessageID) {
        guard let k = index(id) else { return }
        if isInFlight(id) {
            tracked[k].cancelRequested = true
            return
        }
        finishCancel(k)
    }

    /// Sends a failed or waiting message again now (clears a permanent failure).
    public func retryNow(_ id: MessageID) {
        guard let k = index(id) else { return }
        tracked[k].entry.failure = nil
        tracked[k].streak = 0
        tracked[k].nextAttempt = now
        tracked[k].state = .queued
        persist(k)
        events.append(.statusChanged)
    }

    /// Every message not yet sent, then the recently finished ones.
    public var messages: [MessageStatus] {
        tracked.map(statusOf) + finished
    }

    public func message(_ id: MessageID) -> MessageStatus? {
        if let k = index(id) { return statusOf(tracked[k]) }
        return finished.last { $0.id == id }
    }

    /// Nothing left to send or cancel.
    public var isIdle: Bool { tracked.isEmpty }

    // MARK: - Technician

    /// Queues a technician's command (`unwind modem at`). It runs once the modem is set up and
    /// no alert is due (alerts always go first), or while set-up waits for the SIM; its answer is
    /// then available from `takeTechnicianResult`.
    @discardableResult
    public func runTechnician(_ command: TechnicianCommand) -> TechnicianTicket {
        enqueueTechnician(.technician(command))
    }

    /// Queues the start-up sequence's commands again, one ticket each, in order: `AT`, ATE0,
    /// AT+CMEE=1, AT+CPIN?, AT+CMGF=0, AT+CREG?, AT+CGREG?, AT+CEREG?, AT+CSQ, AT+COPS?
    /// (`unwind modem check`). They run like technician commands, between alerts; the answers
    /// also refresh `status` (SIM, registration, signal, operator).
    public func runStartupCheck() -> [(ticket: TechnicianTicket, command: String)] {
        ([ATCommand.attention] + startupSteps).map { (enqueueTechnician($0), $0.line) }
    }

    /// The answer to a ticket, once there is one (taken: asked again, nil).
    public func takeTechnicianResult(_ ticket: TechnicianTicket) -> TechnicianResult? {
        technicianResults.removeValue(forKey: ticket.id)
    }

    /// Forgets a ticket: dropped if it has not run, its answer discarded if it has.
    public func cancelTechnician(_ ticket: TechnicianTicket) {
        technicianQueue.removeAll { $0.id == ticket.id }
        technicianResults[ticket.id] = nil
    }

    private func enqueueTechnician(_ command: ATCommand) -> TechnicianTicket {
        let id = nextTechnicianID
        nextTechnicianID += 1
        technicianQueue.append((id, command))
        return TechnicianTicket(id: id)
    }

    private func startTechnician() {
        let (id, command) = technicianQueue.removeFirst()
        logger.notice("technician: \(command.line)")
        start(command, timeout: configuration.timeouts.command, job: .technician(id))
    }

    private func technicianCompleted(_ id: Int, _ command: ATCommand, _ r: ATResponse) {
        technicianResults[id] = TechnicianResult(command: command.line, response: r)
        if technicianResults.count > 64, let oldest = technicianResults.keys.min() { technicianResults[oldest] = nil }
        switch command {
        case .pinStatus where r.value("+CPIN:")?.unquoted.uppercased() == "READY":
            status.sim = .ready
        case .registration(let d) where r.outcome.isOK:
            status.registration[d] = r.value("+\(d.rawValue):").flatMap(RegistrationState.parseQuery)
            registrationChanged()
        case .signalQuality, .operatorName:
            readStatus(command, r)
        default:
            break
        }
        // A command that got no answer may have left the line in any state: ESC, drain, AT.
        if case .timedOut = r.outcome { recover() }
    }

    // MARK: - Calls

    /// Dials `number` (the counselling line) as soon as the modem is ready.
    public func dial(_ number: PhoneNumber, at instant: Instant) {
        guard !call.isInCall else { return }
        callRequest = .dial(number, since: instant)
        setCall(.dialling(number))
    }

    /// Hangs up (or drops a dial that has not gone out yet).
    public func hangUp() {
        switch call {
        case .dialling where job != .dial:
            callRequest = nil
            setCall(.ended("cancelled"))
        case .dialling, .active:
            callRequest = .hangUp
            setCall(.hangingUp)
        default:
            break
        }
    }

    /// SELECT on the counselling line: dial, or hang up when a call is on.
    public func toggleCall(_ number: PhoneNumber, at instant: Instant) {
        if call.isInCall { hangUp() } else { dial(number, at: instant) }
    }

    // MARK: - Events

    private func process() {
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
            lastPDUWrittenAt = now
            logger.debug("prompt seen; PDU written for \(command.line)")
        case .strayPrompt:
            logger.warning("a '> ' prompt nobody asked for: closed with ESC, nothing typed into it")
            if stage == .ready || stage == .initializing { stage = .syncing; syncAttempts = 0 }
        case .drained:
            break
        case .unrecognized(let line):
            logger.debug("modem said: \(line)")
        }
    }

    private func completed(_ command: ATCommand, _ response: ATResponse) {
        let finishedJob = job
        job = nil
        logger.trace("\(command.logged) → \(response.outcome) \(response.lines)")
        guard let finishedJob else { return }
        switch finishedJob {
        case .sync: syncCompleted(response)
        case .initStep: initCompleted(command, response)
        case .refresh: refreshCompleted(command, response)
        case .pduMode(let id): pduModeCompleted(id, response)
        case .submit(let id, let part): submitCompleted(id, part: part, response)
        case .setServiceCentre: serviceCentreCompleted(response)
        case .heal: automaticOperatorCompleted(response)
        case .dial: dialCompleted(response)
        case .hangUp: hangUpCompleted(response)
        case .technician(let id): technicianCompleted(id, command, response)
        case .reset:
            if response.outcome == .abandoned { return }  // the boot messages came first and took over
            stage = .resetting
            status.link = .resetting
            waitUntil = now + configuration.timeouts.reset
            events.append(.statusChanged)
        }
    }

    private func unsolicited(_ code: UnsolicitedCode) {
        switch code {
        case .boot(let line):
            modemBooted(line)
        case .registration(let domain, let state):
            status.registration[domain] = state
            registrationChanged()
        case .callEnded(let why):
            if call.isInCall {
                callRequest = nil
                setCall(.ended(why))
            }
        case .simStatus(let line):
            let v = String(line.dropFirst(6)).trimmingSpaces
            if v.uppercased() == "READY" {
                status.sim = .ready
            } else if stage == .ready {
                logger.warning("SIM: \(line); checking it again")
                recheckSIM()
            }
        case .power(let line):
            status.lastProblem = "modem power: \(line)"
            // Once a minute at most: a brown-out can repeat this many times a second.
            if lastPowerWarning.map({ now - $0 >= .seconds(60) }) ?? true {
                lastPowerWarning = now
                logger.error("modem: \(line) (check the modem's power supply: it needs 2 A peaks)")
            }
            events.append(.statusChanged)
        case .ring, .newMessage, .statusReport, .signal, .other:
            logger.debug("modem: \(code)")
        }
    }

    // MARK: - Start-up

    private func beginSync(fullInit: Bool) {
        stage = .syncing
        syncAttempts = 0
        waitUntil = nil
        if fullInit {
            initSteps = startupSteps
            pinEntered = false
        }
        status.link = .starting
        engine.escape(at: now, carriageReturn: true, into: &atEvents)
        events.append(.statusChanged)
    }

    /// After a timeout or a stray prompt: ESC (unless the engine just wrote one), drain, `AT`.
    private func recover() {
        if engine.drainingUntil == nil { engine.escape(at: now, into: &atEvents) }
        stage = .syncing
        syncAttempts = 0
    }

    private func syncCompleted(_ r: ATResponse) {
        // An answer to AT that came with other lines (a late +CMGS, its OK) may be someone
        // else's: drain and ask again, a few times, before the next command can be confused.
        let answered: Bool = { switch r.outcome { case .ok, .error, .cmeError, .cmsError: true; default: false } }()
        if resyncAfterSubmit, answered, r.outcome != .ok || !r.lines.isEmpty, contaminatedSyncs < 3 {
            contaminatedSyncs += 1
            logger.notice("resynchronising: AT answered \(r.outcome) with \(r.lines.count) stray line(s); draining and asking again")
            engine.escape(at: now, into: &atEvents)
            return
        }
        switch r.outcome {
        case .ok, .error, .cmeError, .cmsError:
            contaminatedSyncs = 0
            resyncAfterSubmit = false
            syncAttempts = 0
            if initSteps.isEmpty { becomeReady() } else { stage = .initializing }
        case .abandoned:
            break
        default:
            syncAttempts += 1
            if syncAttempts % 5 == 0 { engine.escape(at: now, carriageReturn: true, into: &atEvents) }
            if syncAttempts >= 10 {
                noteProblem("the modem does not answer AT (power, wiring, baud rate \(port.name)?)")
                waitUntil = now + configuration.timeouts.syncAttempt * min(10, syncAttempts / 5)
            }
        }
    }

    private func initCompleted(_ command: ATCommand, _ r: ATResponse) {
        guard initSteps.first == command else { return }
        let timedOut = { if case .timedOut = r.outcome { return true }; return false }()
        if r.outcome == .abandoned { return }
        switch command {
        case .pinStatus:
            guard pinAnswered(r) else { if timedOut { recover() }; return }
        case .enterPIN:
            if !r.outcome.isOK && !timedOut {
                pinRefused = true
                status.sim = Self.pinRefusedState
                logger.error("SIM: the configured PIN was refused (\(r.outcome)); check modem.sim_pin, then restart unwind")
                events.append(.statusChanged)
            }
        case .pduMode:
            if !r.outcome.isOK {
                if timedOut { recover(); return }
                noteProblem("the modem refused PDU mode (AT+CMGF=0: \(r.outcome))")
                waitUntil = now + configuration.timeouts.simProblemRetry
                return
            }
        case .registration(let d):
            if r.outcome.isOK {
                status.registration[d] = r.value("+\(d.rawValue):").flatMap(RegistrationState.parseQuery)
            } else if !timedOut {
                unsupported.insert(d)
                status.registration[d] = nil
            }
            registrationChanged()
        case .signalQuality, .operatorName:
            readStatus(command, r)
        case .serviceCentreQuery:
            checkServiceCentre(r)
        default:
            break  // ATE0, AT+CMEE=1: optional
        }
        initSteps.removeFirst()
        if timedOut { recover(); return }
        if initSteps.isEmpty { becomeReady() }
    }

    /// True when the SIM is ready; otherwise the step is tried again later.
    private func pinAnswered(_ r: ATResponse) -> Bool {
        let value = r.value("+CPIN:")?.unquoted.uppercased()
        if value == "READY" {
            if status.sim != .ready { events.append(.statusChanged) }
            status.sim = .ready
            return true
        }
        var retry = configuration.timeouts.simBusyRetry
        if value == "SIM PIN", let pin = configuration.simPIN, !pinEntered, !pinRefused {
            // The PIN goes first, then AT+CPIN? again.
            pinEntered = true
            status.sim = .locked("entering the configured PIN")
            initSteps.insert(.enterPIN(pin), at: 0)
            return false
        }
        if let v = value, v != "NOT READY" {
            status.sim = v == "SIM PIN" && pinRefused ? Self.pinRefusedState : .locked(v)
            retry = configuration.timeouts.simProblemRetry
        } else if value == "NOT READY" {
            status.sim = .busy
        } else {
            switch r.outcome {
            case .cmeError(let c) where c.number == 10 || c.text.uppercased().contains("NOT INSERTED"):
                status.sim = .absent
                retry = configuration.timeouts.simProblemRetry
            case .cmeError(let c) where c.number == 13 || c.number == 15:
                status.sim = .failed("+CME ERROR: \(c)")
                retry = configuration.timeouts.simProblemRetry
            case .cmeError(let c) where [11, 12, 17, 18].contains(c.number ?? -1):
                status.sim = .locked("+CME ERROR: \(c)")
                retry = configuration.timeouts.simProblemRetry
            case .timedOut:
                return false
            default:
                status.sim = .busy  // +CME ERROR 14 "SIM busy", or a plain ERROR while it starts
            }
        }
        logger.info("SIM: \(status.sim); asking again in \(retry)")
        waitUntil = now + retry
        events.append(.statusChanged)
        return false
    }

    private func becomeReady() {
        stage = .ready
        status.link = .ready
        // A problem the modem got over is history, not the state it is in now.
        if let p = status.lastProblem {
            logger.notice("modem recovered (it was: \(p))")
            status.lastProblem = nil
        }
        nextRefresh = now + (status.isRegistered ? configuration.timeouts.statusRefresh : configuration.timeouts.registrationPoll)
        let op = status.operatorName.map { ", \($0)" } ?? ""
        logger.notice("modem ready: SIM \(status.sim), \(registrationSummary), signal \(status.signal?.description ?? "unknown")\(op)")
        events.append(.statusChanged)
    }

    private func recheckSIM() {
        initSteps = [.pinStatus, .pduMode, .registration(.cs), .registration(.ps), .registration(.eps)]
        for t in tracked.indices { tracked[t].inAttempt = false }
        stage = .initializing
        status.link = .starting
    }

    private func modemBooted(_ line: String) {
        if stage == .resetting || job == .reset {
            logger.notice("modem restarted after AT+CFUN=1,1 (\(line))")
            lastBoot = now
            engine.abandon(into: &atEvents)
            beginSync(fullInit: true)
            return
        }
        if let last = lastBoot, now - last < configuration.timeouts.bootSettle {
            lastBoot = now
            logger.info("modem: \(line)")
            return
        }
        lastBoot = now
        status.restarts += 1
        logger.warning("modem restarted on its own (\(line)): setting it up again; a message in flight is sent again")
        abandonReason = .modemRestarted
        engine.abandon(into: &atEvents)
        for t in tracked.indices { tracked[t].inAttempt = false }
        status.sim = .unknown
        status.registration = [:]
        notRegisteredSince = nil
        if call.isInCall {
            callRequest = nil
            setCall(.ended("modem restarted"))
        }
        beginSync(fullInit: true)
    }

    // MARK: - Status

    private func refreshCompleted(_ command: ATCommand, _ r: ATResponse) {
        if case .timedOut = r.outcome {
            refreshQueue.removeAll()
            recover()
            return
        }
        switch command {
        case .registration(let d):
            if r.outcome.isOK {
                status.registration[d] = r.value("+\(d.rawValue):").flatMap(RegistrationState.parseQuery)
            } else if r.outcome != .abandoned {
                unsupported.insert(d)
            }
            registrationChanged()
        default:
            readStatus(command, r)
        }
    }

    private func readStatus(_ command: ATCommand, _ r: ATResponse) {
        switch command {
        case .signalQuality:
            if let v = r.value("+CSQ:"), let first = splitFields(v).first, let rssi = Int(first) {
                status.signal = SignalQuality(rssi: rssi)
            }
        case .operatorName:
            if let v = r.value("+COPS:") {
                let f = splitFields(v)
                status.operatorName = f.count >= 3 ? f[2].unquoted : nil
                // 27.007 7.3: 0 automatic, 1 manual, 2 deregistered, 4 manual/automatic.
                if let mode = f.first.flatMap({ Int($0) }), mode == 1 || mode == 2 || mode == 4, !automaticOperatorRequested {
                    automaticOperatorRequested = true
                    logger.warning("the modem's operator selection is \(mode == 2 ? "deregistered" : "manual") (AT+COPS mode \(mode), set by hand?); restoring automatic selection")
                }
            }
        default:
            break
        }
        events.append(.statusChanged)
    }

    private func registrationChanged() {
        if status.isRegistered {
            if notRegisteredSince != nil { logger.notice("network: \(registrationSummary)") }
            notRegisteredSince = nil
        } else if status.registration.values.contains(where: { $0 != .unknown }) {
            if notRegisteredSince == nil {
                notRegisteredSince = now
                logger.warning("network: \(registrationSummary); sending waits up to \(configuration.timeouts.registrationPatience)")
            }
        } else {
            notRegisteredSince = nil  // nothing known: the modem decides
        }
        events.append(.statusChanged)
    }

    private var registrationSummary: String {
        if status.registration.isEmpty { return "registration unknown" }
        return RegistrationDomain.allCases.compactMap { d in status.registration[d].map { "\(d.rawValue) \($0)" } }
            .joined(separator: ", ")
    }

    /// Until when sending waits for registration (nil: no wait).
    private var sendingHeldUntil: Instant? {
        guard let since = notRegisteredSince, !status.isRegistered else { return nil }
        let until = since + configuration.timeouts.registrationPatience
        return now < until ? until : nil
    }

    private var canSend: Bool { sendingHeldUntil == nil }

    private func noteProblem(_ problem: String) {
        if status.lastProblem != problem { logger.error("modem: \(problem)") }
        status.lastProblem = problem
        events.append(.statusChanged)
    }

    // MARK: - The next command

    private func pump() {
        guard stage != .closed, engine.isIdle else { return }
        // While set-up waits (a SIM that is not ready), a technician may still ask the modem.
        if stage == .initializing, waitUntil != nil, !technicianQueue.isEmpty {
            startTechnician()
            return
        }
        if let w = waitUntil {
            if now < w { return }
            waitUntil = nil
        }
        let t = configuration.timeouts
        switch stage {
        case .closed:
            return
        case .resetting:
            logger.warning("no boot message after AT+CFUN=1,1; talking to the modem anyway")
            beginSync(fullInit: true)
        case .syncing:
            start(.attention, timeout: t.syncAttempt, job: .sync)
        case .initializing:
            if let step = initSteps.first {
                start(step, timeout: t.command, job: .initStep)
            } else {
                becomeReady()
                pump()
            }
        case .ready:
            if resetRequested {
                resetRequested = false
                logger.warning("restarting the modem (AT+CFUN=1,1) after \(configuration.backoff.resetAfterModemErrors) modem errors in a row")
                start(.reset, timeout: t.command, job: .reset)
                return
            }
            if let request = callRequest {
                callRequest = nil
                switch request {
                case .dial(let n, _): start(.dial(n), timeout: t.dial, job: .dial)
                case .hangUp: start(.hangUp, timeout: t.command, job: .hangUp)
                }
                return
            }
            if automaticOperatorRequested {
                automaticOperatorRequested = false
                start(.automaticOperator, timeout: t.operatorSelection, job: .heal)
                return
            }
            if serviceCentreRequested, let n = configuration.serviceCentre {
                serviceCentreRequested = false
                start(.setServiceCentre(n), timeout: t.command, job: .setServiceCentre)
                return
            }
            if let k = nextMessage() {
                let id = tracked[k].entry.id
                if tracked[k].inAttempt {
                    let part = tracked[k].entry.partsSent
                    let timeout = tracked[k].entry.attempts <= 1 ? min(t.firstSubmit, t.submit) : t.submit
                    // A repeat of the previous reference is dropped on a first attempt only: a modem
                    // that always answers the same reference then costs one resend, not forever.
                    start(.submit(tracked[k].pdus[part]), timeout: timeout, promptTimeout: t.prompt,
                          staleReference: tracked[k].entry.attempts <= 1 ? lastSubmitReference : nil,
                          job: .submit(id, part: part + 1))
                } else {
                    tracked[k].entry.attempts += 1
                    setState(k, .sending)
                    // On the card before the AT+CMGS goes out: the outbox never says "0 attempts"
                    // of a message already on the line.
                    persist(k)
                    start(.pduMode, timeout: t.command, job: .pduMode(id))
                }
                return
            }
            if !technicianQueue.isEmpty {
                startTechnician()
                return
            }
            if refreshQueue.isEmpty, let r = nextRefresh, now >= r {
                refreshQueue = RegistrationDomain.allCases.filter { !unsupported.contains($0) }.map { .registration($0) }
                    + [.signalQuality, .operatorName]
                nextRefresh = now + (status.isRegistered ? t.statusRefresh : t.registrationPoll)
            }
            if !refreshQueue.isEmpty {
                start(refreshQueue.removeFirst(), timeout: t.command, job: .refresh)
            }
        }
    }

    private func start(_ command: ATCommand, timeout: Duration, promptTimeout: Duration = .seconds(5),
                       staleReference: Int? = nil, job: Job) {
        self.job = job
        engine.start(ATRequest(command, timeout: timeout, promptTimeout: promptTimeout, staleReference: staleReference), at: now)
    }

    /// The message to work on: one whose parts are under way first; then, of the due ones, the
    /// one tried least often, oldest first — so every contact's first attempt goes out before
    /// anyone's second, and one contact's trouble never holds the others back.
    private func nextMessage() -> Int? {
        if let until = doubtfulUntil, now >= until { doubtfulUntil = nil }
        if let k = tracked.firstIndex(where: { $0.inAttempt && $0.nextAttempt <= now && !$0.cancelRequested }) { return k }
        guard canSend else { return nil }
        var best: Int?
        for (k, t) in tracked.enumerated() {
            if case .failed = t.state { continue }
            guard t.nextAttempt <= now, !t.cancelRequested else { continue }
            if let b = best, tracked[b].entry.attempts <= t.entry.attempts { continue }
            best = k
        }
        return best
    }

    // MARK: - Sending

    private func pduModeCompleted(_ id: MessageID, _ r: ATResponse) {
        guard let k = index(id) else { return }
        switch r.outcome {
        case .ok:
            tracked[k].inAttempt = true
            if tracked[k].cancelRequested { finishCancel(k) }
        case .abandoned:
            failed(k, abandonReason ?? .noConfirmation, immediate: true)
        case .timedOut:
            failed(k, .modem("no answer to AT+CMGF=0"), immediate: false)
            recover()
        default:
            failed(k, .modem("AT+CMGF=0 answered \(r.outcome)"), immediate: false)
            recheckSIM()
        }
    }

    private func submitCompleted(_ id: MessageID, part: Int, _ r: ATResponse) {
        guard let k = index(id) else {
            if case .submitted = r.outcome { logger.notice("\(id): a cancelled message's part \(part) had already gone") }
            return
        }
        switch r.outcome {
        case .submitted(let mr):
            if let until = doubtfulUntil, now < until {
                logger.warning("\(id): +CMGS: \(mr) came while an earlier message was in doubt until \(until); it may be that one's late answer — this one is in doubt too, sent again after the wait")
                failed(k, .noConfirmation, immediate: false)
                tracked[k].nextAttempt = until
                if case .retrying(let p, _) = tracked[k].state { tracked[k].state = .retrying(p, next: until) }
                return
            }
            partSent(k, part: part, reference: mr)
            return
        case .promptTimedOut, .timedOut(afterPrompt: false):
            failed(k, .noPrompt, immediate: true)
            resyncAfterSubmit = true
            recover()
        case .timedOut(afterPrompt: true), .ok:
            failed(k, .noConfirmation, immediate: true)
            resyncAfterSubmit = true
            if let written = lastPDUWrittenAt {
                let until = written + configuration.timeouts.submit
                doubtfulUntil = max(doubtfulUntil ?? until, until)
            }
            recover()
        case .cmsError(let code):
            cmsError(k, code)
        case .error:
            modemError(k, "ERROR")
        case .cmeError(let c):
            modemError(k, "+CME ERROR: \(c)")
        case .abandoned:
            failed(k, abandonReason ?? .noConfirmation, immediate: true)
        case .callEnded(let what):
            modemError(k, what)
        }
        if let k = index(id), tracked[k].cancelRequested { finishCancel(k) }
    }

    private func partSent(_ k: Int, part: Int, reference: Int) {
        lastSubmitReference = reference
        modemErrorStreak = 0
        tracked[k].streak = 0
        tracked[k].entry.partsSent = max(tracked[k].entry.partsSent, part)
        let t = tracked[k]
        logger.notice("\(t.entry.id): part \(part)/\(t.pdus.count) to \(t.entry.alert.number.text) accepted (+CMGS: \(reference))")
        if t.entry.partsSent >= t.pdus.count {
            do { try outbox.remove(t.entry.id) } catch {
                logger.error("outbox: \(t.entry.id) was sent but could not be removed (\(error)); it may be sent again after a restart")
            }
            tracked[k].state = .sent(at: wall)
            finished.append(statusOf(tracked[k]))
            if finished.count > 20 { finished.removeFirst(finished.count - 20) }
            tracked.remove(at: k)
            events.append(.messageSent(t.entry.id))
            events.append(.statusChanged)
        } else if t.cancelRequested {
            finishCancel(k)
        } else {
            persist(k)
        }
    }

    private func cmsError(_ k: Int, _ code: ATErrorCode) {
        guard let n = code.number else {
            modemError(k, "+CMS ERROR: \(code)")
            return
        }
        switch n {
        case 1:
            failed(k, .unassignedNumber(tracked[k].entry.alert.number), immediate: false)
        case 330:
            if let centre = configuration.serviceCentre {
                serviceCentreRequested = true
                status.serviceCentre = "the SIM had none; setting \(centre.text) from the configuration"
                failed(k, .noServiceCentre(configured: true), immediate: true)
            } else {
                status.serviceCentre = "missing: the SIM has none; set modem.service_centre in the configuration (/etc/unwind/unwind.conf) and restart unwind"
                failed(k, .noServiceCentre(configured: false), immediate: false)
            }
        case 310...316:
            failed(k, .sim(code: n), immediate: false)
            recheckSIM()
        case 500:
            modemError(k, "+CMS ERROR: 500")
        case 2...127, 512...514, 331, 332:
            failed(k, .network(code: n), immediate: false)
        default:
            failed(k, .rejected(code: n), immediate: false)
        }
    }

    private func modemError(_ k: Int, _ what: String) {
        failed(k, .modem(what), immediate: false)
        modemErrorStreak += 1
        if modemErrorStreak >= configuration.backoff.resetAfterModemErrors {
            modemErrorStreak = 0
            resetRequested = true
        }
    }

    /// Records a failed attempt and schedules the next: now for the first in-doubt or no-prompt
    /// failure in a row, otherwise after backoff with jitter. Only an unassigned number stops.
    private func failed(_ k: Int, _ problem: SendProblem, immediate: Bool) {
        tracked[k].streak += 1
        tracked[k].inAttempt = false
        tracked[k].lastProblem = problem
        tracked[k].entry.history.append(OutboxAttempt(at: wall, problem: problem.description))
        let id = tracked[k].entry.id
        if problem.isPermanent {
            tracked[k].entry.failure = problem.description
            tracked[k].state = .failed(problem)
            logger.error("\(id): \(problem); not retried until asked")
            events.append(.messageFailed(id, problem))
        } else {
            let streak = tracked[k].streak
            let delay = immediate && streak <= 1 ? .zero : configuration.backoff.delay(after: streak, random: &random)
            tracked[k].nextAttempt = now + delay
            tracked[k].state = .retrying(problem, next: now + delay)
            logger.warning("\(id): \(problem); attempt \(tracked[k].entry.attempts) failed, next in \(delay)")
            events.append(.messageRetrying(id, problem))
        }
        persist(k)
        events.append(.statusChanged)
    }

    private func finishCancel(_ k: Int) {
        let id = tracked[k].entry.id
        do { try outbox.remove(id) } catch { logger.error("outbox: could not remove cancelled \(id): \(error)") }
        tracked[k].state = .cancelled
        finished.append(statusOf(tracked[k]))
        if finished.count > 20 { finished.removeFirst(finished.count - 20) }
        tracked.remove(at: k)
        logger.notice("\(id) cancelled")
        events.append(.statusChanged)
    }

    private func automaticOperatorCompleted(_ r: ATResponse) {
        if r.outcome.isOK {
            logger.notice("automatic operator selection restored (AT+COPS=0)")
        } else {
            noteProblem("the modem refused automatic operator selection (AT+COPS=0: \(r.outcome))")
            if case .timedOut = r.outcome { recover() }
        }
        nextRefresh = now  // registration, signal and operator read again at once
        events.append(.statusChanged)
    }

    /// `+CSCA: "<number>",<type>` against the configured centre; a different one is replaced.
    private func checkServiceCentre(_ r: ATResponse) {
        guard let wanted = configuration.serviceCentre else { return }
        let current = r.value("+CSCA:").flatMap { splitFields($0).first?.unquoted }
        if current != wanted.text {
            serviceCentreRequested = true
            logger.warning("the SIM's service centre is \(current.map { "\"\($0)\"" } ?? "unknown"); setting \(wanted.text) from the configuration")
        }
    }

    private func serviceCentreCompleted(_ r: ATResponse) {
        if r.outcome.isOK {
            status.serviceCentre = "set to \(configuration.serviceCentre?.text ?? "?") from the configuration"
        } else {
            status.serviceCentre = "could not be set (\(r.outcome))"
            if case .timedOut = r.outcome { recover() }
        }
        logger.notice("service centre: \(status.serviceCentre ?? "")")
        events.append(.statusChanged)
    }

    private func persist(_ k: Int) {
        guard tracked[k].journaled else { return }
        do { try outbox.save(tracked[k].entry) } catch {
            logger.error("outbox: could not update \(tracked[k].entry.id): \(error)")
        }
    }

    private func track(_ entry: OutboxEntry, journaled: Bool, at instant: Instant = .zero) {
        var t = Tracked(entry: entry, pdus: [], state: .queued, nextAttempt: instant, journaled: journaled)
        do {
            t.pdus = try SMSPDU.encode(entry.alert.message, to: entry.alert.number, reference: entry.reference,
                                       options: SMSSubmitOptions(validity: configuration.validity))
        } catch {
            t.state = .failed(.rejected(code: 0))
        }
        if entry.failure != nil {  // only an unassigned number stops a message
            t.state = .failed(.unassignedNumber(entry.alert.number))
            t.lastProblem = .unassignedNumber(entry.alert.number)
        }
        if t.entry.partsSent >= t.pdus.count && !t.pdus.isEmpty { t.entry.partsSent = 0 }  // never trust a count beyond the parts
        tracked.append(t)
    }

    private func index(_ id: MessageID) -> Int? { tracked.firstIndex { $0.entry.id == id } }

    private func isInFlight(_ id: MessageID) -> Bool {
        switch job {
        case .pduMode(id): true
        case .submit(id, _): true
        default: false
        }
    }

    private func setState(_ k: Int, _ s: MessageState) {
        tracked[k].state = s
        events.append(.statusChanged)
    }

    private func statusOf(_ t: Tracked) -> MessageStatus {
        MessageStatus(id: t.entry.id, slot: t.entry.slot, contactName: t.entry.alert.name, number: t.entry.alert.number,
                      state: t.state, attempts: t.entry.attempts, partsSent: t.entry.partsSent, parts: t.pdus.count,
                      lastProblem: t.lastProblem, journaled: t.journaled)
    }

    // MARK: - Calls

    private func dialCompleted(_ r: ATResponse) {
        guard case .dialling(let n) = call else {
            if call == .hangingUp, r.outcome.isOK { callRequest = .hangUp }
            return
        }
        switch r.outcome {
        case .ok: setCall(.active(n))
        case .callEnded(let why): setCall(.ended(why))
        case .timedOut:
            setCall(.failed("no answer from the modem"))
            recover()
        case .abandoned: setCall(.failed("the modem restarted"))
        default: setCall(.failed("the modem refused the call (\(r.outcome))"))
        }
    }

    private func hangUpCompleted(_ r: ATResponse) {
        if r.outcome.isOK || r.outcome == .abandoned {
            setCall(.ended("hung up"))
        } else {
            setCall(.failed("could not hang up (\(r.outcome))"))
            if case .timedOut = r.outcome { recover() }
        }
    }

    private func expireCallRequest() {
        if case .dial(_, let since) = callRequest, now - since >= configuration.timeouts.dialPatience {
            callRequest = nil
            setCall(.failed("the modem is not ready"))
        }
    }

    private func setCall(_ c: CallState) {
        if call != c {
            call = c
            events.append(.callChanged(c))
        }
    }

    // MARK: - The line

    private func openIfDue() {
        if let r = reopenAt, now < r { return }
        do {
            try port.open()
        } catch {
            reopenFailures += 1
            let b = configuration.backoff
            let delay = b.delay(after: reopenFailures, first: b.reopenFirst, maximum: b.reopenMaximum, random: &random)
            reopenAt = now + delay
            let why = error.description
            if status.link != .closed(why) {
                logger.error("\(why); trying again")
                status.link = .closed(why)
                events.append(.statusChanged)
            }
            return
        }
        logger.notice("modem line \(port.name) open")
        reopenFailures = 0
        reopenAt = nil
        lastBoot = nil
        pending.removeAll()
        beginSync(fullInit: true)
    }

    private func lineLost(_ error: DeviceError) {
        logger.error("\(error)")
        dropLine()
        status.link = .closed(error.description)
        reopenFailures = 1
        let b = configuration.backoff
        reopenAt = now + b.delay(after: 1, first: b.reopenFirst, maximum: b.reopenMaximum, random: &random)
        events.append(.statusChanged)
    }

    /// Closes the tty and forgets the conversation: what was in flight is abandoned (a message
    /// on its way is sent again after the reopen), nothing stale is written later.
    private func dropLine() {
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
        for t in tracked.indices { tracked[t].inAttempt = false }
        if call.isInCall {
            callRequest = nil
            setCall(.ended("the modem's line was lost"))
        }
        stage = .closed
        status.sim = .unknown
        status.registration = [:]
        events.append(.statusChanged)
    }

    private func flush() {
        engine.takeOutput(into: &pending)
        guard !pending.isEmpty, stage != .closed else { return }
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

/// A queued technician's command or start-up check.
public struct TechnicianTicket: Hashable, Sendable {
    public let id: Int
}

/// How a technician's command (or a start-up check step) ended.
public struct TechnicianResult: Equatable, Sendable {
    /// The command line as sent.
    public var command: String
    public var response: ATResponse
}

/// A random source behind one concrete type (the session is not generic over it).
struct AnyRandom: RandomNumberGenerator {
    var base: any RandomNumberGenerator
    init(_ base: some RandomNumberGenerator) { self.base = base }
    mutating func next() -> UInt64 { base.next() }
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
