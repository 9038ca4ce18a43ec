import ArgumentParser
import Foundation
import Logging
import MallocInterposerSwift
import UnwindMaintenance
import UnwindSimulatedHardware
import UnwindAssembly
import UnwindCore
import UnwindRuntime
import UnwindLinuxHardware
import UnwindRender
import UnwindSimulator

/// `swift run -c release unwind-bench`: what a frame costs on this machine.
struct Bench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "unwind-bench",
        abstract: "Measures steady-state render time and allocations per frame, and peak RSS.")

    @Option(help: "Simulated seconds of breathing session to measure.")
    var seconds: Int = 600

    @Option(help: "PANIC presses and hostile control requests against the real-time loop.")
    var presses: Int = 1000

    @Flag(help: "Only the frame deadlines under PANIC presses and hostile requests.")
    var framesOnly = false

    @Flag(help: "Also PANIC presses with the outbox written on the loop's thread, for comparison.")
    var outboxAtOnce = false

    @Flag(help: "Only the outbox backlog at start: 300 old alerts, then a new PANIC.")
    var backlogOnly = false

    @Flag(help: "Only the loop on a busy machine: on its own, then beside a CPU, memory and disk load.")
    var loadedOnly = false

    @Option(help: "Seconds of each run of --loaded-only.")
    var loadedSeconds: Int = 60

    func validate() throws {
        guard (1...3_600).contains(loadedSeconds) else {
            throw ValidationError("--loaded-seconds must be 1 to 3600 (got \(loadedSeconds))")
        }
    }

    func run() throws {
        try ensureInterposer()
        if framesOnly { return try measureFrameDeadlines() }
        if backlogOnly { return try measureBacklog() }
        if loadedOnly { return try measureLoaded() }
        let frames = seconds * 30
        print("unwind-bench: \(seconds) s of square breathing, \(frames) frames at 30 fps")

        // 1. Rendering alone: the pure function from state to pixels.
        var core = DeviceCore()
        var effects: [Effect] = []
        core.apply(.button(.down(.select)), at: Moment(.zero), effects: &effects)
        let (times, renderAllocs) = measureRender(core.state, frames: frames)
        func us(_ ns: Int64) -> String { String(format: "%.1f µs", Double(ns) / 1000) }
        let mean = times.reduce(0, +) / Int64(frames)
        print("render per frame: mean \(us(mean)), p50 \(us(times[frames / 2])), p99 \(us(times[frames * 99 / 100])), max \(us(times[frames - 1]))")
        print("render allocations: \(renderAllocs) in \(frames) frames (\(String(format: "%.3f", Double(renderAllocs) / Double(frames))) per frame)")

        // 2. The whole loop on simulated time: buttons, core, motor, render, present.
        let loop = try measureLoop(nil, frames: frames)
        print("loop per frame (buttons, core, motor, render, present, alert link, alarm, control socket): mean \(us(loop.mean))")
        print("loop allocations: \(loop.allocations) in \(frames) frames; frames that allocated: \(loop.framesAllocating)",
              "(state-file checkpoints once a minute)")
        print("missed frames: \(loop.missed), worst motor lateness: \(loop.worstMotorLateness)")

        // 3. The display bus: what the SSD1306 driver sends for these frames, against a driver
        // that sends every frame whole, at the Pi's default 100 kHz and at 400 kHz.
        let state = core.state
        print("")
        print("SSD1306 over I²C, square breathing, \(frames) frames (plain I²C, I2C_RDWR):")
        print(measureBus(state, frames: frames))
        print("SSD1306 over SMBus I²C-block writes (adapters without plain I²C):")
        print(measureBus(state, frames: frames, capabilities: [.smbusBlockWrite]))

        // 4. Every breathing preset: rendering, the whole loop and the display bus, each pattern's
        // own picture and pulses (a slowing pace included), so 30 fps and the bus budget are
        // shown to hold for each, not only for the square.
        print("")
        try measurePresets(frames: frames)

        // 5. PANIC armed → first byte of AT+CMGS on the tty of a ready simulated modem.
        var latencies: [Duration] = []
        for _ in 0..<15 { latencies.append(try measurePanicLatency(alerts: 5, baud: 115_200)) }
        latencies.sort()
        print("")
        print("PANIC armed (5 alerts journaled) → first byte of AT+CMGS at 115200 baud over a pty, 15 runs:",
              "p50 \(ms(latencies[7])), min \(ms(latencies[0])), max \(ms(latencies[14]))")

        print("")
        try measureFrameDeadlines()
        print("")
        try measureLoaded()

        // VmHWM, not getrusage's ru_maxrss: `swift run` execs this binary, and ru_maxrss keeps
        // the peak of the image before the exec (SwiftPM's own ~120 MiB).
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        let hwm = status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") }
            .flatMap { Int($0.split(separator: " ").dropFirst().first ?? "") } ?? -1
        print("peak RSS: \(hwm / 1024) MiB (\(hwm) KiB, VmHWM)")
    }

    /// 6. The real-time loop, assembled as the daemon, under PANIC presses and hostile control
    /// requests, beside the same device left alone for as long (what this machine costs anyway).
    func measureFrameDeadlines() throws {
        print("Frame deadlines on the real clock (the device as the daemon, outbox and state files fsynced on this disk):")
        let panic = try FrameDeadlineRig.panicPresses(presses)
        print(panic)
        if outboxAtOnce { print(try FrameDeadlineRig.panicPresses(presses, outboxAtOnce: true)) }
        let hostile = try FrameDeadlineRig.hostileRequests(presses)
        print(hostile)
        // Well-formed requests are cheap: twenty times as many, for a measurable time.
        print(try FrameDeadlineRig.statusFlood(presses * 20))
        print(try FrameDeadlineRig.quiet(seconds: Int(max(panic.seconds, hostile.seconds).rounded(.up))))
        try measureBacklog()
    }

    /// The loop with a breathing session on its own, then beside a load like two builds on
    /// this machine (four busy processes a core, two writing through memory, two a core starting
    /// short programs, one fsyncing files to the disk the state is on), at ordinary priority and
    /// at the daemon's real-time one.
    func measureLoaded() throws {
        let cores = Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))
        let load = MachineLoad(busy: 4 * cores, memory: 2, churn: 2 * cores, directory: FileManager.default.temporaryDirectory.path)
        print("The loop on a busy machine (\(cores) cores; \(loadedSeconds) s each, a breathing session running):")
        print(try LoopUnderLoad.measure(seconds: loadedSeconds, load: nil, ahead: false)!)
        print(try LoopUnderLoad.measure(seconds: loadedSeconds, load: load, ahead: false)!)
        if let ahead = try LoopUnderLoad.measure(seconds: loadedSeconds, load: load, ahead: true) {
            print(ahead)
        } else {
            print("beside the same load at real-time priority: not measured, this process may not have it (run as root, or with ulimit -r 10)")
        }
    }

    /// 300 alerts left from an hour ago (sent late, with a note) and from 11 months ago (not sent).
    func measureBacklog() throws {
        print(try FrameDeadlineRig.outboxBacklog(300, age: 3_600))
        print(try FrameDeadlineRig.outboxBacklog(300, age: 330 * 86_400))
    }

    /// The allocation counter only sees malloc when its library is preloaded: re-run with it.
    func ensureInterposer() throws {
        if ProcessInfo.processInfo.environment["LD_PRELOAD"]?.contains("MallocInterposer") == true { return }
        let exe = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().path
        let lib = (exe as NSString).deletingLastPathComponent + "/libMallocInterposerSwift.so"
        guard FileManager.default.fileExists(atPath: lib) else {
            print("unwind-bench: \(lib) not found; allocation counts will read 0")
            return
        }
        setenv("LD_PRELOAD", lib, 1)
        let args = CommandLine.arguments.map { strdup($0) } + [nil]
        execv(exe, args)
        throw ExitCode.failure
    }
}

func ms(_ d: Duration) -> String { String(format: "%.1f ms", Double(d.nanoseconds) / 1e6) }

func monotonicNanoseconds() -> Int64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
}

Bench.main()
