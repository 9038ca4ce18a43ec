import Dispatch
import Logging
import Synchronization
import UnwindSimulatedHardware
import UnwindCore
import UnwindLinuxHardware
import UnwindRender
import UnwindSeams

/// What a sequence of frames costs on the display's I²C bus, at 100 kHz and at 400 kHz: the
/// `SSD1306` driver (partial updates within its frame budget) against a full-frame baseline
/// (window + every byte, every frame, however long that takes).
///
/// The driver's choices depend on the bus speed (its `frameBudget` is wire time), so it runs
/// once per speed, for real, against a `SimulatedI2CBus` and an `SSD1306Model`; every frame is
/// checked: the model's GDDRAM must hold exactly the frame unless the driver reported changes
/// held over to the next frame (`mismatchedFrames`, expected 0), and the display must catch up
/// with the last frame. The first frame (initialisation, full frame, display on) is left out of
/// the statistics and reported as `firstFrame`. A frame with no change costs 0 bytes and counts.
///
/// ```swift
/// var core = DeviceCore(); var effects: [Effect] = []
/// core.apply(.button(.down(.select)), at: Moment(.zero), effects: &effects)
/// let state = core.state
/// let report = BusCost.measure(count: 600 * 30) { k, fb in
///     Screen.render(state, at: Instant(nanoseconds: Int64(k) * 1_000_000_000 / 30), into: &fb)
/// }
/// print(report)
/// ```
public enum BusCost {
    /// Mean, 99th percentile (nearest rank) and maximum of a per-frame count.
    public struct Summary: Sendable, Equatable {
        public var mean: Double
        public var p99: Int
        public var max: Int
    }

    /// Mean, 99th percentile and maximum of a per-frame wire time.
    public struct TimeSummary: Sendable, Equatable {
        public var mean: Duration
        public var p99: Duration
        public var max: Duration
    }

    /// One strategy at one bus speed.
    public struct PathReport: Sendable, Equatable {
        /// Frames measured (the first one excluded).
        public var frames: Int
        public var bytes: Summary
        public var transfers: Summary
        public var wireTime: TimeSummary
        /// Frames whose wire time exceeds the budget: each one makes the presenter drop a frame.
        public var framesOverBudget: Int
        /// Frames that left changes for the next frame (the driver's frame budget; 0 for the baseline).
        public var framesDeferred: Int
        /// The initialisation, first full frame and display on, not in the numbers above.
        public var firstFrame: FrameCost
    }

    /// Driver and baseline at one bus speed.
    public struct SpeedReport: Sendable, Equatable {
        public var busSpeedHz: Int
        public var driver: PathReport
        public var baseline: PathReport
    }

    public struct Report: Sendable, CustomStringConvertible {
        public var budget: Duration
        public var capabilities: I2CCapabilities
        public var at100kHz: SpeedReport
        public var at400kHz: SpeedReport
        /// Frames after which the display did not hold the frame although the driver held nothing
        /// over, plus 1 if the display never caught up with the last frame (0 unless broken).
        public var mismatchedFrames: Int

        public var description: String {
            var s = "display bus cost: \(at100kHz.driver.frames) frames, \(capabilities.contains(.plainI2C) ? "plain I²C" : "SMBus blocks"), "
            s += "held against \(BusCost.ms(budget)) a frame\n"
            for speed in [at100kHz, at400kHz] {
                for (name, r) in [("driver", speed.driver), ("full frames", speed.baseline)] {
                    s += "  \(speed.busSpeedHz / 1000) kHz \(name):\n"
                    s += "    bytes/frame     mean \(BusCost.fixed(r.bytes.mean)), p99 \(r.bytes.p99), max \(r.bytes.max)\n"
                    s += "    transfers/frame mean \(BusCost.fixed(r.transfers.mean)), p99 \(r.transfers.p99), max \(r.transfers.max)\n"
                    s += "    wire time       mean \(BusCost.ms(r.wireTime.mean)), p99 \(BusCost.ms(r.wireTime.p99)), max \(BusCost.ms(r.wireTime.max))\n"
                    s += "    over budget     \(r.framesOverBudget) frames; held over: \(r.framesDeferred) frames\n"
                    s += "    first frame     \(r.firstFrame.bytes) bytes in \(r.firstFrame.transfers) transfers\n"
                }
            }
            s += "  mismatched frames: \(mismatchedFrames)"
            return s
        }
    }

