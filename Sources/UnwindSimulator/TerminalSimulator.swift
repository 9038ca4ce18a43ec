#if canImport(Glibc)
import Glibc
#endif
import Logging
import Synchronization
import SystemPackage
import UnwindMaintenance
import UnwindSimulatedHardware
import UnwindAssembly
import UnwindCore
import UnwindRuntime
import UnwindLinuxHardware
import UnwindModem
import UnwindRender
import UnwindSeams

/// The keys of the terminal simulator, shown under the screen.
public enum KeyMap {
    public static let legend = """
        p/Tab PAGE   P/h hold PAGE (help)   a/← LEFT   d/→ RIGHT   A/D hold them
        space/Enter SELECT   S hold SELECT   ! hold PANIC   r reply   t STATUS   q quit
        """

    /// The key that makes slot 1's contact reply "On my way" through the simulated modem.
    static let reply = UInt8(ascii: "r")
    public static let replyText = "On my way"
    /// The key that makes slot 1's contact text STATUS: the answer is the simulated
    /// modem's last delivered SMS, under the screen.
    static let status = UInt8(ascii: "t")
    public static let statusText = "STATUS"

    /// The button a key stands for and how long it is held.
    static func press(for key: UInt8) -> (Button, Duration)? {
        switch key {
        case UInt8(ascii: "p"), 0x09: (.page, ButtonScript.shortHold)
        case UInt8(ascii: "P"), UInt8(ascii: "h"), UInt8(ascii: "?"): (.page, ButtonScript.longHold)
        case UInt8(ascii: "a"): (.left, ButtonScript.shortHold)
        case UInt8(ascii: "d"): (.right, ButtonScript.shortHold)
        // Breathing: LEFT held opens the statistics, RIGHT held steps the session length.
        case UInt8(ascii: "A"): (.left, ButtonScript.longHold)
        case UInt8(ascii: "D"): (.right, ButtonScript.longHold)
        case UInt8(ascii: " "), 0x0D, 0x0A: (.select, ButtonScript.shortHold)
        case UInt8(ascii: "S"): (.select, ButtonScript.longHold)
        case UInt8(ascii: "!"): (.panic, .milliseconds(1600))
        default: nil
        }
    }
}

/// Buttons from the keyboard: a key press becomes a press edge now and a release edge after
/// the key's hold time (a terminal reports no key-up).
final class KeyboardButtons: ButtonLines {
    let clock: DeviceClock
    let scheduled: SimulatedButtons
    var quit = false
    /// `r` and `t`: the simulated network delivers this text from slot 1 (set once the simulated
    /// modem is plugged in).
    var onReply: ((String) -> Void)?
    var pendingEscape: [UInt8] = []
    /// Called on the loop's thread after the terminal changed size.
    var onResize: (() -> Void)?

    init(clock: DeviceClock) {
        self.clock = clock
        self.scheduled = SimulatedButtons(clock: clock)
    }

    var pollDescriptors: [Int32] {
        let r = resizePipe.read.load(ordering: .relaxed)
        return r >= 0 ? [STDIN_FILENO, r] : [STDIN_FILENO]
    }
    var nextEdgeTime: Instant? { scheduled.nextEdgeTime }

    func readEdges(into edges: inout [ButtonEdge]) throws(DeviceError) {
        var buf = [UInt8](repeating: 0, count: 64)
        let r = resizePipe.read.load(ordering: .relaxed)
        if r >= 0 && read(r, &buf, buf.count) > 0 {
            while read(r, &buf, buf.count) > 0 {}
            onResize?()
        }
        // End of input or a hung-up terminal (EIO): nobody can press a key any more, and the
        // descriptor would stay readable — quit as `q` does (the session is saved) instead of
        // spinning on it. EAGAIN: no key yet.
        var n = 0
        do throws(Errno) {
            n = try valueOrErrno { read(STDIN_FILENO, &buf, buf.count) }
            if n == 0 { quit = true }
        } catch {
            if error != .wouldBlock { quit = true }
        }
        if n > 0 {
            let now = clock.now().instant
            var i = 0
            while i < n {
                let k = buf[i]
                // Arrow keys arrive as ESC [ C / ESC [ D.
                if k == 0x1B && i + 2 < n && buf[i + 1] == UInt8(ascii: "[") {
                    switch buf[i + 2] {
                    case UInt8(ascii: "D"): scheduled.tap(.left, at: now)
                    case UInt8(ascii: "C"): scheduled.tap(.right, at: now)
                    default: break
                    }
                    i += 3
                    continue
                }
                if k == UInt8(ascii: "q") || k == 0x03 { quit = true }
                if k == KeyMap.reply { onReply?(KeyMap.replyText) }
                if k == KeyMap.status { onReply?(KeyMap.statusText) }
                if let (b, hold) = KeyMap.press(for: k) { scheduled.tap(b, at: now, holdFor: hold) }
                i += 1
            }
        }
        try scheduled.readEdges(into: &edges)
    }
}

