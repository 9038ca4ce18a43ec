import UnwindDevices
#if os(Linux)
import CUnwindGPIO
import Glibc
import UnwindCore

// The motor and button lines on libgpiod, through the CUnwindGPIO shim (one small C API over
// libgpiod v1 and v2). Every method names the C call it makes; failures come back as
// `DeviceError`s carrying the errno and a sentence saying what to do; calls failing with EINTR
// are repeated.

/// A GPIO chip as the kernel describes it.
public struct GPIOChipInfo: Sendable, Equatable {
    public var path: String
    /// The kernel's name, e.g. "gpiochip0".
    public var name: String
    /// The driver's label, e.g. "pinctrl-bcm2711".
    public var label: String
    public var lineCount: Int

    /// unwind_gpio_resolve_chip, then gpiod_chip_open + gpiod_chip_name/label/num_lines (v1)
    /// or gpiod_chip_get_info (v2). `chip` is written as in a `LineSelector`.
    public init(chip: String) throws(DeviceError) {
        let path = try GPIOPaths.resolve(chip: chip, offset: nil, purpose: "chip info")
        let size = 64
        var name = [CChar](repeating: 0, count: size)
        var label = [CChar](repeating: 0, count: size)
        var count: UInt32 = 0
        let r = retryingOnInterrupt { unwind_gpio_chip_info(path, &name, size, &label, size, &count) }
        if r != 0 {
            throw GPIOErrors.openChip(chip: chip, path: path, offset: nil, purpose: "chip info", errno: errno)
        }
        self.path = path
        self.name = GPIOPaths.string(name)
        self.label = GPIOPaths.string(label)
        self.lineCount = Int(count)
    }

    /// The /dev/gpiochipN device files present, in chip-number order (a directory listing:
    /// opendir/readdir, no libgpiod call). Empty on a machine without GPIO.
    public static func devicePaths() -> [String] {
        guard let dir = opendir("/dev") else { return [] }
        defer { closedir(dir) }
        var found: [(Int, String)] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            guard name.hasPrefix("gpiochip"), let n = Int(name.dropFirst(8)) else { continue }
            found.append((n, "/dev/" + name))
        }
        return found.sorted { $0.0 < $1.0 }.map(\.1)
    }
}

/// Where a selector leads: chip as written (for messages), device path, offset.
struct ResolvedLine {
    var chip: String
    var path: String
    var offset: Int
}

enum GPIOPaths {
    static func string(_ buffer: [CChar]) -> String {
        String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// unwind_gpio_resolve_chip: "gpiochip0", "0", "/dev/gpiochip0" or a chip label → device path.
    static func resolve(chip: String, offset: Int?, purpose: String) throws(DeviceError) -> String {
        let size = 256
        var path = [CChar](repeating: 0, count: size)
        if unwind_gpio_resolve_chip(chip, &path, size) != 0 {
            throw GPIOErrors.openChip(chip: chip, path: chip.hasPrefix("/") ? chip : "/dev/" + chip,
                                      offset: offset, purpose: purpose, errno: errno)
        }
        return string(path)
    }

    /// A chip and offset, or unwind_gpio_find_line (gpiod_chip_find_line on each chip for v1,
    /// gpiod_chip_get_line_offset_from_name for v2) for a line name.
    static func resolve(_ selector: LineSelector, purpose: String) throws(DeviceError) -> ResolvedLine {
        switch selector {
        case .offset(let chip, let line):
            let path = try resolve(chip: chip, offset: line, purpose: purpose)
            guard line >= 0, line <= Int(UInt32.max) else {
                throw GPIOErrors.request(chip: chip, path: path, offset: line, purpose: purpose,
                                         operation: "request", errno: EINVAL, lineCount: 0)
            }
            return ResolvedLine(chip: chip, path: path, offset: line)
        case .name(let name):
            let size = 256
            var path = [CChar](repeating: 0, count: size)
            var offset: UInt32 = 0
            if unwind_gpio_find_line(name, &path, size, &offset) != 0 {
                let e = errno
                throw GPIOErrors.lineName(name, purpose: purpose, errno: e,
                                          chipsPresent: !GPIOChipInfo.devicePaths().isEmpty)
            }
            let p = string(path)
            let chip = p.hasPrefix("/dev/") ? String(p.dropFirst(5)) : p
            return ResolvedLine(chip: chip, path: p, offset: Int(offset))
        }
    }

    /// Turns a failed request's errno into the message, looking up the line count for EINVAL.
    static func requestError(_ line: ResolvedLine, purpose: String, operation: String, errno e: Int32) -> DeviceError {
        if e == ENOENT || e == ENODEV || e == ENOTTY {
            return GPIOErrors.openChip(chip: line.chip, path: line.path, offset: line.offset, purpose: purpose, errno: e)
        }
        var count: Int?
        if e == EINVAL { count = try? GPIOChipInfo(chip: line.path).lineCount }
        return GPIOErrors.request(chip: line.chip, path: line.path, offset: line.offset, purpose: purpose,
                                  operation: operation, errno: e, lineCount: count)
    }

    /// Repeats a pointer-returning C call while it fails with EINTR.
    static func retryingNil(_ call: () -> OpaquePointer?) -> OpaquePointer? {
        while true {
            if let p = call() { return p }
            if errno != EINTR { return nil }
        }
    }
}

/// The vibration motor on a libgpiod output line: active-high, low from the moment it is
/// requested, low again before it is let go.
public final class LinuxMotorLine: MotorLine {
    public let selector: LineSelector
    /// The chip as written in the selector (or found by name), for messages and logs.
    public let chip: String
    public let path: String
    public let offset: Int
    private var handle: OpaquePointer?