    /// Measures `frames` (all of the configuration's size). `configuration.busSpeedHz` is
    /// replaced by 100 kHz and 400 kHz in turn; `budget` is the frame period the wire time is
    /// held against (33 ms: 30 frames a second).
    public static func measure(frames: some Sequence<Framebuffer>,
                               configuration: SSD1306.Configuration = SSD1306.Configuration(),
                               capabilities: I2CCapabilities = .plainI2C,
                               budget: Duration = .milliseconds(33)) -> Report {
        var slow = Meter(configuration, speed: 100_000, capabilities: capabilities)
        var fast = Meter(configuration, speed: 400_000, capabilities: capabilities)
        var last: Framebuffer?
        for frame in frames {
            slow.add(frame)
            fast.add(frame)
            last = frame
        }
        if let last {
            if !slow.catchesUp(with: last) { slow.tally.mismatches += 1 }
            if !fast.catchesUp(with: last) { fast.tally.mismatches += 1 }
        }
        return report(slow.tally, fast.tally, configuration: configuration, capabilities: capabilities, budget: budget)
    }

    /// Measures `count` frames drawn by `render(k, &framebuffer)` into one reused framebuffer
    /// (not cleared between calls; `Screen.render` clears it).
    ///
    /// `windows` > 1 splits the frames into that many consecutive stretches measured side by side
    /// on as many threads: each stretch but the first starts from a driver and display that show
    /// the frame before it, so every frame's change from its predecessor is measured once, as in
    /// one pass. The report is one pass's unless the driver held changes over across a stretch's
    /// start (its frame budget), which a stretch cannot know.
    public static func measure(count: Int,
                               windows: Int = 1,
                               configuration: SSD1306.Configuration = SSD1306.Configuration(),
                               capabilities: I2CCapabilities = .plainI2C,
                               budget: Duration = .milliseconds(33),
                               render: @Sendable (Int, inout Framebuffer) -> Void) -> Report {
        let stretches = max(1, min(windows, count))
        let tallies = Mutex([Int: (slow: Tally, fast: Tally)]())
        DispatchQueue.concurrentPerform(iterations: stretches) { i in
            let range = (count * i / stretches)..<(count * (i + 1) / stretches)
            var slow = Meter(configuration, speed: 100_000, capabilities: capabilities)
            var fast = Meter(configuration, speed: 400_000, capabilities: capabilities)
            var fb = Framebuffer(width: configuration.width, height: configuration.height)
            if range.lowerBound > 0 {
                render(range.lowerBound - 1, &fb)
                slow.start(showing: fb)
                fast.start(showing: fb)
            }
            for k in range {
                render(k, &fb)
                slow.add(fb)
                fast.add(fb)
            }
            // The last stretch's display must catch up with the last frame.
            if i == stretches - 1 && !range.isEmpty {
                if !slow.catchesUp(with: fb) { slow.tally.mismatches += 1 }
                if !fast.catchesUp(with: fb) { fast.tally.mismatches += 1 }
            }
            let done = (slow: slow.tally, fast: fast.tally)
            tallies.withLock { $0[i] = done }
        }
        let parts = tallies.withLock { all in (0..<stretches).compactMap { all[$0] } }
        return report(Tally(joining: parts.map(\.slow)), Tally(joining: parts.map(\.fast)), configuration: configuration,
                      capabilities: capabilities, budget: budget)
    }

    private static func report(_ slow: Tally, _ fast: Tally, configuration: SSD1306.Configuration,
                               capabilities: I2CCapabilities, budget: Duration) -> Report {
        Report(budget: budget, capabilities: capabilities,
               at100kHz: slow.report(configuration: configuration, speed: 100_000, capabilities: capabilities, budget: budget),
               at400kHz: fast.report(configuration: configuration, speed: 400_000, capabilities: capabilities, budget: budget),
               mismatchedFrames: slow.mismatches + fast.mismatches)
    }

    /// What one driver at one bus speed cost over a stretch of frames.
    private struct Tally: Sendable {
        var costs: [FrameCost] = []
        var first: FrameCost?
        var deferred = 0
        var mismatches = 0

        init() {}

