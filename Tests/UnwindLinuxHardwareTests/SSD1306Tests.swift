import Foundation
import Logging
import Synchronization
import Testing
import UnwindTestSupport
import UnwindSimulatedHardware
import UnwindCore
@testable import UnwindLinuxHardware
import UnwindRender
import UnwindSimulator
import UnwindSeams

// MARK: - Tests

@Suite struct SSD1306Tests {
    // (1) Initialisation and a full frame, both bus paths.

    @Test(arguments: [true, false])
    func initAndFullFrameDecodeExactly(plain: Bool) throws {
        let rig = Rig(capabilities: plain ? [.plainI2C, .smbusBlockWrite] : [.smbusBlockWrite])
        var rng = SplitMix64(seed: 1)
        let frame = randomFrame(using: &rng)
        try rig.driver.show(frame)

        #expect(rig.model.visibleFramebuffer() == frame)
        #expect(rig.memoryHolds(frame))
        #expect(rig.model.violations.isEmpty, "\(rig.model.violations)")
        #expect(rig.model.isInitialised)
        #expect(rig.model.addressingMode == .horizontal)
        #expect(rig.model.multiplexRatio == 64 && rig.model.comPins == 0x12)
        #expect(rig.model.segmentRemap && rig.model.comScanReversed)

        let t = rig.bus.recorded
        #expect(t.allSatisfy { $0.failure == nil })
        // The initialisation: one command transfer, display left off.
        let initBytes: [UInt8] = [0x00, 0xAE, 0xD5, 0x80, 0xA8, 0x3F, 0xD3, 0x00, 0x40, 0x8D, 0x14, 0x20, 0x00,
                                  0xA1, 0xC8, 0xDA, 0x12, 0x81, 0x7F, 0xD9, 0xF1, 0xDB, 0x40, 0xA4, 0xA6, 0x2E]
        #expect(t.first?.bytes == initBytes)
        // Display on comes last, after the frame's data.
        #expect(t.last?.bytes == [0x00, 0xAF])
        if plain {
            #expect(t.count == 3)
            #expect(t[1].kind == .combined)
            #expect(t[1].messages == [[0x00, 0x21, 0, 127, 0x22, 0, 7], [0x40] + frame.bytes])
        } else {
            #expect(t.allSatisfy { $0.kind == .smbusBlock && $0.bytes.count <= 33 })
            #expect(t.count == 1 + 1 + 32 + 1)
            #expect(t[1].bytes == [0x00, 0x21, 0, 127, 0x22, 0, 7])
            #expect(Array(t[2..<34].flatMap { $0.bytes.dropFirst() }) == frame.bytes)
            #expect(t[2..<34].allSatisfy { $0.bytes.first == 0x40 })
        }

        // A frame where every byte changes goes whole: ≤ 1037 bytes in ≤ 2 transfers on plain I²C.
        var inverse = frame
        for i in inverse.bytes.indices { inverse.bytes[i] = ~inverse.bytes[i] }
        let before = rig.driver.statistics.fullFrames
        try rig.driver.show(inverse)
        #expect(rig.model.visibleFramebuffer() == inverse)
        #expect(rig.driver.statistics.fullFrames == before + 1)
        let cost = rig.driver.lastFrame
        #expect(cost == SSD1306.fullFrameCost(capabilities: rig.bus.capabilities))
        if plain {
            #expect(cost.bytes == 1032 && cost.bytes <= 1037)
            #expect(cost.transfers == 2)
            // 11 + 9·7 + 11 + 9·1025 bits = 9310 bits: 23.3 ms at 400 kHz.
            #expect(cost.bits == 9310)
            #expect(cost.wireTime == .nanoseconds(23_275_000))
            #expect(cost.wireTime(atHz: 100_000) == .nanoseconds(93_100_000))
        } else {
            #expect(cost.transfers == 33)
            #expect(cost.bytes == 7 + 32 * 33)
        }
        #expect(rig.model.violations.isEmpty)
    }

    @Test func frameCostArithmetic() {
        #expect(FrameCost.bits(ofTransfer: 0) == 11)
        #expect(FrameCost.bits(ofTransfer: 1025) == 11 + 9 * 1025)
        let c = FrameCost.of(transfers: [7, 1025], busSpeedHz: 100_000)
        #expect(c.bytes == 1032 && c.transfers == 2 && c.bits == 9310)
        #expect(c.wireTime == .nanoseconds(93_100_000))
        #expect(SSD1306.fullFrameCost(configuration: .init(height: 32)).bytes == 7 + 513)
    }

