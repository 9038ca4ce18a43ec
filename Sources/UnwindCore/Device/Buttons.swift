/// The device's five buttons, in the words printed on the case.
public enum Button: String, CaseIterable, Sendable, Hashable {
    case page = "PAGE"
    case left = "LEFT"
    case right = "RIGHT"
    case select = "SELECT"
    case panic = "PANIC"
}

/// One raw change of a button line, with the time the kernel stamped on it.
public struct ButtonEdge: Equatable, Sendable {
    public var button: Button
    public var pressed: Bool
    public var at: Instant
    public init(_ button: Button, pressed: Bool, at: Instant) {
        self.button = button
        self.pressed = pressed
        self.at = at
    }
}

/// What a person did with a button, after debouncing.
public enum ButtonGesture: Equatable, Sendable {
    /// The button went down (debounced).
    case down(Button)
    /// Released before the long-press threshold.
    case short(Button)
    /// Still held when the long-press threshold passed: reported while the button is down.
    case long(Button)
    /// The button came up after being held this long.
    case up(Button, heldFor: Duration)

    public var button: Button {
        switch self {
        case .down(let b), .short(let b), .long(let b), .up(let b, _): return b
        }
    }
}

/// Turns bouncy edges into gestures, using only the edges' own timestamps.
///
/// Debouncing is leading-edge: the first edge of a change is taken at once (so a press answers
/// within a frame) and further edges within `debounce` are ignored; when the lockout ends the
/// line's last raw level decides whether a release was missed.
public struct ButtonClassifier: Sendable {
    public struct Timing: Sendable, Equatable {
        public var debounce: Duration
        public var longPress: Duration
        public init(debounce: Duration = .milliseconds(20), longPress: Duration = .milliseconds(800)) {
            self.debounce = debounce
            self.longPress = longPress
        }
    }

    struct LineState: Sendable {
        var stable = false
        var raw = false
        var rawAt = Instant.zero
        var lockoutUntil = Instant(nanoseconds: .min)
        var downAt = Instant.zero
        var longReported = false
    }

    public var timing: Timing
    var lines: [LineState]

    public init(timing: Timing = Timing()) {
        self.timing = timing
        self.lines = Array(repeating: LineState(), count: Button.allCases.count)
    }

    static func index(_ b: Button) -> Int {
        switch b {
        case .page: 0
        case .left: 1
        case .right: 2
        case .select: 3
        case .panic: 4
        }
    }

    public func isDown(_ b: Button) -> Bool { lines[Self.index(b)].stable }

    /// Feeds one raw edge; gestures it completes are appended to `out`.
    public mutating func feed(_ edge: ButtonEdge, into out: inout [ButtonGesture]) {
        advance(to: edge.at, into: &out)
        let i = Self.index(edge.button)
        lines[i].raw = edge.pressed
        lines[i].rawAt = edge.at
        if edge.at >= lines[i].lockoutUntil && edge.pressed != lines[i].stable {
            accept(i, edge.button, pressed: edge.pressed, at: edge.at, into: &out)
        }
    }

    /// Reports what time alone decides: a long press passing its threshold, a release hidden in
    /// a lockout.
    public mutating func advance(to now: Instant, into out: inout [ButtonGesture]) {
        for b in Button.allCases {
            let i = Self.index(b)
            if now >= lines[i].lockoutUntil && lines[i].raw != lines[i].stable {
                let at = max(lines[i].rawAt, lines[i].lockoutUntil)
                accept(i, b, pressed: lines[i].raw, at: at, into: &out)
            }
            if lines[i].stable && !lines[i].longReported && now >= lines[i].downAt + timing.longPress {
                lines[i].longReported = true
                out.append(.long(b))
            }
        }
    }

    /// The next instant at which `advance` could report something, for the loop's wait.
    public func nextDeadline() -> Instant? {
        var best: Instant?
        for l in lines {
            if l.raw != l.stable { best = min(best ?? l.lockoutUntil, l.lockoutUntil) }
            if l.stable && !l.longReported {
                let t = l.downAt + timing.longPress
                best = min(best ?? t, t)
            }
        }
        return best
    }

    private mutating func accept(_ i: Int, _ b: Button, pressed: Bool, at: Instant, into out: inout [ButtonGesture]) {
        lines[i].stable = pressed
        lines[i].lockoutUntil = at + timing.debounce
        if pressed {
            lines[i].downAt = at
            lines[i].longReported = false
            out.append(.down(b))
        } else {
            let held = at - lines[i].downAt
            if !lines[i].longReported { out.append(.short(b)) }
            lines[i].longReported = true
            out.append(.up(b, heldFor: held))
        }
    }
}
