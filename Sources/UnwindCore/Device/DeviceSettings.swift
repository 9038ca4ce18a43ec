
/// Everything about the device's behaviour that configuration may change.
public struct DeviceSettings: Equatable, Sendable {
    /// The pattern the breathing page offers at start when the person has chosen none (a shipped
    /// preset's, or one given by its lengths, which the page then offers beside the presets).
    public var pattern: BreathingPattern
    public var haptics: HapticStyle
    /// A running session is written out this often, so a power cut loses at most this much.
    public var checkpointInterval: Duration
    /// How long "stop first" stays on screen after a locked PAGE press.
    public var lockNotice: Duration
    /// Motor edges are handed to the loop this far ahead of their corner.
    public var hapticLookahead: Duration

    /// The zone reminders and night dimming read local time in (`/etc/localtime` on the device).
    public var timeZone: LocalTimeZone
    /// Treat the wall clock as right even when nothing synchronised it: only for a board with a
    /// battery-backed real-time clock and no network. Otherwise reminders wait for NTP.
    public var trustUnsynchronisedClock: Bool
    public var screen: ScreenCareSettings
    /// The gentle pattern a reminder plays: on, off, on, off, … durations from its start.
    public var reminderPattern: [Duration]
    /// The tick that confirms a grounding capture.
    public var captureTick: Duration
    public var panic: PanicSettings
    public var checkIn: CheckInSettings

    // MARK: Breathing beyond the box

    /// The named presets, session lengths, the before/after check-in and the end of a timed session.
    public var breathing = BreathingSettings()

    /// STATUS by SMS and the maintainer's texts.
    public var statusTexts = StatusTextSettings()

    public init(pattern: BreathingPattern = .box, haptics: HapticStyle = HapticStyle(),
                checkpointInterval: Duration = .seconds(60), lockNotice: Duration = .milliseconds(2500),
                hapticLookahead: Duration = .milliseconds(250),
                timeZone: LocalTimeZone = .utc, trustUnsynchronisedClock: Bool = false,
                screen: ScreenCareSettings = ScreenCareSettings(),
                reminderPattern: [Duration] = DeviceSettings.gentlePattern,
                captureTick: Duration = .milliseconds(40), panic: PanicSettings = PanicSettings(),
                checkIn: CheckInSettings = CheckInSettings()) {
        self.pattern = pattern
        self.haptics = haptics
        self.checkpointInterval = checkpointInterval
        self.lockNotice = lockNotice
        self.hapticLookahead = hapticLookahead
        self.timeZone = timeZone
        self.trustUnsynchronisedClock = trustUnsynchronisedClock
        self.screen = screen
        self.reminderPattern = reminderPattern
        self.captureTick = captureTick
        self.panic = panic
        self.checkIn = checkIn
    }

    /// Two slow swells, a pause, two more: 300 ms on, 500 ms off, 300 on, 1500 off, 300 on,
    /// 500 off, 300 on — 3.7 s, nothing like the corners' crisp pulses.
    public static let gentlePattern: [Duration] = [
        .milliseconds(300), .milliseconds(500), .milliseconds(300), .milliseconds(1500),
        .milliseconds(300), .milliseconds(500), .milliseconds(300),
    ]
}

/// Looking after a bedside OLED: sleep when idle, dim at night, move static content now and then.
public struct ScreenCareSettings: Equatable, Sendable {
    /// The display sleeps after this long without a button (never during a breathing session,
    /// a reminder or an alert); nil: never sleeps.
    public var sleepAfter: Duration?
    /// SSD1306 contrast by day and by night (0…255; the panel's reset value is 0x7F).
    public var dayContrast: UInt8
    public var nightContrast: UInt8
    /// Night runs from `nightStart` to `nightEnd`, local minutes after midnight (it may cross
    /// midnight: 22:00–07:00 is 1320…420); nil: never dims. Dimming follows the wall clock only
    /// once it is synchronised (or trusted): an unset clock keeps the day contrast.
    public var nightStart: Int?
    public var nightEnd: Int?
    /// The whole picture moves by one pixel this often, through four positions; nil: never.
    public var pixelShiftPeriod: Duration?

    public init(sleepAfter: Duration? = .seconds(120), dayContrast: UInt8 = 0xCF, nightContrast: UInt8 = 0x01,
                nightStart: Int? = 22 * 60, nightEnd: Int? = 7 * 60, pixelShiftPeriod: Duration? = .seconds(180)) {
        self.sleepAfter = sleepAfter
        self.dayContrast = dayContrast
        self.nightContrast = nightContrast
        self.nightStart = nightStart
        self.nightEnd = nightEnd
        self.pixelShiftPeriod = pixelShiftPeriod
    }

    public var problem: String? {
        if let s = sleepAfter, s < .seconds(5) { return "the display sleeps after at least 5 seconds" }
        if (nightStart == nil) != (nightEnd == nil) { return "night dimming needs both a start and an end" }
        if let a = nightStart, !(0..<1440).contains(a) { return "night starts at 00:00 to 23:59" }
        if let b = nightEnd, !(0..<1440).contains(b) { return "night ends at 00:00 to 23:59" }
        if let p = pixelShiftPeriod, p < .seconds(1) { return "the pixel shift period is at least 1 second" }
        return nil
    }

    /// Whether `minute` (after local midnight) is night.
    public func isNight(minute: Int) -> Bool {
        guard let a = nightStart, let b = nightEnd, a != b else { return false }
        return a < b ? (minute >= a && minute < b) : (minute >= a || minute < b)
    }
}
