#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import UnwindCore
import UnwindDevices

/// A GPIO chip in simulation, in the spirit of gpiozero's mock pins: `lineCount` lines, each
/// free or requested once — as an output, or as an input with a bias and both-edge events.
///
/// A test plays the outside world: it drives input lines at chosen instants (`drive`,
/// `float`, `press`, `bouncyPress`) and reads back every change of an output line with its
/// instant (`history`). Levels are physical (`true` = high). An input nobody drives reads its
/// bias: high with a pull-up, low with a pull-down — and low with no bias (undefined on a real
/// pin). Edges are stamped with the instant the level changed, never the instant they are
/// read, as the kernel does.
///
/// Requesting a held line fails with the same EBUSY `DeviceError` text as libgpiod, and
/// `motorLine(offset:)` / `buttonLines(_:)` adapt lines to the loop's protocols, so the loop
/// runs on this chip exactly as on the board.
public final class SimulatedGPIOChip {
    public enum Bias: Sendable, Equatable {
        case asIs, disabled, pullUp, pullDown
    }

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

    /// An edge event on a requested input, as libgpiod reports one.
    public struct Edge: Equatable, Sendable {
        public var offset: Int
        public var rising: Bool
        public var at: Instant
    }

    enum Mode: Equatable {
        case free
        case output
        case input(Bias)
    }

    struct Line {
        var consumer: String?
        var mode: Mode = .free
        /// The outside world: nil = nothing drives the pin.
        var driven: Bool?
        var outputLevel = false
        var history: [Change] = []
        var pending: [Edge] = []
        var failure: Int32?
    }

    struct Scheduled {
        var at: Instant
        var offset: Int
        var level: Bool?
    }

    /// The name the chip's messages use, as gpiodetect would print it.
    public let name: String
    public let lineCount: Int
    let clock: DeviceClock
    var lines: [Line]
    var schedule: [Scheduled] = []

    public init(name: String = "gpiochip0", lines: Int = 54, clock: DeviceClock) {
        self.name = name
        self.lineCount = lines
        self.clock = clock
        self.lines = Array(repeating: Line(), count: max(0, lines))
        schedule.reserveCapacity(256)
    }

    // MARK: The outside world

    /// Drives the pin high or low from `at` on (a switch, a signal generator, a test).
    public func drive(_ offset: Int, high: Bool, at: Instant) { enqueue(offset, high, at) }

    /// Stops driving the pin at `at`: it goes to its bias level (an open switch).
    public func float(_ offset: Int, at: Instant) { enqueue(offset, nil, at) }

