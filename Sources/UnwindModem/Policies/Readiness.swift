import Logging
import UnwindCore

/// Could a PANIC go out right now: the modem answering, the SIM ready, registered, the signal
/// above a floor, a service centre known. A verdict is given once the modem's answers say it —
/// never from a modem still starting, so a normal start-up is not a moment of "cannot send" —
/// and if none comes within `ModemTimeouts.readiness`, what is known is said (the modem silent,
/// the SIM's problem). Each change is reported once.
struct Readiness {
    let configuration: ModemConfiguration
    let logger: Logger
    private(set) var reported: AlertReadiness?
    /// Since when no verdict could be given.
    private var undecidedSince: Instant?

    init(configuration: ModemConfiguration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
    }

    /// The verdict the status allows, or nil while the modem is still starting.
    static func assess(_ s: ModemStatus, _ configuration: ModemConfiguration) -> AlertReadiness? {
        switch s.link {
        case .closed, .resetting:
            // A USB modem still enumerating at boot, or replugged: said after the patience.
            return nil
        case .starting:
            if let p = simProblem(s.sim) { return AlertReadiness(problems: [p]) }
            return nil
        case .ready:
            var problems: [AlertReadiness.Problem] = []
            if let p = simProblem(s.sim) { problems.append(p) }
            let known = s.registration.values.contains { $0 != .unknown }
            if !s.isRegistered && known {
                problems.append(.notRegistered)
            } else if let q = s.signal, q.rssi != 99, q.rssi < configuration.readinessSignalFloor {
                // 99 is "not known": many LTE modems give it while registered and sending fine.
                problems.append(.weakSignal(q.rssi))
            }
            if s.serviceCentreKnown == false && configuration.serviceCentre == nil { problems.append(.noServiceCentre) }
            if s.serviceCentre?.hasPrefix("missing") ?? false, !problems.contains(.noServiceCentre) { problems.append(.noServiceCentre) }
            if s.serviceCentre?.hasPrefix("refused") ?? false { problems.append(.serviceCentreRefused) }
            return AlertReadiness(problems: problems)
        }
    }

    static func simProblem(_ sim: SIMState) -> AlertReadiness.Problem? {
        switch sim {
        case .ready, .unknown, .busy: nil
        case .absent: .sim("no SIM card")
        case .locked(let what): .sim("locked (\(what))")
        case .failed(let why): .sim(why)
        }
    }

    /// After each step: a new verdict is reported; no verdict for longer than the patience is
    /// reported as what is known.
    mutating func update(_ ctx: inout PolicyContext) {
        var verdict = Self.assess(ctx.status, configuration)
        if verdict == nil {
            if undecidedSince == nil { undecidedSince = ctx.now }
            if let since = undecidedSince, ctx.now - since >= configuration.timeouts.readiness {
                patienceOver = true
                let sim = ctx.status.sim == .busy ? .sim("busy: it has not become ready") : Self.simProblem(ctx.status.sim)
                verdict = AlertReadiness(problems: [sim ?? .modemSilent])
            }
        } else {
            undecidedSince = nil
            patienceOver = false
        }
        guard let v = verdict, v != reported else { return }
        report(v, selfTest: false, &ctx)
    }

    /// When `update` must run again at the latest (the patience running out; once it has, the
    /// next step of any kind is soon enough).
    var deadline: Instant? { patienceOver ? nil : undecidedSince.map { $0 + configuration.timeouts.readiness } }
    private var patienceOver = false

    mutating func report(_ v: AlertReadiness, selfTest: Bool, _ ctx: inout PolicyContext) {
        let what = v.isReady ? "a PANIC can go out now" : "a PANIC could not go out now: " + v.problems.map(\.description).joined(separator: "; ")
        if selfTest {
            logger.notice("self-test: \(what)")
        } else if v.isReady {
            logger.notice("readiness: \(what)")
        } else {
            logger.warning("readiness: \(what)")
        }
        reported = v
        ctx.events.append(.readiness(v, selfTest: selfTest))
    }
}