/// SIGWINCH's self-pipe: the handler may only write(2); the loop polls the read end and redraws.
enum resizePipe {
    static let read = Atomic<Int32>(-1)
    static let write = Atomic<Int32>(-1)

    static func open() {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { return }
        for fd in fds {
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        }
        read.store(fds[0], ordering: .relaxed)
        write.store(fds[1], ordering: .relaxed)
        signal(SIGWINCH) { _ in
            var b: UInt8 = 1
            let saved = errno
            _ = Glibc.write(resizePipe.write.load(ordering: .relaxed), &b, 1)
            errno = saved
        }
    }

    static func close() {
        signal(SIGWINCH, SIG_DFL)
        for fd in [read.exchange(-1, ordering: .relaxed), write.exchange(-1, ordering: .relaxed)] where fd >= 0 { Glibc.close(fd) }
    }
}

/// The OLED drawn in the terminal, the motor's state and the key legend beneath, fitted to the
/// terminal's size (half blocks, braille, or how big it must be). Each frame goes through the
/// real SSD1306 driver onto a simulated I²C bus, and the terminal shows what the SSD1306 model
/// decoded: what you see is what the bytes say.
final class TerminalPanel: DisplayPanel, DisplayControl, @unchecked Sendable {
    let motor: SimulatedMotor
    let stateDirectory: String
    let driver: SSD1306
    let model: SSD1306Model
    /// The simulated modem, once the device has started it (drawn under `drawing`).
    private(set) var modem: ModemSimulator?
    /// Frames are drawn on the presenter's thread, a resize redraws on the loop's.
    let drawing = Mutex<Void>(())
    var text = ""
    var layout = TerminalLayout.measure(STDOUT_FILENO)

    init(motor: SimulatedMotor, stateDirectory: String, logger: Logger, clock: LinuxClock,
         panel: SSD1306.Configuration = SSD1306.Configuration()) {
        self.motor = motor
        self.stateDirectory = stateDirectory
        model = SSD1306Model()
        driver = SSD1306(bus: SimulatedI2CBus(model: model, clock: { clock.now().instant }), configuration: panel,
                         logger: logger, clock: { clock.now().instant })
        text.reserveCapacity(32 * 1024)
    }

    func attach(_ modem: ModemSimulator) { drawing.withLock { _ in self.modem = modem } }

    func setSleeping(_ sleeping: Bool) { driver.setSleeping(sleeping) }
    func setContrast(_ value: UInt8) { driver.setContrast(value) }

    func show(_ frame: Framebuffer) throws(DeviceError) {
        try driver.show(frame)
        drawing.withLock { _ in draw() }
    }

    /// After SIGWINCH: measure again, clear what the old size left, draw the last frame.
    func resized() {
        drawing.withLock { _ in
            layout = TerminalLayout.measure(STDOUT_FILENO)
            writeTerminal("\u{1B}[2J")
            draw()
        }
    }

    private func draw() {
        text.removeAll(keepingCapacity: true)
        // A sleeping panel is dark, whatever its memory holds.
        let fb = model.isOn ? model.visibleFramebuffer() : Framebuffer()
        let motorLine = motor.isOn ? " MOTOR \u{1B}[7m ~~~ BUZZ ~~~ \u{1B}[0m" : " MOTOR  .  (still)"
        var optional = [" maintainer's commands, from another terminal: unwind status --state \(stateDirectory)"]
        if let modem {
            let sms = modem.delivered
            var line = " simulated modem: \(sms.count) SMS delivered"
            if let last = sms.last { line += ", last to \(last.number): \(last.text.prefix(60))" }
            optional.insert(line, at: 0)
        }
        let required = [motorLine] + KeyMap.legend.split(separator: "\n").map { " " + $0 } + [" state and log: \(stateDirectory)"]
        layout.compose(fb, required: required, optional: optional, into: &text)
        writeTerminal(text)
    }
}

