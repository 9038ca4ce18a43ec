import UnwindCore
import UnwindSeams

/// The motor wired as on the reference build (`GPIOConfiguration.raspberryPi`, BCM 18) to a
/// simulated chip and driven through the board's own code (`GPIOMotor`): what a test reads is
/// what reached the pin, every change with its instant, like gpiozero's mock pins.
///
/// `@unchecked Sendable`: `set` is called from the loop's thread only; the chip behind it is
/// locked, so `isOn` and `history` may be read from any thread (the terminal's drawing).
public final class SimulatedMotor: MotorLine, @unchecked Sendable {
    /// A change of the motor line, in the motor's words.
    public struct Change: Equatable, Sendable {
        public var at: Instant
        public var on: Bool
        public init(at: Instant, on: Bool) {
            self.at = at
            self.on = on
        }
    }

    public let chip: SimulatedGPIOChip
    /// The motor's line on `chip`.
    public let line: SimulatedGPIOMotor

    /// The motor on `chip`, at the line `configuration` gives it.
    public init(chip: SimulatedGPIOChip, configuration: GPIOConfiguration = .raspberryPi) throws(DeviceError) {
        self.chip = chip
        self.line = try GPIOMotor(configuration.motor, consumer: configuration.consumer, backend: chip)
    }

    /// The motor on a chip of its own.
    public convenience init(clock: DeviceClock) {
        do {
            try self.init(chip: SimulatedGPIOChip(clock: clock))
        } catch {
            preconditionFailure("a fresh simulated chip refused the motor's line: \(error)")
        }
    }

    public func set(_ on: Bool) throws(DeviceError) { try line.set(on) }

    /// Active-high: the pin's level.
    public var isOn: Bool { chip.level(line.offset) }

    /// Every change of the line, oldest first (setting the level it already has is no change).
    public var history: [Change] { chip.history(line.offset).map { Change(at: $0.at, on: $0.high) } }

    /// The instants the motor switched on.
    public var onsets: [Instant] { history.filter(\.on).map(\.at) }
}