    /// A clean press of an active-low button (switch to ground): the line is pulled low at
    /// `at` and let go after `holdFor`.
    public func press(_ offset: Int, at: Instant, holdFor: Duration) {
        drive(offset, high: false, at: at)
        float(offset, at: at + holdFor)
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
    public var nextEdgeTime: Instant? { schedule.first?.at }

    /// Every change of the line's level while it was an output, oldest first.
    public func history(_ offset: Int) -> [Change] {
        guard lines.indices.contains(offset) else { return [] }
        return lines[offset].history
    }

    /// The pin's physical level now.
    public func level(_ offset: Int) -> Bool {
        settle()
        guard lines.indices.contains(offset) else { return false }
        return physicalLevel(offset)
    }

    /// Who holds the line, as gpioinfo shows it; nil when free.
    public func consumer(_ offset: Int) -> String? {
        guard lines.indices.contains(offset) else { return nil }
        return lines[offset].consumer
    }

    /// Makes every later set or read on the line fail with `errno` (nil: works again) — a
    /// test's broken wire or vanished chip.
    public func fail(_ offset: Int, errno: Int32?) {
        guard lines.indices.contains(offset) else { return }
        lines[offset].failure = errno
    }

    // MARK: Requests

    /// Requests the line as an output driven to `initialHigh` at once.
    public func requestOutput(_ offset: Int, consumer: String = "unwind", initialHigh: Bool = false,
                              purpose: String = "output") throws(DeviceError) -> OutputLine {
        try claim(offset, consumer: consumer, purpose: purpose, operation: "request as output")
        let before = physicalLevel(offset)
        lines[offset].mode = .output
        lines[offset].outputLevel = initialHigh
        if initialHigh != before { lines[offset].history.append(Change(at: clock.now().instant, high: initialHigh)) }
        return OutputLine(chip: self, offset: offset, purpose: purpose)
    }

    /// Requests the line as an input with `bias`, reporting both edges from now on.
    public func requestInput(_ offset: Int, consumer: String = "unwind", bias: Bias = .pullUp,
                             purpose: String = "input") throws(DeviceError) -> InputLine {
        try claim(offset, consumer: consumer, purpose: purpose, operation: "request as input with edge events")
        lines[offset].mode = .input(bias)
        lines[offset].pending.removeAll()
        return InputLine(chip: self, offset: offset, purpose: purpose)
    }

    /// A held output line. Released (left at its level, like libgpiod) by `release()` or deinit.
    public final class OutputLine {
        public let chip: SimulatedGPIOChip
        public let offset: Int
        let purpose: String
        public private(set) var isReleased = false

        init(chip: SimulatedGPIOChip, offset: Int, purpose: String) {
            self.chip = chip
            self.offset = offset
            self.purpose = purpose
        }

        public func set(high: Bool) throws(DeviceError) {
            let e: Int32? = isReleased ? EBADF : chip.lines[offset].failure
            if let e {
                throw GPIOErrors.io(chip: chip.name, offset: offset, purpose: purpose, operation: "set \(high ? 1 : 0)", errno: e)
            }
            chip.setOutput(offset, high: high)
        }

        public func release() {
            guard !isReleased else { return }
            isReleased = true
            chip.free(offset)
        }

        deinit { release() }
    }

    /// A held input line with edge events.
    public final class InputLine {
        public let chip: SimulatedGPIOChip
        public let offset: Int
        let purpose: String
        public private(set) var isReleased = false

        init(chip: SimulatedGPIOChip, offset: Int, purpose: String) {
            self.chip = chip
            self.offset = offset
            self.purpose = purpose
        }

        /// Appends the edges that have happened by now, oldest first.
        public func readEdges(into edges: inout [Edge]) throws(DeviceError) {
            let e: Int32? = isReleased ? EBADF : chip.lines[offset].failure
            if let e {
                throw GPIOErrors.io(chip: chip.name, offset: offset, purpose: purpose, operation: "read edge events", errno: e)
            }
            chip.settle()
            edges.append(contentsOf: chip.lines[offset].pending)
            chip.lines[offset].pending.removeAll(keepingCapacity: true)
        }

        /// The pin's physical level now.
        public var level: Bool { chip.level(offset) }

        public func release() {
            guard !isReleased else { return }
            isReleased = true
            chip.free(offset)
        }

        deinit { release() }
    }

    // MARK: Internals

    private func claim(_ offset: Int, consumer: String, purpose: String, operation: String) throws(DeviceError) {
        settle()
        guard lines.indices.contains(offset) else {
            throw GPIOErrors.request(chip: name, path: "/dev/" + name, offset: offset, purpose: purpose,
                                     operation: operation, errno: EINVAL, lineCount: lineCount)
        }
        if lines[offset].consumer != nil {
            throw GPIOErrors.request(chip: name, path: "/dev/" + name, offset: offset, purpose: purpose,
                                     operation: operation, errno: EBUSY, lineCount: lineCount)
        }
        lines[offset].consumer = consumer
    }

    func free(_ offset: Int) {
        settle()
        // An output keeps driving its last level after release (as on a Pi); an input loses its
        // bias request but keeps reading the same level here.
        lines[offset].consumer = nil
        lines[offset].pending.removeAll()
        if lines[offset].mode != .output { lines[offset].mode = .free }
    }

    func setOutput(_ offset: Int, high: Bool) {
        settle()
        guard lines[offset].outputLevel != high else { return }
        lines[offset].outputLevel = high
        lines[offset].history.append(Change(at: clock.now().instant, high: high))
    }

    func physicalLevel(_ offset: Int) -> Bool {
        let l = lines[offset]
        if l.mode == .output { return l.outputLevel }
        if let d = l.driven { return d }
        if case .input(.pullUp) = l.mode { return true }
        return false
    }

    private func enqueue(_ offset: Int, _ level: Bool?, _ at: Instant) {
        guard lines.indices.contains(offset) else { return }
        var i = schedule.count
        while i > 0 && schedule[i - 1].at > at { i -= 1 }
        schedule.insert(Scheduled(at: at, offset: offset, level: level), at: i)
    }

    /// Applies every scheduled change whose instant has come, stamping edges with that instant.
    func settle() {
        let now = clock.now().instant
        var n = 0
        while n < schedule.count && schedule[n].at <= now {
            let s = schedule[n]
            n += 1
            let before = physicalLevel(s.offset)
            lines[s.offset].driven = s.level
            let after = physicalLevel(s.offset)
            if before != after, case .input = lines[s.offset].mode, lines[s.offset].consumer != nil {
                lines[s.offset].pending.append(Edge(offset: s.offset, rising: after, at: s.at))
            }
        }
        if n > 0 { schedule.removeFirst(n) }
    }
}

// MARK: Adapters to the loop's protocols

extension SimulatedGPIOChip {
    /// The motor on one of this chip's lines, requested as `LinuxMotorLine` requests it:
    /// output, initially low; released low.
    public func motorLine(offset: Int, consumer: String = "unwind") throws(DeviceError) -> SimulatedGPIOMotor {
        SimulatedGPIOMotor(line: try requestOutput(offset, consumer: consumer, initialHigh: false, purpose: "motor"))
    }

