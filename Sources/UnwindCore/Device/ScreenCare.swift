
/// The panel as the core manages it: awake or asleep, its contrast, its pixel shift.
public struct DisplayState: Equatable, Sendable {
    /// Asleep: the panel is off and frames are blank; the first press only wakes it.
    public internal(set) var asleep = false
    /// The contrast last asked for (nil before the first tick).
    public internal(set) var contrast: UInt8?
    /// The pixel shift period, from the settings (the renderer needs it).
    public internal(set) var pixelShiftPeriod: Duration?
    var lastActivity: Instant?
    var lastContrastCheck: Int64 = .min
    var localClock = LocalClockCache()

    /// How far the picture is moved at `now`: it steps through (0,0), (1,0), (1,1), (0,1), one
    /// step per period, so no pixel is lit in the same place for long.
    public func pixelShift(at now: Instant) -> (dx: Int, dy: Int) {
        guard let p = pixelShiftPeriod, p.nanoseconds > 0 else { return (0, 0) }
        var k = now.nanoseconds / p.nanoseconds % 4
        if k < 0 { k += 4 }
        switch k {
        case 1: return (1, 0)
        case 2: return (1, 1)
        case 3: return (0, 1)
        default: return (0, 0)
        }
    }
}

/// Sleep, wake and night contrast; the small pulse helpers every page uses.
extension DeviceCore {
    // MARK: Screen care

    mutating func wake(effects: inout [Effect]) {
        state.display.asleep = false
        effects.append(.displayPower(true))
    }

    /// The rest of this press (short, long, up) will mean nothing: it was used up on its way down.
    mutating func swallowPress(_ b: Button) { state.swallowed |= bit(b) }

    /// Every frame: sleep when idle, night contrast. Allocation-free: the time zone is
    /// consulted only when the cached offset runs out (at most daily, and at DST changes).
    mutating func careForScreen(at now: Moment, effects: inout [Effect]) {
        let last = state.display.lastActivity ?? now.instant
        if state.display.lastActivity == nil { state.display.lastActivity = now.instant }
        if !state.display.asleep, let after = settings.screen.sleepAfter,
           !state.keepsDisplayAwake, now.instant - last >= after {
            state.display.asleep = true
            effects.append(.displayPower(false))
        }
        let w = now.wall.secondsSinceEpoch
        if w != state.display.lastContrastCheck {
            state.display.lastContrastCheck = w
            var level = settings.screen.dayContrast
            if state.reminders.clockTrusted, settings.screen.nightStart != nil {
                let minute = state.display.localClock.secondOfDay(now.wall, in: settings.timeZone) / 60
                if settings.screen.isNight(minute: minute) { level = settings.screen.nightContrast }
            }
            if state.display.contrast != level {
                state.display.contrast = level
                effects.append(.displayContrast(level))
            }
        }
    }

    /// `count` pulses from `t`: a capture's tick, the exercise's finish.
    func pulses(at t: Instant, count: Int, on: Duration, off: Duration, effects: inout [Effect]) {
        var at = t
        for _ in 0..<count {
            effects.append(.motor(MotorEdge(at: at, on: true)))
            effects.append(.motor(MotorEdge(at: at + on, on: false)))
            at = at + on + off
        }
    }
}