    // (2) Property: after A then B the display shows exactly B.

    struct PropertyCase: Sendable, CustomStringConvertible {
        var plain: Bool, height: Int, flipped: Bool, pairs: Int, kHz = 400
        var description: String {
            "\(plain ? "plain" : "SMBus") 128x\(height)\(flipped ? " flipped" : "") at \(kHz) kHz, \(pairs) pairs"
        }
    }

    @Test(arguments: [
        PropertyCase(plain: true, height: 64, flipped: false, pairs: 3000),
        PropertyCase(plain: false, height: 64, flipped: false, pairs: 3000),
        PropertyCase(plain: true, height: 32, flipped: false, pairs: 500),
        PropertyCase(plain: true, height: 64, flipped: true, pairs: 500),
        PropertyCase(plain: false, height: 32, flipped: true, pairs: 500),
        PropertyCase(plain: true, height: 64, flipped: false, pairs: 1000, kHz: 100),
        PropertyCase(plain: false, height: 64, flipped: true, pairs: 500, kHz: 100),
    ])
    func randomFramePairsShowExactly(_ c: PropertyCase) throws {
        let (plain, height, flipped, pairs) = (c.plain, c.height, c.flipped, c.pairs)
        let seed = testSeed(0xC0FFEE ^ UInt64(height) ^ (plain ? 1 : 2) ^ (flipped ? 4 : 0) ^ UInt64(c.kHz))
        var rng = SplitMix64(seed: seed)
        let rig = Rig(capabilities: plain ? [.plainI2C, .smbusBlockWrite] : [.smbusBlockWrite], height: height,
                      flipped: flipped, busSpeedHz: c.kHz * 1000)
        let full = SSD1306.fullFrameCost(configuration: rig.driver.configuration, capabilities: rig.bus.capabilities)
        let budget = rig.driver.configuration.frameBudget!
        var previous = randomFrame(height: height, using: &rng)
        var failures = 0
        for i in 0..<pairs {
            let a = nextFrame(after: previous, using: &rng)
            let b = nextFrame(after: a, using: &rng)
            for (name, frame) in [("A", a), ("B", b)] {
                var shows = 0
                repeat {
                    let initialisations = rig.driver.statistics.initialisations
                    let deferred = rig.driver.statistics.framesDeferred
                    try rig.driver.show(frame)
                    shows += 1
                    if rig.driver.statistics.initialisations == initialisations {
                        // Never worse than the frame whole, never over the frame budget.
                        #expect(rig.driver.lastFrame.bits <= full.bits, "seed \(seed), pair \(i): \(rig.driver.lastFrame)")
                        #expect(rig.driver.lastFrame.wireTime <= budget, "seed \(seed), pair \(i): \(rig.driver.lastFrame)")
                    }
                    // Held over: A may stay half-sent (B is then diffed against that); B catches up.
                    if rig.driver.statistics.framesDeferred == deferred || name == "A" || shows > 8 { break }
                } while true
                if name == "A" && !rig.memoryHolds(frame) { continue }
                let exact = rig.memoryHolds(frame) && (i % 97 != 0 || rig.model.visibleFramebuffer() == frame)
                if !exact && failures < 3 {
                    failures += 1
                    Issue.record("seed \(seed) (UNWIND_TEST_SEED=\(seed) to replay), pair \(i), frame \(name): display differs")
                }
            }
            previous = b
        }
        if c.kHz == 400 { #expect(rig.driver.statistics.framesDeferred == 0) } else { #expect(rig.driver.statistics.framesDeferred > 0) }
        #expect(rig.model.visibleFramebuffer() == previous, "seed \(seed)")
        #expect(rig.model.violations.isEmpty, "seed \(seed): \(rig.model.violations.prefix(5))")
        #expect(rig.driver.statistics.initialisations == 1)
        #expect(!rig.driver.isLost)
    }

    // (3) A small change costs little.

    @Test(arguments: [true, false])
    func smallChangeSendsLittle(plain: Bool) throws {
        let rig = Rig(capabilities: plain ? [.plainI2C, .smbusBlockWrite] : [.smbusBlockWrite])
        var frame = sampleFrame()
        try rig.driver.show(frame)
        let first = rig.driver.lastFrame
        #expect(first.bytes > 1032)

        // Unchanged: nothing on the bus.
        let count = rig.bus.transactionCount
        try rig.driver.show(frame)
        #expect(rig.bus.transactionCount == count)
        #expect(rig.driver.lastFrame.bytes == 0 && rig.driver.lastFrame.transfers == 0)

        // One pixel: a window and one byte.
        frame.plot(100, 40)
        try rig.driver.show(frame)
        #expect(rig.driver.lastFrame.bytes == 7 + 2)
        #expect(rig.driver.lastFrame.transfers == 2)
        #expect(rig.bus.recorded.last?.bytes == [0x00, 0x21, 100, 100, 0x22, 5, 5, 0x40, frame.bytes[5 * 128 + 100]]
                || rig.bus.recorded.last?.bytes == [0x40, frame.bytes[5 * 128 + 100]])
        #expect(rig.memoryHolds(frame))

        // Two pixels 5 columns apart on one page: one window with the gap sent along.
        frame.plot(90, 3); frame.plot(95, 3)
        try rig.driver.show(frame)
        #expect(rig.driver.lastFrame.transfers == 2)
        #expect(rig.driver.lastFrame.bytes == 7 + 1 + 6)

        // Two pixels 60 columns apart: two windows are cheaper than the gap.
        frame.plot(10, 60); frame.plot(70, 60)
        try rig.driver.show(frame)
        #expect(rig.driver.lastFrame.transfers == 4)
        #expect(rig.driver.lastFrame.bytes == 2 * (7 + 2))

        // A large digit changing (10x20 spans 3 pages): one 10x3 window, not three.
        frame.fill(x: 60, y: 20, width: 10, height: 20, .off)
        frame.glyph(0x37, font: .large, x: 60, y: 20)
        try rig.driver.show(frame)
        #expect(rig.driver.lastFrame.transfers == 2)
        #expect(rig.driver.lastFrame.bytes <= 7 + 1 + 30)
        #expect(rig.driver.lastFrame.bytes * 20 < first.bytes)
        #expect(rig.memoryHolds(frame))
        #expect(rig.model.violations.isEmpty)
    }