    /// The buttons on this chip's lines, requested as `LinuxButtonLines` requests them: inputs
    /// with both-edge events, pull-up for active-low buttons (line low = pressed), pull-down
    /// otherwise. If one request fails the others are let go.
    public func buttonLines(_ map: [Button: Int], activeLow: Bool = true, consumer: String = "unwind") throws(DeviceError) -> SimulatedGPIOButtons {
        var inputs: [(Button, InputLine)] = []
        for b in Button.allCases {
            guard let offset = map[b] else { continue }
            do throws(DeviceError) {
                let line = try requestInput(offset, consumer: consumer, bias: activeLow ? .pullUp : .pullDown,
                                            purpose: "\(b.rawValue) button")
                inputs.append((b, line))
            } catch {
                for (_, l) in inputs { l.release() }
                throw error
            }
        }
        return SimulatedGPIOButtons(chip: self, inputs: inputs, activeLow: activeLow)
    }
}

/// `MotorLine` on a simulated chip's output line.
public final class SimulatedGPIOMotor: MotorLine {
    public let line: SimulatedGPIOChip.OutputLine

    init(line: SimulatedGPIOChip.OutputLine) { self.line = line }

    public func set(_ on: Bool) throws(DeviceError) { try line.set(high: on) }

    /// Drives the line low (ignoring failures) and lets it go, like `LinuxMotorLine.release()`.
    public func release() {
        if !line.isReleased { try? line.set(high: false) }
        line.release()
    }

    deinit { release() }
}

/// `ButtonLines` on a simulated chip's input lines.
public final class SimulatedGPIOButtons: ButtonLines {
    public let chip: SimulatedGPIOChip
    public let activeLow: Bool
    let inputs: [(button: Button, line: SimulatedGPIOChip.InputLine)]
    private var scratch: [SimulatedGPIOChip.Edge] = []

    init(chip: SimulatedGPIOChip, inputs: [(Button, SimulatedGPIOChip.InputLine)], activeLow: Bool) {
        self.chip = chip
        self.inputs = inputs.map { (button: $0.0, line: $0.1) }
        self.activeLow = activeLow
        scratch.reserveCapacity(64)
    }

    /// Simulated lines have no descriptors: the loop learns of edges from `nextEdgeTime`.
    public var pollDescriptors: [Int32] { [] }

    /// The earliest scheduled change of any line on the chip, so the loop's wait stops there.
    public var nextEdgeTime: Instant? { chip.nextEdgeTime }

    public func readEdges(into edges: inout [ButtonEdge]) throws(DeviceError) {
        let start = edges.count
        var failure: DeviceError?
        for (button, line) in inputs {
            scratch.removeAll(keepingCapacity: true)
            do throws(DeviceError) { try line.readEdges(into: &scratch) } catch {
                if failure == nil { failure = error }
                continue
            }
            for e in scratch {
                let edge = ButtonEdge(button, pressed: GPIOConfiguration.pressed(lineHigh: e.rising, activeLow: activeLow), at: e.at)
                edges.append(edge)
                var j = edges.count - 1
                while j > start && edges[j - 1].at > edge.at {
                    edges.swapAt(j - 1, j)
                    j -= 1
                }
            }
        }
        if let failure { throw failure }
    }

    public func release() { for (_, line) in inputs { line.release() } }
}
