import SystemPackage
import UnwindSeams
#if os(Linux)
import CUnwindGPIO
import Glibc
import UnwindCore

// The motor and button lines on libgpiod: the adapter of UnwindSeams (`GPIOMotor`,
// `GPIOButtons`: polarity, edge merging, messages) over `LibgpiodBackend`, whose every method
// is one call into the CUnwindGPIO shim (one small C API over libgpiod v1 and v2).

/// The vibration motor on a libgpiod output line.
public typealias LinuxMotorLine = GPIOMotor<LibgpiodBackend>
/// The buttons on libgpiod input lines. Each line's event descriptor is O_NONBLOCK (set by the
/// shim), so `readEdges` never waits even when called without poll(2) having said "readable".
public typealias LinuxButtonLines = GPIOButtons<LibgpiodBackend>

extension GPIOMotor where Backend == LibgpiodBackend {
    /// The motor's line on the board, requested as an output driven low and registered for
    /// `driveLowNow()`.
    public convenience init(_ selector: LineSelector, consumer: String = "unwind") throws(DeviceError) {
        try self.init(selector, consumer: consumer, backend: LibgpiodBackend())
    }
}

extension GPIOButtons where Backend == LibgpiodBackend {
    /// The buttons' lines on the board.
    public convenience init(_ buttons: [Button: LineSelector], activeLow: Bool = true, consumer: String = "unwind") throws(DeviceError) {
        try self.init(buttons, activeLow: activeLow, consumer: consumer, backend: LibgpiodBackend())
    }

    /// The buttons of a configuration, with its wiring and consumer name.
    public convenience init(configuration: GPIOConfiguration) throws(DeviceError) {
        try self.init(configuration: configuration, backend: LibgpiodBackend())
    }
}

extension GPIOChipInfo {
    /// A chip on this machine, written as in a `LineSelector`.
    public init(chip: String) throws(DeviceError) {
        try self.init(chip: chip, backend: LibgpiodBackend())
    }

    /// The /dev/gpiochipN device files present, in chip-number order. Empty on a machine
    /// without GPIO.
    public static func devicePaths() -> [String] { LibgpiodBackend().chipPaths() }
}

/// The kernel's GPIO chips through libgpiod. One attempt per call: EINTR comes back as
/// `.interrupted` and the adapter calls again (see `GPIOBackend`).
public struct LibgpiodBackend: GPIOBackend {
    /// The shim's handle: the request and everything libgpiod needs to keep it alive.
    public typealias LineRequest = OpaquePointer

    public init() {}

    /// unwind_gpio_resolve_chip: stat(2) of /dev/<chip>, else scandir(3) of /dev and each
    /// chip's label (gpiod_chip_open + gpiod_chip_label, or gpiod_chip_get_info for v2).
    public func chipPath(_ chip: String) throws(Errno) -> String {
        var path = [CChar](repeating: 0, count: 256)
        _ = try valueOrErrno(retryOnInterrupt: false) { unwind_gpio_resolve_chip(chip, &path, path.count) }
        return Self.string(path)
    }

    /// unwind_gpio_find_line: gpiod_chip_find_line on each chip (v1) or
    /// gpiod_chip_get_line_offset_from_name (v2), in chip-number order.
    public func findLine(named name: String) throws(Errno) -> (chipPath: String, offset: Int) {
        var path = [CChar](repeating: 0, count: 256)
        var offset: UInt32 = 0
        _ = try valueOrErrno(retryOnInterrupt: false) { unwind_gpio_find_line(name, &path, path.count, &offset) }
        return (Self.string(path), Int(offset))
    }

    /// unwind_gpio_chip_info: gpiod_chip_open + gpiod_chip_name/label/num_lines (v1) or
    /// gpiod_chip_get_info (v2).
    public func chipInfo(path: String) throws(Errno) -> GPIOChipInfo {
        let size = 64
        var name = [CChar](repeating: 0, count: size)
        var label = [CChar](repeating: 0, count: size)
        var count: UInt32 = 0
        _ = try valueOrErrno(retryOnInterrupt: false) { unwind_gpio_chip_info(path, &name, size, &label, size, &count) }
        return GPIOChipInfo(path: path, name: Self.string(name), label: Self.string(label), lineCount: Int(count))
    }

    /// opendir/readdir of /dev (no libgpiod call).
    public func chipPaths() -> [String] {
        guard let dir = opendir("/dev") else { return [] }
        defer { closedir(dir) }
        var found: [(Int, String)] = []
        while let entry = readdir(dir) {
            guard let name = directoryEntryName(entry), name.hasPrefix("gpiochip"), let n = Int(name.dropFirst(8)) else { continue }
            found.append((n, "/dev/" + name))
        }
        return found.sorted { $0.0 < $1.0 }.map(\.1)
    }

