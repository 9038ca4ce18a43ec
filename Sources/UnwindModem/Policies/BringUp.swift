import Logging
import UnwindCore

/// Getting the modem to the point where an alert can go: `AT` until it answers (autobaud, a
/// modem still booting), the start-up commands, the SIM (waited through while busy, its PIN
/// entered once), and starting over whenever the modem restarts — on its own, or with
/// AT+CFUN=1,1 after several modem errors in a row.
///
/// Start-up: ESC + CR (a stuck prompt), `AT` until OK, ATE0, AT+CMEE=1, AT+CPIN?, AT+CMGF=0,
/// AT+CREG? / AT+CGREG? / AT+CEREG?, AT+CSQ, AT+COPS?, AT+CSCA?, then what receiving needs:
/// AT+CSMS? (must +CDS be acknowledged), AT+CPMS="SM","SM","SM" (one store for everything) and
/// AT+CNMI (status reports inline, else stored, else none: see `MessageIndications`). Optional
/// commands that answer ERROR are skipped; any command that times out is followed by ESC, drain
/// and `AT` before anything else is sent.
struct BringUp {
    enum Stage: Equatable { case syncing, initializing, ready, resetting }
    enum Job: Equatable { case sync, step, restart }

    /// What the arbiter does next on bring-up's word.
    enum Next: Equatable {
        case send(ATRequest, Job)
        /// Nothing may go out yet (a wait, or the drain after an ESC).
        case hold
        /// The modem is set up: the others may ask.
        case ready
    }

    /// The full start-up after the line answers `AT`.
    static let startup: [ATCommand] = [
        .echoOff, .numericErrors, .pinStatus, .pduMode,
        .registration(.cs), .registration(.ps), .registration(.eps), .signalQuality, .operatorName, .serviceCentreQuery,
        .messageService, .messageStorage, .messageIndications(.inlineReports),
    ]

    /// The self-test's checks: nothing is set, nothing is sent.
    static let checks: [ATCommand] = [
        .attention, .pinStatus, .registration(.cs), .registration(.ps), .registration(.eps), .signalQuality, .operatorName,
        .serviceCentreQuery,
    ]

    static let pinRefusedState = SIMState.locked("the SIM refused the configured PIN (modem.sim_pin); not tried again, so the SIM does not lock")

    let configuration: ModemConfiguration
    let portName: String
    let logger: Logger
    private(set) var stage: Stage = .syncing
    var syncAttempts = 0
    private(set) var steps: [ATCommand] = []
    /// The configured PIN was sent since the modem last started; and whether the SIM refused it
    /// (then never again: a SIM locks after three wrong PINs).
    var pinEntered = false
    var pinRefused = false
    /// Nothing is sent before then (a SIM not ready, a modem that does not answer, a restart).
    private(set) var waitUntil: Instant?
    var lastBoot: Instant?
    /// When the device first spoke to this modem (its first set-up began).
    private var firstSpoken: Instant?
    /// Set by a submit that failed after AT+CMGS went out: its answer may still come, so the
    /// resynchronisation takes only a clean `OK` to `AT` (nothing else in its window) as the
    /// line being quiet.
    var resyncAfterSubmit = false
    /// AT answers during such a resynchronisation that came with someone else's lines.
    var contaminatedSyncs = 0
    var restartRequested = false
    /// The start-up steps ran (not just a resynchronisation): the store is listed once ready.
    private var listStoreWhenReady = false

    init(configuration: ModemConfiguration, portName: String, logger: Logger) {
        self.configuration = configuration
        self.portName = portName
        self.logger = logger
    }

    /// Every (re)initialisation asserts what the panic path needs, so a modem someone changed
    /// by hand heals itself: no echo, numeric errors, PDU mode, automatic operator selection
    /// (read with AT+COPS?), and the configured service centre (AT+CSCA?).
    var startupSteps: [ATCommand] { Self.startup }

    /// Set-up waits for the SIM: a technician may still ask the modem meanwhile.
    var isWaitingForSIM: Bool { stage == .initializing && waitUntil != nil }

    // MARK: The next command

