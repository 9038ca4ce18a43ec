import UnwindSimulatedHardware
import UnwindCore

/// A script of timed button presses for the headless simulator, one press a line:
///
///     # seconds  button  [short | long | hold SECONDS]
///     0          SELECT            # a short press (80 ms)
///     2.5        PAGE long         # held 1 s: a long press
///     30         PANIC hold 1.6    # held 1.6 s
///     600        SELECT
///     610        end               # the simulation stops here
///
/// Times are seconds from the start of the simulation. Blank lines and `#` comments are ignored.
public struct ButtonScript: Equatable, Sendable {
    public struct Press: Equatable, Sendable {
        public var at: Duration
        public var button: Button
        public var holdFor: Duration
    }

    public var presses: [Press]
    public var end: Duration

    public static let shortHold: Duration = .milliseconds(80)
    public static let longHold: Duration = .seconds(1)

    public struct ParseError: Error, Equatable, CustomStringConvertible {
        public var line: Int
        public var reason: String
        public var description: String { "script line \(line): \(reason)" }
    }

    public init(presses: [Press], end: Duration) {
        self.presses = presses
        self.end = end
    }

    public static func parse(_ text: String) throws(ParseError) -> ButtonScript {
        var presses = [Press]()
        var end: Duration?
        for (i, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
            let f = line.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\r" })
            if f.isEmpty { continue }
            guard let t = seconds(f[0]) else { throw ParseError(line: i + 1, reason: "'\(f[0])' is not a time in seconds") }
            if let e = end, t > e { throw ParseError(line: i + 1, reason: "a press after 'end'") }
            if f.count == 2 && f[1].lowercased() == "end" { end = t; continue }
            guard f.count >= 2, let b = Button(rawValue: f[1].uppercased()) else {
                throw ParseError(line: i + 1, reason: "expected a button (PAGE, LEFT, RIGHT, SELECT, PANIC) or 'end'")
            }
            var hold = shortHold
            switch f.dropFirst(2).map({ $0.lowercased() }) {
            case [], ["short"]: break
            case ["long"]: hold = longHold
            case let h where h.count == 2 && h[0] == "hold":
                guard let d = seconds(Substring(h[1])), d > .zero else {
                    throw ParseError(line: i + 1, reason: "'hold' takes a positive number of seconds")
                }
                hold = d
            default: throw ParseError(line: i + 1, reason: "expected 'short', 'long' or 'hold SECONDS'")
            }
            presses.append(Press(at: t, button: b, holdFor: hold))
        }
        guard let end else { throw ParseError(line: 0, reason: "the script has no 'end' line") }
        return ButtonScript(presses: presses.sorted { $0.at < $1.at }, end: end)
    }

    static func seconds(_ s: Substring) -> Duration? {
        guard let v = Double(s), v.isFinite, v >= 0, v < 1e7 else { return nil }
        return .nanoseconds(Int64((v * 1e9).rounded()))
    }
}
