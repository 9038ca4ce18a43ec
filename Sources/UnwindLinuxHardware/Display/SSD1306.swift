import Logging
import Synchronization
import UnwindCore
import UnwindSeams

/// An SSD1306 128x64 or 128x32 OLED on any `I2CBus`, sending only what changed.
///
/// ## Threading
/// `show` runs on the presenter's thread and is the only method that touches the bus;
/// `setContrast`, `setSleeping`, `isLost` and `statistics` may be used from any thread (they go
/// through a lock). Do not call `show` from two threads at once.
///
/// ## What goes on the wire
/// The first `show` initialises the display (`init` never touches the bus): one command transfer
/// with the datasheet sequence, display still off; then the whole frame in horizontal addressing
/// mode; then display on (0xAF), so the power-on garbage in GDDRAM is never seen.
/// After that each frame is compared with the last frame sent: changed bytes form runs per page,
/// runs are merged into rectangles when that costs fewer bits (see `plan`), and each rectangle
/// goes out as a column/page window (0x21 c0 c1 0x22 p0 p1) followed by its bytes. How commands
/// and data are framed on the bus is `SSD1306Link`'s: a full frame is 7 + 1025 = 1032 bytes in 2
/// transfers on plain I²C, 1 + 32 transfers on SMBus alone.
///
/// On a running display one `show` spends at most `Configuration.frameBudget` of wire time
/// (30 ms at `busSpeedHz` by default): cheapest windows first, then the top pages of the next
/// one that fits; the rest stays different from the last frame sent and goes with the next
/// `show`. So a whole-screen change at 100 kHz wipes in over four frames instead of blocking
/// the presenter for 93 ms, and the small moving parts never wait. This relies on frames
/// arriving steadily (the loop presents one every 1/30 s) and on `busSpeedHz` being the real
/// bus speed.
///
/// ## Contrast and sleep
/// `setContrast` and `setSleeping` are queued and sent at the start of the next `show` (in the
/// same command transfer as the first window), because only the presenter's thread may touch the
/// bus. The loop presents a frame every 1/30 s, so they take effect within a frame. While asleep
/// (0xAE) frames are not sent at all; waking sends what changed since the last frame sent and
/// only then 0xAF, so the stale image never shows.
///
/// ## Faults
/// Any bus error marks the display lost: `show` logs once (error level), throws the
/// `DeviceError` (the `ThreadedPresenter` logs it at debug level and carries on) and forgets the
/// display's state. While lost, `show` returns at once without touching the bus until the retry
/// time, read from the injected clock: 0.25 s after the failure, then doubling up to 8 s. A retry
/// re-initialises and sends a full frame; when it succeeds the driver logs
/// "display answers again" and carries on with partial updates.
///
/// Steady state allocates nothing: the last frame, the next frame, the transfer buffers and the
/// rectangle list are allocated in `init`.
public final class SSD1306: DisplayPanel, @unchecked Sendable {
    public struct Configuration: Equatable, Sendable {
        /// Only 128 is supported.
        public var width: Int
        /// 64 or 32.
        public var height: Int
        /// 0x81's argument, 0...255 (the chip's reset value is 0x7F).
        public var contrast: UInt8
        /// Rotated 180° for a panel mounted upside down: segment remap off (0xA0) and COM scan
        /// normal (0xC0) instead of the usual 0xA1/0xC8.
        public var flipped: Bool
        /// The bus clock, for `FrameCost.wireTime` only (the driver never sets the speed; on a
        /// Pi it is `dtparam=i2c_arm_baudrate`, readable with `LinuxI2CBus.busSpeed(bus:)`).
        public var busSpeedHz: Int
        /// false: every frame is sent whole (the baseline a benchmark compares against).
        public var partialUpdates: Bool
        /// The most wire time (at `busSpeedHz`) one `show` may spend on a running display; what
        /// does not fit waits for the next `show` (smallest windows first, so the small moving
        /// parts stay live and big changes — a page switch, the pixel shift — wipe in over a few
        /// frames instead of making the presenter drop them). Not applied to the full frame after
        /// an initialisation or to the frame that wakes the display. nil: no limit.
        public var frameBudget: Duration?
        /// Backoff while the display is lost: the first retry after `retryInitial`, doubling up
        /// to `retryMaximum`.
        public var retryInitial: Duration
        public var retryMaximum: Duration

