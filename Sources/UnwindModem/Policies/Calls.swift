import UnwindCore

/// Calls — the counselling line, and the escalation ladder ringing one contact after another:
/// ATD when the modem is ready (failing visibly if it is not ready in time), ATH to hang up, and
/// the call's end however it comes — BUSY or an error answering ATD, NO ANSWER / NO CARRIER
/// later, the modem restarting, the line lost. A dial asked for while the previous call is
/// still being hung up goes as soon as it is over (the ladder hangs up and dials the next
/// contact in one breath).
///
/// `ATD…;` answers OK as soon as the modem starts the call, long before anyone picks up, so
/// while a call is up the modem is asked `AT+CLCC` every `pollEvery`: a call listed active
/// (stat 0) is answered. A modem that refuses `AT+CLCC` is not asked again during that call
/// (then ringing and answered cannot be told apart). Once answered, a list without
/// the call means the other end hung up, even if its NO CARRIER was lost.
struct Calls {
    enum Job: Equatable { case dial, hangUp, listCalls, leftover }
    enum Request: Equatable { case dial(PhoneNumber, since: Instant), hangUp }

    let timeouts: ModemTimeouts
    private(set) var state: CallState = .idle
    /// Asked for and not yet on the line.
    private(set) var request: Request?
    /// The next dial, waiting for the hang-up under way.
    private(set) var following: (number: PhoneNumber, since: Instant)?
    /// When `AT+CLCC` is next due (nil: no call up, or the modem refused it).
    private(set) var nextPoll: Instant?
    static let pollEvery: Duration = .seconds(1)

    /// A call an earlier run left up is to be looked for (`lookForLeftover`).
    private var leftoverUnchecked = false

    init(timeouts: ModemTimeouts) { self.timeouts = timeouts }

    /// The device started again while the ladder rang a contact (the core asks): the next call
    /// command is `AT+CLCC`, and a call of this device's found up is followed as this run's own —
    /// a contact who picks up is seen, and the ladder's hang-up reaches the call. Without it, a
    /// contact who picks up after the restart is not seen, the next contacts are rung regardless,
    /// and no ATH goes to the call.
    mutating func lookForLeftover() { leftoverUnchecked = true }

    private mutating func leftoverCompleted(_ r: ATResponse, _ ctx: inout PolicyContext) {
        guard r.outcome.isOK, let (listed, number) = Self.ownCall(in: r.lines) else { return }
        switch (state, request) {
        case (.idle, nil):
            set(listed == .active ? .answered(number) : .active(number), &ctx)
            nextPoll = ctx.now + Self.pollEvery
        case (.dialling, .dial(let next, let since)?):
            // The ring time ran out while the device was off: the call left up is hung up before
            // the next contact is dialled.
            following = (next, since)
            request = .hangUp
            set(.hangingUp, &ctx)
        default:
            break
        }
    }

    /// A dial that waits for the modem fails visibly then.
    var deadline: Instant? {
        if case .dial(_, let since) = request { return since + timeouts.dialPatience }
        return nextPoll
    }

    /// Something to put on the line now.
    func hasWork(at now: Instant) -> Bool { leftoverUnchecked || request != nil || nextPoll.map { now >= $0 } ?? false }

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
        case .dialling, .active, .answered:
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
    mutating func next(at now: Instant) -> (ATRequest, Job)? {
        if leftoverUnchecked {
            leftoverUnchecked = false
            return (ATRequest(.listCalls, timeout: timeouts.command), .leftover)
        }
        if request == nil, let due = nextPoll, now >= due, state.isAnswerable {
            nextPoll = nil
            return (ATRequest(.listCalls, timeout: timeouts.command), .listCalls)
        }
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
        case .listCalls: listCompleted(r, &ctx)
        case .leftover: leftoverCompleted(r, &ctx)
        }
    }

    private mutating func listCompleted(_ r: ATResponse, _ ctx: inout PolicyContext) {
        guard state.isAnswerable else { return }
        guard r.outcome.isOK else {
            // Not every modem lists calls; a timeout is the line's to heal. Either way the call
            // goes on as "ringing or talking", and is not asked about again.
            if case .timedOut = r.outcome { ctx.requests.append(.resynchronise(afterSubmit: false)) }
            return
        }
        nextPoll = ctx.now + Self.pollEvery
        switch (Self.voiceCall(in: r.lines), state) {
        case (.active?, .active(let n)):
            set(.answered(n), &ctx)
        case (nil, .answered):
            // Answered, and now gone from the list: the other end hung up.
            nextPoll = nil
            set(.ended("the other end hung up"), &ctx)
            dialFollowing(&ctx)
        default:
            break
        }
    }

    enum ListedCall: Equatable { case active, notYetActive }

    /// The state of the device's own voice call in `AT+CLCC`'s lines: `+CLCC: <id>,<dir>,<stat>,
    /// <mode>,<mpty>[,<number>,<type>…]` — dir 0 (mobile originated), mode 0 (voice), stat 0
    /// (active), 1 held, 2 dialling, 3 alerting. Anything else on a line (missing fields, numbers
    /// out of range, quotes, garbage) leaves that line out; nil: no such call listed.
    static func voiceCall(in lines: [String]) -> ListedCall? {
        var found: ListedCall?
        for line in lines {
            guard let (listed, _) = listed(line) else { continue }
            if listed == .active { return .active }
            found = .notYetActive
        }
        return found
    }

    /// The device's own voice call and the number it called (`<number>`, quoted), for a call an
    /// earlier run left up; nil without a number that is one.
    static func ownCall(in lines: [String]) -> (ListedCall, PhoneNumber)? {
        for line in lines {
            guard let (listed, rest) = listed(line), let rest else { continue }
            let quoted = rest.split(separator: "\"", omittingEmptySubsequences: false)
            guard quoted.count >= 3, String(quoted[0]).trimmingSpaces.isEmpty, let number = try? PhoneNumber(String(quoted[1])) else { continue }
            return (listed, number)
        }
        return nil
    }

    /// One `+CLCC` line of a voice call this device made (dir 0, mode 0), stat 0 to 3, and the
    /// fields after `<mpty>`; nil for any other line.
    private static func listed(_ line: String) -> (ListedCall, Substring?)? {
        guard line.hasPrefix("+CLCC:") else { return nil }
        let f = line.dropFirst(6).split(separator: ",", maxSplits: 5, omittingEmptySubsequences: false)
        guard f.count >= 5 else { return nil }
        func small(_ s: Substring) -> Int? {
            let t = String(s).trimmingSpaces
            guard (1...3).contains(t.utf8.count), t.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
            return Int(t)
        }
        guard small(f[0]) != nil, small(f[1]) == 0, let stat = small(f[2]), stat <= 3, small(f[3]) == 0,
              let mpty = small(f[4]), mpty <= 1 else { return nil }
        return (stat == 0 ? .active : .notYetActive, f.count == 6 ? f[5] : nil)
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
        case .ok:
            set(.active(n), &ctx)
            nextPoll = ctx.now + Self.pollEvery
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
        if !c.isAnswerable { nextPoll = nil }
        if state != c {
            state = c
            ctx.events.append(.callChanged(c))
        }
    }
}

extension CallState {
    /// A call the modem accepted: `AT+CLCC` tells whether it was picked up (and, once it was,
    /// when it is over).
    var isAnswerable: Bool {
        switch self {
        case .active, .answered: true
        default: false
        }
    }
}
