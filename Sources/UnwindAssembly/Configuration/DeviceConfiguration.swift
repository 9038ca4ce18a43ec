#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import UnwindRuntime
import UnwindCore
import UnwindLinuxHardware
import UnwindModem
import UnwindRender
import UnwindSeams

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
    public var modem = ModemSettings()
    public var counselling = CounsellingLine.sfuCounselling
    /// The counselling service's website, shown as a QR code (spec 5.3).
    public var counsellingWebsite = CounsellingLine.sfuWebsite
    /// A PANIC counts as able to go out only with at least this signal (`+CSQ` rssi 0…31).
    public var readinessSignalFloor: Int {
        get { modem.modem.readinessSignalFloor }
        set { modem.modem.readinessSignalFloor = newValue }
    }
    /// The grounding camera's command, `{path}` standing for the photo to write; nil: no camera.
    public var captureCommand: String?

    public init() {}

    public struct ModemSettings: Sendable, Equatable {
        /// Prefer the stable `/dev/serial/by-id/…` name (or the udev rule's `/dev/unwind-modem`).
        public var serial = SerialConfiguration(path: "/dev/unwind-modem")
        public var modem = ModemConfiguration()
        public init() {}
    }

    public struct DisplayConfiguration: Sendable, Equatable {
        /// `/dev/i2c-<bus>`.
        public var bus = 1
        public var address: UInt8 = 0x3C
        public var panel = SSD1306.Configuration()
        public init() {}
    }

    public static let defaultPath = "/etc/unwind/unwind.conf"

    /// Directories of the system: the device moves aside, replaces and chowns what it finds in
    /// its state directory, so one of these (or anything in the first group) would be damaged.
    static let systemTrees = ["/etc", "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/boot", "/dev",
                              "/proc", "/sys"]
    static let systemDirectories = ["/", "/var", "/var/lib", "/var/log", "/var/cache", "/var/tmp", "/tmp", "/run",
                                    "/home", "/root", "/srv", "/mnt", "/media"]

    /// Why `path` cannot be the state directory, or nil. Judged on the path as written, with
    /// "." and ".." worked out: `/var/lib/../../etc` is /etc.
    public static func stateDirectoryProblem(_ path: String) -> String? {
        guard path.hasPrefix("/") else { return "must be an absolute path" }
        var parts: [Substring] = []
        for part in path.split(separator: "/") {
            if part == "." { continue }
            if part == ".." { _ = parts.popLast(); continue }
            parts.append(part)
        }
        let normal = "/" + parts.joined(separator: "/")
        if systemDirectories.contains(normal) || systemTrees.contains(where: { normal == $0 || normal.hasPrefix($0 + "/") }) {
            return "\(normal) is a system directory; the device needs a directory of its own (such as /var/lib/unwind)"
        }
        return nil
    }

    /// Parses the file's text; throws every problem found, one per key.
    public static func parse(_ yaml: String, path: String = defaultPath) throws(ConfigErrors) -> DeviceConfiguration {
        let r = ConfigReader(yaml: yaml)
        var c = DeviceConfiguration()
        c.stateDirectory = r.string("state_directory", default: c.stateDirectory)
        if let why = stateDirectoryProblem(c.stateDirectory) { r.problem("state_directory", why) }
        c.contentDirectory = r.optionalString("content_directory")

        // breathing.* and haptics.*: their own reader (BreathingConfiguration.swift).
        BreathingConfiguration.read(r, into: &c.settings)

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
        c.display.address = UInt8(r.int("display.address", default: 0x3C, in: 0x03...0x77, hex: true))
        let height = r.int("display.height", default: 64, in: 32...64)
        if height != 32 && height != 64 { r.problem("display.height", "must be 64 or 32") }
        c.display.panel.height = height == 32 ? 32 : 64
        c.display.panel.flipped = r.bool("display.rotate_180", default: false)
        c.display.panel.contrast = UInt8(r.int("display.contrast", default: Int(c.display.panel.contrast), in: 0...255))
        c.display.panel.busSpeedHz = r.int("display.bus_speed_hz", default: c.display.panel.busSpeedHz, in: 10_000...3_400_000)

        c.modem.serial = SerialConfiguration(
            path: r.string("modem.path", default: c.modem.serial.path),
            baud: r.int("modem.baud", default: c.modem.serial.baud, in: 1200...4_000_000),
            hardwareFlowControl: r.bool("modem.rtscts", default: false))
        if !c.modem.serial.path.hasPrefix("/dev/") { r.problem("modem.path", "must be a device under /dev, e.g. /dev/serial/by-id/usb-SimTech…-if02-port0") }
        if !SerialConfiguration.supportedBauds.contains(c.modem.serial.baud) {
            r.problem("modem.baud", "\(c.modem.serial.baud) is not a supported rate; one of "
                      + SerialConfiguration.supportedBauds.map(String.init).joined(separator: ", "))
        }
        if let smsc = r.optionalString("modem.service_centre") {
            do { c.modem.modem.serviceCentre = try PhoneNumber(smsc) } catch { r.problem("modem.service_centre", error.description) }
        }
        if let pin = r.optionalString("modem.sim_pin") {
            if let valid = SIMPin(pin) {
                c.modem.modem.simPIN = valid
            } else {
                r.problem("modem.sim_pin", "a SIM PIN is 4 to 8 digits")
            }
        }

        let name = r.string("counselling.name", default: c.counselling.name)
        let display = r.string("counselling.display_number", default: c.counselling.displayNumber)
        let dial = r.string("counselling.dial_number", default: c.counselling.dialNumber.text)
        do {
            c.counselling = try CounsellingLine(name: name, displayNumber: display, dialNumber: try PhoneNumber(dial))
        } catch {
            r.problem("counselling", error.description)
        }
        c.counsellingWebsite = r.string("counselling.website", default: c.counsellingWebsite)
        if !(c.counsellingWebsite.hasPrefix("https://") || c.counsellingWebsite.hasPrefix("http://"))
            || c.counsellingWebsite.contains(where: { $0.isWhitespace }) {
            r.problem("counselling.website", "must be an http:// or https:// address without spaces")
        } else {
            do { _ = try QRCode.encode(c.counsellingWebsite) } catch { r.problem("counselling.website", error.description) }
        }

        c.settings.panic = PanicSettings(
            hold: .milliseconds(r.int("panic.hold_ms", default: 1500, in: 500...5000)),
            cancelWindow: r.seconds("panic.cancel_window_s", default: 0, in: 0...30))
        parseHelp(r, into: &c)
        parseStatusTexts(r, into: &c)

        if let zone = r.optionalString("reminders.time_zone"), zone != "system" {
            if let tz = LocalTimeZone.named(zone) { c.settings.timeZone = tz } else {
                r.problem("reminders.time_zone", "\(ConfigReader.quoted(zone)) is not a time zone name like America/Vancouver")
            }
        } else {
            c.settings.timeZone = .system()
        }
        c.settings.trustUnsynchronisedClock = r.bool("reminders.trust_unsynchronised_clock", default: false)

        func minuteOfDay(_ key: String, _ d: Int?) -> Int? { Self.minuteOfDay(r, key, d) }
        var screen = c.settings.screen
        let sleep = r.int("screen.sleep_after_s", default: 120, in: 0...86_400)
        screen.sleepAfter = sleep == 0 ? nil : .seconds(sleep)
        if sleep > 0 && sleep < 5 { r.problem("screen.sleep_after_s", "0 (never) or at least 5 seconds") }
        screen.nightStart = minuteOfDay("screen.night_start", screen.nightStart)
        screen.nightEnd = minuteOfDay("screen.night_end", screen.nightEnd)
        screen.dayContrast = UInt8(r.int("screen.day_contrast", default: Int(screen.dayContrast), in: 0...255))
        screen.nightContrast = UInt8(r.int("screen.night_contrast", default: Int(screen.nightContrast), in: 0...255))
        let shift = r.int("screen.pixel_shift_s", default: 180, in: 0...86_400)
        screen.pixelShiftPeriod = shift == 0 ? nil : .seconds(shift)
        if let p = screen.problem { r.problem("screen", p) }
        c.settings.screen = screen

        c.captureCommand = r.optionalString("grounding.capture_command")
        if let cmd = c.captureCommand {
            do { _ = try CaptureCommand(cmd) } catch { r.problem("grounding.capture_command", "\(error)") }
            if !cmd.contains("{path}") { r.problem("grounding.capture_command", "must contain {path}, where the photo is written") }
        }

        r.reportUnknownKeys()
        if !r.problems.isEmpty { throw ConfigErrors(path: path, problems: r.problems) }
        return c
    }
}

