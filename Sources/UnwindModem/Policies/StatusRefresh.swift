import Logging
import UnwindCore

/// What the modem is known to be — registration, signal, operator, service centre — kept
/// fresh while it is idle, and healed when someone changed it by hand: automatic operator
/// selection (AT+COPS=0) after a manual or deregistered one, the configured service centre
/// (AT+CSCA) when the SIM has none or another. It also holds sending back for a while when the
/// modem says it is not registered.
struct StatusRefresh {
    enum Job: Equatable { case refresh, automaticOperator, serviceCentre }

    let configuration: ModemConfiguration
    let logger: Logger
    /// Registration queries the modem answered ERROR to: not asked again.
    var unsupported: Set<RegistrationDomain> = []
    var notRegisteredSince: Instant?
    /// When registration, signal and operator are read next.
    var fullRefreshAt: Instant?
    /// When registration alone is read next: readiness follows a network lost or found within
    /// `registrationPoll`, whether the modem announces it or not.
    var registrationCheckAt: Instant?
    /// The earlier of the two.
    var nextRefresh: Instant? {
        get { [fullRefreshAt, registrationCheckAt].compactMap { $0 }.min() }
        set {
            fullRefreshAt = newValue
            registrationCheckAt = newValue
        }
    }
    var queue: [ATCommand] = []
    /// The modem reported a manual or deregistered operator selection: AT+COPS=0 before anything.
    var automaticOperatorRequested = false
    var serviceCentreRequested = false
    /// The last time a power warning was logged (a modem can repeat it many times a second).
    var lastPowerWarning: Instant?

    init(configuration: ModemConfiguration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
    }

    /// Something to do at once (a heal, or a refresh under way).
    var hasWork: Bool { !queue.isEmpty || serviceCentreRequested || automaticOperatorRequested }

    // MARK: The next command

    /// A heal asked for, in the ready modem's turn after calls and before alerts.
    mutating func nextHeal() -> (ATRequest, Job)? {
        let t = configuration.timeouts
        if automaticOperatorRequested {
            automaticOperatorRequested = false
            return (ATRequest(.automaticOperator, timeout: t.operatorSelection), .automaticOperator)
        }
        if serviceCentreRequested, let n = configuration.serviceCentre {
            serviceCentreRequested = false
            return (ATRequest(.setServiceCentre(n), timeout: t.command), .serviceCentre)
        }
        return nil
    }

    /// Registration, signal and operator, one at a time, once the refresh is due (last: alerts
    /// and the technician go first).
    mutating func nextQuery(_ ctx: inout PolicyContext) -> (ATRequest, Job)? {
        let t = configuration.timeouts
        let registration = RegistrationDomain.allCases.filter { !unsupported.contains($0) }.map { ATCommand.registration($0) }
        if queue.isEmpty, let r = fullRefreshAt, ctx.now >= r {
            queue = registration + [.signalQuality, .operatorName]
            fullRefreshAt = ctx.now + (ctx.status.isRegistered ? t.statusRefresh : t.registrationPoll)
            registrationCheckAt = ctx.now + t.registrationPoll
        } else if queue.isEmpty, let r = registrationCheckAt, ctx.now >= r {
            queue = registration
            registrationCheckAt = ctx.now + t.registrationPoll
        }
        if queue.isEmpty { return nil }
        return (ATRequest(queue.removeFirst(), timeout: t.command), .refresh)
    }

    /// The modem is set up: the first refresh after the usual period (sooner while unregistered).
    mutating func modemReady(_ ctx: inout PolicyContext) {
        let t = configuration.timeouts
        fullRefreshAt = ctx.now + (ctx.status.isRegistered ? t.statusRefresh : t.registrationPoll)
        registrationCheckAt = ctx.now + t.registrationPoll
    }

    /// The modem said it has no network (`+CMS ERROR: 331`, "no network service"): readiness
    /// says so at once, and registration is read again at once to learn more.
    mutating func networkRefused(_ why: String, _ ctx: inout PolicyContext) {
        for d in RegistrationDomain.allCases where !unsupported.contains(d) {
            ctx.status.registration[d] = .notRegistered
        }
        logger.warning("network: \(why); not registered until the modem says otherwise")
        registrationChanged(&ctx)
        registrationCheckAt = ctx.now
    }

