import MallocInterposerSwift
import UnwindCore
import UnwindRender
import UnwindSeams
import UnwindSimulator

/// The instant of frame `k` at 30 frames a second.
func frameInstant(_ k: Int) -> Instant { Instant(nanoseconds: Int64(k) * 1_000_000_000 / 30) }

/// Rendering alone, the pure function from state to pixels: `state` drawn for `frames` frames at
/// 30 fps into one framebuffer, after 300 to warm up. Each frame's render time in nanoseconds,
/// sorted, and the allocations of all of them.
func measureRender(_ state: DeviceState, frames: Int) -> (times: [Int64], allocations: Int) {
    var fb = Framebuffer()
    var times = [Int64](repeating: 0, count: frames)
    for k in 0..<300 { Screen.render(state, at: Instant(nanoseconds: Int64(k) * 33_333_333), into: &fb) }
    MallocInterposerSwift.initialize()
    MallocInterposerSwift.hook()
    for k in 0..<frames {
        let t0 = monotonicNanoseconds()
        Screen.render(state, at: frameInstant(k), into: &fb)
        times[k] = monotonicNanoseconds() - t0
    }
    MallocInterposerSwift.unhook()
    let allocations = MallocInterposerSwift.getStatistics().mallocCount
    times.sort()
    return (times, allocations)
}

/// What the SSD1306 driver puts on the bus for `state` drawn for `frames` frames at 30 fps.
func measureBus(_ state: DeviceState, frames: Int, capabilities: I2CCapabilities = .plainI2C) -> BusCost.Report {
    BusCost.measure(count: frames, capabilities: capabilities) { k, fb in Screen.render(state, at: frameInstant(k), into: &fb) }
}
