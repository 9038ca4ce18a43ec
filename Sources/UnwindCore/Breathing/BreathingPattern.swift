/// One phase of a breath, in the order a person breathes them: in, a short second sip in (the
/// physiological sigh's top-up), hold, out, hold.
public enum BreathingPhase: Int, CaseIterable, Sendable {
    // The first four keep the raw values the square has always used for its sides.
    case inhale, holdAfterInhale, exhale, holdAfterExhale, topUp

    /// The order of the phases within one breath; a phase of length 0 is left out.
    public static let breathOrder: [BreathingPhase] = [.inhale, .topUp, .holdAfterInhale, .exhale, .holdAfterExhale]

    /// The word on the screen.
    public var label: String {
        switch self {
        case .inhale: "Breathe in"
        case .topUp: "Sip in more"
        case .holdAfterInhale: "Hold"
        case .exhale: "Breathe out"
        case .holdAfterExhale: "Hold"
        }
    }

    /// Holds feel different from breaths at their start, so the phase can be told in the dark.
    public var isHold: Bool { self == .holdAfterInhale || self == .holdAfterExhale }
}

/// A slowing pace: the first breath at `fromTenths` tenths of a breath a minute (110: 11 a
/// minute, near an anxious person's own), slowing evenly in rate to the pattern's own over
/// `over`. The shape of each breath (its phases' proportions) stays the same throughout.
public struct PaceRamp: Equatable, Sendable {
    public var fromTenths: Int
    public var over: Duration

    public init(fromTenths: Int, over: Duration) {
        self.fromTenths = fromTenths
        self.over = over
    }

    public static let fastestTenths = 300
    public static let longest: Duration = .seconds(20 * 60)
}

/// How long each phase of a breath lasts, in tenths of a second; a phase of 0 is not breathed
/// (no side of the picture, no pulse). Optionally the pace slows at the start (`ramp`).
public struct BreathingPattern: Equatable, Sendable {
    public var inhale: Duration
    public var holdAfterInhale: Duration
    public var exhale: Duration
    public var holdAfterExhale: Duration
    /// The second, shorter inhale of the physiological sigh; 0 for none.
    public var topUp: Duration
    public var ramp: PaceRamp?

    public init(inhale: Duration = .seconds(4), holdAfterInhale: Duration = .seconds(4),
                exhale: Duration = .seconds(4), holdAfterExhale: Duration = .seconds(4),
                topUp: Duration = .zero, ramp: PaceRamp? = nil) {
        self.inhale = inhale
        self.holdAfterInhale = holdAfterInhale
        self.exhale = exhale
        self.holdAfterExhale = holdAfterExhale
        self.topUp = topUp
        self.ramp = ramp
    }

    public static let box = BreathingPattern()

    public func length(of phase: BreathingPhase) -> Duration {
        switch phase {
        case .inhale: inhale
        case .topUp: topUp
        case .holdAfterInhale: holdAfterInhale
        case .exhale: exhale
        case .holdAfterExhale: holdAfterExhale
        }
    }

    /// One breath at the pattern's own pace.
    public var cycle: Duration { inhale + topUp + holdAfterInhale + exhale + holdAfterExhale }

    /// How many phases a breath has (those of length 0 are not breathed).
    public var phaseCount: Int {
        var n = 0
        for p in BreathingPhase.breathOrder where length(of: p) > .zero { n += 1 }
        return n
    }

    /// The `i`-th phase breathed (0-based, `i < phaseCount`). Allocation-free: called per frame.
    public func phase(_ i: Int) -> BreathingPhase {
        var left = i
        for p in BreathingPhase.breathOrder where length(of: p) > .zero {
            if left == 0 { return p }
            left -= 1
        }
        return .inhale
    }

    /// Whether the square fits: four sides, each a phase (in, hold, out, hold), no top-up.
    public var isSquare: Bool {
        topUp == .zero && holdAfterInhale > .zero && holdAfterExhale > .zero
    }

    /// Breaths a minute at the pattern's own pace, in tenths (box: 37.5 → 37).
    public var tenthsPerMinute: Int {
        let c = cycle.nanoseconds
        return c > 0 ? Int(600_000_000_000 / c) : 0
    }

