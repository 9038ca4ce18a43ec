/// One scheduled change of the motor line.
public struct MotorEdge: Equatable, Sendable, Comparable {
    public var at: Instant
    public var on: Bool
    public init(at: Instant, on: Bool) {
        self.at = at
        self.on = on
    }
    public static func < (a: MotorEdge, b: MotorEdge) -> Bool { a.at < b.at }
}

/// How the motor marks the start of each phase, so a person can tell the phases apart with
/// their eyes closed: each phase kind has its own pulses (their lengths; `gap` between two).
/// The defaults differ by count and by length: breathe in one short tap, breathe out one long
/// buzz, hold two taps, the top-up sip three quick flicks.
public struct HapticStyle: Equatable, Sendable {
    public var inhale: [Duration]
    public var exhale: [Duration]
    public var hold: [Duration]
    public var topUp: [Duration]
    public var gap: Duration

    public init(inhale: [Duration] = HapticStyle.defaultInhale, exhale: [Duration] = HapticStyle.defaultExhale,
                hold: [Duration] = HapticStyle.defaultHold, topUp: [Duration] = HapticStyle.defaultTopUp,
                gap: Duration = .milliseconds(100)) {
        self.inhale = inhale
        self.exhale = exhale
        self.hold = hold
        self.topUp = topUp
        self.gap = gap
    }

    public static let defaultInhale: [Duration] = [.milliseconds(120)]
    public static let defaultExhale: [Duration] = [.milliseconds(400)]
    public static let defaultHold: [Duration] = [.milliseconds(120), .milliseconds(120)]
    public static let defaultTopUp: [Duration] = [.milliseconds(60), .milliseconds(60), .milliseconds(60)]

    public static let maximumPulses = 4
    public static let shortestPulse: Duration = .milliseconds(20)
    public static let longestPulse: Duration = .milliseconds(1000)
    /// A phase's last pulse ends this long before the next phase starts, so the next one's first
    /// pulse is felt as new and not as more of the same.
    public static let separation: Duration = .milliseconds(40)

    public func pulses(for phase: BreathingPhase) -> [Duration] {
        switch phase {
        case .inhale: inhale
        case .exhale: exhale
        case .holdAfterInhale, .holdAfterExhale: hold
        case .topUp: topUp
        }
    }

    public var problem: String? {
        if gap < .milliseconds(20) || gap > .milliseconds(1000) { return "the gap between pulses must last 20 to 1000 ms" }
        for list in [inhale, exhale, hold, topUp] {
            if list.count > Self.maximumPulses { return "a phase has 0 to \(Self.maximumPulses) pulses" }
            if list.contains(where: { $0 < Self.shortestPulse || $0 > Self.longestPulse }) { return "a motor pulse lasts 20 to 1000 ms" }
        }
        return nil
    }

    /// The edges of the pulses that mark `phase` starting at `t`, in order, none reaching `until`
    /// (less `separation`): a phase shortened by a fast pace cuts its own pulses, never the next
    /// phase's. `softened`: fewer and shorter, for the last minute of a timed session — the holds
    /// fall silent and every other pulse is 60 % as long; the counts stay, so each phase is still
    /// told apart with eyes closed (halving them made a breath in and a hold the same tap).
    /// Allocation-free.
    public func forEachEdge(phaseAt t: Instant, phase: BreathingPhase, until: Instant, softened: Bool = false,
                            _ body: (MotorEdge) -> Void) {
        let list = pulses(for: phase)
        let count = softened && (phase == .holdAfterInhale || phase == .holdAfterExhale) ? 0 : list.count
        let limit = until - Self.separation
        var on = t
        var i = 0
        while i < count {
            var length = list[i]
            if softened { length = max(Self.shortestPulse, .nanoseconds(length.nanoseconds * 6 / 10)) }
            if i > 0 && on >= limit { return }
            var off = on + length
            if off > limit { off = max(on + Self.shortestPulse, limit) }
            body(MotorEdge(at: on, on: true))
            body(MotorEdge(at: off, on: false))
            if off >= limit { return }
            on = off + gap
            i += 1
        }
    }

    public func edges(phase: BreathingPhase, at t: Instant, until: Instant, softened: Bool = false, into out: inout [MotorEdge]) {
        forEachEdge(phaseAt: t, phase: phase, until: until, softened: softened) { out.append($0) }
    }
}