    /// Until when sending waits for registration (nil: no wait). Once the patience is over the
    /// modem decides: it may know better than its own registration report.
    func sendingHeldUntil(_ ctx: PolicyContext) -> Instant? {
        guard let since = notRegisteredSince, !ctx.status.isRegistered else { return nil }
        let until = since + configuration.timeouts.registrationPatience
        return ctx.now < until ? until : nil
    }

    // MARK: Answers

    mutating func completed(_ job: Job, _ command: ATCommand, _ r: ATResponse, _ ctx: inout PolicyContext) {
        switch job {
        case .refresh: refreshCompleted(command, r, &ctx)
        case .automaticOperator: automaticOperatorCompleted(r, &ctx)
        case .serviceCentre: serviceCentreCompleted(r, &ctx)
        }
    }

    private mutating func refreshCompleted(_ command: ATCommand, _ r: ATResponse, _ ctx: inout PolicyContext) {
        if case .timedOut = r.outcome {
            queue.removeAll()
            ctx.requests.append(.resynchronise(afterSubmit: false))
            return
        }
        switch command {
        case .registration(let d):
            if r.outcome.isOK {
                ctx.status.registration[d] = r.value("+\(d.rawValue):").flatMap(RegistrationState.parseQuery)
            } else if r.outcome != .abandoned {
                unsupported.insert(d)
            }
            registrationChanged(&ctx)
        default:
            read(command, r, &ctx)
        }
    }

    private mutating func automaticOperatorCompleted(_ r: ATResponse, _ ctx: inout PolicyContext) {
        if r.outcome.isOK {
            logger.notice("automatic operator selection restored (AT+COPS=0)")
        } else {
            ctx.noteProblem("the modem refused automatic operator selection (AT+COPS=0: \(r.outcome))", logger)
            if case .timedOut = r.outcome { ctx.requests.append(.resynchronise(afterSubmit: false)) }
        }
        nextRefresh = ctx.now  // registration, signal and operator read again at once
        ctx.statusChanged()
    }

    private func serviceCentreCompleted(_ r: ATResponse, _ ctx: inout PolicyContext) {
        if r.outcome.isOK {
            ctx.status.serviceCentre = "set to \(configuration.serviceCentre?.text ?? "?") from the configuration"
        } else {
            ctx.status.serviceCentre = "could not be set (\(r.outcome))"
            if case .timedOut = r.outcome { ctx.requests.append(.resynchronise(afterSubmit: false)) }
        }
        logger.notice("service centre: \(ctx.status.serviceCentre ?? "")")
        ctx.statusChanged()
    }

    /// A registration query during start-up: one the modem refuses is not asked again.
    mutating func startUpRegistration(_ d: RegistrationDomain, _ r: ATResponse, timedOut: Bool, _ ctx: inout PolicyContext) {
        if r.outcome.isOK {
            ctx.status.registration[d] = r.value("+\(d.rawValue):").flatMap(RegistrationState.parseQuery)
        } else if !timedOut {
            unsupported.insert(d)
            ctx.status.registration[d] = nil
        }
        registrationChanged(&ctx)
    }

    /// A technician's command whose answer the status shows too (`unwind modem check`).
    mutating func technicianAnswered(_ command: ATCommand, _ r: ATResponse, _ ctx: inout PolicyContext) {
        switch command {
        case .pinStatus where r.value("+CPIN:")?.unquoted.uppercased() == "READY":
            ctx.status.sim = .ready
        case .registration(let d) where r.outcome.isOK:
            ctx.status.registration[d] = r.value("+\(d.rawValue):").flatMap(RegistrationState.parseQuery)
            registrationChanged(&ctx)
        case .signalQuality, .operatorName:
            read(command, r, &ctx)
        case .serviceCentreQuery where r.outcome.isOK:
            let current = r.value("+CSCA:").flatMap { splitFields($0).first?.unquoted }
            let digits = current.map { $0.filter(\.isASCII).filter(\.isNumber).count } ?? 0
            ctx.status.serviceCentreKnown = digits >= 3 || configuration.serviceCentre != nil
            ctx.status.simServiceCentre = Self.centreNumber(current)
            ctx.statusChanged()
        default:
            break
        }
    }

    /// `+CPMS: <used1>,<total1>,…`: how full the store reads from is.
    static func readStore(_ r: ATResponse, _ ctx: inout PolicyContext) {
        let f = r.value("+CPMS:").map(splitFields) ?? []
        if f.count >= 2, let used = Int(f[0]), let total = Int(f[1]), used >= 0, total >= 0 {
            ctx.status.messageStore = (used, total)
        }
    }

