// Shared by the kernel-rig tests (RigGPIOTests.swift, RigI2CTests.swift): the rig's environment,
// the gpio-sim sysfs knobs, the monotonic clock and a sampler for an output line's level.
//
// These tests talk to real kernel drivers (gpio-sim, i2c-stub) inside the qemu guest of
// Tests/KernelRig/run.sh; everywhere else they are skipped with the reason shown. Run them with
//   Tests/KernelRig/hardware-tests.sh
// or, after a build,
//   Tests/KernelRig/run.sh .build/debug/unwindPackageTests.xctest --testing-library swift-testing \
//       --filter 'UnwindLinuxHardwareTests\.RigTests'

import Dispatch
import Foundation
import Synchronization
import Testing
import UnwindCore
import UnwindSeams
import UnwindLinuxHardware

#if canImport(Glibc)
import Glibc
#endif

/// Every kernel-rig suite nests in here, so they run one test at a time across suites too:
/// the guest has two emulated CPUs, and the timing checks want them to themselves.
@Suite("Kernel rig", .serialized)
enum RigTests {}

extension Trait where Self == ConditionTrait {
    /// Runs the test only inside the kernel rig's guest (which sets UNWIND_RIG=1).
    static var kernelRig: Self {
        .enabled(if: ProcessInfo.processInfo.environment["UNWIND_RIG"] == "1",
                 "needs the kernel rig (Tests/KernelRig/run.sh): gpio-sim and i2c-stub")
    }
}

struct RigError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// What the rig's /init tells the command (see Tests/KernelRig/README.md).
enum KernelRig {
    static let environment = ProcessInfo.processInfo.environment

    /// "gpiochip0": the chip as a configuration file would name it.
    static var chipName: String { environment["UNWIND_RIG_GPIOCHIP_NAME"] ?? "gpiochip0" }
    /// "/dev/gpiochip0".
    static var chipPath: String { environment["UNWIND_RIG_GPIOCHIP"] ?? "/dev/" + chipName }
    static var chipLabel: String { environment["UNWIND_RIG_GPIOCHIP_LABEL"] ?? "unwind-sim" }
    static var lineCount: Int { Int(environment["UNWIND_RIG_GPIO_LINES"] ?? "") ?? 8 }
    /// /sys/devices/platform/gpio-sim.0/gpiochip0, holding sim_gpioK/{pull,value}.
    static var simSysfs: String { environment["UNWIND_RIG_SIM_SYSFS"] ?? "/sys/devices/platform/gpio-sim.0/gpiochip0" }
    static var i2cBus: Int { Int(environment["UNWIND_RIG_I2C_BUS"] ?? "") ?? 0 }
    static var i2cDevice: String { environment["UNWIND_RIG_I2C_DEV"] ?? "/dev/i2c-\(i2cBus)" }
    /// The first i2c-stub chip address (0x3c).
    static var i2cAddress: UInt8 {
        let first = (environment["UNWIND_RIG_I2C_ADDRS"] ?? "0x3c").split(separator: ",").first.map(String.init) ?? "0x3c"
        let digits = first.hasPrefix("0x") ? String(first.dropFirst(2)) : first
        return UInt8(digits, radix: 16) ?? 0x3C
    }

    /// A line of the simulated chip as a configuration file writes it: gpiochip0:N.
    static func line(_ offset: Int) -> LineSelector { .offset(chip: chipName, line: offset) }

    /// gpioset's arguments to hold a line at a value until it is signalled. The tools come with
    /// the library the test runs against: libgpiod 1's want `--mode=signal CHIP N=V`; libgpiod
    /// 2's hold until signalled anyway and take the chip with `-c` (the arm64 stage runs the rig
    /// in Debian sid, which has them). gpionotify exists only among libgpiod 2's tools.
    static func gpiosetHolding(_ offset: Int, at value: Int) -> [String] {
        if access("/usr/bin/gpionotify", X_OK) == 0 {
            return ["-c", chipPath, "\(offset)=\(value)"]
        }
        return ["--mode=signal", chipPath, "\(offset)=\(value)"]
    }

    // MARK: gpio-sim's sysfs knobs

    enum Pull: String { case up = "pull-up", down = "pull-down" }

    /// Writes sim_gpioN/pull: what the outside world does to an input (or to a free line).
    /// A bias request by the program overwrites it, so tests drive a button after requesting it.
    static func setPull(_ offset: Int, _ pull: Pull) throws {
        try write(pull.rawValue + "\n", to: "\(simSysfs)/sim_gpio\(offset)/pull")
    }

    /// sim_gpioN/pull as the simulator has it now.
    static func pull(_ offset: Int) throws -> String { try read("\(simSysfs)/sim_gpio\(offset)/pull") }

    /// sim_gpioN/value: an output's level, or an input's (= the pull).
    static func value(_ offset: Int) throws -> Int {
        let text = try read("\(simSysfs)/sim_gpio\(offset)/value")
        guard let v = Int(text), v == 0 || v == 1 else { throw RigError("sim_gpio\(offset)/value reads '\(text)'") }
        return v
    }

