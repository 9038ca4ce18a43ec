#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization
import SystemPackage
import UnwindCore
import UnwindSeams

/// A GPIO chip in simulation, in the spirit of gpiozero's mock pins: the lowest GPIO seam
/// (`GPIOBackend`), so the real adapter — `GPIOMotor`, `GPIOButtons`, with their polarity, edge
/// merging and messages — runs on it exactly as on libgpiod. `lineCount` lines, each free or
/// requested once: as an output, or as an input with a bias and both-edge events.
///
/// A test plays the outside world: it drives input lines at chosen instants (`drive`,
/// `float`, `press`, `bouncyPress`), reads back every change of an output line with its instant
/// (`history`), and breaks things: a failing line (`fail`), a signal landing mid-call
/// (`interrupt`, EINTR), another program holding a line (`hold`, EBUSY), the chip going away
/// (`unplug`, ENODEV). Levels are physical (`true` = high). An input nobody drives reads its
/// bias: high with a pull-up, low with a pull-down — and low with no bias (undefined on a real
/// pin). Edges are stamped with the instant the level changed, never the instant they are
/// read, as the kernel does.
///
/// Thread-safe: the loop may run on one thread while a test (or the terminal simulator's
/// drawing) looks at the pins from another.
public final class SimulatedGPIOChip: GPIOBackend, @unchecked Sendable {
    /// A change of a line's level.
    public struct Change: Equatable, Sendable, CustomStringConvertible {
        public var at: Instant
        public var high: Bool
        public init(at: Instant, high: Bool) {
            self.at = at
            self.high = high
        }
        public var description: String { "\(at) \(high ? 1 : 0)" }
    }

    /// A line handed over by `requestOutput`/`requestInput`; stale once released.
    public struct LineRequest: Sendable, Equatable {
        public let offset: Int
        let serial: Int
    }

    /// The name gpiodetect would print, e.g. "gpiochip0"; its device path is /dev/<name>.
    public let name: String
    /// The driver's label, as gpiodetect prints it in brackets.
    public let label: String
    public let lineCount: Int
    /// The names the device tree gave the lines (a Pi's: "GPIO0" …), for name selectors.
    public let lineNames: [String]
    let clock: DeviceClock
    private let state: Mutex<ChipState>
    /// The chip's wake path (see `init`): a pipe whose read end every input line offers as its
    /// event descriptor; a byte goes in whenever a change is scheduled.
    private let wake: (read: Int32, write: Int32)?

    /// A chip that announces its edges only through `nextEdgeTime` (simulated time).
    public convenience init(name: String = "gpiochip0", label: String = "unwind-simulated", lines: Int = 54,
                            lineNames: [String]? = nil, clock: DeviceClock) {
        self.init(name: name, label: label, lines: lines, lineNames: lineNames, clock: clock, wake: nil)
    }

    /// A chip whose lines offer an event descriptor that turns readable when a change is
    /// scheduled, as a kernel's line events do: a loop polling on the real clock wakes when
    /// another thread presses a button.
    public static func wakingPollers(clock: DeviceClock, lines: Int = 54) throws(DeviceError) -> SimulatedGPIOChip {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { throw DeviceError(device: "simulated GPIO chip", operation: "pipe", errno: errno) }
        for fd in fds {
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        }
        return SimulatedGPIOChip(name: "gpiochip0", label: "unwind-simulated", lines: lines, lineNames: nil, clock: clock,
                                 wake: (fds[0], fds[1]))
    }

    private init(name: String, label: String, lines: Int, lineNames: [String]?, clock: DeviceClock,
                 wake: (read: Int32, write: Int32)?) {
        self.name = name
        self.label = label
        self.lineCount = max(0, lines)
        self.lineNames = lineNames ?? (0..<max(0, lines)).map { "GPIO\($0)" }
        self.clock = clock
        self.state = Mutex(ChipState(lines: max(0, lines)))
        self.wake = wake
    }

    deinit {
        if let wake {
            close(wake.read)
            close(wake.write)
        }
    }

    var path: String { "/dev/" + name }
    private var now: Instant { clock.now().instant }

    // MARK: The outside world

    /// Drives the pin high or low from `at` on (a switch, a signal generator, a test).
    public func drive(_ offset: Int, high: Bool, at: Instant) { schedule(offset, high, at) }

    /// Stops driving the pin at `at`: it goes to its bias level (an open switch).
    public func float(_ offset: Int, at: Instant) { schedule(offset, nil, at) }