    /// unwind_gpio_request_output → gpiod_chip_get_line + gpiod_line_request_output (v1) or
    /// gpiod_chip_request_lines with an output line config (v2): consumer `consumer`, initial
    /// value 0. The line is also registered for `driveLowNow()`.
    public init(_ selector: LineSelector, consumer: String = "unwind") throws(DeviceError) {
        let line = try GPIOPaths.resolve(selector, purpose: "motor")
        guard let h = GPIOPaths.retryingNil({ unwind_gpio_request_output(line.path, UInt32(line.offset), consumer, 0) }) else {
            throw GPIOPaths.requestError(line, purpose: "motor", operation: "request as output", errno: errno)
        }
        self.selector = selector
        self.chip = line.chip
        self.path = line.path
        self.offset = line.offset
        self.handle = h
    }

    /// unwind_gpio_line_set → gpiod_line_set_value (v1) / gpiod_line_request_set_value (v2).
    public func set(_ on: Bool) throws(DeviceError) {
        guard let handle else {
            throw GPIOErrors.io(chip: chip, offset: offset, purpose: "motor", operation: "set \(on ? 1 : 0)", errno: EBADF)
        }
        if retryingOnInterrupt({ unwind_gpio_line_set(handle, on ? 1 : 0) }) != 0 {
            throw GPIOErrors.io(chip: chip, offset: offset, purpose: "motor", operation: "set \(on ? 1 : 0)", errno: errno)
        }
    }

    /// unwind_gpio_line_set(0), failures ignored: one ioctl, no allocation, no lock. For a
    /// shutdown path that cannot report anything; a real signal handler wants the free function
    /// `driveLowNow()`, which needs no object.
    public func driveLowNow() {
        if let handle { _ = unwind_gpio_line_set(handle, 0) }
    }

    /// Drives the line low, then unwind_gpio_line_release → gpiod_line_release +
    /// gpiod_chip_close (v1) / gpiod_line_request_release (v2). Safe to call twice.
    public func release() {
        guard let h = handle else { return }
        _ = retryingOnInterrupt { unwind_gpio_line_set(h, 0) }
        unwind_gpio_line_release(h)
        handle = nil
    }

    deinit { release() }
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

/// The buttons on libgpiod input lines with both-edge events, read without blocking.
///
/// Polarity is handled here, not by the kernel: the lines are requested without ACTIVE_LOW,
/// so each event is the pin's physical edge (what a scope shows and gpiomon prints), and with
/// `activeLow` a falling edge is a press. The bias follows the wiring: pull-up for active-low
/// buttons (to ground), pull-down for active-high ones (to 3V3).
///
/// Each line's event descriptor is O_NONBLOCK (set by the shim), so `readEdges` never waits
/// even if it is called without poll(2) having said "readable".
public final class LinuxButtonLines: ButtonLines {
    public struct Line: Sendable, Equatable {
        public var button: Button
        public var selector: LineSelector
        public var chip: String
        public var path: String
        public var offset: Int
    }

    public let lines: [Line]
    public let activeLow: Bool
    /// The lines' event descriptors; empty once released.
    public private(set) var pollDescriptors: [Int32]
    private var handles: [OpaquePointer?]
    private let buffer: UnsafeMutableBufferPointer<unwind_gpio_edge>