    static func read(_ path: String) throws -> String {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw RigError("open \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 64)
        let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
        guard n >= 0 else { throw RigError("read \(path): \(String(cString: strerror(errno)))") }
        return String(decoding: buffer[..<n], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    static func write(_ text: String, to path: String) throws {
        let fd = open(path, O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { throw RigError("open \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        let bytes = Array(text.utf8)
        let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        guard n == bytes.count else { throw RigError("write '\(text)' to \(path): \(String(cString: strerror(errno)))") }
    }

    // MARK: Time

    /// CLOCK_MONOTONIC, the clock the kernel stamps GPIO edge events with and LinuxClock reads.
    static func now() -> Instant {
        var t = timespec()
        clock_gettime(CLOCK_MONOTONIC, &t)
        return Instant(nanoseconds: Int64(t.tv_sec) * 1_000_000_000 + Int64(t.tv_nsec))
    }

    static func sleep(_ d: Duration) {
        let ns = max(0, d.nanoseconds)
        var request = timespec(tv_sec: Int(ns / 1_000_000_000), tv_nsec: Int(ns % 1_000_000_000))
        var remaining = timespec()
        while nanosleep(&request, &remaining) != 0 && errno == EINTR { request = remaining }
    }

    /// Runs `body` and returns the monotonic instants just before and just after it.
    static func bracket(_ body: () throws -> Void) rethrows -> Bracket {
        let before = now()
        try body()
        return Bracket(before: before, after: now())
    }
}

/// An interval of monotonic time known to contain an event.
struct Bracket: CustomStringConvertible {
    var before: Instant
    var after: Instant
    func overlaps(_ other: Bracket) -> Bool { before <= other.after && other.before <= after }
    var description: String { "[\(before.nanoseconds) ns, \(after.nanoseconds) ns]" }
}

extension Instant {
    var seconds: Double { Double(nanoseconds) / 1e9 }
}

extension Duration {
    var secondsValue: Double { Double(nanoseconds) / 1e9 }
}

/// Reads a gpio-sim line's `value` in a tight loop on its own thread and keeps the changes.
///
/// Each change carries the interval it must have happened in: from the start of the read that
/// still saw the old level to the end of the read that saw the new one.
final class LineSampler: Sendable {
    struct Change: CustomStringConvertible {
        var value: Int
        var within: Bracket
        var description: String { "\(value) within \(within)" }
    }
    struct Result {
        var changes: [Change]
        var samples: Int
        /// The longest time between the starts of two consecutive reads.
        var longestGap: Duration
        var errors: [String]
    }

    let offset: Int
    private let stopRequested = Atomic<Bool>(false)
    private let state = Mutex(Result(changes: [], samples: 0, longestGap: .zero, errors: []))
    private let finished = DispatchSemaphore(value: 0)
    private let sampled = Atomic<Bool>(false)

    init(line offset: Int) { self.offset = offset }

    /// Whether the thread has read the line at least once: it is watching.
    var isSampling: Bool { sampled.load(ordering: .acquiring) }

    func start() {
        Thread.detachNewThread { [self] in
            run()
            finished.signal()
        }
    }

    /// Stops the thread and returns what it saw.
    func stop() -> Result {
        stopRequested.store(true, ordering: .relaxed)
        finished.wait()
        return state.withLock { $0 }
    }

    private func run() {
        var last: Int?
        var lastStart = Instant.zero
        var samples = 0
        var longest = Duration.zero
        var changes: [Change] = []
        while !stopRequested.load(ordering: .relaxed) {
            let start = KernelRig.now()
            let v: Int
            do { v = try KernelRig.value(offset) } catch {
                state.withLock { $0.errors.append("\(error)") }
                break
            }
            let end = KernelRig.now()
            if samples > 0 { longest = max(longest, start - lastStart) }
            if v != last {
                changes.append(Change(value: v, within: Bracket(before: samples == 0 ? start : lastStart, after: end)))
                last = v
            }
            lastStart = start
            samples += 1
            if samples == 1 { sampled.store(true, ordering: .releasing) }
        }
        state.withLock {
            $0.changes = changes
            $0.samples = samples
            $0.longestGap = longest
        }
    }
}

/// A child process started with posix_spawn. (Foundation's Process wakes its run loop through a
/// UDP socket pair on 127.0.0.1: it hung in guests booted before init.sh brought up `lo`.)
final class RigChild {
    let pid: pid_t
    private var reaped = false

    init(_ path: String, _ arguments: [String]) throws {
        let argv: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        // The child starts with no signal blocked and SIGTERM's default action: posix_spawn
        // would hand it the mask of the spawning thread, and a test process may block SIGTERM
        // (a stop-on-signal participant reads it from a signalfd). libgpiod 2's gpioset relies on
        // the default action to end; libgpiod 1's took SIGTERM itself.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t()
        sigemptyset(&none)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGTERM)
        sigaddset(&defaults, SIGINT)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var pid = pid_t()
        let r = posix_spawn(&pid, path, nil, &attributes, argv, environ)
        guard r == 0 else { throw RigError("posix_spawn \(path): \(String(cString: strerror(r)))") }
        self.pid = pid
    }

    var isRunning: Bool {
        if reaped { return false }
        var status: Int32 = 0
        if waitpid(pid, &status, WNOHANG) == pid { reaped = true }
        return !reaped
    }

    /// SIGTERM, then waits for it to end; SIGKILL if it has not within 10 s (a tool that
    /// ignores SIGTERM fails its test instead of hanging the guest until the rig's timeout).
    func stop() {
        guard isRunning else { return }
        kill(pid, SIGTERM)
        let deadline = KernelRig.now() + .seconds(10)
        while isRunning && KernelRig.now() < deadline { KernelRig.sleep(.milliseconds(20)) }
        if isRunning { kill(pid, SIGKILL) }
        var status: Int32 = 0
        while !reaped && waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        reaped = true
    }

    deinit { stop() }
}