extension DeviceConfiguration {
    /// `HH:MM` (24-hour) or `off`.
    static func minuteOfDay(_ r: ConfigReader, _ key: String, _ d: Int?) -> Int? {
        guard let text = r.optionalString(key) else { return d }
        if text == "off" { return nil }
        let f = text.split(separator: ":", omittingEmptySubsequences: false)
        guard f.count == 2, (1...2).contains(f[0].count), f[1].count == 2, let h = Int(f[0]), let m = Int(f[1]),
              (0...23).contains(h), (0...59).contains(m) else {
            r.problem(key, "expected a time HH:MM (24-hour) or off, got \(ConfigReader.quoted(text))")
            return d
        }
        return h * 60 + m
    }

    /// What follows the alerts (escalation calls, "I'm OK now", the tests) and the daily check-in.
    static func parseHelp(_ r: ConfigReader, into c: inout DeviceConfiguration) {
        // `checkin: "09:00"` or `checkin: on` would otherwise be quietly ignored, and the
        // maintainer would believe the check-in is on.
        for (section, example) in [("panic", "hold_ms: 1500"), ("checkin", "time: \"09:00\"")] {
            if let given = r.valueInsteadOfSection(section) {
                r.problem(section, "expected keys under it (\(example) …), not \(ConfigReader.quoted(given))")
            }
        }
        func message(_ key: String, default d: String) -> String {
            let text = r.string(key, default: d)
            if text.allSatisfy(\.isWhitespace) {
                r.problem(key, "must not be empty: it is what the contacts read")
                return d
            }
            do { _ = try AlertSlot.validateMessage(text) } catch {
                r.problem(key, error.description)
                return d
            }
            return text
        }
        var p = c.settings.panic
        let escalate = r.int("panic.escalate_after_s", default: 180, in: 0...3600)
        if escalate > 0 && escalate < 30 { r.problem("panic.escalate_after_s", "0 (never call) or 30 to 3600 seconds") }
        p.escalateAfter = .seconds(escalate)
        p.ringFor = .seconds(r.int("panic.ring_s", default: 25, in: 10...90))
        p.callRounds = r.int("panic.call_rounds", default: 1, in: 0...5)
        p.okMessage = message("panic.ok_message", default: PanicSettings.defaultOKMessage)
        p.monthlyTest = r.bool("panic.monthly_test", default: false)
        c.readinessSignalFloor = r.int("panic.signal_floor", default: 5, in: 0...31)
        c.settings.panic = p

        var k = c.settings.checkIn
        k.deadline = minuteOfDay(r, "checkin.time", nil)
        k.grace = .seconds(60 * r.int("checkin.grace_min", default: 30, in: 5...240))
        k.message = message("checkin.message", default: CheckInSettings.defaultMessage)
        c.settings.checkIn = k
    }
}

