import Foundation
import Logging
import Testing
import UnwindSimulatedHardware
import UnwindCore
@testable import UnwindLinuxHardware
import UnwindRender
import UnwindSeams
import UnwindTestSupport

// MARK: - Support

/// Simulated monotonic time for the driver's retry schedule.
final class FakeClock: @unchecked Sendable {
    var now = Instant.zero
    func advance(_ d: Duration) { now += d }
}

/// A display on a simulated bus, driven with a fake clock.
struct Rig {
    let clock = FakeClock()
    let log = LogRecorder()
    let model: SSD1306Model
    let bus: SimulatedI2CBus
    let driver: SSD1306

    init(capabilities: I2CCapabilities = [.plainI2C, .smbusBlockWrite], height: Int = 64, flipped: Bool = false,
         mounting: SSD1306Model.Mounting? = nil, partialUpdates: Bool = true, busSpeedHz: Int = 400_000) {
        model = SSD1306Model(rows: height, mounting: mounting ?? (flipped ? .upsideDown : .upright))
        let clock = self.clock
        bus = SimulatedI2CBus(capabilities: capabilities, model: model, clock: { clock.now })
        bus.recording = true
        driver = SSD1306(bus: bus,
                         configuration: .init(height: height, flipped: flipped, busSpeedHz: busSpeedHz,
                                              partialUpdates: partialUpdates),
                         logger: log.logger("test.ssd1306"), clock: { clock.now })
    }

    /// GDDRAM's first `pages` pages are the frame, byte for byte.
    func memoryHolds(_ frame: Framebuffer) -> Bool { model.holds(frame) }
}

/// The property tests' seed: `UNWIND_TEST_SEED=<n>` to replay, `UNWIND_TEST_SEED=random` for a new one.
func testSeed(_ fallback: UInt64) -> UInt64 {
    switch ProcessInfo.processInfo.environment["UNWIND_TEST_SEED"] {
    case nil: return fallback
    case "random": return UInt64.random(in: 0...UInt64.max)
    case let s?: return UInt64(s) ?? fallback
    }
}

func randomFrame(width: Int = 128, height: Int = 64, using rng: inout SplitMix64) -> Framebuffer {
    var fb = Framebuffer(width: width, height: height)
    for i in fb.bytes.indices { fb.bytes[i] = UInt8.random(in: 0...255, using: &rng) }
    return fb
}

/// A frame derived from `previous`: noise, a few pixels, rectangles, text, scattered bytes, edges.
func nextFrame(after previous: Framebuffer, using rng: inout SplitMix64) -> Framebuffer {
    var fb = previous
    let w = fb.width, h = fb.height
    let fonts = [BitmapFont.small, .regular, .large]
    switch Int.random(in: 0..<9, using: &rng) {
    case 0:
        fb = randomFrame(width: w, height: h, using: &rng)
    case 1:
        for _ in 0..<Int.random(in: 1...8, using: &rng) {
            fb.plot(Int.random(in: 0..<w, using: &rng), Int.random(in: 0..<h, using: &rng), .invert)
        }
    case 2:
        for _ in 0..<Int.random(in: 1...4, using: &rng) {
            let x = Int.random(in: -10..<w, using: &rng), y = Int.random(in: -10..<h, using: &rng)
            let rw = Int.random(in: 1...60, using: &rng), rh = Int.random(in: 1...40, using: &rng)
            let ink = [Ink.on, .off, .invert][Int.random(in: 0..<3, using: &rng)]
            if Bool.random(using: &rng) { fb.fill(x: x, y: y, width: rw, height: rh, ink) } else { fb.rectangle(x: x, y: y, width: rw, height: rh, ink) }
        }
    case 3:
        let font = fonts[Int.random(in: 0..<fonts.count, using: &rng)]
        let x = Int.random(in: -8..<w, using: &rng), y = Int.random(in: -8..<h, using: &rng)
        let text = String((0..<Int.random(in: 1...12, using: &rng)).map { _ in Character(UnicodeScalar(UInt8.random(in: 32...126, using: &rng))) })
        fb.fill(x: x, y: y, width: text.count * font.width, height: font.height, .off)
        fb.text(text, font: font, x: x, y: y)
    case 4:
        for _ in 0..<Int.random(in: 1...30, using: &rng) {
            fb.bytes[Int.random(in: 0..<fb.bytes.count, using: &rng)] ^= UInt8.random(in: 1...255, using: &rng)
        }
    case 5:
        // The corners and edges of the window arithmetic.
        for x in [0, 1, w - 2, w - 1] where Bool.random(using: &rng) {
            fb.bytes[x] ^= 0xFF
            fb.bytes[(fb.pages - 1) * w + x] ^= 0x81
        }
        fb.bytes[Int.random(in: 0..<fb.pages, using: &rng) * w + w - 1] ^= 0x10
    case 6:
        // A clock's digits changing, as on the breathing page.
        fb.fill(x: 56, y: 23, width: 50, height: 20, .off)
        fb.clock(Int64.random(in: 0..<36_000, using: &rng), font: .large, x: 56, y: 23)
    case 7:
        break  // unchanged
    default:
        if Bool.random(using: &rng) { fb.clear() } else { fb.bytes = [UInt8](repeating: 0xFF, count: fb.bytes.count) }
    }
    return fb
}