    /// unwind_gpio_request_input_edges for each button → gpiod_line_request_both_edges_events_flags
    /// with GPIOD_LINE_REQUEST_FLAG_BIAS_PULL_UP (v1) or gpiod_chip_request_lines with
    /// GPIOD_LINE_EDGE_BOTH, GPIOD_LINE_BIAS_PULL_UP and the monotonic event clock (v2); then
    /// gpiod_line_event_get_fd / gpiod_line_request_get_fd and fcntl(O_NONBLOCK). If one line
    /// fails, the ones already requested are released before the error is thrown.
    public init(_ buttons: [Button: LineSelector], activeLow: Bool = true, consumer: String = "unwind") throws(DeviceError) {
        var lines: [Line] = []
        var handles: [OpaquePointer?] = []
        var fds: [Int32] = []
        let bias: unwind_gpio_bias = activeLow ? .pullUp : .pullDown
        for button in Button.allCases {
            guard let selector = buttons[button] else { continue }
            let purpose = "\(button.rawValue) button"
            do throws(DeviceError) {
                let line = try GPIOPaths.resolve(selector, purpose: purpose)
                guard let h = GPIOPaths.retryingNil({
                    unwind_gpio_request_input_edges(line.path, UInt32(line.offset), consumer, bias)
                }) else {
                    throw GPIOPaths.requestError(line, purpose: purpose, operation: "request as input with edge events", errno: errno)
                }
                lines.append(Line(button: button, selector: selector, chip: line.chip, path: line.path, offset: line.offset))
                handles.append(h)
                fds.append(unwind_gpio_line_fd(h))
            } catch {
                for h in handles { unwind_gpio_line_release(h) }
                throw error
            }
        }
        self.lines = lines
        self.handles = handles
        self.pollDescriptors = fds
        self.activeLow = activeLow
        self.buffer = .allocate(capacity: 16)
        self.buffer.initialize(repeating: unwind_gpio_edge())
    }

    /// The buttons of a configuration, with its wiring and consumer name.
    public convenience init(configuration: GPIOConfiguration) throws(DeviceError) {
        try self.init(configuration.buttons, activeLow: configuration.activeLowButtons, consumer: configuration.consumer)
    }

    /// unwind_gpio_line_read_edges → gpiod_line_event_read_fd_multiple (v1) /
    /// gpiod_line_request_read_edge_events (v2), on each line until it has nothing left.
    /// Every edge carries the kernel's CLOCK_MONOTONIC timestamp; the edges of all lines are
    /// merged oldest first. Allocates nothing once `edges` has capacity. A line that fails is
    /// reported after the others have been read, so one bad line does not silence the rest.
    public func readEdges(into edges: inout [ButtonEdge]) throws(DeviceError) {
        let start = edges.count
        var failure: DeviceError?
        for i in handles.indices {
            guard let h = handles[i] else { continue }
            let button = lines[i].button
            // A line bouncing faster than we read could keep us here: 64 batches is plenty.
            for _ in 0..<64 {
                let n = retryingOnInterrupt { unwind_gpio_line_read_edges(h, buffer.baseAddress, UInt32(buffer.count)) }
                if n < 0 {
                    if failure == nil {
                        failure = GPIOErrors.io(chip: lines[i].chip, offset: lines[i].offset, purpose: "\(button.rawValue) button",
                                                operation: "read edge events", errno: errno)
                    }
                    break
                }
                for k in 0..<Int(n) {
                    let e = buffer[k]
                    let edge = ButtonEdge(button, pressed: GPIOConfiguration.pressed(lineHigh: e.rising != 0, activeLow: activeLow),
                                          at: Instant(nanoseconds: Int64(clamping: e.timestamp_ns)))
                    Self.insert(edge, into: &edges, after: start)
                }
                if Int(n) < buffer.count { break }
            }
        }
        if let failure { throw failure }
    }

    /// Appends keeping `edges[start...]` in time order (stable: equal instants keep read order).
    @inline(__always)
    static func insert(_ edge: ButtonEdge, into edges: inout [ButtonEdge], after start: Int) {
        edges.append(edge)
        var j = edges.count - 1
        while j > start && edges[j - 1].at > edge.at {
            edges.swapAt(j - 1, j)
            j -= 1
        }
    }

    /// unwind_gpio_line_release for every line (gpiod_line_release + gpiod_chip_close, or
    /// gpiod_line_request_release). Safe to call twice; the descriptors are closed afterwards.
    public func release() {
        for i in handles.indices {
            if let h = handles[i] { unwind_gpio_line_release(h) }
            handles[i] = nil
        }
        pollDescriptors = []
    }

    deinit {
        release()
        buffer.deallocate()
    }
}
#endif
