import SystemPackage
import UnwindCore

/// The lowest GPIO seam: what the kernel's GPIO character device does for a line, and nothing
/// the device's wiring decides. libgpiod implements it on the board (`LibgpiodBackend` in
/// UnwindLinuxHardware), the simulated chip in tests and the simulator (`SimulatedGPIOChip`), like
/// gpiozero's pin factories and its mock pins. `GPIOMotor` and `GPIOButtons` are the one
/// adapter over it: polarity, edge merging and the messages a person reads live there, so the
/// simulator runs the same code as the board.
///
/// Levels are physical (`true` = high): nothing here asks for ACTIVE_LOW, so an edge is what a
/// scope on the pin shows. Each call makes at most one attempt and reports a signal arriving
/// mid-call as `.interrupted`; the adapter calls again (`retryingInterrupts`), so the EINTR
/// rule is applied once, above every backend.
public protocol GPIOBackend {
    /// A line this backend has handed over, until `release`.
    associatedtype LineRequest

    /// The device path of a chip written as in a `LineSelector`: "/dev/gpiochip0", "gpiochip0",
    /// a chip number "0", or the driver's label ("pinctrl-bcm2711"). ENOENT when none matches.
    func chipPath(_ chip: String) throws(Errno) -> String

    /// The chip holding the line the device tree named `name`, and the line's offset; the
    /// first chip in chip-number order wins. ENOENT when no chip has such a line.
    func findLine(named name: String) throws(Errno) -> (chipPath: String, offset: Int)

    /// The kernel's name, the driver's label and the line count of the chip at `path`.
    func chipInfo(path: String) throws(Errno) -> GPIOChipInfo

    /// Every chip's device path in chip-number order; empty where there is no GPIO at all.
    func chipPaths() -> [String]

    /// The line as a push-pull output, at `initiallyHigh` from the first instant. EBUSY: another
    /// consumer holds it; EINVAL: the chip has no such offset.
    func requestOutput(chipPath: String, offset: Int, consumer: String, initiallyHigh: Bool) throws(Errno) -> LineRequest

    /// The line as an input with `bias`, reporting both edges stamped on CLOCK_MONOTONIC. Reading
    /// its edges never waits.
    func requestInput(chipPath: String, offset: Int, consumer: String, bias: GPIOBias) throws(Errno) -> LineRequest

    /// Drives an output line.
    func setValue(_ line: LineRequest, high: Bool) throws(Errno)

    /// The line's physical level now.
    func value(_ line: LineRequest) throws(Errno) -> Bool

    /// The descriptor poll(2) watches for waiting edges; nil for an output, or where the edges
    /// are not announced by a descriptor (a simulated chip announces them by `nextEdgeTime`).
    func eventDescriptor(_ line: LineRequest) -> Int32?

    /// Moves up to `edges.count` waiting edges of an input into `edges`, oldest first, without
    /// waiting; returns how many (0: none is waiting).
    func readEdges(_ line: LineRequest, into edges: UnsafeMutableBufferPointer<GPIOEdge>) throws(Errno) -> Int

    /// Lets the line go. An output is not set low first: callers that want it low say so.
    func release(_ line: LineRequest)

    /// For a simulated chip: when the next scheduled change of an input happens, so simulated
    /// time can jump there. A real chip: nil.
    var nextEdgeTime: Instant? { get }
}

extension GPIOBackend {
    public var nextEdgeTime: Instant? { nil }
}

/// The pull resistor an input asks for.
public enum GPIOBias: Sendable, Equatable {
    case asIs, disabled, pullUp, pullDown
}

/// One edge on an input line, stamped when the kernel (or the simulated chip) saw the level
/// change, never when it was read.
public struct GPIOEdge: Sendable, Equatable {
    /// Low → high.
    public var rising: Bool
    /// CLOCK_MONOTONIC, the clock of every deadline in the loop.
    public var at: Instant

