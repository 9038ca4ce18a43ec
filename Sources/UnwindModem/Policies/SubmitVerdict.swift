import UnwindCore

/// What one answer to a message's AT+CMGF=0 or AT+CMGS means for that message — a table of
/// 3GPP TS 27.005 §3.2.5 (+CMS ERROR) and the AT engine's outcomes, with no state and no
/// clock, so every row can be read and tested on its own. Delivery applies it; what is not in
/// the table (a `+CMGS` inside the doubt window, a command abandoned because the modem
/// restarted) depends on what delivery remembers and is decided there.
struct SubmitVerdict: Equatable {
    /// What else must happen besides the retry.
    enum FollowUp: Equatable {
        case none
        /// AT+CMGF=0 got no answer: ESC, drain, AT.
        case resynchronise
        /// No prompt: nothing of the PDU was written; resynchronise taking only a clean OK.
        case resynchroniseAfterSubmit
        /// The PDU was written and no `+CMGS` of its own came: the message may have gone. Its
        /// answer may still come, so confirmations credit nothing until it could have come.
        case resynchroniseInDoubt
        /// +CMS ERROR 31x, or AT+CMGF=0 refused: PIN and registration again.
        case checkSIMAgain
        /// +CMS ERROR 500, ERROR, +CME ERROR: the modem. Several in a row restart it.
        case countTowardsRestart
        /// +CMS ERROR 330 with a configured centre: AT+CSCA, then at once again.
        case setServiceCentre
        /// +CMS ERROR 330 and none configured: the maintainer must add one.
        case serviceCentreMissing
        /// +CMS ERROR 330 with a centre set (on the SIM, and the configured one if any): the
        /// network refuses it; the maintainer must find the right one.
        case serviceCentreRefused
    }

    var problem: SendProblem
    /// Retried now (for the first such failure in a row), not after the backoff.
    var atOnce: Bool
    var followUp: FollowUp

    init(_ problem: SendProblem, atOnce: Bool = false, _ followUp: FollowUp = .none) {
        self.problem = problem
        self.atOnce = atOnce
        self.followUp = followUp
    }

    /// AT+CMGF=0, the first command of every attempt. nil: it answered OK (or was abandoned,
    /// which delivery decides).
    static func pduMode(_ outcome: ATOutcome) -> SubmitVerdict? {
        switch outcome {
        case .ok, .abandoned: nil
        case .timedOut: SubmitVerdict(.modem("no answer to AT+CMGF=0"), .resynchronise)
        default: SubmitVerdict(.modem("AT+CMGF=0 answered \(outcome)"), .checkSIMAgain)
        }
    }

    /// AT+CMGS for a message to `number`. nil: `+CMGS: <mr>` (sent, unless delivery knows it
    /// may be another PDU's late answer) or abandoned.
    /// `simCentre`: the centre `AT+CSCA?` gave (nil: none, or not asked yet).
    static func submit(_ outcome: ATOutcome, to number: PhoneNumber, serviceCentreConfigured: Bool,
                       simCentre: String? = nil, configuredCentre: String? = nil) -> SubmitVerdict? {
        switch outcome {
        case .submitted, .abandoned:
            return nil
        case .promptTimedOut, .timedOut(afterPrompt: false):
            return SubmitVerdict(.noPrompt, atOnce: true, .resynchroniseAfterSubmit)
        case .timedOut(afterPrompt: true), .ok:
            return SubmitVerdict(.noConfirmation, atOnce: true, .resynchroniseInDoubt)
        case .cmsError(let code):
            return cms(code, to: number, serviceCentreConfigured: serviceCentreConfigured, simCentre: simCentre,
                       configuredCentre: configuredCentre)
        case .error:
            return SubmitVerdict(.modem("ERROR"), .countTowardsRestart)
        case .cmeError(let c):
            return SubmitVerdict(.modem("+CME ERROR: \(c)"), .countTowardsRestart)
        case .callEnded(let what):
            return SubmitVerdict(.modem(what), .countTowardsRestart)
        }
    }

    /// +CMS ERROR <code>. Only an unassigned number stops a message; everything else retries.
    static func cms(_ code: ATErrorCode, to number: PhoneNumber, serviceCentreConfigured: Bool,
                    simCentre: String? = nil, configuredCentre: String? = nil) -> SubmitVerdict {
        guard let n = code.number else { return SubmitVerdict(.modem("+CMS ERROR: \(code)"), .countTowardsRestart) }
        switch n {
        case 1:
            return SubmitVerdict(.unassignedNumber(number))
        case 330:
            // 27.005: "SMSC address unknown". With a centre on the SIM and none configured it is
            // not missing: the network refuses that number (a configured one is set and tried).
            if let sim = simCentre, !serviceCentreConfigured {
                return SubmitVerdict(.serviceCentreRefused(sim), .serviceCentreRefused)
            }
            return serviceCentreConfigured
                ? SubmitVerdict(.noServiceCentre(configured: true), atOnce: true, .setServiceCentre)
                : SubmitVerdict(.noServiceCentre(configured: false), .serviceCentreMissing)
        case 310...316:
            return SubmitVerdict(.sim(code: n), .checkSIMAgain)
        case 500:
            return SubmitVerdict(.modem("+CMS ERROR: 500"), .countTowardsRestart)
        case 2...127, 512...514, 331, 332:
            return SubmitVerdict(.network(code: n))
        default:
            return SubmitVerdict(.rejected(code: n))
        }
    }
}