        public init(width: Int = 128, height: Int = 64, contrast: UInt8 = 0x7F, flipped: Bool = false,
                    busSpeedHz: Int = 400_000, partialUpdates: Bool = true, frameBudget: Duration? = .milliseconds(30),
                    retryInitial: Duration = .milliseconds(250), retryMaximum: Duration = .seconds(8)) {
            self.width = width
            self.height = height
            self.contrast = contrast
            self.flipped = flipped
            self.busSpeedHz = busSpeedHz
            self.partialUpdates = partialUpdates
            self.frameBudget = frameBudget
            self.retryInitial = retryInitial
            self.retryMaximum = retryMaximum
        }

        public var pages: Int { height / 8 }
    }

    public let configuration: Configuration
    /// How frames go out: plain I²C when the bus has it, else SMBus block writes.
    public var usesPlainI2C: Bool { link.plainI2C }

    let link: SSD1306Link
    let logger: Logger
    let clock: () -> Instant
    let width: Int
    let pages: Int
    let size: Int

    // Preallocated in init, freed in deinit.
    let last: UnsafeMutableBufferPointer<UInt8>
    let next: UnsafeMutableBufferPointer<UInt8>
    let rects: UnsafeMutableBufferPointer<Rect>
    var rectCount = 0

    // Display thread only.
    var initialised = false
    var lastValid = false
    var displayOn = false
    var appliedContrast: UInt8 = 0
    var lost = false
    var retryDelay: Duration = .zero
    var nextAttempt = Instant.zero
    var stats: BusStatistics

    struct Shared {
        var contrast: UInt8
        var sleeping = false
        var isLost = false
        var statistics: BusStatistics
    }
    let shared: Mutex<Shared>

    /// Above this many runs the rectangle merging (quadratic per step) is skipped: such a
    /// frame is nearly always cheaper sent whole, which is still checked.
    static let maximumRectanglesToMerge = 24

    /// Makes the driver; does not touch the bus.
    /// - Parameters:
    ///   - clock: monotonic time, read only to schedule and check retries while the display is lost.
    public init(bus: I2CBus, configuration: Configuration = Configuration(), logger: Logger,
                clock: @escaping () -> Instant) {
        precondition(configuration.width == 128, "SSD1306: only 128 columns are supported")
        precondition(configuration.height == 64 || configuration.height == 32, "SSD1306: height 64 or 32")
        precondition(configuration.busSpeedHz > 0)
        self.configuration = configuration
        self.logger = logger
        self.clock = clock
        width = configuration.width
        pages = configuration.pages
        size = width * pages
        last = .allocate(capacity: size)
        last.initialize(repeating: 0)
        next = .allocate(capacity: size)
        next.initialize(repeating: 0)
        link = SSD1306Link(bus: bus, commandCapacity: 63, dataCapacity: size)
        // Enough for a run on every other column of every page, more than the merging allows.
        rects = .allocate(capacity: size / 2 + pages)
        rects.initialize(repeating: Rect(c0: 0, c1: 0, p0: 0, p1: 0))
        stats = BusStatistics(busSpeedHz: configuration.busSpeedHz)
        shared = Mutex(Shared(contrast: configuration.contrast, statistics: stats))
    }

    deinit {
        last.deallocate()
        next.deallocate()
        rects.deallocate()
    }

    // MARK: Public state

    /// True from a bus error until the display answers again.
    public var isLost: Bool { shared.withLock { $0.isLost } }

    /// Per-frame and cumulative bus accounting, as of the last `show`.
    public var statistics: BusStatistics { shared.withLock { $0.statistics } }

    /// The cost of the last `show` that reached the bus.
    public var lastFrame: FrameCost { statistics.lastFrame }

    /// Queues a new contrast (0x81), sent with the next frame. For night dimming.
    public func setContrast(_ value: UInt8) { shared.withLock { $0.contrast = value } }

    /// Queues sleep (0xAE) or wake (0xAF), applied with the next frame.
    public func setSleeping(_ sleeping: Bool) { shared.withLock { $0.sleeping = sleeping } }

    // MARK: Costs

    /// What one full frame costs on this bus path, window command included (no initialisation).
    public static func fullFrameCost(configuration: Configuration = Configuration(),
                                     capabilities: I2CCapabilities = .plainI2C) -> FrameCost {
        var cost = FrameCost(busSpeedHz: configuration.busSpeedHz)
        SSD1306Link.windowTransfers(commands: SSD1306Link.windowCommands, data: configuration.width * configuration.pages,
                                    plainI2C: capabilities.contains(.plainI2C)) { cost.addTransfer(bytes: $0) }
        return cost
    }

