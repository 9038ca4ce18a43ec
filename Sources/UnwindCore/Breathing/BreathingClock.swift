/// The four sides of the square, in the order a person breathes them.
public enum BreathingPhase: Int, CaseIterable, Sendable {
    case inhale, holdAfterInhale, exhale, holdAfterExhale

    /// The word on the screen.
    public var label: String {
        switch self {
        case .inhale: "Breathe in"
        case .holdAfterInhale: "Hold"
        case .exhale: "Breathe out"
        case .holdAfterExhale: "Hold"
        }
    }

    /// Holds feel different from breaths at their corner, so the phase can be told in the dark.
    public var isHold: Bool { self == .holdAfterInhale || self == .holdAfterExhale }
}

/// How long each side of the square lasts.
public struct BreathingPattern: Equatable, Sendable {
    public var inhale: Duration
    public var holdAfterInhale: Duration
    public var exhale: Duration
    public var holdAfterExhale: Duration

    public init(inhale: Duration = .seconds(4), holdAfterInhale: Duration = .seconds(4),
                exhale: Duration = .seconds(4), holdAfterExhale: Duration = .seconds(4)) {
        self.inhale = inhale
        self.holdAfterInhale = holdAfterInhale
        self.exhale = exhale
        self.holdAfterExhale = holdAfterExhale
    }

    public static let box = BreathingPattern()

    public func length(of phase: BreathingPhase) -> Duration {
        switch phase {
        case .inhale: inhale
        case .holdAfterInhale: holdAfterInhale
        case .exhale: exhale
        case .holdAfterExhale: holdAfterExhale
        }
    }

    public var cycle: Duration { inhale + holdAfterInhale + exhale + holdAfterExhale }

    /// Why a pattern cannot be used, or nil. Phases run 1–20 s: shorter cannot be followed,
    /// longer is no longer calm breathing.
    public var problem: String? {
        for p in BreathingPhase.allCases {
            let l = length(of: p)
            if l < .seconds(1) || l > .seconds(20) {
                return "each breathing phase must last 1 to 20 seconds"
            }
        }
        return nil
    }
}

/// Where the marker is on the square at a given instant, and when each corner is reached.
/// Corner k is the start of phase k mod 4 in cycle k / 4; corner 0 is the session's start.
public struct BreathingClock: Equatable, Sendable {
    public var pattern: BreathingPattern
    public var start: Instant

    public init(pattern: BreathingPattern, start: Instant) {
        self.pattern = pattern
        self.start = start
    }

    public struct Position: Equatable, Sendable {
        public var phase: BreathingPhase
        /// 0 at the corner the side starts from, approaching 1 at the next corner.
        public var progress: Double
        /// Time left in this phase, for the countdown.
        public var remaining: Duration
        /// Index of the corner this phase started at.
        public var corner: Int
    }

    /// The instant corner `k` is reached.
    public func corner(_ k: Int) -> Instant {
        let cycles = Int64(k / 4)
        var t = start.nanoseconds + cycles * pattern.cycle.nanoseconds
        var p = 0
        while p < k % 4 {
            t += pattern.length(of: BreathingPhase(rawValue: p)!).nanoseconds
            p += 1
        }
        return Instant(nanoseconds: t)
    }

    public func phase(ofCorner k: Int) -> BreathingPhase { BreathingPhase(rawValue: k % 4)! }

    /// The first corner at or after `t`.
    public func firstCorner(atOrAfter t: Instant) -> Int {
        if t <= start { return 0 }
        let cycle = pattern.cycle.nanoseconds
        let elapsed = t.nanoseconds - start.nanoseconds
        var k = Int(elapsed / cycle) * 4
        while corner(k) < t { k += 1 }
        return k
    }

    public func position(at t: Instant) -> Position {
        let elapsed = max(0, t.nanoseconds - start.nanoseconds)
        let cycle = pattern.cycle.nanoseconds
        let cycles = elapsed / cycle
        var into = elapsed - cycles * cycle
        var p = 0
        while p < 3 {
            let l = pattern.length(of: BreathingPhase(rawValue: p)!).nanoseconds
            if into < l { break }
            into -= l
            p += 1
        }
        let phase = BreathingPhase(rawValue: p)!
        let l = pattern.length(of: phase).nanoseconds
        return Position(phase: phase, progress: Double(into) / Double(l),
                        remaining: .nanoseconds(l - into), corner: Int(cycles) * 4 + p)
    }
}
