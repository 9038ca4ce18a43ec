/// Where a session is in its breathing at a given instant, and when each phase starts: a pure
/// function of the pattern, the start and the instant, in whole nanoseconds, so the motor's
/// pulses (scheduled from `corner`) and the picture (drawn from `position`) agree exactly and
/// nothing drifts however long the session runs.
///
/// Corner k is the start of phase k mod n of breath k / n (n phases a breath); corner 0 is the
/// session's start. A pattern with a slowing pace (`PaceRamp`) has breaths that each last
/// 60 / rate seconds, the rate taken at the breath's start and falling evenly from the ramp's
/// to the pattern's own; each breath keeps the pattern's proportions. From the first breath
/// that starts after the ramp, every breath is the pattern's own.
public struct BreathingClock: Equatable, Sendable {
    public let pattern: BreathingPattern
    public let start: Instant
    /// Phases in one breath.
    public let phasesPerBreath: Int
    let breathNs: Int64
    /// Breaths at a ramped pace, and when (from the start) the first breath at the own pace begins.
    let rampBreaths: Int
    let rampEndNs: Int64

    public init(pattern: BreathingPattern, start: Instant) {
        // A pattern with nothing to breathe (never a validated one) would divide by zero.
        let usable = pattern.phaseCount > 0 && pattern.cycle > .zero && !BreathingPhase.breathOrder.contains { pattern.length(of: $0) < .zero }
        self.pattern = usable ? pattern : .box
        self.start = start
        self.phasesPerBreath = self.pattern.phaseCount
        self.breathNs = self.pattern.cycle.nanoseconds
        var breaths = 0
        var end: Int64 = 0
        if let r = self.pattern.ramp {
            // Bounded whatever the ramp says: a validated one has at most a few hundred breaths.
            while end < r.over.nanoseconds && breaths < 100_000 {
                end += Self.rampedLength(pattern: self.pattern, breathNs: breathNs, startingAt: end)
                breaths += 1
            }
        }
        self.rampBreaths = breaths
        self.rampEndNs = end
    }

    public struct Position: Equatable, Sendable {
        public var phase: BreathingPhase
        /// 0 at the phase's start, approaching 1 at its end.
        public var progress: Double
        /// Time left in this phase, for the countdown.
        public var remaining: Duration
        /// Index of the corner this phase started at.
        public var corner: Int
        /// Which phase of the breath (0-based) this is.
        public var index: Int
    }

    /// The length of a breath that starts `s` nanoseconds into a ramped session.
    static func rampedLength(pattern: BreathingPattern, breathNs: Int64, startingAt s: Int64) -> Int64 {
        guard let r = pattern.ramp, s < r.over.nanoseconds, r.over.nanoseconds > 0 else { return breathNs }
        let from = Double(r.fromTenths) / 10
        let to = 60e9 / Double(breathNs)
        let rate = from + (to - from) * Double(s) / Double(r.over.nanoseconds)
        guard rate.isFinite, rate > 0 else { return breathNs }
        return max(1, Int64((60e9 / rate).rounded()))
    }

    /// Breath `c`'s start (from the session's start) and length, in nanoseconds.
    func breath(_ c: Int) -> (start: Int64, length: Int64) {
        if c >= rampBreaths { return (rampEndNs + Int64(c - rampBreaths) * breathNs, breathNs) }
        var s: Int64 = 0
        var i = 0
        while i < c {
            s += Self.rampedLength(pattern: pattern, breathNs: breathNs, startingAt: s)
            i += 1
        }
        return (s, Self.rampedLength(pattern: pattern, breathNs: breathNs, startingAt: s))
    }

    /// The breath under way `elapsed` nanoseconds into the session.
    func breath(containing elapsed: Int64) -> (index: Int, start: Int64, length: Int64) {
        if elapsed >= rampEndNs {
            let n = (elapsed - rampEndNs) / breathNs
            return (rampBreaths + Int(n), rampEndNs + n * breathNs, breathNs)
        }
        var s: Int64 = 0
        var c = 0
        while true {
            let l = Self.rampedLength(pattern: pattern, breathNs: breathNs, startingAt: s)
            if elapsed < s + l || c + 1 >= rampBreaths { return (c, s, l) }
            s += l
            c += 1
        }
    }

    /// Where phase `i` starts in a breath of `length` ns (`i == phasesPerBreath`: its end).
    func offset(ofPhase i: Int, inBreathOf length: Int64) -> Int64 {
        if i <= 0 { return 0 }
        if i >= phasesPerBreath { return length }
        var sum: Int64 = 0
        var j = 0
        for p in BreathingPhase.breathOrder where pattern.length(of: p) > .zero {
            if j == i { break }
            sum += pattern.length(of: p).nanoseconds
            j += 1
        }
        if length == breathNs { return sum }
        return Int64((Double(sum) * Double(length) / Double(breathNs)).rounded())
    }

    /// The instant corner `k` is reached.
    public func corner(_ k: Int) -> Instant {
        let k = max(0, k)
        let b = breath(k / phasesPerBreath)
        return Instant(nanoseconds: start.nanoseconds + b.start + offset(ofPhase: k % phasesPerBreath, inBreathOf: b.length))
    }

    public func phase(ofCorner k: Int) -> BreathingPhase { pattern.phase(max(0, k) % phasesPerBreath) }

    /// The first corner at or after `t`.
    public func firstCorner(atOrAfter t: Instant) -> Int {
        if t <= start { return 0 }
        let elapsed = t.nanoseconds - start.nanoseconds
        let b = breath(containing: elapsed)
        let into = elapsed - b.start
        var i = 0
        while i < phasesPerBreath && offset(ofPhase: i, inBreathOf: b.length) < into { i += 1 }
        return b.index * phasesPerBreath + i
    }

    /// The first corner at or after `t` that begins a breath (an inhale): where a timed session
    /// ends, so nobody is stopped half-way through breathing out.
    public func firstBreathStart(atOrAfter t: Instant) -> Int {
        let k = firstCorner(atOrAfter: t)
        return (k + phasesPerBreath - 1) / phasesPerBreath * phasesPerBreath
    }

    public func position(at t: Instant) -> Position {
        let elapsed = max(0, t.nanoseconds - start.nanoseconds)
        let b = breath(containing: elapsed)
        let into = elapsed - b.start
        var i = 0
        var from: Int64 = 0
        var to = offset(ofPhase: 1, inBreathOf: b.length)
        while i + 1 < phasesPerBreath && into >= to {
            i += 1
            from = to
            to = offset(ofPhase: i + 1, inBreathOf: b.length)
        }
        let l = max(1, to - from)
        return Position(phase: pattern.phase(i), progress: Double(into - from) / Double(l),
                        remaining: .nanoseconds(to - into), corner: b.index * phasesPerBreath + i, index: i)
    }
}