    /// A clean press of an active-low button (switch to ground): the line is pulled low at
    /// `at` and let go after `holdFor`.
    public func press(_ offset: Int, at: Instant, holdFor: Duration) {
        schedule([(offset, false, at), (offset, nil, at + holdFor)])
    }

    /// An active-low press whose contacts chatter: `bounces` low/open flickers `interval`
    /// apart on the way down (starting at `at`) and on the way up (starting at `at + holdFor`).
    public func bouncyPress(_ offset: Int, at: Instant, holdFor: Duration, bounces: Int = 3,
                            interval: Duration = .milliseconds(1)) {
        var t = at
        for _ in 0..<max(0, bounces) {
            drive(offset, high: false, at: t); t += interval
            float(offset, at: t); t += interval
        }
        drive(offset, high: false, at: t)
        t = at + holdFor
        for _ in 0..<max(0, bounces) {
            float(offset, at: t); t += interval
            drive(offset, high: false, at: t); t += interval
        }
        float(offset, at: t)
    }

    /// The earliest scheduled change of an input that has not happened yet, so simulated time
    /// can jump straight to it (`SimulatedTime.nextEvent = { chip.nextEdgeTime }`).
    public var nextEdgeTime: Instant? { state.withLock { $0.schedule.first?.at } }

    /// Every change of the line's level while it was an output, oldest first.
    public func history(_ offset: Int) -> [Change] {
        state.withLock { $0.lines.indices.contains(offset) ? $0.lines[offset].history : [] }
    }

    /// The pin's physical level now.
    public func level(_ offset: Int) -> Bool {
        let now = now
        return state.withLock { s in
            s.settle(now)
            return s.lines.indices.contains(offset) && s.physicalLevel(offset)
        }
    }

    /// Who holds the line, as gpioinfo shows it; nil when free.
    public func consumer(_ offset: Int) -> String? {
        state.withLock { $0.lines.indices.contains(offset) ? $0.lines[offset].consumer : nil }
    }

    /// Makes every later set or read of the held line fail with `errno` (nil: works again) — a
    /// test's broken wire.
    public func fail(_ offset: Int, errno: Int32?) {
        state.withLock { s in
            if s.lines.indices.contains(offset) { s.lines[offset].failure = errno.map(Errno.init(rawValue:)) }
        }
    }

    /// The next `times` calls on the line (a request, a set, a read) are interrupted by a
    /// signal and fail with EINTR, as a call the kernel cuts short does; the call after works.
    public func interrupt(_ offset: Int, times: Int = 1) {
        state.withLock { s in
            if s.lines.indices.contains(offset) { s.lines[offset].interruptions += max(0, times) }
        }
    }

    /// Another program (gpioset, gpiomon) takes the line: requesting it fails with EBUSY until
    /// `letGo`.
    public func hold(_ offset: Int, consumer: String) {
        state.withLock { s in
            if s.lines.indices.contains(offset) && s.lines[offset].consumer == nil { s.lines[offset].consumer = consumer }
        }
    }

    /// The other program lets the line go.
    public func letGo(_ offset: Int) {
        state.withLock { s in
            if s.lines.indices.contains(offset) && s.lines[offset].serial == 0 { s.lines[offset].consumer = nil }
        }
    }

    /// The chip goes away (an expander unplugged, its driver unbound): /dev/<name> is gone, and
    /// every call on a line already held fails with ENODEV.
    public func unplug() { state.withLock { $0.unplugged = true } }

    // MARK: GPIOBackend

    public func chipPath(_ chip: String) throws(Errno) -> String {
        let unplugged = state.withLock { $0.unplugged }
        let number = name.hasPrefix("gpiochip") ? String(name.dropFirst(8)) : nil
        guard !unplugged, chip == name || chip == path || chip == number || chip == label else {
            throw .noSuchFileOrDirectory
        }
        return path
    }

    public func findLine(named wanted: String) throws(Errno) -> (chipPath: String, offset: Int) {
        guard !state.withLock({ $0.unplugged }), let offset = lineNames.firstIndex(of: wanted) else {
            throw .noSuchFileOrDirectory
        }
        return (path, offset)
    }

    public func chipInfo(path: String) throws(Errno) -> GPIOChipInfo {
        guard path == self.path, !state.withLock({ $0.unplugged }) else { throw .noSuchFileOrDirectory }
        return GPIOChipInfo(path: path, name: name, label: label, lineCount: lineCount)
    }

    public func chipPaths() -> [String] { state.withLock { $0.unplugged } ? [] : [path] }

