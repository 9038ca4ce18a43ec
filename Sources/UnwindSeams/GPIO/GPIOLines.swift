import UnwindCore

/// Which GPIO line: a chip and an offset on it, or the name the device tree gave the line.
///
/// Parsed from configuration text:
/// - `gpiochip0:17` — offset 17 on gpiochip0 (the chip may also be `/dev/gpiochip0`, a chip
///   number `0`, or a chip label such as `pinctrl-bcm2711`, as gpiodetect prints them);
/// - `GPIO17`, `MOTOR` — a line name, looked up on every chip (gpioinfo lists the names).
///
/// A bare number is refused: it would silently mean "gpiochip0" on one board and the wrong
/// chip on another.
public enum LineSelector: Hashable, Sendable, CustomStringConvertible {
    case offset(chip: String, line: Int)
    case name(String)

    public struct ParseError: Error, Equatable, Sendable, CustomStringConvertible {
        public var text: String
        public var reason: String
        public init(text: String, reason: String) {
            self.text = text
            self.reason = reason
        }
        public var description: String { "GPIO line \"\(text)\": \(reason)" }
    }

    public init(parsing text: String) throws(ParseError) {
        let t = text.trimmingWhitespace
        guard !t.isEmpty else {
            throw ParseError(text: text, reason: "empty; write chip:offset like gpiochip0:17, or a line name like GPIO17")
        }
        if let colon = t.lastIndex(of: ":") {
            let chip = String(t[..<colon]).trimmingWhitespace
            let lineText = String(t[t.index(after: colon)...]).trimmingWhitespace
            guard !chip.isEmpty else {
                throw ParseError(text: text, reason: "no chip before ':'; write chip:offset like gpiochip0:17")
            }
            guard !lineText.isEmpty, lineText.allSatisfy({ $0.isASCII && $0.isNumber }), let line = Int(lineText) else {
                throw ParseError(text: text, reason: "'\(lineText)' after ':' is not a line offset; write chip:offset like gpiochip0:17")
            }
            self = .offset(chip: chip, line: line)
            return
        }
        if t.allSatisfy({ $0.isASCII && $0.isNumber }) {
            throw ParseError(text: text, reason: "a bare number does not say which chip; write gpiochip0:\(t), or the line name GPIO\(t)")
        }
        self = .name(t)
    }

    /// The configuration text this selector parses from.
    public var description: String {
        switch self {
        case .offset(let chip, let line): "\(chip):\(line)"
        case .name(let name): name
        }
    }
}

/// Which lines the device uses and how the buttons are wired. Nothing here is read from the
/// board: the composition root builds one (from `raspberryPi` or from the command line).
public struct GPIOConfiguration: Hashable, Sendable {
    /// The vibration motor's driver input. Active-high: requested as an output, driven low at
    /// request, high only while a pulse runs.
    public var motor: LineSelector
    /// The buttons that are fitted; a button without a line is simply never pressed.
    public var buttons: [Button: LineSelector]
    /// `true`: each button connects its line to ground, the line is pulled up, and a low line
    /// means pressed. `false`: buttons connect to 3V3, the line is pulled down, high means pressed.
    public var activeLowButtons: Bool
    /// The consumer name gpioinfo shows for the lines.
    public var consumer: String

    public init(motor: LineSelector, buttons: [Button: LineSelector], activeLowButtons: Bool = true,
                consumer: String = "unwind") {
        self.motor = motor
        self.buttons = buttons
        self.activeLowButtons = activeLowButtons
        self.consumer = consumer
    }

    /// The reference build on a Raspberry Pi's 40-pin header (BCM numbers, gpiochip0):
    ///
    /// | role   | BCM | header pin | ground next to it |
    /// |--------|-----|------------|-------------------|
    /// | motor  | 18  | 12         | 14                |
    /// | PAGE   | 5   | 29         | 30                |
    /// | LEFT   | 6   | 31         | 30                |
    /// | RIGHT  | 13  | 33         | 34                |
    /// | SELECT | 19  | 35         | 34                |
    /// | PANIC  | 26  | 37         | 39                |
    ///
    /// Why these: they stay clear of I²C1 (BCM 2/3, the display), the UART (BCM 14/15, the
    /// modem), the HAT ID EEPROM (BCM 0/1), SPI0 (BCM 7–11) and the 1-Wire default (BCM 4).
    /// BCM 18 resets with a pull-down, so the motor stays off while the Pi boots (BCM 0–8 reset
    /// pulled up and would buzz it until unwind starts); it is also PWM0 should the motor ever
    /// want PWM. The buttons' pins reset pulled down, which does not matter: unwind requests
    /// its own pull-up. BCM 18/19 are the PCM/I²S clock and frame pins: an I²S audio HAT would
    /// need the motor and SELECT moved.
    ///
    /// On a Pi 5 with an older kernel the header's chip is gpiochip4 rather than gpiochip0
    /// (gpiodetect shows which); the line names (`GPIO18`, …) are the same on every Pi, so
    /// `GPIO18` style selectors are the portable spelling.
    public static let raspberryPi = GPIOConfiguration(
        motor: .offset(chip: "gpiochip0", line: 18),
        buttons: [
            .page: .offset(chip: "gpiochip0", line: 5),
            .left: .offset(chip: "gpiochip0", line: 6),
            .right: .offset(chip: "gpiochip0", line: 13),
            .select: .offset(chip: "gpiochip0", line: 19),
            .panic: .offset(chip: "gpiochip0", line: 26),
        ])

    /// What is wrong with the configuration, in words, or nil. Catches what would otherwise
    /// surface as a confusing EBUSY at start-up: one line given two roles.
    public var problem: String? {
        var roles: [(String, LineSelector)] = [("motor", motor)]
        for b in Button.allCases { if let s = buttons[b] { roles.append((b.rawValue, s)) } }
        for i in roles.indices {
            for j in roles.indices where j > i && roles[i].1 == roles[j].1 {
                return "\(roles[i].0) and \(roles[j].0) are both on \(roles[i].1): each needs its own line"
            }
        }
        for (role, selector) in roles {
            if case .offset(_, let line) = selector, line < 0 { return "\(role): line offsets start at 0" }
        }
        return nil
    }

    /// The logical state of a button from the physical level of its line.
    @inline(__always)
    public static func pressed(lineHigh: Bool, activeLow: Bool) -> Bool { lineHigh != activeLow }
}

extension String {
    fileprivate var trimmingWhitespace: String {
        var s = Substring(self)
        while let f = s.first, f.isWhitespace { s.removeFirst() }
        while let l = s.last, l.isWhitespace { s.removeLast() }
        return String(s)
    }
}
