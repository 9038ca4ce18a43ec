/// The three senses of the 5-4-3-2-1 exercise, in the order each stage asks for them (spec 3.3).
public enum GroundingGoal: Int, CaseIterable, Sendable {
    case see, touch, hear

    /// The goal as the spec shows it: "[SEE]", "[TOUCH]", "[HEAR]".
    public var label: String {
        switch self {
        case .see: "[SEE]"
        case .touch: "[TOUCH]"
        case .hear: "[HEAR]"
        }
    }

    /// The verb under the goal: "5 things you can see".
    public var verb: String {
        switch self {
        case .see: "see"
        case .touch: "touch"
        case .hear: "hear"
        }
    }

    /// One letter for the cells of the finishing grid.
    public var initial: String {
        switch self {
        case .see: "S"
        case .touch: "T"
        case .hear: "H"
        }
    }
}

/// The 5-4-3-2-1 grounding exercise (spec 3.2–3.6).
///
/// The exercise is 15 rows: for n = 5, 4, 3, 2, 1 the three goals see, touch, hear in turn, each
/// row asking for n items — 45 captures in all. Captures are numbered 0…44 in the order they are
/// taken; capture `i` is the camera's `NN.JPG` when a camera is configured. A full row gives way
/// to the next at once, so the row of frames shortens by one after each n (spec 3.2.1). Undo
/// works within the current row only. After the 45th capture the exercise is complete and the
/// finishing grid shows all of it (spec 3.5) until it is retried (spec 3.6).
///
/// The state lives in memory only: leaving the page keeps it, the daemon's exit forgets it.
public struct GroundingState: Equatable, Sendable {
    public static let total = 45
    public static let rows = 15
    /// The finishing grid: 5 rows of 9 cells, capture `i` at row `i / 9`, column `i % 9`.
    public static let gridColumns = 9
    public static let gridRows = 5

    /// Captures taken so far, 0…45.
    public private(set) var captured: Int = 0

    public init(captured: Int = 0) {
        self.captured = max(0, min(Self.total, captured))
    }

    public var isComplete: Bool { captured >= Self.total }

    /// Items asked for in row `r` (0…14): 5, 5, 5, 4, 4, 4, …, 1, 1, 1.
    public static func size(ofRow r: Int) -> Int { 5 - r / 3 }

    public static func goal(ofRow r: Int) -> GroundingGoal { GroundingGoal(rawValue: r % 3)! }

    /// Index of the first capture of row `r`.
    public static func start(ofRow r: Int) -> Int {
        var s = 0
        var k = 0
        while k < r { s += size(ofRow: k); k += 1 }
        return s
    }

    /// The row capture `i` belongs to.
    public static func row(ofCapture i: Int) -> Int {
        var r = 0
        var s = 0
        while r < rows - 1 && s + size(ofRow: r) <= i { s += size(ofRow: r); r += 1 }
        return r
    }

    /// The row being filled (the last row once complete).
    public var row: Int { Self.row(ofCapture: min(captured, Self.total - 1)) }
    /// n: how many frames the current row has.
    public var rowSize: Int { Self.size(ofRow: row) }
    public var goal: GroundingGoal { Self.goal(ofRow: row) }
    /// Frames already filled in the current row.
    public var filledInRow: Int { isComplete ? rowSize : captured - Self.start(ofRow: row) }

    /// What the grid shows in cell `i`: the goal the capture answered, the n of its stage, and
    /// its place (1…n) in its row. Nil for a capture not taken.
    public func cell(_ i: Int) -> (goal: GroundingGoal, n: Int, item: Int)? {
        guard i >= 0, i < captured else { return nil }
        let r = Self.row(ofCapture: i)
        return (Self.goal(ofRow: r), Self.size(ofRow: r), i - Self.start(ofRow: r) + 1)
    }

    /// Takes one item; returns its index (the camera's file number), or nil when complete.
    public mutating func capture() -> Int? {
        guard !isComplete else { return nil }
        captured += 1
        return captured - 1
    }

    /// Undoes the last capture of the current row; returns the index undone, or nil when the row
    /// is still empty (earlier rows are done and stay done) or the exercise is complete.
    public mutating func undo() -> Int? {
        guard !isComplete, filledInRow > 0 else { return nil }
        captured -= 1
        return captured
    }

    /// Starts again from the first [SEE] of five.
    public mutating func retry() { captured = 0 }
}

/// The page's buttons.
extension DeviceCore {
    // MARK: Grounding (spec 3.x)

    /// SELECT captures (on the press: the page gives it no long meaning), LEFT undoes the last
    /// capture of the row; on the finishing grid SELECT retries.
    mutating func handleGrounding(_ gesture: ButtonGesture, at now: Moment, effects: inout [Effect]) {
        switch gesture {
        case .down(.select):
            if state.grounding.isComplete {
                state.grounding.retry()
                effects.append(.deleteCaptures)
            } else if let i = state.grounding.capture() {
                effects.append(.captureImage(i))
                if state.grounding.isComplete {
                    // Spec: photos are kept only until the exercise is completed.
                    effects.append(.deleteCaptures)
                    pulses(at: now.instant, count: 3, on: .milliseconds(120), off: .milliseconds(120), effects: &effects)
                } else {
                    pulses(at: now.instant, count: 1, on: settings.captureTick, off: .zero, effects: &effects)
                }
            }
        case .down(.left):
            if let i = state.grounding.undo() { effects.append(.discardCapture(i)) }
        default: break
        }
    }
}
