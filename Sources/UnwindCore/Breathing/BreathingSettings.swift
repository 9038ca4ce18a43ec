/// What configuration may change about the breathing page beyond the pattern's lengths and the
/// pulses (`DeviceSettings.pattern`, `DeviceSettings.haptics`).
public struct BreathingSettings: Equatable, Sendable {
    /// The shipped preset `DeviceSettings.pattern` came from (`breathing.pattern: calm`), so the
    /// page shows its name; nil: lengths given as numbers (or the default, box).
    public var patternName: String?
    /// Start with `DeviceSettings.pattern` even when the person chose another one last time:
    /// `--pattern` on the command line says what to run now.
    public var patternOverridesRemembered: Bool
    /// The session length offered when none is remembered, in minutes (0: open).
    public var sessionMinutes: Int
    /// Ask how anxious the person is (0–10) before and after a session.
    public var checkIn: Bool
    /// The motor's goodbye when a timed session ends by itself: on, off, on … from the end.
    public var endCue: [Duration]
    /// The last stretch of a timed session, whose pulses are fewer and shorter.
    public var softenLast: Duration
    /// After a timed session ends, the display sleeps this long after the end (or sooner, if
    /// `ScreenCareSettings.sleepAfter` is shorter): time to read "Well done" and rate, if awake.
    public var sleepAfterEnd: Duration

    public init(patternName: String? = nil, patternOverridesRemembered: Bool = false, sessionMinutes: Int = 0,
                checkIn: Bool = false, endCue: [Duration] = BreathingSettings.gentleEnd,
                softenLast: Duration = .seconds(60), sleepAfterEnd: Duration = .seconds(30)) {
        self.patternName = patternName
        self.patternOverridesRemembered = patternOverridesRemembered
        self.sessionMinutes = sessionMinutes
        self.checkIn = checkIn
        self.endCue = endCue
        self.softenLast = softenLast
        self.sleepAfterEnd = sleepAfterEnd
    }

    /// Three swells, each softer and the pauses longer: 400 ms on, 600 off, 250 on, 800 off,
    /// 150 on — 2.2 s, unlike any phase's pulses or the reminder's pattern.
    public static let gentleEnd: [Duration] = [
        .milliseconds(400), .milliseconds(600), .milliseconds(250), .milliseconds(800), .milliseconds(150),
    ]
}
