import UnwindCore
import UnwindSeams

/// An I²C bus with an `SSD1306Model` on it: every transaction the driver makes is decoded by
/// the model, optionally recorded, and can be made to fail.
///
/// Faults:
/// - `failNext(_:errno:after:)`: transactions fail with an errno; such a transaction delivers
///   the first half of its bytes to the model before failing (a NACK mid-transfer), so the
///   chip's pointer and RAM are left half-updated, as on the board.
/// - `isUnplugged`: every transaction fails with EREMOTEIO (121) and delivers nothing (the
///   address is not acknowledged). Plugging back in power-cycles the model (display off,
///   registers reset, RAM garbage): the driver has to initialise again.
public final class SimulatedI2CBus: I2CBus {
    /// One transaction as it crossed the bus.
    public struct Transaction: Sendable, Equatable {
        public enum Kind: Sendable, Equatable { case write, combined, smbusBlock }
        public var at: Instant
        public var kind: Kind
        /// Each message's bytes after its address byte (an SMBus block's register first).
        public var messages: [[UInt8]]
        /// The errno it failed with, nil when it succeeded.
        public var failure: Int32?
        /// All messages' bytes in order.
        public var bytes: [UInt8] { messages.flatMap { $0 } }
    }

    public let capabilities: I2CCapabilities
    public let model: SSD1306Model
    public let bus: Int
    public let address: UInt8
    private let clock: () -> Instant

    /// Keep every transaction in `recorded`.
    public var recording = false
    public private(set) var recorded: [Transaction] = []
    /// Called for every transaction, failed ones included.
    public var onTransaction: ((Transaction) -> Void)?

    public private(set) var transactionCount = 0
    public private(set) var failedCount = 0

    public var isUnplugged = false {
        didSet { if oldValue && !isUnplugged { model.powerOn() } }
    }
    private var failSkip = 0
    private var failCount = 0
    private var failErrno: Int32 = I2CErrno.remoteIO

    /// - Parameters:
    ///   - capabilities: what the simulated adapter offers; calls outside it fail with EOPNOTSUPP.
    ///   - clock: timestamps for the recorded transactions.
    public init(capabilities: I2CCapabilities = [.plainI2C, .smbusBlockWrite], model: SSD1306Model = SSD1306Model(),
                bus: Int = 1, address: UInt8 = 0x3C, clock: @escaping () -> Instant = { .zero }) {
        self.capabilities = capabilities
        self.model = model
        self.bus = bus
        self.address = address
        self.clock = clock
    }

    /// Fails `count` transactions with `errno`, after letting `after` more succeed.
    public func failNext(_ count: Int, errno: Int32 = I2CErrno.remoteIO, after: Int = 0) {
        failSkip = after
        failCount = count
        failErrno = errno
    }

    public func write(_ bytes: UnsafeRawBufferPointer) throws(DeviceError) {
        try transact(.write, [Array(bytes)], needs: .plainI2C, operation: "ioctl(I2C_RDWR)")
    }

    public func writeMessages(_ first: UnsafeRawBufferPointer, _ second: UnsafeRawBufferPointer) throws(DeviceError) {
        try transact(.combined, [Array(first), Array(second)], needs: .plainI2C, operation: "ioctl(I2C_RDWR)")
    }

    public func smbusBlockWrite(register: UInt8, _ bytes: UnsafeRawBufferPointer) throws(DeviceError) {
        guard bytes.count >= 1 && bytes.count <= I2CLimits.smbusBlockMax else {
            throw DeviceError(device: "i2c-\(bus)", operation: "i2c_smbus_write_i2c_block_data", errno: I2CErrno.invalid,
                              hint: "\(bytes.count) bytes; 1...32 allowed")
        }
        try transact(.smbusBlock, [[register] + Array(bytes)], needs: .smbusBlockWrite,
                     operation: "i2c_smbus_write_i2c_block_data")
    }

    private func transact(_ kind: Transaction.Kind, _ messages: [[UInt8]], needs: I2CCapabilities,
                          operation: String) throws(DeviceError) {
        transactionCount += 1
        var failure: Int32?
        var delivered = messages
        if !capabilities.contains(needs) {
            failure = I2CErrno.notSupported
            delivered = []
        } else if isUnplugged {
            failure = I2CErrno.remoteIO
            delivered = []
        } else if failSkip > 0 {
            failSkip -= 1
        } else if failCount > 0 {
            failCount -= 1
            failure = failErrno
            // Half of the bytes made it before the NACK.
            let total = messages.reduce(0) { $0 + $1.count }
            var keep = total / 2
            delivered = []
            for m in messages where keep > 0 {
                delivered.append(Array(m.prefix(keep)))
                keep -= min(keep, m.count)
            }
        }
        for m in delivered where !m.isEmpty { model.receive(m) }
        let t = Transaction(at: clock(), kind: kind, messages: messages, failure: failure)
        if recording { recorded.append(t) }
        onTransaction?(t)
        if let failure {
            failedCount += 1
            throw DeviceError.i2c(bus: bus, address: address, operation: operation, errno: failure)
        }
    }
}
