import Glibc
import UnwindCore
import UnwindSeams

/// The modem's serial line with the scripted modem on its far end, in memory, on the time the
/// test gives: what the device writes reaches the modem at the instant it is written, and what
/// the modem says is readable from the instant it says it. No pseudo-terminal, no thread, no
/// sleep — a scenario that takes a simulated minute runs in milliseconds, and runs the same
/// every time.
///
/// The device's side behaves as `SerialPort` does where the modem session can tell: opening
/// discards whatever was waiting (tcflush), a line whose modem is unplugged fails to read
/// (EIO) and to open (ENOENT). There is no descriptor to poll (-1 while open: poll(2) skips
/// it); the test steps the line and the device at `nextDeadline` instead.
public final class SimulatedModemLine: SerialTransport, SimulatedModem {
    public let name: String
    private var modem: ScriptedModem
    private let clock: any DeviceClock
    private var isOpen = false
    private var isPlugged = true

    public init(script: ModemScript = ModemScript(), clock: any DeviceClock,
                name: String = "/dev/serial/by-id/usb-Unwind_simulated_modem-if00") {
        self.modem = ScriptedModem(script: script)
        self.clock = clock
        self.name = name
    }

    /// What the modem said that reached the device's side and was not read yet.
    private var waiting: [UInt8] = []

    private var now: Instant { clock.now().instant }
    public var modemNow: Instant { now }

    /// Runs the modem up to the clock's now: its timers (a boot ending, a late prompt) fire and
    /// what it said reaches the line — whether or not the device has the line open, as on a
    /// real tty. Call it whenever time has moved, as the pty simulator's `step`.
    public func step() {
        guard isPlugged else { return }
        modem.advance(to: now)
        waiting += modem.takeOutput(dueBy: now)
    }

    /// When the device must be stepped: something waits to be read (a readable descriptor would
    /// wake it), or the modem has something to say or a timer to run then.
    public var nextDeadline: Instant? {
        guard isPlugged else { return nil }
        if isOpen && !waiting.isEmpty { return now }
        return modem.nextDeadline
    }

    // MARK: SerialTransport (the device's side)

    public var descriptor: Int32? { isOpen ? -1 : nil }

    public func open() throws(DeviceError) {
        close()
        guard isPlugged else {
            throw DeviceError(device: "modem \(name)", operation: "open", errno: ENOENT,
                              hint: "no device at \(name): is the modem plugged in and powered?")
        }
        isOpen = true
        step()
        waiting.removeAll()  // whatever was waiting belongs to nobody now (tcflush)
    }

    public func close() { isOpen = false }

    public func read(into bytes: inout [UInt8]) throws(DeviceError) -> Int {
        try usable("read")
        step()
        let n = waiting.count
        bytes += waiting
        waiting.removeAll(keepingCapacity: true)
        return n
    }

    public func write(_ bytes: ArraySlice<UInt8>) throws(DeviceError) -> Int {
        try usable("write")
        step()
        modem.receive(bytes, at: now)
        return bytes.count
    }

    private func usable(_ operation: String) throws(DeviceError) {
        guard isOpen else { throw DeviceError(device: "modem \(name)", operation: operation, errno: EBADF) }
        guard isPlugged else {
            throw DeviceError(device: "modem \(name)", operation: operation, errno: EIO,
                              hint: "the device is gone (modem unplugged or reset?); it will be reopened")
        }
    }

    // MARK: SimulatedModem (the test's side)

    public func withScriptedModem<R: Sendable>(_ body: (inout ScriptedModem) -> R) -> R { body(&modem) }

    public func inject(_ lines: [String]) { modem.send(lines, at: now) }

    public func restart() { modem.restart(at: now) }

    public func unplug() {
        isPlugged = false
        waiting.removeAll()
        modem.unplugged()
    }

    public func replug() throws(DeviceError) {
        isPlugged = true
        modem.plugged()
        modem.restart(at: now)
    }
}
