import SystemPackage

/// The vibration motor on a GPIO output line: active-high, low from the moment it is
/// requested, low again before it is let go. On the board `LinuxMotorLine`
/// (`GPIOMotor<LibgpiodBackend>`); in tests and the simulator, the same code on a simulated chip.
///
/// Failures are `DeviceError`s naming the chip, the line and what to do (`GPIOErrors`).
public final class GPIOMotor<Backend: GPIOBackend>: MotorLine {
    public let selector: LineSelector
    /// The chip as written in the selector (or found by name), for messages and logs.
    public let chip: String
    public let path: String
    public let offset: Int
    public let backend: Backend
    private var line: Backend.LineRequest?

    /// Finds the line and requests it as an output driven low, for `consumer` (the name
    /// gpioinfo shows).
    public init(_ selector: LineSelector, consumer: String = "unwind", backend: Backend) throws(DeviceError) {
        let address = try backend.resolve(selector, purpose: "motor")
        do {
            line = try retryingInterrupts { () throws(Errno) in
                try backend.requestOutput(chipPath: address.path, offset: address.offset, consumer: consumer, initiallyHigh: false)
            }
        } catch {
            throw backend.requestError(address, purpose: "motor", operation: "request as output", errno: error)
        }
        self.selector = selector
        self.chip = address.chip
        self.path = address.path
        self.offset = address.offset
        self.backend = backend
    }

    public func set(_ on: Bool) throws(DeviceError) {
        guard let line else {
            throw GPIOErrors.io(chip: chip, offset: offset, purpose: "motor", operation: "set \(on ? 1 : 0)",
                                errno: Errno.badFileDescriptor.rawValue)
        }
        do {
            try retryingInterrupts { () throws(Errno) in try backend.setValue(line, high: on) }
        } catch {
            throw GPIOErrors.io(chip: chip, offset: offset, purpose: "motor", operation: "set \(on ? 1 : 0)", errno: error.rawValue)
        }
    }

    /// One attempt to drive the line low, failures ignored: no allocation, no lock. For a
    /// shutdown path that cannot report anything; a real signal handler wants the free
    /// function `driveLowNow()` of UnwindLinuxHardware, which needs no object.
    public func driveLowNow() {
        if let line { _ = try? backend.setValue(line, high: false) }
    }

    /// Drives the line low, then lets it go. Safe to call twice.
    public func release() {
        guard let line else { return }
        _ = try? retryingInterrupts { () throws(Errno) in try backend.setValue(line, high: false) }
        backend.release(line)
        self.line = nil
    }

    deinit { release() }
}