    mutating func next(_ ctx: inout PolicyContext, _ refresh: inout StatusRefresh) -> Next {
        if let w = waitUntil {
            if ctx.now < w { return .hold }
            waitUntil = nil
        }
        let t = configuration.timeouts
        switch stage {
        case .resetting:
            logger.warning("no boot message after AT+CFUN=1,1; talking to the modem anyway")
            beginSync(fullInit: true, &ctx)
            return .hold
        case .syncing:
            return .send(ATRequest(.attention, timeout: t.syncAttempt), .sync)
        case .initializing:
            if let step = steps.first { return .send(ATRequest(step, timeout: t.command), .step) }
            becomeReady(&ctx, &refresh)
        case .ready:
            break
        }
        if restartRequested {
            restartRequested = false
            logger.warning("restarting the modem (AT+CFUN=1,1) after \(configuration.backoff.resetAfterModemErrors) modem errors in a row")
            return .send(ATRequest(.reset, timeout: t.command), .restart)
        }
        return .ready
    }

    // MARK: Starting over

    /// From the top: ESC + CR, `AT`, and (`fullInit`) every start-up step.
    mutating func beginSync(fullInit: Bool, _ ctx: inout PolicyContext) {
        if firstSpoken == nil { firstSpoken = ctx.now }
        stage = .syncing
        syncAttempts = 0
        waitUntil = nil
        if fullInit {
            steps = startupSteps
            pinEntered = false
            listStoreWhenReady = true
        }
        ctx.status.link = .starting
        ctx.requests.append(.escape(carriageReturn: true))
        ctx.statusChanged()
    }

    /// After a timeout or a stray prompt: `AT` before anything else (the arbiter writes the ESC).
    mutating func resynchronise(afterSubmit: Bool) {
        if afterSubmit { resyncAfterSubmit = true }
        stage = .syncing
        syncAttempts = 0
    }

    mutating func strayPrompt() {
        if stage == .ready || stage == .initializing {
            stage = .syncing
            syncAttempts = 0
        }
    }

    /// PIN, PDU mode and registration again (the arbiter restarts the attempts under way).
    mutating func checkSIMAgain(_ ctx: inout PolicyContext) {
        steps = [.pinStatus, .pduMode, .registration(.cs), .registration(.ps), .registration(.eps)]
        stage = .initializing
        listStoreWhenReady = true  // perhaps another SIM, with its own store
        ctx.status.link = .starting
    }

    /// What a boot message means.
    enum Boot: Equatable {
        /// The restart asked for with AT+CFUN=1,1 is done.
        case afterRestart
        /// Another line of a boot already seen.
        case sameBoot
        /// The modem restarted on its own: whatever was in flight is lost.
        case unexpected
    }

    /// What a modem says first when it starts (SIM800 and Quectel: RDY; SIMCom LTE: START).
    static let firstWords: Set<String> = ["RDY", "START"]

    mutating func booted(_ line: String, restartInFlight: Bool, _ ctx: inout PolicyContext) -> Boot {
        if stage == .resetting || restartInFlight {
            logger.notice("modem restarted after AT+CFUN=1,1 (\(line))")
            lastBoot = ctx.now
            return .afterRestart
        }
        if let last = lastBoot, ctx.now - last < configuration.timeouts.bootSettle {
            lastBoot = ctx.now
            logger.info("modem: \(line)")
            return .sameBoot
        }
        // RDY and START are a modem's first words after power-on; the other start-up lines come
        // later in the same start, often after the device has set the modem up.
        if !Self.firstWords.contains(line), let since = lastBoot ?? firstSpoken, ctx.now - since < configuration.timeouts.lateStartup {
            logger.info("modem: \(line) (its start-up finishing, not a restart)")
            return .sameBoot
        }
        lastBoot = ctx.now
        ctx.status.restarts += 1
        logger.warning("modem restarted on its own (\(line)): setting it up again; a message in flight is sent again")
        return .unexpected
    }