    /// unwind_gpio_request_output: gpiod_chip_get_line + gpiod_line_request_output (v1) or
    /// gpiod_chip_request_lines with an output line config (v2). The line is also registered
    /// for `driveLowNow()`.
    public func requestOutput(chipPath: String, offset: Int, consumer: String, initiallyHigh: Bool) throws(Errno) -> OpaquePointer {
        try pointerOrErrno(retryOnInterrupt: false) {
            unwind_gpio_request_output(chipPath, UInt32(offset), consumer, initiallyHigh ? 1 : 0)
        }
    }

    /// unwind_gpio_request_input_edges: gpiod_line_request_both_edges_events_flags with the
    /// bias flag (v1) or gpiod_chip_request_lines with GPIOD_LINE_EDGE_BOTH, the bias and the
    /// monotonic event clock (v2); then gpiod_line_event_get_fd / gpiod_line_request_get_fd and
    /// fcntl(O_NONBLOCK).
    public func requestInput(chipPath: String, offset: Int, consumer: String, bias: GPIOBias) throws(Errno) -> OpaquePointer {
        let b: unwind_gpio_bias = switch bias {
        case .asIs: .asIs
        case .disabled: .disabled
        case .pullUp: .pullUp
        case .pullDown: .pullDown
        }
        return try pointerOrErrno(retryOnInterrupt: false) {
            unwind_gpio_request_input_edges(chipPath, UInt32(offset), consumer, b)
        }
    }

    /// unwind_gpio_line_set: gpiod_line_set_value (v1) / gpiod_line_request_set_value (v2).
    public func setValue(_ line: OpaquePointer, high: Bool) throws(Errno) {
        _ = try valueOrErrno(retryOnInterrupt: false) { unwind_gpio_line_set(line, high ? 1 : 0) }
    }

    /// unwind_gpio_line_get: gpiod_line_get_value (v1) / gpiod_line_request_get_value (v2).
    public func value(_ line: OpaquePointer) throws(Errno) -> Bool {
        try valueOrErrno(retryOnInterrupt: false) { unwind_gpio_line_get(line) } != 0
    }

    /// unwind_gpio_line_fd (no system call): the line event descriptor, for inputs.
    public func eventDescriptor(_ line: OpaquePointer) -> Int32? {
        let fd = unwind_gpio_line_fd(line)
        return fd >= 0 ? fd : nil
    }

    /// unwind_gpio_line_read_edges: gpiod_line_event_read_fd_multiple (v1) /
    /// gpiod_line_request_read_edge_events (v2); EAGAIN is "none waiting". Timestamps are the
    /// kernel's CLOCK_MONOTONIC.
    public func readEdges(_ line: OpaquePointer, into edges: UnsafeMutableBufferPointer<GPIOEdge>) throws(Errno) -> Int {
        // Stack memory for the shim's batch: reading edges allocates nothing.
        let read = withUnsafeTemporaryAllocation(of: unwind_gpio_edge.self, capacity: 16) { batch in
            Result { () throws(Errno) -> Int in
                let max = UInt32(Swift.min(batch.count, edges.count))
                let n = Int(try valueOrErrno(retryOnInterrupt: false) { unwind_gpio_line_read_edges(line, batch.baseAddress, max) })
                for k in 0..<n {
                    edges[k] = GPIOEdge(rising: batch[k].rising != 0, at: Instant(nanoseconds: Int64(clamping: batch[k].timestamp_ns)))
                }
                return n
            }
        }
        return try read.get()
    }

    /// unwind_gpio_line_release: gpiod_line_release + gpiod_chip_close (v1) /
    /// gpiod_line_request_release (v2); the descriptors close with it.
    public func release(_ line: OpaquePointer) {
        unwind_gpio_line_release(line)
    }

    static func string(_ buffer: [CChar]) -> String {
        String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// unwind_gpio_drive_all_low: drives every output line this process holds (the motor) low.
/// Async-signal-safe in practice — no allocation, no lock, one ioctl per line, errno kept —
/// so a signal handler may call it.
public func driveLowNow() {
    unwind_gpio_drive_all_low()
}

/// Makes the motor go low however the process ends short of SIGKILL:
/// unwind_gpio_install_exit_handlers → atexit(3) plus sigaction(2) for SIGSEGV, SIGBUS, SIGILL,
/// SIGFPE, SIGABRT, SIGTRAP and SIGSYS (a Swift trap is SIGILL on x86-64, SIGTRAP on arm64),
/// and for `extraSignals`. Each handler drives the outputs low, puts back the handler that was
/// there before and re-raises, so the default action, a core dump or Swift's backtracer still
/// follow. SIGTERM and SIGINT are left to the loop's own clean shutdown unless listed here.
/// For SIGKILL nothing in the process can help: a systemd `ExecStopPost=` running
/// `gpioset` is the backstop.
public func installDriveLowOnExit(extraSignals: [Int32] = []) throws(DeviceError) {
    let r = extraSignals.withUnsafeBufferPointer { unwind_gpio_install_exit_handlers($0.baseAddress, $0.count) }
    if r != 0 {
        throw DeviceError(device: "GPIO outputs", operation: "install drive-low-on-exit handlers", errno: errno)
    }
}
#endif
