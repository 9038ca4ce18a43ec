import UnwindCore
import UnwindHardware

/// Everything `/etc/unwind/unwind.conf` can set, with the defaults of the reference build.
/// The file is YAML; every key is optional. `DeviceConfiguration.parse` reports every wrong
/// key at once, each with what is wrong and what is allowed.
public struct DeviceConfiguration: Sendable {
    public var stateDirectory = "/var/lib/unwind"
    /// The shipped help files and mantras; nil means the ones built with the binary.
    public var contentDirectory: String?
    public var settings = DeviceSettings()
    public var buttonTiming = ButtonClassifier.Timing()
    public var gpio = GPIOConfiguration.raspberryPi
    public var display = DisplayConfiguration()

    public init() {}

    public struct DisplayConfiguration: Sendable, Equatable {
        /// `/dev/i2c-<bus>`.
        public var bus = 1
        public var address: UInt8 = 0x3C
        public var panel = SSD1306.Configuration()
        public init() {}
    }

    public static let defaultPath = "/etc/unwind/unwind.conf"

    /// Parses the file's text; throws every problem found, one per key.
    public static func parse(_ yaml: String, path: String = defaultPath) throws(ConfigErrors) -> DeviceConfiguration {
        let r = ConfigReader(yaml: yaml)
        var c = DeviceConfiguration()
        c.stateDirectory = r.string("state_directory", default: c.stateDirectory)
        if !c.stateDirectory.hasPrefix("/") { r.problem("state_directory", "must be an absolute path") }
        c.contentDirectory = r.optionalString("content_directory")

        let p = c.settings.pattern
        c.settings.pattern = BreathingPattern(
            inhale: r.seconds("breathing.inhale", default: p.inhale.seconds, in: 1...20),
            holdAfterInhale: r.seconds("breathing.hold_after_inhale", default: p.holdAfterInhale.seconds, in: 1...20),
            exhale: r.seconds("breathing.exhale", default: p.exhale.seconds, in: 1...20),
            holdAfterExhale: r.seconds("breathing.hold_after_exhale", default: p.holdAfterExhale.seconds, in: 1...20))

        let h = c.settings.haptics
        c.settings.haptics = HapticStyle(
            pulse: .milliseconds(r.int("haptics.pulse_ms", default: Int(h.pulse.milliseconds), in: 20...1000)),
            gap: .milliseconds(r.int("haptics.gap_ms", default: Int(h.gap.milliseconds), in: 20...1000)),
            breathPulses: r.int("haptics.breath_pulses", default: h.breathPulses, in: 0...4),
            holdPulses: r.int("haptics.hold_pulses", default: h.holdPulses, in: 0...4))

        c.buttonTiming = ButtonClassifier.Timing(
            debounce: .milliseconds(r.int("buttons.debounce_ms", default: 20, in: 1...200)),
            longPress: .milliseconds(r.int("buttons.long_press_ms", default: 800, in: 300...5000)))
        c.gpio.activeLowButtons = r.bool("buttons.active_low", default: true)

        func line(_ key: String, _ current: LineSelector) -> LineSelector {
            guard let text = r.optionalString(key) else { return current }
            do { return try LineSelector(parsing: text) } catch {
                r.problem(key, error.reason)
                return current
            }
        }
        c.gpio.motor = line("gpio.motor", c.gpio.motor)
        for b in Button.allCases {
            let key = "gpio." + b.rawValue.lowercased()
            if let current = c.gpio.buttons[b] { c.gpio.buttons[b] = line(key, current) }
        }
        if let problem = c.gpio.problem { r.problem("gpio", problem) }

        c.display.bus = r.int("display.bus", default: 1, in: 0...255)
        c.display.address = UInt8(r.int("display.address", default: 0x3C, in: 0x03...0x77))
        let height = r.int("display.height", default: 64, in: 32...64)
        if height != 32 && height != 64 { r.problem("display.height", "must be 64 or 32") }
        c.display.panel.height = height == 32 ? 32 : 64
        c.display.panel.flipped = r.bool("display.rotate_180", default: false)
        c.display.panel.contrast = UInt8(r.int("display.contrast", default: Int(c.display.panel.contrast), in: 0...255))
        c.display.panel.busSpeedHz = r.int("display.bus_speed_hz", default: c.display.panel.busSpeedHz, in: 10_000...3_400_000)

        r.reportUnknownKeys()
        if !r.problems.isEmpty { throw ConfigErrors(path: path, problems: r.problems) }
        return c
    }
}

extension Duration {
    var seconds: Double { Double(nanoseconds) / 1e9 }
    var milliseconds: Int64 { nanoseconds / 1_000_000 }
}