    public func requestOutput(chipPath: String, offset: Int, consumer: String, initiallyHigh: Bool) throws(Errno) -> LineRequest {
        let now = now
        let mine = chipPath == path
        return try state.withLock { (s) throws(Errno) -> LineRequest in
            let request = try s.claim(offset, consumer: consumer, onThisChip: mine, now: now)
            let before = s.physicalLevel(offset)
            s.lines[offset].mode = .output
            // Room for a long session's changes up front: the loop's motor sets allocate nothing.
            s.lines[offset].history.reserveCapacity(1024)
            s.lines[offset].outputLevel = initiallyHigh
            if initiallyHigh != before { s.lines[offset].history.append(Change(at: now, high: initiallyHigh)) }
            return request
        }
    }

    public func requestInput(chipPath: String, offset: Int, consumer: String, bias: GPIOBias) throws(Errno) -> LineRequest {
        let now = now
        let mine = chipPath == path
        return try state.withLock { (s) throws(Errno) -> LineRequest in
            let request = try s.claim(offset, consumer: consumer, onThisChip: mine, now: now)
            s.lines[offset].mode = .input(bias)
            s.lines[offset].pending.removeAll(keepingCapacity: true)
            s.lines[offset].pending.reserveCapacity(64)
            return request
        }
    }

    public func setValue(_ line: LineRequest, high: Bool) throws(Errno) {
        let now = now
        try state.withLock { (s) throws(Errno) in
            try s.check(line)
            guard s.lines[line.offset].mode == .output else { throw .notPermitted }
            s.settle(now)
            guard s.lines[line.offset].outputLevel != high else { return }
            s.lines[line.offset].outputLevel = high
            s.lines[line.offset].history.append(Change(at: now, high: high))
        }
    }

    public func value(_ line: LineRequest) throws(Errno) -> Bool {
        let now = now
        return try state.withLock { (s) throws(Errno) -> Bool in
            try s.check(line)
            s.settle(now)
            return s.physicalLevel(line.offset)
        }
    }

    /// The wake pipe's read end (one for every line: the poller reads them all), or none: the
    /// chip then announces its edges only through `nextEdgeTime`.
    public func eventDescriptor(_ line: LineRequest) -> Int32? { wake?.read }

    /// Every change scheduled has happened and every edge has been read.
    public var isQuiet: Bool {
        state.withLock { s in s.schedule.isEmpty && s.lines.allSatisfy { $0.pending.isEmpty } }
    }

    public func readEdges(_ line: LineRequest, into edges: UnsafeMutableBufferPointer<GPIOEdge>) throws(Errno) -> Int {
        if let wake {
            var sink = (UInt64(0), UInt64(0), UInt64(0), UInt64(0))
            while withUnsafeMutableBytes(of: &sink, { read(wake.read, $0.baseAddress, $0.count) }) > 0 {}
        }
        let now = now
        return try state.withLock { (s) throws(Errno) -> Int in
            try s.check(line)
            guard case .input = s.lines[line.offset].mode else { throw .notPermitted }
            s.settle(now)
            let n = min(edges.count, s.lines[line.offset].pending.count)
            for k in 0..<n { edges[k] = s.lines[line.offset].pending[k] }
            s.lines[line.offset].pending.removeFirst(n)
            return n
        }
    }

    /// Lets the line go. An output keeps driving its last level (as on a Pi); an input loses
    /// its bias request but keeps reading the same level here.
    public func release(_ line: LineRequest) {
        let now = now
        state.withLock { s in
            guard s.lines.indices.contains(line.offset), s.lines[line.offset].serial == line.serial else { return }
            s.settle(now)
            s.lines[line.offset].consumer = nil
            s.lines[line.offset].serial = 0
            s.lines[line.offset].pending.removeAll()
            if s.lines[line.offset].mode != .output { s.lines[line.offset].mode = .free }
        }
    }

    private func schedule(_ offset: Int, _ level: Bool?, _ at: Instant) { schedule([(offset, level, at)]) }

    /// Changes that belong together (a press and its release) are scheduled at once: a poller
    /// woken by the first finds the rest already there.
    func schedule(_ changes: [(offset: Int, level: Bool?, at: Instant)]) {
        state.withLock { s in
            for (offset, level, at) in changes where s.lines.indices.contains(offset) {
                var i = s.schedule.count
                while i > 0 && s.schedule[i - 1].at > at { i -= 1 }
                s.schedule.insert(ChipState.Scheduled(at: at, offset: offset, level: level), at: i)
            }
        }
        if let wake {
            // Full (nobody polls): the poller has bytes to read already.
            var b: UInt8 = 1
            _ = write(wake.write, &b, 1)
        }
    }
}