    // MARK: Showing a frame

    /// Sends what changed since the last frame (everything after an initialisation).
    ///
    /// Throws the bus's `DeviceError` when a transfer fails (the display is then lost); while
    /// lost and before the retry time it returns without touching the bus.
    public func show(_ frame: Framebuffer) throws(DeviceError) {
        precondition(frame.width == width && frame.height == configuration.height,
                     "SSD1306: frame is \(frame.width)x\(frame.height), display \(width)x\(configuration.height)")
        let (contrast, sleeping) = shared.withLock { ($0.contrast, $0.sleeping) }
        if lost && clock() < nextAttempt {
            stats.framesSkipped += 1
            publish()
            return
        }
        let next = self.next
        frame.bytes.withUnsafeBufferPointer { src in _ = next.update(fromContentsOf: src) }

        var cost = FrameCost(busSpeedHz: configuration.busSpeedHz)
        do throws(DeviceError) {
            guard link.canSend else {
                throw DeviceError(device: "ssd1306", operation: "show", errno: I2CErrno.notSupported,
                                  hint: DeviceError.i2cHint(bus: 0, address: 0, errno: I2CErrno.notSupported))
            }
            if !initialised { try initialise(contrast: contrast, cost: &cost) }
            try send(contrast: contrast, sleeping: sleeping, cost: &cost)
        } catch {
            stats.total += cost
            stats.lastFrame = cost
            failed(error)
            publish()
            throw error
        }
        stats.total += cost
        stats.lastFrame = cost
        stats.framesSent += 1
        if lost {
            lost = false
            retryDelay = .zero
            logger.notice("display answers again")
        }
        publish()
    }

    func publish() {
        let s = stats, l = lost
        shared.withLock { $0.statistics = s; $0.isLost = l }
    }

    func failed(_ error: DeviceError) {
        stats.failures += 1
        initialised = false
        lastValid = false
        displayOn = false
        let now = clock()
        if !lost {
            lost = true
            retryDelay = configuration.retryInitial
            logger.error("display lost: \(error); retrying from \(configuration.retryInitial) to every \(configuration.retryMaximum)")
        } else {
            retryDelay = min(retryDelay * 2, configuration.retryMaximum)
            logger.debug("display still lost: \(error); next try in \(retryDelay)")
        }
        nextAttempt = now + retryDelay
    }

    /// The datasheet's sequence (SSD1306 rev 1.1, §10 and the application note's charge pump
    /// steps) for an internal charge pump; it ends with the display still off.
    func initialise(contrast: UInt8, cost: inout FrameCost) throws(DeviceError) {
        let h = UInt8(configuration.height)
        let flipped = configuration.flipped
        let command = link.commands
        var count = 0
        func put(_ a: UInt8) { command[count] = a; count += 1 }
        func put(_ a: UInt8, _ b: UInt8) { put(a); put(b) }
        put(0xAE)                           // display off
        put(0xD5, 0x80)                     // clock divide 1, oscillator frequency 8 (reset value)
        put(0xA8, h - 1)                    // multiplex ratio: one COM per row
        put(0xD3, 0x00)                     // display offset 0
        put(0x40)                           // display start line 0
        put(0x8D, 0x14)                     // charge pump on (internal VCC)
        put(0x20, 0x00)                     // horizontal addressing mode
        put(flipped ? 0xA0 : 0xA1)          // segment remap: column 127 on SEG0 unless flipped
        put(flipped ? 0xC0 : 0xC8)          // COM scan from COM[N-1] to COM0 unless flipped
        put(0xDA, h == 64 ? 0x12 : 0x02)    // COM pins: alternative for 64 rows, sequential for 32
        put(0x81, contrast)                 // contrast
        put(0xD9, 0xF1)                     // pre-charge: phase 1 = 1, phase 2 = 15 DCLKs (charge pump)
        put(0xDB, 0x40)                     // VCOMH deselect level (the common modules' value)
        put(0xA4)                           // display follows RAM
        put(0xA6)                           // normal, not inverted
        put(0x2E)                           // scrolling off (before any RAM write)
        stats.initialisations += 1
        try link.sendCommands(count, cost: &cost)
        initialised = true
        lastValid = false
        displayOn = false
        appliedContrast = contrast
    }