func rotated180(_ fb: Framebuffer) -> Framebuffer {
    var r = Framebuffer(width: fb.width, height: fb.height)
    for y in 0..<fb.height { for x in 0..<fb.width where fb[x, y] { r[fb.width - 1 - x, fb.height - 1 - y] = true } }
    return r
}

/// Something recognisable and asymmetric: text, a corner mark, a diagonal.
func sampleFrame(width: Int = 128, height: Int = 64) -> Framebuffer {
    var fb = Framebuffer(width: width, height: height)
    fb.text("Breathe in", font: .regular, x: 2, y: 1)
    fb.fill(x: 0, y: height - 3, width: 3, height: 3)
    for i in 0..<min(width, height) { fb.plot(i + 40, i) }
    fb.plot(width - 1, 0)
    return fb
}

/// The malloc interposer's counters, found with dlsym when its library is preloaded.
@inline(never) func blackHole(_ x: Int) {}

enum MallocCounter {
    typealias Toggle = @convention(c) () -> Void
    typealias Stats = @convention(c) (UnsafeMutablePointer<Int64>, UnsafeMutablePointer<Int64>, UnsafeMutablePointer<Int64>,
                                      UnsafeMutablePointer<Int64>, UnsafeMutablePointer<Int64>, UnsafeMutablePointer<Int64>) -> Void
    static func symbol<T>(_ name: String, _: T.Type) -> T? {
        #if os(Linux)
        guard let p = dlsym(UnsafeMutableRawPointer(bitPattern: 0), name) else { return nil }  // RTLD_DEFAULT
        return unsafeBitCast(p, to: T.self)
        #else
        return nil
        #endif
    }
    static var available: Bool { symbol("malloc_interposer_enable", Toggle.self) != nil }

    static func count(_ body: () throws -> Void) rethrows -> Int64 {
        let enable = symbol("malloc_interposer_enable", Toggle.self)!
        let disable = symbol("malloc_interposer_disable", Toggle.self)!
        let reset = symbol("malloc_interposer_reset", Toggle.self)!
        let stats = symbol("malloc_interposer_get_stats", Stats.self)!
        reset(); enable()
        defer { disable() }
        try body()
        disable()
        var n: Int64 = 0, b: Int64 = 0, s: Int64 = 0, l: Int64 = 0, fc: Int64 = 0, fb: Int64 = 0
        stats(&n, &b, &s, &l, &fc, &fb)
        return n
    }
}