    /// The bus budget of the breathing page, over ten minutes (the pixel shift moves the
    /// whole picture every 3 minutes): mean ≤ 150 bytes, max ≤ 400, no frame over 33 ms at 100 kHz.
    /// Measured in four stretches side by side (the emulated arm64 run's longest test otherwise).
    @Test func breathingPageMeetsTheBusBudget() {
        let state = breathingState()
        let report = BusCost.measure(count: 10 * 60 * 30, windows: 4) { k, fb in
            Screen.render(state, at: Instant(nanoseconds: Int64(k) * 1_000_000_000 / 30), into: &fb)
        }
        print(report)
        #expect(report.mismatchedFrames == 0)
        let slow = report.at100kHz
        #expect(slow.driver.bytes.mean <= 150)
        #expect(slow.driver.bytes.max <= 400)
        #expect(slow.driver.framesOverBudget == 0)
        #expect(report.at400kHz.driver.framesOverBudget == 0)
        #expect(slow.baseline.bytes.mean == 1032)
        #expect(slow.baseline.framesOverBudget == slow.baseline.frames)
        #expect(report.at400kHz.baseline.framesOverBudget == 0)
    }

    /// Frames measured in stretches side by side cost what one pass over them costs: a stretch
    /// starts from a display that shows the frame before it.
    @Test func stretchesSideBySideCostWhatOnePassCosts() {
        let state = breathingState()
        // Across the pixel shift at 3 minutes, in stretches that start mid-breath.
        let draw: @Sendable (Int, inout Framebuffer) -> Void = { k, fb in
            Screen.render(state, at: Instant(nanoseconds: Int64(k + 175 * 30) * 1_000_000_000 / 30), into: &fb)
        }
        let onePass = BusCost.measure(count: 10 * 30, render: draw)
        let stretches = BusCost.measure(count: 10 * 30, windows: 3, render: draw)
        #expect(stretches.at100kHz == onePass.at100kHz)
        #expect(stretches.at400kHz == onePass.at400kHz)
        #expect(stretches.mismatchedFrames == 0 && onePass.mismatchedFrames == 0)
        #expect(onePass.at100kHz.driver.bytes.max > 0)
    }

    private func breathingState() -> DeviceState {
        var core = DeviceCore()
        var effects: [Effect] = []
        core.apply(.button(.down(.select)), at: Moment(.zero), effects: &effects)
        return core.state
    }

