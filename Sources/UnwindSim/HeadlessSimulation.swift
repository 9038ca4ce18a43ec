#if canImport(Glibc)
import Glibc
#endif
import Logging
import UnwindCore
import UnwindDevice
import UnwindHardware
import UnwindRender

/// The whole device on simulated time, driven by a script of button presses, as fast as it
/// can run. It writes what crossed each simulated device to files in the output directory:
///
/// - `motor.log` — every change of the motor line: `<seconds> <1|0>`
/// - `buttons.log` — every gesture the device recognised: `<seconds> <gesture> <BUTTON>`
/// - `frames.log` — every display frame: `<seconds> <1024 bytes as hex, SSD1306 page order>`
/// - `screen.png`, `screen.txt` — the final screen
/// - `summary.txt` — `key=value` lines: frames, missed frames, motor edges, worst lateness
public struct HeadlessSimulation {
    public var script: ButtonScript
    public var stateDirectory: String
    public var outputDirectory: String?
    public var settings: DeviceSettings
    public var contentDirectory: String?
    /// `frames.log` is large (2 KB a frame); tests that only count frames leave it off.
    public var recordFrames: Bool
    /// Makes every display frame keep the simulated panel busy this long (a slow bus).
    public var displayBusy: Duration = .zero
    public var logger: Logger

    public init(script: ButtonScript, stateDirectory: String, outputDirectory: String? = nil,
                settings: DeviceSettings = DeviceSettings(), contentDirectory: String? = nil,
                recordFrames: Bool = true, logger: Logger = Logger(label: "unwind.sim")) {
        self.script = script
        self.stateDirectory = stateDirectory
        self.outputDirectory = outputDirectory
        self.settings = settings
        self.contentDirectory = contentDirectory
        self.recordFrames = recordFrames
        self.logger = logger
    }

    public struct Report: Sendable {
        public var statistics: LoopStatistics
        public var motor: [SimulatedMotor.Change]
        public var gestures: [(Instant, ButtonGesture)]
        public var framesShown: Int
        public var displayDropped: Int
        public var finalScreen: Framebuffer
        public var finalState: DeviceState
    }

    public func run() throws -> Report {
        let time = SimulatedTime()
        let motor = SimulatedMotor(clock: time)
        let buttons = SimulatedButtons(clock: time)
        let display = SimulatedDisplay()
        display.busyFor = displayBusy
        for p in script.presses { buttons.tap(p.button, at: time.start + p.at, holdFor: p.holdFor) }
        time.nextEvent = { buttons.nextEdgeTime }

        let store = try DirectoryStore(directory: stateDirectory)
        let persistence = StatePersistence(store: store, logger: logger, writeInBackground: false)
        let help = DeviceContent.helpLibrary(in: DeviceContent.directory(override: contentDirectory))
        let core = DeviceCore.starting(settings: settings, persistence: persistence, help: help, now: time.now().wall)

        var frames: LogFile?
        var gestures: [(Instant, ButtonGesture)] = []
        if let out = outputDirectory {
            try makeDirectory(out)
            if recordFrames {
                let f = try LogFile(out + "/frames.log")
                frames = f
                display.onFrame = { fb, at in f.write("\((at - time.start).secondsString) \(TextArt.hex(fb))\n") }
            }
        }

        let loop = DeviceLoop(core: core, clock: time, waiter: time, buttons: buttons, motor: motor,
                              presenter: display, persistence: persistence, logger: logger)
        loop.onGesture = { g, at in gestures.append((at, g)) }
        let end = time.start + script.end
        loop.run(until: { time.instant >= end })
        frames?.close()

        let report = Report(statistics: loop.statistics, motor: motor.history, gestures: gestures,
                            framesShown: display.framesShown, displayDropped: display.droppedFrames,
                            finalScreen: display.current, finalState: loop.core.state)
        if let out = outputDirectory { try write(report, to: out, start: time.start) }
        return report
    }

    func write(_ r: Report, to out: String, start: Instant) throws {
        let motorLog = try LogFile(out + "/motor.log")
        for c in r.motor { motorLog.write("\((c.at - start).secondsString) \(c.on ? 1 : 0)\n") }
        motorLog.close()
        let buttonLog = try LogFile(out + "/buttons.log")
        for (at, g) in r.gestures { buttonLog.write("\((at - start).secondsString) \(g.logName)\n") }
        buttonLog.close()
        let png = try LogFile(out + "/screen.png")
        png.write(PNGImage.encode(r.finalScreen))
        png.close()
        let txt = try LogFile(out + "/screen.txt")
        txt.write(TextArt.halfBlocks(r.finalScreen))
        txt.close()
        let s = r.statistics
        let summary = try LogFile(out + "/summary.txt")
        summary.write("""
            duration_s=\(script.end.secondsString)
            frames_rendered=\(s.framesRendered)
            frames_missed=\(s.framesMissed)
            frames_shown=\(r.framesShown)
            display_dropped=\(r.displayDropped)
            motor_changes=\(r.motor.count)
            motor_edges_applied=\(s.motorEdgesApplied)
            worst_motor_lateness_ns=\(s.worstMotorLateness.nanoseconds)
            errors=\(s.errors)

            """)
        summary.close()
    }
}

extension Duration {
    /// Seconds with nanosecond precision: the time column of every simulator log.
    public var secondsString: String { Instant(nanoseconds: nanoseconds).description }
}

extension ButtonGesture {
    public var logName: String {
        switch self {
        case .down(let b): "down \(b.rawValue)"
        case .short(let b): "short \(b.rawValue)"
        case .long(let b): "long \(b.rawValue)"
        case .up(let b, let held): "up \(b.rawValue) \(held.secondsString)"
        }
    }
}

func makeDirectory(_ path: String) throws {
    if mkdir(path, 0o755) != 0 && errno != EEXIST {
        throw DeviceError(device: path, operation: "mkdir", errno: errno)
    }
}

/// A buffered output file for the simulator's logs (fopen/fwrite).
final class LogFile {
    let file: UnsafeMutablePointer<FILE>
    let path: String

    init(_ path: String) throws {
        guard let f = fopen(path, "w") else { throw DeviceError(device: path, operation: "fopen", errno: errno) }
        file = f
        self.path = path
    }

    func write(_ s: String) {
        var s = s
        s.withUTF8 { _ = fwrite($0.baseAddress, 1, $0.count, file) }
    }

    func write(_ bytes: [UInt8]) {
        bytes.withUnsafeBufferPointer { _ = fwrite($0.baseAddress, 1, $0.count, file) }
    }

    func close() { fclose(file) }
}