    /// Why a pattern cannot be used, or nil. Breaths in and out last 1–20 s (shorter cannot be
    /// followed, longer is no longer calm breathing), a hold 0 or 1–20 s, a top-up 0 or
    /// 0.5–5 s; every length is whole tenths of a second.
    public var problem: String? {
        for p in BreathingPhase.breathOrder {
            let l = length(of: p)
            if l.nanoseconds % 100_000_000 != 0 { return "phase lengths are in tenths of a second (\(BreathingPattern.seconds(l)) s is finer)" }
        }
        if inhale < .seconds(1) || inhale > .seconds(20) { return "a breath in lasts 1 to 20 seconds" }
        if exhale < .seconds(1) || exhale > .seconds(20) { return "a breath out lasts 1 to 20 seconds" }
        for h in [holdAfterInhale, holdAfterExhale] where h != .zero && (h < .seconds(1) || h > .seconds(20)) {
            return "a hold lasts 0 (none) or 1 to 20 seconds"
        }
        if topUp != .zero && (topUp < .milliseconds(500) || topUp > .seconds(5)) {
            return "a top-up breath in lasts 0 (none) or 0.5 to 5 seconds"
        }
        if let r = ramp {
            let own = tenthsPerMinute
            if r.fromTenths <= own || r.fromTenths > PaceRamp.fastestTenths {
                return "a slowing pace starts faster than the pattern's own \(Self.tenths(own)) breaths a minute, and at most \(PaceRamp.fastestTenths / 10)"
            }
            if r.over < .seconds(10) || r.over > PaceRamp.longest || r.over.nanoseconds % 1_000_000_000 != 0 {
                return "a slowing pace lasts 10 to \(PaceRamp.longest.wholeSeconds) whole seconds"
            }
            // The first breaths are shorter by own/from: the shortest phase must still be one a
            // person can follow (and long enough for its pulses).
            let shortest = BreathingPhase.breathOrder.map { length(of: $0) }.filter { $0 > .zero }.min() ?? inhale
            if shortest.nanoseconds / 1_000_000 * Int64(own) / Int64(r.fromTenths) < 500 {
                return "starting at \(Self.tenths(r.fromTenths)) breaths a minute squeezes the shortest phase below 0.5 s; start slower"
            }
        }
        return nil
    }

    // MARK: Text

    /// The pattern in the words `--pattern`, `breathing.pattern` and `patterns.txt` use:
    /// `IN,HOLD,OUT,HOLD` in seconds (`4,7,8,0`), the inhale optionally followed by `+TOPUP`
    /// (`2+1,0,6,0`), then optionally `from RATE over SECONDS` for a slowing pace
    /// (`4,0,6,0 from 11 over 180`).
    public var text: String {
        var s = Self.seconds(inhale)
        if topUp > .zero { s += "+" + Self.seconds(topUp) }
        s += "," + Self.seconds(holdAfterInhale) + "," + Self.seconds(exhale) + "," + Self.seconds(holdAfterExhale)
        if let r = ramp { s += " from \(Self.tenths(r.fromTenths)) over \(r.over.wholeSeconds)" }
        return s
    }

    /// A short name for a pattern that has none: its nonzero lengths, `4-7-8`, `4.4-6.5`.
    public var numbersName: String {
        var parts: [String] = []
        for p in BreathingPhase.breathOrder where length(of: p) > .zero { parts.append(Self.seconds(length(of: p))) }
        return parts.joined(separator: "-")
    }

    public enum ParseProblem: Error, Equatable, CustomStringConvertible {
        case malformed(String)
        case invalid(String)
        public var description: String {
            switch self {
            case .malformed(let why), .invalid(let why): why
            }
        }
    }

    /// Parses `text` (see `text`) and checks it (`problem`).
    public static func parse(_ text: String) throws(ParseProblem) -> BreathingPattern {
        let words = text.split(separator: " ", omittingEmptySubsequences: true)
        guard let first = words.first else { throw .malformed("expected IN,HOLD,OUT,HOLD in seconds, like 4,7,8,0") }
        let fields = first.split(separator: ",", omittingEmptySubsequences: false)
        guard fields.count == 4 else {
            throw .malformed("expected four lengths IN,HOLD,OUT,HOLD in seconds, like 4,7,8,0 (0 for no hold); got \(fields.count)")
        }
        var inhaleText = fields[0], topUpText: Substring?
        if let plus = fields[0].firstIndex(of: "+") {
            inhaleText = fields[0][..<plus]
            topUpText = fields[0][fields[0].index(after: plus)...]
        }
        func length(_ s: Substring, _ what: String) throws(ParseProblem) -> Duration {
            guard let tenths = Self.parseTenths(s) else {
                throw .malformed("\(what) \(String(reflecting: String(s))) is not a length in seconds with at most one decimal (4, 4.4, 0)")
            }
            return .milliseconds(Int64(tenths) * 100)
        }
        var p = BreathingPattern(inhale: try length(inhaleText, "the breath in"),
                                 holdAfterInhale: try length(fields[1], "the first hold"),
                                 exhale: try length(fields[2], "the breath out"),
                                 holdAfterExhale: try length(fields[3], "the second hold"),
                                 topUp: try topUpText.map { t throws(ParseProblem) in try length(t, "the top-up") } ?? .zero)
        let rest = words.dropFirst()
        if !rest.isEmpty {
            guard rest.count == 4, rest[rest.startIndex] == "from", rest[rest.startIndex + 2] == "over" else {
                throw .malformed("after the lengths only 'from RATE over SECONDS' may follow (a pace slowing from RATE breaths a minute), like 4,0,6,0 from 11 over 180")
            }
            guard let rate = Self.parseTenths(rest[rest.startIndex + 1]) else {
                throw .malformed("the starting rate \(String(reflecting: String(rest[rest.startIndex + 1]))) is not a number of breaths a minute (11, 8.5)")
            }
            guard let over = Int(rest[rest.startIndex + 3]), over >= 0, over <= 100_000 else {
                throw .malformed("the slowing time \(String(reflecting: String(rest[rest.startIndex + 3]))) is not a whole number of seconds")
            }
            p.ramp = PaceRamp(fromTenths: rate, over: .seconds(over))
        }
        if let why = p.problem { throw .invalid(why) }
        return p
    }