/// Everything about the chip that changes, behind its lock.
struct ChipState {
    enum Mode: Equatable {
        case free
        case output
        case input(GPIOBias)
    }

    struct Line {
        var consumer: String?
        /// The current request's serial; 0: not requested by us (free, or held by another program).
        var serial = 0
        var mode: Mode = .free
        /// The outside world: nil = nothing drives the pin.
        var driven: Bool?
        var outputLevel = false
        var history: [SimulatedGPIOChip.Change] = []
        var pending: [GPIOEdge] = []
        var failure: Errno?
        var interruptions = 0
    }

    struct Scheduled {
        var at: Instant
        var offset: Int
        var level: Bool?
    }

    var lines: [Line]
    var schedule: [Scheduled] = []
    var unplugged = false
    var nextSerial = 1

    init(lines: Int) {
        self.lines = Array(repeating: Line(), count: lines)
        schedule.reserveCapacity(256)
    }

    /// A request's checks, in the kernel's order: a signal first, then the chip, the offset, a holder.
    mutating func claim(_ offset: Int, consumer: String, onThisChip: Bool, now: Instant) throws(Errno) -> SimulatedGPIOChip.LineRequest {
        if lines.indices.contains(offset) && lines[offset].interruptions > 0 {
            lines[offset].interruptions -= 1
            throw .interrupted
        }
        guard onThisChip, !unplugged else { throw .noSuchFileOrDirectory }
        guard lines.indices.contains(offset) else { throw .invalidArgument }
        settle(now)
        guard lines[offset].consumer == nil else { throw .resourceBusy }
        lines[offset].consumer = consumer
        lines[offset].serial = nextSerial
        nextSerial += 1
        return SimulatedGPIOChip.LineRequest(offset: offset, serial: lines[offset].serial)
    }

    /// A call on a held line: released (EBADF), interrupted (EINTR), gone (ENODEV), broken.
    mutating func check(_ line: SimulatedGPIOChip.LineRequest) throws(Errno) {
        guard lines.indices.contains(line.offset), lines[line.offset].serial == line.serial else { throw .badFileDescriptor }
        if lines[line.offset].interruptions > 0 {
            lines[line.offset].interruptions -= 1
            throw .interrupted
        }
        if unplugged { throw .operationNotSupportedByDevice }
        if let failure = lines[line.offset].failure { throw failure }
    }

    func physicalLevel(_ offset: Int) -> Bool {
        let l = lines[offset]
        if l.mode == .output { return l.outputLevel }
        if let d = l.driven { return d }
        if case .input(.pullUp) = l.mode { return true }
        return false
    }

    /// Applies every scheduled change whose instant has come, stamping edges with that instant.
    mutating func settle(_ now: Instant) {
        var n = 0
        while n < schedule.count && schedule[n].at <= now {
            let s = schedule[n]
            n += 1
            let before = physicalLevel(s.offset)
            lines[s.offset].driven = s.level
            let after = physicalLevel(s.offset)
            if before != after, case .input = lines[s.offset].mode, lines[s.offset].serial != 0 {
                lines[s.offset].pending.append(GPIOEdge(rising: after, at: s.at))
            }
        }
        if n > 0 { schedule.removeFirst(n) }
    }
}

// MARK: The real adapter on this chip

/// `GPIOMotor` on a simulated chip: the board's motor code, pins read back by the test.
public typealias SimulatedGPIOMotor = GPIOMotor<SimulatedGPIOChip>
/// `GPIOButtons` on a simulated chip: the board's button code, presses driven by the test.
public typealias SimulatedGPIOButtons = GPIOButtons<SimulatedGPIOChip>

extension SimulatedGPIOChip {
    /// One of this chip's lines as a configuration writes it: `<name>:<offset>`.
    public func line(_ offset: Int) -> LineSelector { .offset(chip: name, line: offset) }

    /// The motor on one of this chip's lines, through the same adapter as `LinuxMotorLine`.
    public func motorLine(offset: Int, consumer: String = "unwind") throws(DeviceError) -> SimulatedGPIOMotor {
        try GPIOMotor(line(offset), consumer: consumer, backend: self)
    }

    /// The buttons on this chip's lines, through the same adapter as `LinuxButtonLines`.
    public func buttonLines(_ map: [Button: Int], activeLow: Bool = true, consumer: String = "unwind") throws(DeviceError) -> SimulatedGPIOButtons {
        try GPIOButtons(map.mapValues(line), activeLow: activeLow, consumer: consumer, backend: self)
    }
}