    /// At 100 kHz a whole-screen change on a running display goes out in frame-budget slices,
    /// the small changes first, and the display catches up.
    @Test func bigChangesAreSpreadOverFrames() throws {
        let rig = Rig(busSpeedHz: 100_000)
        var rng = SplitMix64(seed: 11)
        let first = randomFrame(using: &rng)
        try rig.driver.show(first)
        var frame = first
        for i in frame.bytes.indices { frame.bytes[i] = ~frame.bytes[i] }
        var shows = 0
        while !rig.memoryHolds(frame) && shows < 10 {
            try rig.driver.show(frame)
            shows += 1
            #expect(rig.driver.lastFrame.wireTime <= .milliseconds(30))
            #expect(rig.driver.lastFrame.bytes > 0)
        }
        #expect(rig.memoryHolds(frame))
        #expect(shows == 4)  // 1032 bytes at 100 kHz: 93 ms
        #expect(rig.driver.statistics.framesDeferred == 3)

        // A big change and a small one: the small one goes in the first slice.
        var next = frame
        for p in 0..<6 { for x in 0..<128 { next.bytes[p * 128 + x] = ~next.bytes[p * 128 + x] } }
        next.bytes[7 * 128 + 100] ^= 0x80
        try rig.driver.show(next)
        #expect(rig.model.memory[7 * 128 + 100] == next.bytes[7 * 128 + 100])
        #expect(!rig.memoryHolds(next))
        #expect(rig.model.violations.isEmpty)
    }

    // (5) 128x32 and flipped.

    @Test(arguments: [(64, false), (64, true), (32, false), (32, true)])
    func sizeAndOrientation(height: Int, flipped: Bool) throws {
        let rig = Rig(height: height, flipped: flipped)
        var frame = sampleFrame(height: height)
        try rig.driver.show(frame)
        #expect(rig.model.visibleFramebuffer() == frame)
        #expect(rig.model.multiplexRatio == height)
        #expect(rig.model.comPins == (height == 64 ? 0x12 : 0x02))
        #expect(rig.model.segmentRemap == !flipped && rig.model.comScanReversed == !flipped)
        frame.text("out", font: .small, x: 100, y: height - 7)
        try rig.driver.show(frame)
        #expect(rig.model.visibleFramebuffer() == frame)
        #expect(rig.model.violations.isEmpty)
        if height == 32 {
            // Only pages 0–3 are written, as a 4-page window.
            #expect(rig.bus.recorded.contains { $0.messages.first == [0x00, 0x21, 0, 127, 0x22, 0, 3] })
        }

        // The same driver on a panel mounted the other way shows the image turned round.
        let other = Rig(height: height, flipped: flipped, mounting: flipped ? .upright : .upsideDown)
        try other.driver.show(frame)
        #expect(other.model.visibleFramebuffer() == rotated180(frame))
    }

    @Test func contrastAndSleepAreQueuedToTheNextFrame() throws {
        let rig = Rig()
        var frame = sampleFrame()
        try rig.driver.show(frame)
        rig.driver.setContrast(0x10)
        #expect(rig.model.contrast == 0x7F)
        try rig.driver.show(frame)
        #expect(rig.model.contrast == 0x10)
        #expect(rig.bus.recorded.last?.bytes == [0x00, 0x81, 0x10])

        // Contrast rides along with the first window.
        rig.driver.setContrast(0x20)
        frame.plot(1, 40)
        try rig.driver.show(frame)
        #expect(rig.bus.recorded.last?.messages.first == [0x00, 0x81, 0x20, 0x21, 1, 1, 0x22, 5, 5])
        #expect(rig.model.contrast == 0x20)

        rig.driver.setSleeping(true)
        try rig.driver.show(frame)
        #expect(!rig.model.isOn)
        #expect(rig.model.visibleFramebuffer() == Framebuffer())
        let asleep = rig.bus.transactionCount
        for k in 0..<20 { frame.plot(k, 50); try rig.driver.show(frame) }
        #expect(rig.bus.transactionCount == asleep)

        // Waking sends what changed, then switches on.
        rig.driver.setSleeping(false)
        try rig.driver.show(frame)
        #expect(rig.model.isOn)
        #expect(rig.bus.recorded.last?.bytes == [0x00, 0xAF])
        #expect(rig.model.visibleFramebuffer() == frame)
        #expect(rig.model.violations.isEmpty)
    }