    /// "4", "4.4", "0.5", "10" as tenths; nil for anything else (signs, exponents, more decimals).
    public static func parseTenths(_ s: Substring) -> Int? {
        let parts = s.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count <= 2, let whole = parts.first, !whole.isEmpty, whole.count <= 4,
              whole.allSatisfy({ $0.isASCII && $0.isNumber }), let w = Int(whole) else { return nil }
        var tenths = w * 10
        if parts.count == 2 {
            let frac = parts[1]
            guard frac.count == 1, let d = frac.first, d.isASCII, let v = d.wholeNumberValue else { return nil }
            tenths += v
        }
        return tenths
    }

    /// A length in seconds as the files write it: `4`, `4.4`.
    static func seconds(_ d: Duration) -> String {
        if d.nanoseconds % 100_000_000 == 0 { return tenths(Int(d.nanoseconds / 100_000_000)) }
        return "\(Double(d.nanoseconds) / 1e9)"
    }

    static func tenths(_ t: Int) -> String { t % 10 == 0 ? "\(t / 10)" : "\(t / 10).\(t % 10)" }
}

/// A pattern with the name the person sees on the breathing page.
public struct BreathingPreset: Equatable, Sendable {
    public var name: String
    public var pattern: BreathingPattern
    /// One of the maintainer's (`patterns.txt`), not shipped with the device nor configured.
    public var isCustom: Bool

    public init(name: String, pattern: BreathingPattern, isCustom: Bool = false) {
        self.name = name
        self.pattern = pattern
        self.isCustom = isCustom
    }

    /// The spec's square, 4 s a side: the start-up default.
    public static let box = BreathingPreset(name: "box", pattern: .box)
    /// A long exhale, no holds, starting near an anxious person's pace and slowing to six breaths
    /// a minute over three minutes (Van Diest et al. 2014: a low inhale/exhale ratio relaxes
    /// more at the same rate; Dodow's 11 → 6 a minute).
    public static let calm = BreathingPreset(
        name: "calm", pattern: BreathingPattern(inhale: .seconds(4), holdAfterInhale: .zero, exhale: .seconds(6),
                                                holdAfterExhale: .zero, ramp: PaceRamp(fromTenths: 110, over: .seconds(180))))
    public static let fourSevenEight = BreathingPreset(
        name: "478", pattern: BreathingPattern(inhale: .seconds(4), holdAfterInhale: .seconds(7), exhale: .seconds(8),
                                               holdAfterExhale: .zero))
    /// Cyclic sighing: in, a short top-up in, a long out (Balban et al. 2023).
    public static let sigh = BreathingPreset(
        name: "sigh", pattern: BreathingPattern(inhale: .seconds(2), holdAfterInhale: .zero, exhale: .seconds(6),
                                                holdAfterExhale: .zero, topUp: .seconds(1)))
    /// About 5.5 breaths a minute, where heart-rate variability peaks for most adults (Lehrer).
    public static let resonance = BreathingPreset(
        name: "resonance", pattern: BreathingPattern(inhale: .milliseconds(4400), holdAfterInhale: .zero,
                                                     exhale: .milliseconds(6500), holdAfterExhale: .zero))

    public static let builtIn: [BreathingPreset] = [.box, .calm, .fourSevenEight, .sigh, .resonance]

    /// Names are what a person reads on the page and a maintainer types: 1–10 lower-case letters,
    /// digits, '.' or '-', starting with a letter or digit.
    public static let maximumNameLength = 10

    public static func problem(withName name: String) -> String? {
        guard !name.isEmpty, name.count <= maximumNameLength else {
            return "a pattern's name is 1 to \(maximumNameLength) characters (it is shown on the breathing page)"
        }
        guard name.unicodeScalars.allSatisfy({ ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "-" || $0 == "." }),
              let first = name.unicodeScalars.first, first != "-", first != "." else {
            return "a pattern's name is lower-case letters a-z, digits, '-' and '.', starting with a letter or digit"
        }
        return nil
    }
}