    /// An unsolicited `+CPIN: …`. True when the SIM must be checked again.
    mutating func simAnnounced(_ line: String, _ ctx: inout PolicyContext) -> Bool {
        let v = String(line.dropFirst(6)).trimmingSpaces
        if v.uppercased() == "READY" {
            ctx.status.sim = .ready
            return false
        }
        guard stage == .ready else { return false }
        // What the modem says of its SIM is the state now; AT+CPIN? then tells the rest.
        switch v.uppercased() {
        case "NOT INSERTED", "REMOVED": ctx.status.sim = .absent
        case "NOT READY": ctx.status.sim = .busy
        case let other where other.hasPrefix("SIM P") || other.hasPrefix("PH-"): ctx.status.sim = .locked(v)
        default: break
        }
        ctx.statusChanged()
        logger.warning("SIM: \(line); checking it again")
        return true
    }

    // MARK: Answers

    mutating func completed(_ job: Job, _ command: ATCommand, _ r: ATResponse,
                            _ ctx: inout PolicyContext, _ refresh: inout StatusRefresh) {
        switch job {
        case .sync: syncCompleted(r, &ctx, &refresh)
        case .step: stepCompleted(command, r, &ctx, &refresh)
        case .restart:
            if r.outcome == .abandoned { return }  // the boot messages came first and took over
            stage = .resetting
            ctx.status.link = .resetting
            waitUntil = ctx.now + configuration.timeouts.reset
            ctx.statusChanged()
        }
    }

    private mutating func syncCompleted(_ r: ATResponse, _ ctx: inout PolicyContext, _ refresh: inout StatusRefresh) {
        // An answer to AT that came with other lines (a late +CMGS, its OK) may be someone
        // else's: drain and ask again, a few times, before the next command can be confused.
        let answered: Bool = { switch r.outcome { case .ok, .error, .cmeError, .cmsError: true; default: false } }()
        if resyncAfterSubmit, answered, r.outcome != .ok || !r.lines.isEmpty, contaminatedSyncs < 3 {
            contaminatedSyncs += 1
            logger.notice("resynchronising: AT answered \(r.outcome) with \(r.lines.count) stray line(s); draining and asking again")
            ctx.requests.append(.escape(carriageReturn: false))
            return
        }
        switch r.outcome {
        case .ok, .error, .cmeError, .cmsError:
            contaminatedSyncs = 0
            resyncAfterSubmit = false
            syncAttempts = 0
            if steps.isEmpty { becomeReady(&ctx, &refresh) } else { stage = .initializing }
        case .abandoned:
            break
        default:
            syncAttempts += 1
            if syncAttempts % 5 == 0 { ctx.requests.append(.escape(carriageReturn: true)) }
            if syncAttempts >= 10 {
                ctx.noteProblem("the modem does not answer AT (power, wiring, baud rate \(portName)?)", logger)
                waitUntil = ctx.now + configuration.timeouts.syncAttempt * min(10, syncAttempts / 5)
            }
        }
    }

    private mutating func stepCompleted(_ command: ATCommand, _ r: ATResponse,
                                        _ ctx: inout PolicyContext, _ refresh: inout StatusRefresh) {
        guard steps.first == command else { return }
        let timedOut = { if case .timedOut = r.outcome { return true }; return false }()
        if r.outcome == .abandoned { return }
        switch command {
        case .pinStatus:
            guard pinAnswered(r, &ctx) else {
                if timedOut { ctx.requests.append(.resynchronise(afterSubmit: false)) }
                return
            }
        case .enterPIN:
            if !r.outcome.isOK && !timedOut {
                pinRefused = true
                ctx.status.sim = Self.pinRefusedState
                logger.error("SIM: the configured PIN was refused (\(r.outcome)); check modem.sim_pin, then restart unwind")
                ctx.statusChanged()
            }
        case .pduMode:
            if !r.outcome.isOK {
                if timedOut {
                    ctx.requests.append(.resynchronise(afterSubmit: false))
                    return
                }
                ctx.noteProblem("the modem refused PDU mode (AT+CMGF=0: \(r.outcome))", logger)
                waitUntil = ctx.now + configuration.timeouts.simProblemRetry
                return
            }
        case .registration(let d):
            refresh.startUpRegistration(d, r, timedOut: timedOut, &ctx)
        case .signalQuality, .operatorName:
            refresh.read(command, r, &ctx)
        case .serviceCentreQuery:
            refresh.checkServiceCentre(r, &ctx)
        case .messageService:
            ctx.status.messageService = r.value("+CSMS:").flatMap { splitFields($0).first }.flatMap { Int($0) }
        case .messageStorage:
            if r.outcome.isOK {
                ctx.messageStoreName = "SM"
                StatusRefresh.readStore(r, &ctx)
            } else {
                ctx.messageStoreName = nil
                logger.notice("the modem refused AT+CPMS=\"SM\",\"SM\",\"SM\" (\(r.outcome)); its own message store is used")
            }
        case .messageIndications(let m):
            if r.outcome.isOK {
                ctx.status.statusReports = m.routing
                if !m.routing.reportsArrive { logger.warning("status reports: \(m.routing)") }
            } else if !timedOut {
                steps.removeFirst()
                if let next = m.fallback {
                    logger.notice("AT+CNMI=\(m.parameters) refused (\(r.outcome)); trying AT+CNMI=\(next.parameters)")
                    steps.insert(.messageIndications(next), at: 0)
                } else {
                    ctx.status.statusReports = .unavailable("the modem refused every AT+CNMI setting; replies are collected by listing the SIM")
                    logger.warning("status reports: \(ctx.status.statusReports)")
                }
                if steps.isEmpty { becomeReady(&ctx, &refresh) }
                return
            }
        default:
            break  // ATE0, AT+CMEE=1: optional
        }
        steps.removeFirst()
        if timedOut {
            ctx.requests.append(.resynchronise(afterSubmit: false))
            return
        }
        if steps.isEmpty { becomeReady(&ctx, &refresh) }
    }

