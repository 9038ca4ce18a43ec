import UnwindSeams
#if os(Linux)
// Imported for its `link "i2c"`: the shim calls libi2c, and a C target's own #include does not
// autolink it; a Swift import of the module does.
import CI2C
import CUnwindI2C
import Glibc
import SystemPackage
import Synchronization

/// One device on a Linux I²C adapter through i2c-dev (`/dev/i2c-N`).
///
/// Plain writes go out as I2C_RDWR messages carrying the address themselves; SMBus block writes
/// use the address set with I2C_SLAVE at open. Every call is called again while a signal
/// interrupts it (`valueOrErrno`; swift-system's own rule for `open`) and otherwise throws a
/// `DeviceError` with the errno and a hint (see `DeviceError.i2c`).
/// Not thread-safe: one thread at a time (the display thread).
public final class LinuxI2CBus: I2CBus {
    /// The N of /dev/i2c-N.
    public let bus: Int
    /// The 7-bit device address.
    public let address: UInt8
    /// What the adapter reported through I2C_FUNCS, reduced to what a write-only device needs.
    public let capabilities: I2CCapabilities
    /// The raw I2C_FUNC_* mask, for diagnostics.
    public let functionality: UInt
    private let fd: FileDescriptor

    /// open("/dev/i2c-N", O_RDWR | O_CLOEXEC), ioctl(I2C_SLAVE, address), ioctl(I2C_FUNCS).
    /// Does not talk to the device: a missing display shows up on the first write.
    public init(bus: Int = 1, address: UInt8 = 0x3C) throws(DeviceError) {
        precondition(address < 0x80, "7-bit I²C address expected")
        self.bus = bus
        self.address = address
        let path = FilePath("/dev/i2c-\(bus)")
        let opened: FileDescriptor
        do {
            // swift-system retries EINTR for open.
            opened = try FileDescriptor.open(path, .readWrite, options: [.closeOnExec], retryOnInterrupt: true)
        } catch let e as Errno {
            throw DeviceError.i2c(bus: bus, address: address, operation: "open \(path)", errno: e.rawValue)
        } catch {
            throw DeviceError.i2c(bus: bus, address: address, operation: "open \(path)", errno: EIO)
        }
        do throws(DeviceError) {
            let raw = opened.rawValue
            try Self.check(bus, address, "ioctl(I2C_SLAVE)") { unwind_i2c_set_slave(raw, UInt16(address)) }
            var funcs: UInt = 0
            try Self.check(bus, address, "ioctl(I2C_FUNCS)") { unwind_i2c_functionality(raw, &funcs) }
            functionality = funcs
        } catch {
            _ = try? opened.close()
            throw error
        }
        var caps: I2CCapabilities = []
        if functionality & unwind_i2c_func_plain_i2c() != 0 { caps.insert(.plainI2C) }
        if functionality & unwind_i2c_func_smbus_write_i2c_block() != 0 { caps.insert(.smbusBlockWrite) }
        capabilities = caps
        fd = opened
    }

    /// close(2), once; not retried on EINTR (Linux releases the descriptor anyway).
    deinit { _ = try? fd.close() }