    /// A bus that only counts, so the driver's own allocations can be counted.
    final class CountingBus: I2CBus {
        let capabilities: I2CCapabilities
        var bytes = 0
        init(_ capabilities: I2CCapabilities) { self.capabilities = capabilities }
        func write(_ b: UnsafeRawBufferPointer) throws(DeviceError) { bytes += b.count }
        func writeMessages(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) throws(DeviceError) { bytes += a.count + b.count }
        func smbusBlockWrite(register: UInt8, _ b: UnsafeRawBufferPointer) throws(DeviceError) { bytes += 1 + b.count }
    }

    /// Steady state allocates nothing. Counts only when the malloc interposer is preloaded:
    /// `LD_PRELOAD=.build/debug/libMallocInterposerSwift.so .build/debug/unwindPackageTests.xctest
    ///  --testing-library swift-testing --filter steadyStateAllocatesNothing`.
    @Test(.enabled(if: MallocCounter.available), arguments: [true, false])
    func steadyStateAllocatesNothing(plain: Bool) throws {
        let bus = CountingBus(plain ? [.plainI2C] : [.smbusBlockWrite])
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        // 100 kHz: the frame budget holds changes over, so that path is counted too.
        let driver = SSD1306(bus: bus, configuration: .init(busSpeedHz: 100_000), logger: logger, clock: { .zero })
        var frames: [Framebuffer] = []
        var rng = SplitMix64(seed: 3)
        var f = sampleFrame()
        for _ in 0..<200 { f = nextFrame(after: f, using: &rng); frames.append(f) }
        for f in frames { try driver.show(f) }  // warm up
        driver.setContrast(0x30)
        // Counted call by call: a debug build's loop over a captured array allocates by itself.
        var count: Int64 = 0
        for f in frames { count += try MallocCounter.count { try driver.show(f) } }
        count += MallocCounter.count { blackHole(driver.statistics.framesSent) }
        #expect(count == 0)
        #expect(bus.bytes > 0)
        #expect(driver.statistics.framesDeferred > 0)
    }

    // LinuxI2CBus without hardware.

    #if os(Linux)
    @Test func missingBusExplainsItself() {
        let error = #expect(throws: DeviceError.self) { _ = try LinuxI2CBus(bus: 99) }
        #expect(error?.errno == ENOENT)
        #expect(error?.hint == "no /dev/i2c-99: enable I²C (dtparam=i2c_arm=on, raspi-config) or check the bus number")
        #expect(error?.description.contains("open /dev/i2c-99") == true)
        #expect(LinuxI2CBus.busSpeed(bus: 99) == nil)
    }

    @Test func busSpeedReadsTheDeviceTreeCell() throws {
        let path = scratchRoot + "clock-frequency-\(UUID().uuidString.prefix(8))"
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Data([0x00, 0x06, 0x1A, 0x80]).write(to: URL(fileURLWithPath: path))
        #expect(LinuxI2CBus.busSpeed(path: path) == 400_000)
        try Data([0x00, 0x06]).write(to: URL(fileURLWithPath: path))
        #expect(LinuxI2CBus.busSpeed(path: path) == nil)
        // Zero, a cell too long, binary garbage at full width, a directory: never a speed of 0.
        for bytes: [UInt8] in [[0, 0, 0, 0], [0x00, 0x06, 0x1A, 0x80, 0, 0, 0, 0], []] {
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            #expect(LinuxI2CBus.busSpeed(path: path) == nil, "\(bytes)")
        }
        try Data([0xFF, 0xFF, 0xFF, 0xFF]).write(to: URL(fileURLWithPath: path))
        #expect(LinuxI2CBus.busSpeed(path: path) == nil, "4.3 GHz is no I²C speed")
        try FileManager.default.removeItem(atPath: path)
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        #expect(LinuxI2CBus.busSpeed(path: path) == nil)
    }
    #endif

    @Test func errorHints() {
        #expect(DeviceError.i2c(bus: 1, address: 0x3C, operation: "open", errno: I2CErrno.accessDenied).hint
                == "add the service user to the i2c group")
        #expect(DeviceError.i2c(bus: 1, address: 0x3C, operation: "x", errno: I2CErrno.noDevice).hint
                == "no answer at 0x3C: display unplugged or wrong address")
        #expect(DeviceError.i2c(bus: 1, address: 0x3C, operation: "open", errno: I2CErrno.noEntry).hint
                == "no /dev/i2c-1: enable I²C (dtparam=i2c_arm=on, raspi-config) or check the bus number")
    }
}

