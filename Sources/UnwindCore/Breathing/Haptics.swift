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

/// How the motor feels at the corners of the square: a breath corner is one pulse, a hold
/// corner is `holdPulses` pulses, so the phase can be told with closed eyes.
public struct HapticStyle: Equatable, Sendable {
    public var pulse: Duration
    public var gap: Duration
    public var breathPulses: Int
    public var holdPulses: Int

    public init(pulse: Duration = .milliseconds(120), gap: Duration = .milliseconds(100),
                breathPulses: Int = 1, holdPulses: Int = 2) {
        self.pulse = pulse
        self.gap = gap
        self.breathPulses = breathPulses
        self.holdPulses = holdPulses
    }

    public var problem: String? {
        if pulse < .milliseconds(20) || pulse > .milliseconds(1000) { return "the motor pulse must last 20 to 1000 ms" }
        if gap < .milliseconds(20) || gap > .milliseconds(1000) { return "the gap between pulses must last 20 to 1000 ms" }
        if !(0...4).contains(breathPulses) || !(0...4).contains(holdPulses) { return "corners take 0 to 4 pulses" }
        return nil
    }

    /// The edges of the pulses that mark a corner reached at `t`, in order.
    public func forEachEdge(cornerAt t: Instant, hold: Bool, _ body: (MotorEdge) -> Void) {
        let n = hold ? holdPulses : breathPulses
        var on = t
        for _ in 0..<n {
            body(MotorEdge(at: on, on: true))
            body(MotorEdge(at: on + pulse, on: false))
            on = on + pulse + gap
        }
    }

    public func edges(forCornerAt t: Instant, hold: Bool, into out: inout [MotorEdge]) {
        forEachEdge(cornerAt: t, hold: hold) { out.append($0) }
    }
}
