import UnwindCore

/// What the modem needs from a serial line: a descriptor to poll and non-blocking bytes in and
/// out. `SerialPort` is the real one; it can be closed and opened again (a USB modem unplugged
/// and plugged back in).
public protocol SerialTransport: AnyObject {
    /// The path, for messages.
    var name: String { get }
    /// The open descriptor, or nil while closed.
    var descriptor: Int32? { get }
    /// Opens (or reopens) the line.
    func open() throws(DeviceError)
    /// Closes the line; unsent output is discarded. Closing a closed line does nothing.
    func close()
    /// Appends every byte waiting, without blocking; returns how many. Throws when the line is
    /// gone (hung up, unplugged): the caller closes it and opens it again later.
    func read(into bytes: inout [UInt8]) throws(DeviceError) -> Int
    /// Writes what the line takes now, without blocking; returns how many bytes (0: try later).
    func write(_ bytes: ArraySlice<UInt8>) throws(DeviceError) -> Int
}

/// How the modem's serial line is set up (configuration, never constants in code).
public struct SerialConfiguration: Equatable, Sendable {
    /// Prefer the stable name under `/dev/serial/by-id/`: `/dev/ttyUSB0` may become
    /// `/dev/ttyUSB1` after a replug.
    public var path: String
    public var baud: Int
    /// RTS/CTS hardware flow control (only when the modem's RTS and CTS lines are wired).
    public var hardwareFlowControl: Bool

    public init(path: String, baud: Int = 115_200, hardwareFlowControl: Bool = false) {
        self.path = path
        self.baud = baud
        self.hardwareFlowControl = hardwareFlowControl
    }

    /// The rates a serial GSM modem uses (SIM800L autobauds 1200–115200; SIM7600 and EC2x
    /// default to 115200 and take up to 921600 on USB).
    public static let supportedBauds: [Int] = [1200, 2400, 4800, 9600, 19_200, 38_400, 57_600,
                                               115_200, 230_400, 460_800, 921_600]
}
