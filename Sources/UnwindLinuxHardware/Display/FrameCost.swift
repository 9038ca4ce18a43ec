import UnwindCore
import UnwindSeams

/// What a frame (or any run of transfers) costs on the I²C wire.
///
/// A transfer is one START (or repeated START) + address segment. `bytes` counts what follows
/// the address byte (control/register bytes included). Wire time counts, per transfer,
/// 1 START bit + 9 address bits (8 + ACK) + 9 bits per byte + 1 STOP bit, at `busSpeedHz`: the
/// clock-limited minimum. Adapter overheads (the bcm2835's gaps, interrupt latency, the system
/// call) come on top. The two messages of one combined I2C_RDWR are counted as two transfers,
/// each with a STOP: that overstates a repeated START by one bit.
public struct FrameCost: Equatable, Sendable, CustomStringConvertible {
    public var bytes: Int
    public var transfers: Int
    public var bits: Int
    /// The speed `wireTime` uses.
    public var busSpeedHz: Int

    public init(bytes: Int = 0, transfers: Int = 0, bits: Int = 0, busSpeedHz: Int = 400_000) {
        precondition(busSpeedHz > 0)
        self.bytes = bytes
        self.transfers = transfers
        self.bits = bits
        self.busSpeedHz = busSpeedHz
    }

    /// Bits on the wire for one transfer carrying `bytes` bytes after the address.
    @inlinable
    public static func bits(ofTransfer bytes: Int) -> Int { 1 + 9 + 9 * bytes + 1 }

    /// The cost of a sequence of transfers, given their byte counts (after the address byte).
    /// E.g. a full 128x64 frame on plain I²C: `FrameCost.of(transfers: [7, 1025])`.
    public static func of(transfers lengths: some Sequence<Int>, busSpeedHz: Int = 400_000) -> FrameCost {
        var cost = FrameCost(busSpeedHz: busSpeedHz)
        for n in lengths { cost.addTransfer(bytes: n) }
        return cost
    }

    @inlinable
    public mutating func addTransfer(bytes n: Int) {
        bytes += n
        transfers += 1
        bits += Self.bits(ofTransfer: n)
    }

    /// Time on the wire at `busSpeedHz`.
    public var wireTime: Duration { wireTime(atHz: busSpeedHz) }

    /// Time on the wire at another clock, rounded up to the nanosecond.
    public func wireTime(atHz hz: Int) -> Duration {
        precondition(hz > 0)
        return .nanoseconds((Int64(bits) * 1_000_000_000 + Int64(hz) - 1) / Int64(hz))
    }

    /// Sums two costs (the speed of the left one is kept).
    public static func + (a: FrameCost, b: FrameCost) -> FrameCost {
        FrameCost(bytes: a.bytes + b.bytes, transfers: a.transfers + b.transfers, bits: a.bits + b.bits,
                  busSpeedHz: a.busSpeedHz)
    }

    public static func += (a: inout FrameCost, b: FrameCost) { a = a + b }

    public var description: String { "\(bytes) bytes in \(transfers) transfers, \(wireTime) at \(busSpeedHz / 1000) kHz" }
}

/// The display's bus accounting: the last frame and everything since the driver was made.
public struct BusStatistics: Equatable, Sendable {
    /// The last `show` that reached the bus (unchanged frames cost zero and count here too).
    /// Includes the initialisation when that `show` (re-)initialised the display.
    public var lastFrame: FrameCost
    /// Every transfer attempted, failed ones included.
    public var total: FrameCost
    /// `show` calls that completed on the bus (including ones with nothing to send).
    public var framesSent = 0
    /// Of those, the ones with nothing to send (the bus was not touched).
    public var framesUnchanged = 0
    /// Of those, the ones sent whole (after an initialisation, or when cheaper than the changes).
    public var fullFrames = 0
    /// Of those, the ones that left changes for the next `show` (over the frame budget).
    public var framesDeferred = 0
    /// `show` calls skipped without touching the bus while the display was lost.
    public var framesSkipped = 0
    /// `show` calls that threw a bus error.
    public var failures = 0
    /// Initialisation sequences sent (the first and every recovery).
    public var initialisations = 0

    public init(busSpeedHz: Int = 400_000) {
        lastFrame = FrameCost(busSpeedHz: busSpeedHz)
        total = FrameCost(busSpeedHz: busSpeedHz)
    }
}