    /// ioctl(I2C_RDWR) with one write message.
    public func write(_ bytes: UnsafeRawBufferPointer) throws(DeviceError) {
        try checkLength(bytes.count, I2CLimits.messageMax, "ioctl(I2C_RDWR)")
        let raw = fd.rawValue, address = UInt16(address)
        try Self.check(bus, self.address, "ioctl(I2C_RDWR)") {
            unwind_i2c_write_messages(raw, address, bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), bytes.count, nil, 0)
        }
    }

    /// ioctl(I2C_RDWR) with two write messages (a combined transaction with a repeated START).
    public func writeMessages(_ first: UnsafeRawBufferPointer, _ second: UnsafeRawBufferPointer) throws(DeviceError) {
        try checkLength(first.count, I2CLimits.messageMax, "ioctl(I2C_RDWR)")
        try checkLength(second.count, I2CLimits.messageMax, "ioctl(I2C_RDWR)")
        let raw = fd.rawValue, address = UInt16(address)
        try Self.check(bus, self.address, "ioctl(I2C_RDWR)") {
            unwind_i2c_write_messages(raw, address,
                                      first.baseAddress?.assumingMemoryBound(to: UInt8.self), first.count,
                                      second.baseAddress?.assumingMemoryBound(to: UInt8.self), second.count)
        }
    }

    /// i2c_smbus_write_i2c_block_data(3), i.e. ioctl(I2C_SMBUS) with I2C_SMBUS_I2C_BLOCK_DATA.
    public func smbusBlockWrite(register: UInt8, _ bytes: UnsafeRawBufferPointer) throws(DeviceError) {
        try checkLength(bytes.count, I2CLimits.smbusBlockMax, "i2c_smbus_write_i2c_block_data")
        let raw = fd.rawValue
        try Self.check(bus, address, "i2c_smbus_write_i2c_block_data") {
            unwind_i2c_smbus_write_block(raw, register, bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), bytes.count)
        }
    }

    /// The adapter's bus clock from the device tree (`clock-frequency` of its of_node, a 4-byte
    /// big-endian integer, in Hz), or nil where the platform doesn't expose it.
    /// open/read/close on /sys/class/i2c-adapter/i2c-N/of_node/clock-frequency.
    public static func busSpeed(bus: Int) -> Int? {
        busSpeed(path: "/sys/class/i2c-adapter/i2c-\(bus)/of_node/clock-frequency")
    }

    /// `busSpeed(bus:)` for a given file, for tests.
    static func busSpeed(path: String) -> Int? {
        guard let fd = try? FileDescriptor.open(FilePath(path), .readOnly, options: [.closeOnExec]) else { return nil }
        defer { _ = try? fd.close() }
        var bytes = [UInt8](repeating: 0, count: 8)
        guard let n = try? bytes.withUnsafeMutableBytes({ try fd.read(into: $0) }), n == 4 else { return nil }
        let value = Int(bytes[0]) << 24 | Int(bytes[1]) << 16 | Int(bytes[2]) << 8 | Int(bytes[3])
        // Only a speed an I²C bus can have (up to ultra-fast mode's 5 MHz): anything else is
        // not believed, and the configured speed is used.
        return (1_000...5_000_000).contains(value) ? value : nil
    }

    private func checkLength(_ count: Int, _ limit: Int, _ operation: String) throws(DeviceError) {
        guard count >= 1 && count <= limit else {
            throw DeviceError(device: "i2c-\(bus)@\(DeviceError.hex(address))", operation: operation, errno: EINVAL,
                              hint: "\(count) bytes; 1...\(limit) allowed")
        }
    }

    /// Runs a shim call (`operation` names its ioctl), called again while a signal interrupts
    /// it; any other failure becomes the bus's message.
    private static func check(_ bus: Int, _ address: UInt8, _ operation: String, _ call: () -> Int32) throws(DeviceError) {
        do {
            _ = try valueOrErrno(call)
        } catch {
            throw DeviceError.i2c(bus: bus, address: address, operation: operation, errno: error.rawValue)
        }
    }
}

/// The display's bus when `/dev/i2c-N` could not be opened at start (I²C off in the device tree,
/// i2c-dev not loaded yet, the wrong bus number): the device must run without its display, since
/// the panic button and the motor need none. Every transfer opens the bus again first (the
/// SSD1306 spaces its tries out while the display is lost) and, once it opens, is its
/// `LinuxI2CBus`; until then it throws that open's `DeviceError`.
/// Not thread-safe: one thread at a time (the display thread).
public final class LateI2CBus: I2CBus {
    public let bus: Int
    public let address: UInt8
    /// Plain I²C, as every Pi's adapter has (bcm2835's): the driver picks its way of writing
    /// before the bus exists, so an adapter found later with SMBus alone (i2c-stub) fails each
    /// write and the display stays lost.
    public let capabilities: I2CCapabilities = .plainI2C
    private var opened: LinuxI2CBus?
    private let openedShared = Atomic<Bool>(false)

    public init(bus: Int, address: UInt8) {
        self.bus = bus
        self.address = address
    }

    /// Whether the bus has been opened since; any thread (the maintainer's status asks).
    public var isOpen: Bool { openedShared.load(ordering: .acquiring) }

    private func real() throws(DeviceError) -> LinuxI2CBus {
        if let opened { return opened }
        let bus = try LinuxI2CBus(bus: bus, address: address)
        opened = bus
        openedShared.store(true, ordering: .releasing)
        return bus
    }

    public func write(_ bytes: UnsafeRawBufferPointer) throws(DeviceError) { try real().write(bytes) }

    public func writeMessages(_ first: UnsafeRawBufferPointer, _ second: UnsafeRawBufferPointer) throws(DeviceError) {
        try real().writeMessages(first, second)
    }

    public func smbusBlockWrite(register: UInt8, _ bytes: UnsafeRawBufferPointer) throws(DeviceError) {
        try real().smbusBlockWrite(register: register, bytes)
    }
}
#endif
