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
///
/// The panic path's news is scripted on the same time line (the scripted modem link):
///
///     0     reports after 4          # each alert "delivered" 4 s after "sent" (`reports never`: none, the default)
///     0     fail 2                   # slot 2's alerts fail ("not in service")
///     0     calls end-after 25       # a dialled call ends by itself after 25 s (`calls ring`: until hung up, the default)
///     40    reply 1 On my way        # slot 1's contact replies (the rest of the line is the text; no "#" in it)
///     41    reply +15550100009 Hi    # anyone replies: a number, or a sender's name without spaces
///     60    readiness weak-signal 3  # or: ready, no-modem, modem-silent, not-registered, no-service-centre,
///                                    #     sim WHY… (last); several problems on one line
public struct ButtonScript: Equatable, Sendable {
    public struct Press: Equatable, Sendable {
        public var at: Duration
        public var button: Button
        public var holdFor: Duration
    }

    public var presses: [Press]
    public var end: Duration
    /// What the scripted modem link does, in time order.
    public var link: [LinkEvent] = []

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
        var link = [LinkEvent]()
        var end: Duration?
        for (i, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
            let f = line.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\r" })
            if f.isEmpty { continue }
            guard let t = seconds(f[0]) else { throw ParseError(line: i + 1, reason: "'\(f[0])' is not a time in seconds") }
            if let e = end, t > e { throw ParseError(line: i + 1, reason: "a press after 'end'") }
            if f.count == 2 && f[1].lowercased() == "end" { end = t; continue }
            if let action = try linkAction(f, line: line, number: i + 1) {
                link.append(LinkEvent(at: t, action))
                continue
            }
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
        var script = ButtonScript(presses: presses.sorted { $0.at < $1.at }, end: end)
        script.link = link.sorted { $0.at < $1.at }
        return script
    }

    /// A link line (`reply`, `readiness`, `reports`, `fail`, `calls`), or nil for a button line.
    static func linkAction(_ f: [Substring], line: Substring, number: Int) throws(ParseError) -> LinkAction? {
        func fail(_ why: String) -> ParseError { ParseError(line: number, reason: why) }
        let args = f.dropFirst(2).map { $0.lowercased() }
        switch f[1].lowercased() {
        case "reply":
            guard f.count >= 4 else { throw fail("'reply' takes a slot (1-5) or a sender, then the text") }
            // The text as written, spaces and all: the line after the sender.
            let rest = line.drop { $0 == " " || $0 == "\t" }.split(maxSplits: 3, whereSeparator: { $0 == " " || $0 == "\t" })
            var text = rest.count == 4 ? String(rest[3].drop { $0 == " " || $0 == "\t" }) : ""
            while let last = text.last, last == " " || last == "\t" || last == "\r" { text.removeLast() }
            guard !text.isEmpty else { throw fail("'reply' needs a text") }
            if let slot = Int(f[2]), f[2].count == 1 {
                guard (1...5).contains(slot) else { throw fail("slots are 1 to 5") }
                return .reply(from: .slot(slot - 1), text: text)
            }
            return .reply(from: .number(String(f[2])), text: text)
        case "readiness":
            var problems: [AlertReadiness.Problem] = []
            var k = 0
            while k < args.count {
                switch args[k] {
                case "ready": break
                case "no-modem": problems.append(.noModem)
                case "modem-silent": problems.append(.modemSilent)
                case "not-registered": problems.append(.notRegistered)
                case "no-service-centre": problems.append(.noServiceCentre)
                case "weak-signal":
                    guard k + 1 < args.count, let rssi = Int(args[k + 1]), (0...99).contains(rssi) else {
                        throw fail("'weak-signal' takes the rssi (0-31, 99 unknown)")
                    }
                    problems.append(.weakSignal(rssi))
                    k += 1
                case "sim":
                    problems.append(.sim(f.dropFirst(k + 3).joined(separator: " ")))
                    k = args.count
                    continue
                default:
                    throw fail("'\(args[k])' is not a readiness word (ready, no-modem, modem-silent, sim WHY, not-registered, weak-signal N, no-service-centre)")
                }
                k += 1
            }
            guard !args.isEmpty else { throw fail("'readiness' takes 'ready' or the problems") }
            return .readiness(AlertReadiness(problems: problems))
        case "reports":
            if args == ["never"] { return .reports(after: nil) }
            guard args.count == 2, args[0] == "after", let d = seconds(Substring(args[1])) else {
                throw fail("expected 'reports after SECONDS' or 'reports never'")
            }
            return .reports(after: d)
        case "fail":
            guard args.count == 1, let slot = Int(args[0]), (1...5).contains(slot) else { throw fail("'fail' takes a slot, 1 to 5") }
            return .fail(slot: slot - 1)
        case "calls":
            if args == ["ring"] { return .calls(endAfter: nil) }
            guard args.count == 2, args[0] == "end-after", let d = seconds(Substring(args[1])) else {
                throw fail("expected 'calls end-after SECONDS' or 'calls ring'")
            }
            return .calls(endAfter: d)
        default:
            return nil
        }
    }

    static func seconds(_ s: Substring) -> Duration? {
        guard let v = Double(s), v.isFinite, v >= 0, v < 1e7 else { return nil }
        return .nanoseconds(Int64((v * 1e9).rounded()))
    }
}