    public init(rising: Bool, at: Instant) {
        self.rising = rising
        self.at = at
    }
}

/// A GPIO chip as the kernel describes it.
public struct GPIOChipInfo: Sendable, Equatable {
    public var path: String
    /// The kernel's name, e.g. "gpiochip0".
    public var name: String
    /// The driver's label, e.g. "pinctrl-bcm2711".
    public var label: String
    public var lineCount: Int

    public init(path: String, name: String, label: String, lineCount: Int) {
        self.path = path
        self.name = name
        self.label = label
        self.lineCount = lineCount
    }

    /// The chip `chip` (written as in a `LineSelector`) as `backend` describes it.
    public init<Backend: GPIOBackend>(chip: String, backend: Backend) throws(DeviceError) {
        let path = try backend.resolveChip(chip, offset: nil, purpose: "chip info")
        do {
            self = try retryingInterrupts { () throws(Errno) in try backend.chipInfo(path: path) }
        } catch {
            throw GPIOErrors.openChip(chip: chip, path: path, offset: nil, purpose: "chip info", errno: error.rawValue)
        }
    }
}

/// Where a selector leads: the chip as written (for messages), its device path, the offset.
struct GPIOLineAddress {
    var chip: String
    var path: String
    var offset: Int
}

extension GPIOBackend {
    /// A chip as written → its device path, or the message naming it.
    func resolveChip(_ chip: String, offset: Int?, purpose: String) throws(DeviceError) -> String {
        do {
            return try retryingInterrupts { () throws(Errno) in try chipPath(chip) }
        } catch {
            throw GPIOErrors.openChip(chip: chip, path: chip.hasPrefix("/") ? chip : "/dev/" + chip,
                                      offset: offset, purpose: purpose, errno: error.rawValue)
        }
    }

    /// A chip and offset as given, or the line found by its name on every chip.
    func resolve(_ selector: LineSelector, purpose: String) throws(DeviceError) -> GPIOLineAddress {
        switch selector {
        case .offset(let chip, let line):
            let path = try resolveChip(chip, offset: line, purpose: purpose)
            // The kernel's offsets are unsigned 32-bit.
            guard line >= 0, line <= Int(UInt32.max) else {
                throw GPIOErrors.request(chip: chip, path: path, offset: line, purpose: purpose,
                                         operation: "request", errno: Errno.invalidArgument.rawValue, lineCount: 0)
            }
            return GPIOLineAddress(chip: chip, path: path, offset: line)
        case .name(let name):
            let found: (chipPath: String, offset: Int)
            do {
                found = try retryingInterrupts { () throws(Errno) in try findLine(named: name) }
            } catch {
                throw GPIOErrors.lineName(name, purpose: purpose, errno: error.rawValue, chipsPresent: !chipPaths().isEmpty)
            }
            let chip = found.chipPath.hasPrefix("/dev/") ? String(found.chipPath.dropFirst(5)) : found.chipPath
            return GPIOLineAddress(chip: chip, path: found.chipPath, offset: found.offset)
        }
    }

    /// A refused request in words; for EINVAL the chip's line count says whether the offset is
    /// past its end.
    func requestError(_ line: GPIOLineAddress, purpose: String, operation: String, errno e: Errno) -> DeviceError {
        if e == .noSuchFileOrDirectory || e == .operationNotSupportedByDevice || e == .inappropriateIOCTLForDevice {
            return GPIOErrors.openChip(chip: line.chip, path: line.path, offset: line.offset, purpose: purpose, errno: e.rawValue)
        }
        var count: Int?
        if e == .invalidArgument {
            count = try? retryingInterrupts { () throws(Errno) in try chipInfo(path: line.path) }.lineCount
        }
        return GPIOErrors.request(chip: line.chip, path: line.path, offset: line.offset, purpose: purpose,
                                  operation: operation, errno: e.rawValue, lineCount: count)
    }
}
