import Synchronization
import UnwindCore
import UnwindDevices

/// The motor's GPIO line in simulation: remembers every change with its instant, like
/// gpiozero's mock pins, and can be told to fail.
public final class SimulatedMotor: MotorLine, @unchecked Sendable {
    public struct Change: Equatable, Sendable {
        public var at: Instant
        public var on: Bool
    }

    let clock: DeviceClock
    private let level = Atomic<Bool>(false)
    /// Every change of the line, oldest first (setting the level it already has is no change).
    public private(set) var history: [Change] = []
    /// While set, `set` fails with this errno (a test's broken wire).
    public var failure: Int32?

    public init(clock: DeviceClock) {
        self.clock = clock
        history.reserveCapacity(1024)
    }

    public var isOn: Bool { level.load(ordering: .relaxed) }

    public func set(_ on: Bool) throws(DeviceError) {
        if let failure { throw DeviceError(device: "simulated motor", operation: "set", errno: failure) }
        if on == isOn { return }
        level.store(on, ordering: .relaxed)
        history.append(Change(at: clock.now().instant, on: on))
    }

    /// The instants the motor switched on.
    public var onsets: [Instant] { history.filter(\.on).map(\.at) }
}
