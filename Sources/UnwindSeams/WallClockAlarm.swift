import UnwindCore

/// What a wall-clock alarm has to say when the loop looks.
public enum AlarmEvent: Equatable, Sendable {
    case none
    /// The wall clock reached the second the alarm was armed for.
    case fired(WallTime)
    /// The wall clock was set (an NTP step, a manual change): the alarm was cancelled and the
    /// due time must be computed again from the new time.
    case clockChanged
}

/// An alarm on the wall clock (CLOCK_REALTIME) for the mantra reminder, and where the loop
/// learns whether that clock can be trusted. The core decides when; this only keeps time.
public protocol WallClockAlarm: AnyObject {
    /// A descriptor the loop polls with the buttons: readable when the alarm fired or the clock
    /// was set. Nil for a simulated alarm (simulated time stops at it by itself).
    var pollDescriptor: Int32? { get }
    /// Arms for the start of the wall-clock second `due`, or disarms with nil. Replaces any
    /// earlier arming. A due time already past fires at once.
    func arm(_ due: WallTime?) throws(DeviceError)
    /// What happened since the last look, without blocking.
    func poll() -> AlarmEvent
    /// Whether something (NTP, timesyncd, chrony) has synchronised the wall clock.
    func clockIsSynchronised() -> Bool
}

/// The panel's power and contrast, for screen care. `SSD1306` has both (applied with its next
/// frame); a panel without them is simply left on at its own contrast.
public protocol DisplayControl: AnyObject {
    func setSleeping(_ sleeping: Bool)
    func setContrast(_ value: UInt8)
}