    /// AT+CSQ and AT+COPS?; a manual or deregistered operator selection asks for the heal.
    mutating func read(_ command: ATCommand, _ r: ATResponse, _ ctx: inout PolicyContext) {
        switch command {
        case .signalQuality:
            if let v = r.value("+CSQ:"), let first = splitFields(v).first, let rssi = Int(first) {
                ctx.status.signal = SignalQuality(rssi: rssi)
            }
        case .operatorName:
            if let v = r.value("+COPS:") {
                let f = splitFields(v)
                ctx.status.operatorName = f.count >= 3 ? f[2].unquoted : nil
                // 27.007 7.3: 0 automatic, 1 manual, 2 deregistered, 4 manual/automatic.
                if let mode = f.first.flatMap({ Int($0) }), mode == 1 || mode == 2 || mode == 4, !automaticOperatorRequested {
                    automaticOperatorRequested = true
                    logger.warning("the modem's operator selection is \(mode == 2 ? "deregistered" : "manual") (AT+COPS mode \(mode), set by hand?); restoring automatic selection")
                }
            }
        default:
            break
        }
        ctx.statusChanged()
    }

    /// The centre number as the SIM gave it, kept only as digits and a leading "+" (it is shown
    /// in `status` and the log): nil when it holds fewer than 3 digits.
    static func centreNumber(_ text: String?) -> String? {
        guard let text else { return nil }
        let digits = String(text.unicodeScalars.filter { $0.isASCII && ("0"..."9").contains(Character($0)) }.prefix(20).map(Character.init))
        guard digits.count >= 3 else { return nil }
        return (text.hasPrefix("+") ? "+" : "") + digits
    }

    /// `+CSCA: "<number>",<type>` against the configured centre; a different one is replaced.
    mutating func checkServiceCentre(_ r: ATResponse, _ ctx: inout PolicyContext) {
        let current = r.value("+CSCA:").flatMap { splitFields($0).first?.unquoted }
        if r.outcome.isOK {
            let digits = current.map { $0.filter(\.isASCII).filter(\.isNumber).count } ?? 0
            ctx.status.serviceCentreKnown = digits >= 3 || configuration.serviceCentre != nil
            ctx.status.simServiceCentre = Self.centreNumber(current)
        }
        guard let wanted = configuration.serviceCentre else { return }
        if current != wanted.text {
            serviceCentreRequested = true
            logger.warning("the SIM's service centre is \(current.map { "\"\($0)\"" } ?? "unknown"); setting \(wanted.text) from the configuration")
        }
    }

    /// +CREG / +CGREG / +CEREG on their own.
    mutating func registrationAnnounced(_ d: RegistrationDomain, _ state: RegistrationState, _ ctx: inout PolicyContext) {
        ctx.status.registration[d] = state
        registrationChanged(&ctx)
    }

    mutating func registrationChanged(_ ctx: inout PolicyContext) {
        if ctx.status.isRegistered {
            if notRegisteredSince != nil { logger.notice("network: \(ctx.status.registrationSummary)") }
            notRegisteredSince = nil
        } else if ctx.status.registration.values.contains(where: { $0 != .unknown }) {
            if notRegisteredSince == nil {
                notRegisteredSince = ctx.now
                // Signal and operator too are read every `registrationPoll` until it is back.
                let soon = ctx.now + configuration.timeouts.registrationPoll
                if let f = fullRefreshAt, f > soon { fullRefreshAt = soon }
                logger.warning("network: \(ctx.status.registrationSummary); sending waits up to \(configuration.timeouts.registrationPatience)")
            }
        } else {
            notRegisteredSince = nil  // nothing known: the modem decides
        }
        ctx.statusChanged()
    }

    /// UNDER-VOLTAGE and friends: shown, and logged once a minute at most (a brown-out can
    /// repeat it many times a second).
    mutating func powerWarning(_ line: String, _ ctx: inout PolicyContext) {
        ctx.status.lastProblem = "modem power: \(line)"
        if lastPowerWarning.map({ ctx.now - $0 >= .seconds(60) }) ?? true {
            lastPowerWarning = ctx.now
            logger.error("modem: \(line) (check the modem's power supply: it needs 2 A peaks)")
        }
        ctx.statusChanged()
    }
}
