#if canImport(Glibc)
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Glibc
#endif
import Logging
import UnwindAssembly
import UnwindMaintenance
import UnwindSimulatedHardware
import UnwindCore
import UnwindRuntime
import UnwindLinuxHardware
import UnwindModem
import UnwindRender
import UnwindSeams

/// The whole device on simulated time, driven by a script of button presses, as fast as it
/// can run. It writes what crossed each simulated device to files in the output directory:
///
/// - `motor.log` — every change of the motor line: `<seconds> <1|0>`
/// - `buttons.log` — every gesture the device recognised: `<seconds> <gesture> <BUTTON>`
/// - `frames.log` — every display frame: `<seconds> <1024 bytes as hex, SSD1306 page order>`
/// - `i2c.log` — every I²C write transaction the SSD1306 driver made: `<seconds> <hex bytes after
///   the address>`; a combined I2C_RDWR transaction's two messages are separated by ` | `
/// - `alerts.log` — every alert the device asked to send: `<seconds> slot N <number> <message>`
/// - `screen.png`, `screen.txt` — the final screen
/// - `display.log` — what the core asked of the panel besides frames: `<seconds> sleep|wake|contrast N`
/// - `summary.txt` — `key=value` lines: frames, missed frames, motor edges, worst lateness, alarms
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
    /// The wall clock at the start of the simulation.
    public var wallClockStart = WallTime(secondsSinceEpoch: 1_767_225_600)
    /// Steps of the wall clock: at `at` seconds into the simulation, by `by` (negative: back).
    public var clockSteps: [(at: Duration, by: Duration)] = []
    /// Whether the wall clock is synchronised at the start, and when that changes.
    public var clockSynchronised = true
    public var clockSyncChanges: [(at: Duration, synchronised: Bool)] = []
    /// The grounding camera's command (`{path}` is the photo to write); nil: no camera.
    public var captureCommand: String?
    /// Where the camera's private directory is made (default: the system's temporary directory).
    public var captureTemporaryDirectory: String?
    /// The panic path on simulated time (its delays and failures can be set by a test).
    public var alerts = ScriptedAlertLink()
    /// The display's bus: the driver sends every frame through it to an SSD1306 model.
    public var busCapabilities: I2CCapabilities = [.plainI2C, .smbusBlockWrite]
    /// The SSD1306 driver's settings: `busSpeedHz` sets its per-frame budget (at 100 kHz a
    /// whole-screen change is held over several frames, as on a Pi at the default bus speed).
    public var panelConfiguration = SSD1306.Configuration()
    /// Debounce and long-press threshold (`buttons.*` of a configuration).
    public var buttonTiming = ButtonClassifier.Timing()
    /// The counselling line and its website (`counselling.*` of a configuration).
    public var counselling = CounsellingLine.sfuCounselling
    public var counsellingWebsite = CounsellingLine.sfuWebsite
    /// GNU Unifont's hex file, as the device reads it (nil: the built-in fonts alone).
    public var unifont: String? = Unifont.debianPath

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
        /// What the core asked of the panel besides frames: `sleep`, `wake`, `contrast N`.
        public var displayCommands: [(Instant, String)]
        /// The wall clock at the start (before any scripted step), and the simulated instant the
        /// run started at: the origin of every time in the logs.
        public var wallStart: WallTime
        public var start: Instant
        /// What the SSD1306 model shows at the end: decoded from the bytes the driver sent.
        public var panelScreen: Framebuffer
        public var bus: BusStatistics
        public var alertRequests: [ScriptedAlertLink.Request]
    }

    public func run() throws -> Report {
        let time = SimulatedTime(wall: wallClockStart, synchronised: clockSynchronised)
        for s in clockSteps { time.stepWall(by: s.by, at: time.start + s.at) }
        for c in clockSyncChanges { time.setSynchronised(c.synchronised, at: time.start + c.at) }
        var camera: GroundingCamera?
        if let captureCommand {
            camera = GroundingCamera(command: try CaptureCommand(captureCommand), temporaryDirectory: captureTemporaryDirectory,
                                     logger: logger, inBackground: false)
        }
        let model = SSD1306Model()
        let i2c = SimulatedI2CBus(capabilities: busCapabilities, model: model, clock: { time.instant })
        let driver = SSD1306(bus: i2c, configuration: panelConfiguration, logger: logger, clock: { time.instant })
        let panel = RecordingDisplayControl(clock: time, driver: driver)
        // The board's motor and button code on one simulated chip, wired as the reference build.
        let chip = SimulatedGPIOChip(clock: time)
        let motor = try SimulatedMotor(chip: chip)
        let buttons = try SimulatedButtons(chip: chip)
        let display = SimulatedDisplay()
        display.busyFor = displayBusy
        for p in script.presses { buttons.tap(p.button, at: time.start + p.at, holdFor: p.holdFor) }
        time.nextEvent = { buttons.nextEdgeTime }


        var frames: LogFile?
        var i2cLog: LogFile?
        var gestures: [(Instant, ButtonGesture)] = []
        if let out = outputDirectory {
            try makeDirectory(out)
            if recordFrames {
                frames = try LogFile(out + "/frames.log")
                let log = try LogFile(out + "/i2c.log")
                i2cLog = log
                i2c.onTransaction = { t in
                    log.write("\((t.at - time.start).secondsString) \(t.messages.map(TextArt.hex).joined(separator: " | "))\(t.failure.map { " FAILED errno \($0)" } ?? "")\n")
                }
            }
        }
        // Every frame goes through the real driver to the model, so the final screen is what
        // the bytes on the bus say.
        display.onFrame = { fb, at in
            frames?.write("\((at - time.start).secondsString) \(TextArt.hex(fb))\n")
            try? driver.show(fb)
        }

        let board = Board(clock: time, waiter: time, motor: motor, buttons: buttons, presenter: display,
                          displayControl: panel, alarm: time, camera: camera)
        var recipe = DeviceRecipe(stateDirectory: stateDirectory, contentDirectory: contentDirectory, settings: settings,
                                  writeInBackground: false)
        recipe.counselling = counselling
        recipe.website = counsellingWebsite
        recipe.buttonTiming = buttonTiming
        recipe.unifont = unifont
        // The scripted link's news on the script's time line; `reply N` names slot N's contact.
        alerts.schedule(script.link, origin: time.start)
        for k in 0..<AlertSlotFile.slotCount {
            if let n = ScriptedAlertLink.slotNumber(stateDirectory: stateDirectory, slot: k) { alerts.slotNumbers[k] = n }
        }
        // The state directory is claimed as every device claims it: beside a running device (or
        // another simulation) on the same files, each would overwrite the other's sessions.
        try? FileManager.default.createDirectory(atPath: stateDirectory, withIntermediateDirectories: true)
        MaintenanceHost.setAsideUnusableDotFiles(stateDirectory, now: wallClockStart, logger: logger)
        let presence = try DaemonPresence(stateDirectory: stateDirectory, socketPath: DaemonPresence.noSocket)
        defer { presence.release() }
        let device = try DeviceAssembly(board: board, recipe: recipe, alerts: { [alerts] _ in alerts }, logger: logger)
        let loop = device.loop
        loop.onGesture = { g, at in gestures.append((at, g)) }
        let end = time.start + script.end
        device.run(until: { time.instant >= end })
        frames?.close()
        i2cLog?.close()

        let report = Report(statistics: loop.statistics, motor: motor.history, gestures: gestures,
                            framesShown: display.framesShown, displayDropped: display.droppedFrames,
                            finalScreen: display.current, finalState: loop.core.state,
                            displayCommands: panel.commands, wallStart: wallClockStart, start: time.start,
                            panelScreen: model.visibleFramebuffer(), bus: driver.statistics,
                            alertRequests: alerts.requests)
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
        let displayLog = try LogFile(out + "/display.log")
        for (at, c) in r.displayCommands { displayLog.write("\((at - start).secondsString) \(c)\n") }
        displayLog.close()
        let alertLog = try LogFile(out + "/alerts.log", mode: 0o600)
        for a in r.alertRequests {
            alertLog.write("\((a.at - start).secondsString) slot \(a.slot + 1) \(a.number) \(a.message)\n")
        }
        alertLog.close()
        let png = try LogFile(out + "/screen.png")
        png.write(PNGImage.encode(r.panelScreen))
        png.close()
        let txt = try LogFile(out + "/screen.txt")
        txt.write(TextArt.halfBlocks(r.panelScreen))
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
            alarms_fired=\(s.alarmsFired)
            clock_changes=\(s.clockChanges)
            i2c_bytes=\(r.bus.total.bytes)
            i2c_transfers=\(r.bus.total.transfers)
            i2c_full_frames=\(r.bus.fullFrames)
            i2c_bus_speed_hz=\(panelConfiguration.busSpeedHz)
            i2c_frames_held_over=\(r.bus.framesDeferred)
            alerts_requested=\(r.alertRequests.count)

            """)
        summary.close()
    }
}

/// The panel's power and contrast commands in simulation, recorded with their instants.
final class RecordingDisplayControl: DisplayControl {
    let clock: DeviceClock
    let driver: SSD1306
    var commands: [(Instant, String)] = []
    init(clock: DeviceClock, driver: SSD1306) {
        self.clock = clock
        self.driver = driver
    }
    func setSleeping(_ sleeping: Bool) {
        commands.append((clock.now().instant, sleeping ? "sleep" : "wake"))
        driver.setSleeping(sleeping)
    }
    func setContrast(_ value: UInt8) {
        commands.append((clock.now().instant, "contrast \(value)"))
        driver.setContrast(value)
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

/// Opens `path` to write, never through a link and only as a regular file: O_NONBLOCK, so a
/// FIFO planted under the name is refused at once instead of waiting for a reader that never
/// comes (a simulator would hang on one, saying nothing), then blocking again
/// for the writes. `flags`: O_CREAT, O_TRUNC, O_APPEND as wanted.
func openOutputFile(_ path: String, _ flags: Int32, mode: mode_t) throws -> Int32 {
    let fd = open(path, O_WRONLY | flags | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, mode)
    var info = stat()
    // ENXIO: a FIFO nobody reads (open(2) for writing, non-blocking).
    guard fd >= 0 || errno == ENXIO, fd < 0 || (fstat(fd, &info) == 0 && info.st_mode & S_IFMT == S_IFREG) else {
        let e = errno
        throw DeviceError(device: path, operation: "open", errno: e)
    }
    guard fd >= 0, fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) == 0 else {
        if fd >= 0 { Glibc.close(fd) }
        throw DeviceError(device: path, operation: "open", errno: EINVAL,
                          hint: "It is not a regular file (a FIFO, a device or a directory): remove it or choose another name")
    }
    return fd
}

/// A buffered output file for the simulator's logs (fopen/fwrite).
final class LogFile {
    let file: UnsafeMutablePointer<FILE>
    let path: String

    /// `mode`: the file's mode whatever the umask (and whatever an earlier run left): what the
    /// simulator writes shows contacts' names, numbers and messages.
    init(_ path: String, mode: mode_t = 0o640) throws {
        let fd = try openOutputFile(path, O_CREAT | O_TRUNC, mode: mode)
        guard fchmod(fd, mode) == 0, let f = fdopen(fd, "w") else {
            let e = errno
            Glibc.close(fd)
            throw DeviceError(device: path, operation: "fdopen", errno: e)
        }
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