    func send(contrast: UInt8, sleeping: Bool, cost: inout FrameCost) throws(DeviceError) {
        // Commands that go before the first window: contrast, sleep.
        let command = link.commands
        var prefix = 0
        if contrast != appliedContrast {
            command[prefix] = 0x81; command[prefix + 1] = contrast; prefix += 2
        }
        if sleeping && displayOn { command[prefix] = 0xAE; prefix += 1 }

        if sleeping {
            if prefix > 0 {
                try link.sendCommands(prefix, cost: &cost)
            } else {
                stats.framesUnchanged += 1
            }
            appliedContrast = contrast
            displayOn = false
            return
        }

        let budgeted = lastValid && displayOn
        let full = plan()
        if rectCount == 0 && prefix == 0 && displayOn {
            stats.framesUnchanged += 1
        }
        var budget = Int.max
        if budgeted, let b = configuration.frameBudget {
            budget = Int(b.nanoseconds * Int64(configuration.busSpeedHz) / 1_000_000_000)
        }
        var total = 9 * prefix
        var i = 0
        while i < rectCount { total += bits(rects[i].area); i += 1 }
        if total > budget { sortRectanglesByCost() }

        var spent = 0
        var sent = 0
        var deferred = false
        i = 0
        while i < rectCount {
            var r = rects[i]
            let extra = sent == 0 ? 9 * prefix : 0
            if spent + extra + bits(r.area) > budget {
                // As many of its pages as fit; the rest waits. The first window always goes,
                // at least one page of it, so every frame makes progress.
                let w = r.c1 - r.c0 + 1
                var p1 = r.p1
                while p1 > r.p0 && spent + extra + bits(w * (p1 - r.p0 + 1)) > budget { p1 -= 1 }
                let fits = spent + extra + bits(w * (p1 - r.p0 + 1)) <= budget
                if !fits && sent > 0 { deferred = true; i += 1; continue }
                if p1 < r.p1 { deferred = true }
                r.p1 = p1
            }
            try sendRect(r, prefix: sent == 0 ? prefix : 0, cost: &cost)
            spent += extra + bits(r.area)
            sent += 1
            markSent(r)
            i += 1
        }
        if full && !deferred { stats.fullFrames += 1 }
        if deferred { stats.framesDeferred += 1 }
        if sent == 0 && prefix > 0 {
            try link.sendCommands(prefix, cost: &cost)
        }
        appliedContrast = contrast
        if !displayOn {
            command[0] = 0xAF
            try link.sendCommands(1, cost: &cost)
            displayOn = true
        }
        lastValid = true
    }

    /// The display now holds `next` inside `r`.
    func markSent(_ r: Rect) {
        let w = r.c1 - r.c0 + 1
        var p = r.p0
        while p <= r.p1 {
            let at = p * width + r.c0
            (last.baseAddress! + at).update(from: next.baseAddress! + at, count: w)
            p += 1
        }
    }

    /// Cheapest first (insertion sort: a handful of windows).
    func sortRectanglesByCost() {
        var i = 1
        while i < rectCount {
            let r = rects[i]
            let b = bits(r.area)
            var j = i - 1
            while j >= 0 && bits(rects[j].area) > b {
                rects[j + 1] = rects[j]
                j -= 1
            }
            rects[j + 1] = r
            i += 1
        }
    }

    /// The window after the `prefix` commands already written, then the rectangle's bytes (row
    /// by row, as horizontal mode stores them).
    func sendRect(_ r: Rect, prefix: Int, cost: inout FrameCost) throws(DeviceError) {
        let command = link.commands
        command[prefix] = 0x21; command[prefix + 1] = UInt8(r.c0); command[prefix + 2] = UInt8(r.c1)
        command[prefix + 3] = 0x22; command[prefix + 4] = UInt8(r.p0); command[prefix + 5] = UInt8(r.p1)
        var n = 0
        let w = r.c1 - r.c0 + 1
        var p = r.p0
        while p <= r.p1 {
            let from: Int = p * width + r.c0
            (link.data.baseAddress! + n).copyMemory(from: next.baseAddress! + from, byteCount: w)
            n += w
            p += 1
        }
        try link.sendWindow(commands: prefix + SSD1306Link.windowCommands, data: n, cost: &cost)
    }
}