/// `unwind sim`: the device in a terminal, on real time, with keys for buttons.
public struct TerminalSimulator {
    public var stateDirectory: String
    public var settings: DeviceSettings
    public var contentDirectory: String?
    public var logger: Logger
    /// A real modem's line and session settings (`unwind sim --modem PATH`); nil: the simulated one.
    public var realModem: (serial: SerialConfiguration, modem: ModemConfiguration)?
    /// The counselling line the configuration names (`unwind sim --config FILE`).
    public var counselling: CounsellingLine = .sfuCounselling
    /// The latest warnings and errors `logger` wrote, for `unwind status` (as the daemon's).
    public var recentLog: RecentLog?
    /// The panel's contrast, rotation and bus speed (`--config`'s display keys).
    public var panelConfiguration = SSD1306.Configuration()
    public var buttonTiming = ButtonClassifier.Timing()
    public var counsellingWebsite = CounsellingLine.sfuWebsite

    public init(stateDirectory: String, settings: DeviceSettings, contentDirectory: String? = nil, logger: Logger) {
        self.stateDirectory = stateDirectory
        self.settings = settings
        self.contentDirectory = contentDirectory
        self.logger = logger
    }

    public struct NotATerminal: Error, CustomStringConvertible {
        public var description: String {
            "unwind sim draws the screen in a terminal and reads keys from it; standard input is not a terminal. Use 'unwind sim --headless SCRIPT' to run from a script."
        }
    }

    public func run() throws {
        guard isatty(STDIN_FILENO) == 1, isatty(STDOUT_FILENO) == 1 else { throw NotATerminal() }
        // Log lines would tear the drawing: they go to a file in the state directory instead.
        try makeDirectory(stateDirectory)
        let logPath = stateDirectory + "/sim.log"
        let logFD = try openOutputFile(logPath, O_CREAT | O_APPEND, mode: 0o640)
        // The terminal's own standard error, kept for a start-up failure: the person must see
        // why the simulator did not start, not only the log.
        let terminalError = dup(STDERR_FILENO)
        // The log names contacts (the maintainer's requests): 0640 whatever an older run left.
        _ = fchmod(logFD, 0o640)
        guard dup2(logFD, STDERR_FILENO) >= 0 else {
            let e = errno
            close(logFD)
            throw DeviceError(device: logPath, operation: "open", errno: e)
        }
        close(logFD)
        do {
            try runOnTerminal()
        } catch {
            if terminalError >= 0 {
                let line = "unwind: \(error)\n"
                _ = line.withCString { write(terminalError, $0, strlen($0)) }
            }
            throw error
        }
    }