        /// Consecutive stretches as one: the first one's first frame, every frame after it.
        init(joining parts: [Tally]) {
            first = parts.first?.first
            for part in parts {
                costs += part.costs
                deferred += part.deferred
                mismatches += part.mismatches
            }
        }

        func report(configuration: SSD1306.Configuration, speed: Int, capabilities: I2CCapabilities,
                    budget: Duration) -> SpeedReport {
            var configuration = configuration
            configuration.busSpeedHz = speed
            let start = first ?? FrameCost(busSpeedHz: speed)
            let full = SSD1306.fullFrameCost(configuration: configuration, capabilities: capabilities)
            return SpeedReport(
                busSpeedHz: speed,
                driver: summarise(costs, deferred: deferred, first: start, budget: budget),
                baseline: summarise([FrameCost](repeating: full, count: costs.count), deferred: 0, first: start, budget: budget))
        }
    }

    private struct Meter {
        let bus: SimulatedI2CBus
        let driver: SSD1306
        var tally = Tally()

        init(_ configuration: SSD1306.Configuration, speed: Int, capabilities: I2CCapabilities) {
            var configuration = configuration
            configuration.busSpeedHz = speed
            let model = SSD1306Model(rows: configuration.height, mounting: configuration.flipped ? .upsideDown : .upright)
            bus = SimulatedI2CBus(capabilities: capabilities, model: model)
            var logger = Logger(label: "unwind.buscost")
            logger.logLevel = .critical
            driver = SSD1306(bus: bus, configuration: configuration, logger: logger, clock: { .zero })
        }

        /// A stretch that follows another: the display shows `frame` (the stretch before's last)
        /// before the first frame that counts; what that took is not counted.
        mutating func start(showing frame: Framebuffer) {
            if !catchesUp(with: frame) { tally.mismatches += 1 }
            tally.first = driver.lastFrame
        }

        mutating func add(_ frame: Framebuffer) {
            let deferred = driver.statistics.framesDeferred
            do { try driver.show(frame) } catch { tally.mismatches += 1 }
            if tally.first == nil { tally.first = driver.lastFrame } else { tally.costs.append(driver.lastFrame) }
            if driver.statistics.framesDeferred == deferred {
                if !bus.model.holds(frame) { tally.mismatches += 1 }
            } else {
                tally.deferred += 1
            }
        }

        /// Shows `frame` until nothing is held over (a few frames at most); true when the display has it.
        func catchesUp(with frame: Framebuffer) -> Bool {
            for _ in 0..<16 where !bus.model.holds(frame) { try? driver.show(frame) }
            return bus.model.holds(frame)
        }
    }

    static func summarise(_ costs: [FrameCost], deferred: Int, first: FrameCost, budget: Duration) -> PathReport {
        func counts(_ values: [Int]) -> Summary {
            guard !values.isEmpty else { return Summary(mean: 0, p99: 0, max: 0) }
            let sorted = values.sorted()
            return Summary(mean: Double(values.reduce(0, +)) / Double(values.count),
                           p99: sorted[percentileIndex(sorted.count)], max: sorted[sorted.count - 1])
        }
        var times = TimeSummary(mean: .zero, p99: .zero, max: .zero)
        if !costs.isEmpty {
            let sorted = costs.map(\.wireTime).sorted()
            let totalNanoseconds = sorted.reduce(Int64(0)) { $0 + $1.nanoseconds }
            times = TimeSummary(mean: .nanoseconds(totalNanoseconds / Int64(costs.count)),
                                p99: sorted[percentileIndex(sorted.count)], max: sorted[sorted.count - 1])
        }
        return PathReport(frames: costs.count,
                          bytes: counts(costs.map(\.bytes)),
                          transfers: counts(costs.map(\.transfers)),
                          wireTime: times,
                          framesOverBudget: costs.filter { $0.wireTime > budget }.count,
                          framesDeferred: deferred,
                          firstFrame: first)
    }

    /// Nearest-rank 99th percentile.
    static func percentileIndex(_ n: Int) -> Int { max(0, min(n - 1, (n * 99 + 99) / 100 - 1)) }

    static func fixed(_ v: Double) -> String { String((v * 10).rounded() / 10) }

    static func ms(_ d: Duration) -> String {
        let us = d.nanoseconds / 1000
        let frac = String(us % 1000)
        return "\(us / 1000).\(String(repeating: "0", count: 3 - frac.count))\(frac) ms"
    }
}