extension DeviceConfiguration {
    /// STATUS by SMS and the maintainer's texts: `device.name`, `sms.status_words`,
    /// `maintainer.number`, `maintainer.alert_after_minutes`.
    static func parseStatusTexts(_ r: ConfigReader, into c: inout DeviceConfiguration) {
        for (section, example) in [("device", "name: Unwind"), ("sms", "status_words: \"ESTADO, ÉTAT\""),
                                   ("maintainer", "number: \"+16045550100\"")] {
            if let given = r.valueInsteadOfSection(section) {
                r.problem(section, "expected keys under it (\(example) …), not \(String(reflecting: given))")
            }
        }
        var s = c.settings.statusTexts
        let name = TextSafety.nfc(r.string("device.name", default: StatusTextSettings.defaultName))
        if let why = StatusTextSettings.nameProblem(name) { r.problem("device.name", why) } else { s.deviceName = name }
        if let text = r.optionalString("sms.status_words") {
            // One string, the words separated by commas: "ESTADO, ÉTAT".
            let words = text.split(separator: ",").map { TextSafety.nfc($0.trimmingBlanks) }
            if words.count > StatusTextSettings.wordsLimit {
                r.problem("sms.status_words", "at most \(StatusTextSettings.wordsLimit) words")
            } else if let why = words.lazy.compactMap(StatusTextSettings.wordProblem).first {
                r.problem("sms.status_words", why + " (the words are separated by commas: \"ESTADO, ÉTAT\")")
            } else {
                s.statusWords = words
            }
        }
        if let number = r.optionalString("maintainer.number") {
            do { s.maintainer = try PhoneNumber(number) } catch { r.problem("maintainer.number", error.description) }
            if let m = s.maintainer, !m.isInternational {
                r.problem("maintainer.number", "must be in international form, with + and the country code (+16045550100)")
                s.maintainer = nil
            }
        }
        s.maintainerAfter = .seconds(60 * r.int("maintainer.alert_after_minutes", default: 60, in: 5...1440))
        c.settings.statusTexts = s
    }
}

extension Duration {
    var seconds: Double { Double(nanoseconds) / 1e9 }
    var milliseconds: Int64 { nanoseconds / 1_000_000 }
}
