/// What an I²C adapter can do for a write-only device such as the SSD1306.
public struct I2CCapabilities: OptionSet, Sendable, Hashable, CustomStringConvertible {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// Plain I²C messages of any length (I2C_FUNC_I2C): `write` and `writeMessages` work.
    public static let plainI2C = I2CCapabilities(rawValue: 1 << 0)
    /// SMBus "I²C block write" (I2C_FUNC_SMBUS_WRITE_I2C_BLOCK): register byte + 1...32 bytes.
    public static let smbusBlockWrite = I2CCapabilities(rawValue: 1 << 1)

    public var description: String {
        var parts: [String] = []
        if contains(.plainI2C) { parts.append("plain I²C") }
        if contains(.smbusBlockWrite) { parts.append("SMBus I²C-block write") }
        return parts.isEmpty ? "none" : parts.joined(separator: ", ")
    }
}

/// The seam between a display driver and the bus: one device at a fixed address, write-only.
///
/// Every method is one bus transaction (START … STOP) to the configured address; the bytes are
/// what follows the address byte on the wire. Implementations must not retain the buffers.
/// A failure throws a `DeviceError` with the errno (121 EREMOTEIO or ENXIO for a device that
/// does not acknowledge) and leaves nothing pending: the caller may simply try again.
///
/// A driver picks `write`/`writeMessages` when `capabilities` contains `.plainI2C`, otherwise
/// `smbusBlockWrite` in chunks of at most `I2CLimits.smbusBlockMax` bytes.
public protocol I2CBus: AnyObject {
    /// Decided once when the bus is opened; never changes.
    var capabilities: I2CCapabilities { get }

    /// One plain-I²C write message: START addr W bytes… STOP. Needs `.plainI2C`.
    func write(_ bytes: UnsafeRawBufferPointer) throws(DeviceError)

    /// Two write messages in one combined transaction: START addr W first… repeated-START addr W
    /// second… STOP (one I2C_RDWR on Linux: one system call, nothing else on the bus in between).
    /// Needs `.plainI2C`.
    func writeMessages(_ first: UnsafeRawBufferPointer, _ second: UnsafeRawBufferPointer) throws(DeviceError)

    /// SMBus I²C-block write: START addr W register bytes… STOP, with 1...32 bytes.
    /// Needs `.smbusBlockWrite`. On the wire it is the same as a plain write of `[register] + bytes`.
    func smbusBlockWrite(register: UInt8, _ bytes: UnsafeRawBufferPointer) throws(DeviceError)
}

extension I2CBus {
    /// `write` for an array (allocation-free: the array's own storage is passed).
    public func write(_ bytes: [UInt8]) throws(DeviceError) {
        try withRawBytes(bytes) { (p) throws(DeviceError) in try write(p) }
    }

    /// `writeMessages` for arrays.
    public func writeMessages(_ first: [UInt8], _ second: [UInt8]) throws(DeviceError) {
        try withRawBytes(first) { (a) throws(DeviceError) in
            try withRawBytes(second) { (b) throws(DeviceError) in try writeMessages(a, b) }
        }
    }

    /// `smbusBlockWrite` for an array.
    public func smbusBlockWrite(register: UInt8, _ bytes: [UInt8]) throws(DeviceError) {
        try withRawBytes(bytes) { (p) throws(DeviceError) in try smbusBlockWrite(register: register, p) }
    }
}

/// `withUnsafeBytes` keeping the typed error (the standard library's rethrows erases it).
@inline(__always)
func withRawBytes<R>(_ bytes: [UInt8], _ body: (UnsafeRawBufferPointer) throws(DeviceError) -> R) throws(DeviceError) -> R {
    let result: Result<R, DeviceError> = bytes.withUnsafeBytes { p in
        do throws(DeviceError) { return .success(try body(p)) } catch { return .failure(error) }
    }
    return try result.get()
}

public enum I2CLimits {
    /// Largest SMBus block (I2C_SMBUS_BLOCK_MAX).
    public static let smbusBlockMax = 32
    /// Largest message i2c-dev accepts in one I2C_RDWR message.
    public static let messageMax = 8192
}

/// Errno values of Linux's I²C adapters, spelled out so the simulator (which also builds on
/// macOS) and the tests use the same numbers as the board.
public enum I2CErrno {
    /// EREMOTEIO: most adapters (the Pi's bcm2835 included) report a missing ACK with it.
    public static let remoteIO: Int32 = 121
    /// ENXIO: what some adapters (i2c-gpio among them) report for a missing ACK.
    public static let noDevice: Int32 = 6
    /// ENOENT: no such /dev/i2c-N.
    public static let noEntry: Int32 = 2
    /// EACCES.
    public static let accessDenied: Int32 = 13
    /// EBUSY: I2C_SLAVE on an address a kernel driver has bound.
    public static let busy: Int32 = 16
    /// ETIMEDOUT: the adapter gave up, usually SCL held low (wiring, pull-ups).
    public static let timedOut: Int32 = 110
    /// EOPNOTSUPP: the adapter lacks what the call needs.
    public static let notSupported: Int32 = 95
    /// EINVAL.
    public static let invalid: Int32 = 22
}

extension DeviceError {
    /// An I²C failure with the hint a person needs, e.g. for bus 1, address 0x3C:
    /// ENOENT → "no /dev/i2c-1: enable I²C (dtparam=i2c_arm=on, raspi-config) or check the bus number".
    public static func i2c(bus: Int, address: UInt8, operation: String, errno: Int32) -> DeviceError {
        DeviceError(device: "i2c-\(bus)@\(hex(address))", operation: operation, errno: errno,
                    hint: i2cHint(bus: bus, address: address, errno: errno))
    }

    /// The advice for an errno from an I²C call, empty when there is nothing useful to say.
    public static func i2cHint(bus: Int, address: UInt8, errno: Int32) -> String {
        switch errno {
        case I2CErrno.noEntry:
            return "no /dev/i2c-\(bus): enable I²C (dtparam=i2c_arm=on, raspi-config) or check the bus number"
        case I2CErrno.accessDenied:
            return "add the service user to the i2c group"
        case I2CErrno.remoteIO, I2CErrno.noDevice:
            return "no answer at \(hex(address)): display unplugged or wrong address"
        case I2CErrno.busy:
            return "a kernel driver holds \(hex(address)) (an ssd1306 overlay in config.txt?): remove it"
        case I2CErrno.timedOut:
            return "the bus timed out: check SDA/SCL wiring and the pull-ups"
        case I2CErrno.notSupported:
            return "the adapter supports neither plain I²C writes nor SMBus I²C-block writes"
        default:
            return ""
        }
    }

    public static func hex(_ address: UInt8) -> String {
        let digits = Array("0123456789ABCDEF")
        return "0x" + String(digits[Int(address >> 4)]) + String(digits[Int(address & 15)])
    }
}
