import UnwindCore

/// Calls — the counselling line, and the escalation ladder ringing one contact after another:
/// ATD when the modem is ready (failing visibly if it is not ready in time), ATH to hang up, and
/// the call's end however it comes — BUSY or an error answering ATD, NO ANSWER / NO CARRIER
/// later, the modem restarting, the line lost. A dial asked for while the previous call is
/// still being hung up goes as soon as it is over (the ladder hangs up and dials the next
/// contact in one breath).
struct Calls {
    enum Job: Equatable { case dial, hangUp }
    enum Request: Equatable { case dial(PhoneNumber, since: Instant), hangUp }

    let timeouts: ModemTimeouts
    private(set) var state: CallState = .idle
    /// Asked for and not yet on the line.
    private(set) var request: Request?
    /// The next dial, waiting for the hang-up under way.
    private(set) var following: (number: PhoneNumber, since: Instant)?

    init(timeouts: ModemTimeouts) { self.timeouts = timeouts }

    /// A dial that waits for the modem fails visibly then.
    var deadline: Instant? {
        if case .dial(_, let since) = request { return since + timeouts.dialPatience }
        return nil
    }

    mutating func dial(_ number: PhoneNumber, at instant: Instant, _ ctx: inout PolicyContext) {
        if state == .hangingUp {
            following = (number, instant)
            return
        }
        guard !state.isInCall else { return }  // one call at a time: hang up first
        request = .dial(number, since: instant)
        set(.dialling(number), &ctx)
    }

    /// The previous call is over: the dial that waited for it goes now.
    private mutating func dialFollowing(_ ctx: inout PolicyContext) {
        guard let f = following else { return }
        following = nil
        request = .dial(f.number, since: f.since)
        set(.dialling(f.number), &ctx)
    }

    /// `dialInFlight`: ATD is on the line (then ATH follows it; otherwise the dial is dropped).
    mutating func hangUp(dialInFlight: Bool, _ ctx: inout PolicyContext) {
        switch state {
        case .dialling where !dialInFlight:
            request = nil
            set(.ended("cancelled"), &ctx)
        case .dialling, .active:
            request = .hangUp
            set(.hangingUp, &ctx)
        case .hangingUp:
            following = nil  // a hang-up asked for again drops the dial that waited for it
        default:
            break
        }
    }

    mutating func expire(_ ctx: inout PolicyContext) {
        if case .dial(_, let since) = request, ctx.now - since >= timeouts.dialPatience {
            request = nil
            set(.failed("the modem is not ready"), &ctx)
        }
    }

    /// In the ready modem's turn, before heals and alerts: a person is waiting on it.
    mutating func next() -> (ATRequest, Job)? {
        guard let r = request else { return nil }
        request = nil
        switch r {
        case .dial(let n, _): return (ATRequest(.dial(n), timeout: timeouts.dial), .dial)
        case .hangUp: return (ATRequest(.hangUp, timeout: timeouts.command), .hangUp)
        }
    }

    mutating func completed(_ job: Job, _ r: ATResponse, _ ctx: inout PolicyContext) {
        switch job {
        case .dial: dialCompleted(r, &ctx)
        case .hangUp: hangUpCompleted(r, &ctx)
        }
    }

    private mutating func dialCompleted(_ r: ATResponse, _ ctx: inout PolicyContext) {
        guard case .dialling(let n) = state else {
            guard state == .hangingUp else { return }
            switch r.outcome {
            case .ok:
                request = .hangUp
            case .callEnded(let why):
                // It ended before the ATH could go: nothing left to hang up.
                request = nil
                set(.ended(why), &ctx)
                dialFollowing(&ctx)
            case .timedOut:
                request = .hangUp
                ctx.requests.append(.resynchronise(afterSubmit: false))
            default:
                request = nil
                set(.ended("the modem refused the call (\(r.outcome))"), &ctx)
                dialFollowing(&ctx)
            }
            return
        }
        switch r.outcome {
        case .ok: set(.active(n), &ctx)
        case .callEnded(let why): set(.ended(why), &ctx)
        case .timedOut:
            set(.failed("no answer from the modem"), &ctx)
            ctx.requests.append(.resynchronise(afterSubmit: false))
        case .abandoned: set(.failed("the modem restarted"), &ctx)
        default: set(.failed("the modem refused the call (\(r.outcome))"), &ctx)
        }
    }

    private mutating func hangUpCompleted(_ r: ATResponse, _ ctx: inout PolicyContext) {
        guard state == .hangingUp else { return }  // the call ended on its own meanwhile
        if r.outcome.isOK || r.outcome == .abandoned {
            set(.ended("hung up"), &ctx)
        } else {
            set(.failed("could not hang up (\(r.outcome))"), &ctx)
            if case .timedOut = r.outcome { ctx.requests.append(.resynchronise(afterSubmit: false)) }
        }
        dialFollowing(&ctx)
    }

    /// NO CARRIER and friends, a modem restart, a line lost: a call on is over.
    mutating func ended(_ why: String, _ ctx: inout PolicyContext) {
        if state.isInCall {
            request = nil
            set(.ended(why), &ctx)
            dialFollowing(&ctx)
        }
    }

    private mutating func set(_ c: CallState, _ ctx: inout PolicyContext) {
        if state != c {
            state = c
            ctx.events.append(.callChanged(c))
        }
    }
}