    /// True when the SIM is ready; otherwise the step is tried again later.
    private mutating func pinAnswered(_ r: ATResponse, _ ctx: inout PolicyContext) -> Bool {
        let value = r.value("+CPIN:")?.unquoted.uppercased()
        if value == "READY" {
            if ctx.status.sim != .ready { ctx.statusChanged() }
            ctx.status.sim = .ready
            return true
        }
        var retry = configuration.timeouts.simBusyRetry
        if value == "SIM PIN", let pin = configuration.simPIN, !pinEntered, !pinRefused {
            // The PIN goes first, then AT+CPIN? again.
            pinEntered = true
            ctx.status.sim = .locked("entering the configured PIN")
            steps.insert(.enterPIN(pin), at: 0)
            return false
        }
        if let v = value, v != "NOT READY" {
            ctx.status.sim = v == "SIM PIN" && pinRefused ? Self.pinRefusedState : .locked(v)
            retry = configuration.timeouts.simProblemRetry
        } else if value == "NOT READY" {
            ctx.status.sim = .busy
        } else {
            switch r.outcome {
            case .cmeError(let c) where c.number == 10 || c.text.uppercased().contains("NOT INSERTED"):
                ctx.status.sim = .absent
                retry = configuration.timeouts.simProblemRetry
            case .cmeError(let c) where c.number == 13 || c.number == 15:
                ctx.status.sim = .failed("+CME ERROR: \(c)")
                retry = configuration.timeouts.simProblemRetry
            case .cmeError(let c) where [11, 12, 17, 18].contains(c.number ?? -1):
                ctx.status.sim = .locked("+CME ERROR: \(c)")
                retry = configuration.timeouts.simProblemRetry
            case .timedOut:
                return false
            default:
                ctx.status.sim = .busy  // +CME ERROR 14 "SIM busy", or a plain ERROR while it starts
            }
        }
        logger.info("SIM: \(ctx.status.sim); asking again in \(retry)")
        waitUntil = ctx.now + retry
        ctx.statusChanged()
        return false
    }

    private mutating func becomeReady(_ ctx: inout PolicyContext, _ refresh: inout StatusRefresh) {
        stage = .ready
        ctx.status.link = .ready
        // A problem the modem got over is history, not the state it is in now.
        if let p = ctx.status.lastProblem {
            logger.notice("modem recovered (it was: \(p))")
            ctx.status.lastProblem = nil
        }
        refresh.modemReady(&ctx)
        if listStoreWhenReady {
            listStoreWhenReady = false
            ctx.requests.append(.modemReady)
        }
        let s = ctx.status
        let op = s.operatorName.map { ", \($0)" } ?? ""
        logger.notice("modem ready: SIM \(s.sim), \(s.registrationSummary), signal \(s.signal?.description ?? "unknown")\(op)")
        ctx.statusChanged()
    }
}