    private func runOnTerminal() throws {
        let clock = LinuxClock()
        // First, before any thread: SIGTERM, SIGINT and SIGHUP only ever wake the loop's poll.
        let stop = try StopOnSignals([SIGTERM, SIGINT, SIGHUP])
        let waiter = try PollWaiter()
        let alarm = try? RealtimeAlarm()
        let motor = SimulatedMotor(clock: clock)
        let buttons = KeyboardButtons(clock: clock)
        let panel = TerminalPanel(motor: motor, stateDirectory: stateDirectory, logger: logger, clock: clock,
                                  panel: panelConfiguration)
        resizePipe.open()
        buttons.onResize = { panel.resized() }
        let presenter = ThreadedPresenter(panel: panel, logger: logger)
        // The simulated modem is plugged in (its link made in the state directory) only once the
        // device holds the state lock: a second simulator on the same directory must not
        // replace the first one's modem.
        final class Plugged { var modem: ModemSimulator? }
        let plugged = Plugged()

        var saved = termios()
        tcgetattr(STDIN_FILENO, &saved)
        var raw = saved
        raw.c_lflag &= ~tcflag_t(ICANON | ECHO | ISIG)
        raw.c_iflag &= ~tcflag_t(IXON | ICRNL)
        tcsetattr(STDIN_FILENO, TCSANOW, &raw)
        let flags = fcntl(STDIN_FILENO, F_GETFL)
        _ = fcntl(STDIN_FILENO, F_SETFL, flags | O_NONBLOCK)
        writeTerminal("\u{1B}[?1049h\u{1B}[?25l\u{1B}[2J")
        let restoreTerminal = {
            resizePipe.close()
            _ = fcntl(STDIN_FILENO, F_SETFL, flags)
            tcsetattr(STDIN_FILENO, TCSANOW, &saved)
            writeTerminal("\u{1B}[?25h\u{1B}[?1049l")
        }

        let board = Board(clock: clock, waiter: waiter, motor: motor, buttons: buttons, presenter: presenter,
                          displayControl: panel, alarm: alarm,
                          teardown: [presenter.stop, restoreTerminal, { plugged.modem?.stop() }])
        var recipe = DeviceRecipe(stateDirectory: stateDirectory, contentDirectory: contentDirectory, settings: settings,
                                  socket: ControlSocket.simulator(stateDirectory: stateDirectory), writeInBackground: true)
        recipe.counselling = counselling
        recipe.website = counsellingWebsite
        recipe.buttonTiming = buttonTiming
        recipe.recentLog = recentLog
        // A device that cannot be assembled undoes the board itself (the terminal restored).
        let device = try DeviceAssembly(board: board, recipe: recipe, alerts: { [logger, realModem, stateDirectory] now in
            // A simulated GSM modem on a real pseudo-terminal, driven through the real AT
            // engine — or a real modem (`--modem PATH`): a USB dongle, or a modem simulator
            // somebody else wrote.
            let serial: SerialConfiguration
            if let realModem {
                serial = realModem.serial
            } else {
                // Its link lives in the state directory: a killed simulator leaves nothing in /tmp.
                // Never made inside whatever was planted under the name (a link elsewhere).
                if let moved = try OwnedDirectory.claim("modem", in: stateDirectory, suffix: "\(now.wall.secondsSinceEpoch)") {
                    logger.error("\(moved) in \(stateDirectory)")
                }
                let sim = try ModemSimulator(directory: stateDirectory + "/modem")
                sim.start()
                plugged.modem = sim
                panel.attach(sim)
                buttons.onReply = { [logger] text in
                    guard let number = Self.slotOneNumber(stateDirectory) else {
                        logger.notice("slot 1 has no contact to text from")
                        return
                    }
                    sim.receiveSMS(from: number, text: text)
                }
                serial = SerialConfiguration(path: sim.path)
            }
            return try ModemAlertLink.open(stateDirectory: stateDirectory, serial: serial,
                                           modem: realModem?.modem ?? ModemConfiguration(), logger: logger, now: now)
        }, participants: [stop], logger: logger)
        LoopPriority.request(logger: logger)
        device.run(until: { buttons.quit })
    }
}

extension TerminalSimulator {
    /// Slot 1's contact number as its file says (read afresh: the maintainer may have just set it).
    static func slotOneNumber(_ stateDirectory: String) -> String? {
        ScriptedAlertLink.slotNumber(stateDirectory: stateDirectory, slot: 0)
    }
}

/// write(2) to standard output, whole. Standard output is usually the terminal's one open file
/// with standard input, which the simulator makes non-blocking: when the terminal is slow to
/// take a frame (a stalled SSH link, a paused window), EAGAIN waits for room (poll, up to 2 s
/// at a time) instead of dropping the rest of the frame, which would leave half a picture or
/// half an escape sequence on the screen. This runs on the display thread, never the loop's.
/// A terminal that takes nothing for 2 s, or went away, gets the rest dropped; reading it tells
/// the simulator to quit.
func writeTerminal(_ s: String) {
    var s = s
    s.withUTF8 { b in
        var rest = UnsafeRawBufferPointer(b)
        while !rest.isEmpty {
            do throws(Errno) {
                let n = try valueOrErrno { write(STDOUT_FILENO, rest.baseAddress, rest.count) }
                if n == 0 { return }
                rest = UnsafeRawBufferPointer(rebasing: rest[n...])
            } catch {
                guard error == .wouldBlock else { return }
                var p = pollfd(fd: STDOUT_FILENO, events: Int16(POLLOUT), revents: 0)
                guard (try? valueOrErrno { poll(&p, 1, 2_000) }) == 1 else { return }
            }
        }
    }
}
