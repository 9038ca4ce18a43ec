import Foundation
import Logging
import MallocInterposerSwift
import UnwindAssembly
import UnwindCore
import UnwindRuntime
import UnwindRender
import UnwindSimulator
import UnwindSimulatedHardware

/// One table row per preset: render time and allocations per frame, the assembled loop's time
/// and allocations outside checkpoints, missed frames, and the SSD1306 driver's bytes per frame
/// and frames over its budget at the Pi's default 100 kHz.
func measurePresets(frames: Int) throws {
    print("Per preset, \(frames) frames each (a session from the first frame; render alone, then the assembled loop, then the bus at 100 kHz):")
    print("preset      render mean   p99        allocs/frame  loop mean  loop allocs (frames)  missed  bytes/frame mean  p99  max  over budget")
    for preset in BreathingPreset.builtIn {
        var core = DeviceCore(settings: DeviceSettings(pattern: preset.pattern))
        var effects: [Effect] = []
        core.apply(.button(.down(.select)), at: Moment(.zero), effects: &effects)
        let (times, renderAllocs) = measureRender(core.state, frames: frames)
        let mean = times.reduce(0, +) / Int64(frames)

        let loop = try measureLoop(preset, frames: frames)
        let bus = measureBus(core.state, frames: frames)
        let d = bus.at100kHz.driver
        func us(_ ns: Int64) -> String { String(format: "%.1f µs", Double(ns) / 1000) }
        func pad(_ s: String, _ n: Int) -> String { s + String(repeating: " ", count: max(1, n - s.count)) }
        print(pad(preset.name, 12) + pad(us(mean), 14) + pad(us(times[frames * 99 / 100]), 11)
              + pad(String(format: "%.3f", Double(renderAllocs) / Double(frames)), 14) + pad(us(loop.mean), 11)
              + pad("\(loop.allocations) (\(loop.framesAllocating))", 22) + pad("\(loop.missed)", 8)
              + pad(String(format: "%.1f", d.bytes.mean), 18) + pad("\(d.bytes.p99)", 5) + pad("\(d.bytes.max)", 5)
              + "\(d.framesOverBudget)" + (bus.mismatchedFrames > 0 ? "  MISMATCHED \(bus.mismatchedFrames)" : ""))
    }
}

/// The daemon's loop on simulated time with a session running, assembled as the daemon is: its
/// panic link, reminder alarm and control socket attached (the socket serviced every pass, with
/// no client connected). `preset`: the pattern chosen (nil: the settings' own, box).
func measureLoop(_ preset: BreathingPreset?, frames: Int)
    throws -> (mean: Int64, allocations: Int, framesAllocating: Int, missed: Int, worstMotorLateness: Duration) {
    let dir = NSTemporaryDirectory() + "unwind-bench-\(getpid())-\(preset?.name ?? "default")"
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let time = SimulatedTime()
    let motor = SimulatedMotor(clock: time)
    let buttons = SimulatedButtons(clock: time)
    let display = SimulatedDisplay()
    buttons.tap(.select, at: .zero)
    time.nextEvent = { buttons.nextEdgeTime }
    var logger = Logger(label: "unwind.bench")
    logger.logLevel = .warning
    let board = Board(clock: time, waiter: time, motor: motor, buttons: buttons, presenter: display, alarm: time)
    var settings = DeviceSettings()
    if let preset {
        settings.pattern = preset.pattern
        settings.breathing.patternOverridesRemembered = true
    }
    let recipe = DeviceRecipe(stateDirectory: dir, settings: settings, socket: dir + "/control.sock", writeInBackground: false)
    let device = try DeviceAssembly(board: board, recipe: recipe, alerts: { _ in ScriptedAlertLink() }, logger: logger)
    defer { device.finish() }
    let loop = device.loop
    while loop.statistics.framesRendered < 300 { loop.step() }
    var framesWithAllocations = 0
    var allocations = 0
    let first = loop.statistics.framesRendered
    let start = monotonicNanoseconds()
    MallocInterposerSwift.initialize()
    while loop.statistics.framesRendered < first + frames {
        let before = loop.statistics.framesRendered
        let a0 = MallocInterposerSwift.getStatistics().mallocCount
        MallocInterposerSwift.hook()
        loop.step()
        MallocInterposerSwift.unhook()
        let a = MallocInterposerSwift.getStatistics().mallocCount - a0
        allocations += a
        if a > 0 && loop.statistics.framesRendered > before { framesWithAllocations += 1 }
    }
    let wall = monotonicNanoseconds() - start
    return (wall / Int64(frames), allocations, framesWithAllocations, loop.statistics.framesMissed, loop.statistics.worstMotorLateness)
}
