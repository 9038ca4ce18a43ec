import ArgumentParser
import Foundation
import Logging
import Synchronization
import UnwindControl
import UnwindCore
import UnwindDevice
import UnwindHardware
import UnwindModem

let daemonStop = Atomic<Bool>(false)

/// `unwind run`: the daemon on the board's real GPIO lines and I²C display.
struct Run: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the device daemon on the board's GPIO lines, I²C display and state directory.",
        discussion: "Stops cleanly on SIGTERM or SIGINT: the running session is saved and the motor line driven low.")

    @Option(help: "The configuration file (YAML). A missing file means every default.")
    var config: String = DeviceConfiguration.defaultPath

    @Option(help: "The control socket the maintainer's commands use (default: $RUNTIME_DIRECTORY/control.sock, else /run/unwind/control.sock).")
    var socket: String?

    func run() throws {
        // The journal (with priorities) under systemd, standard error otherwise; the latest warnings
        // and errors are also kept for `unwind status`.
        let recent = RecentLog()
        let underSystemd = ProcessInfo.processInfo.environment["JOURNAL_STREAM"] != nil
        let logger = recent.logger(label: "unwind") { label -> LogHandler in
            underSystemd ? JournalLogHandler(label: label) as LogHandler : EscapingLogHandler(StreamLogHandler.standardError(label: label))
        }
        let configuration = try loadConfiguration(config, logger: logger)
        try Daemon(configuration: configuration, logger: logger, socket: socket ?? ControlSocket.daemon(),
                   recentLog: recent).run()
    }
}

/// Reads and validates the configuration, before anything touches the hardware, as
/// `unwind config check` does; every wrong key is printed, then exit status 2 (1 when the file
/// cannot be read at all).
func loadConfiguration(_ path: String, logger: Logger) throws -> DeviceConfiguration {
    let loaded: DeviceConfiguration?
    do { loaded = try ConfigurationFile.load(path) } catch {
        for line in error.lines { writeError("unwind: " + line) }
        throw ExitCode(error.exitCode)
    }
    guard let loaded else {
        logger.notice("no configuration at \(path); using the defaults of the reference build")
        return DeviceConfiguration()
    }
    return loaded
}

/// Prints a clear message on standard error and returns the exit to throw.
func fail(_ message: String, code: ExitCode) -> ExitCode {
    writeError("unwind: " + message)
    return code
}

/// The device wired to real hardware.
struct Daemon {
    var configuration: DeviceConfiguration
    var logger: Logger
    /// The control socket (see `ControlServer`).
    var socket: String
    var recentLog: RecentLog?

    func run() throws {
        let c = configuration
        let clock = LinuxClock()
        let waiter: PollWaiter
        let motor: LinuxMotorLine
        let buttons: LinuxButtonLines
        let bus: LinuxI2CBus
        let store: DirectoryStore
        do {
            waiter = try PollWaiter()
            motor = try LinuxMotorLine(c.gpio.motor, consumer: c.gpio.consumer)
            // From here on the motor line goes low however the process ends (short of SIGKILL).
            try installDriveLowOnExit()
            buttons = try LinuxButtonLines(configuration: c.gpio)
            bus = try LinuxI2CBus(bus: c.display.bus, address: c.display.address)
        } catch {
            throw fail("cannot start: \(error)", code: .failure)
        }
        do { store = try DirectoryStore(directory: c.stateDirectory) } catch {
            throw fail("cannot use the state directory: \(error)", code: .failure)
        }
        var panelConfiguration = c.display.panel
        if let hz = LinuxI2CBus.busSpeed(bus: c.display.bus) {
            // The real clock, where the device tree tells it, decides the frame's bus budget.
            panelConfiguration.busSpeedHz = hz
            if hz < 400_000 {
                logger.warning("I²C bus \(c.display.bus) runs at \(hz / 1000) kHz: set dtparam=i2c_arm_baudrate=400000 in config.txt; at this speed large screen changes are spread over several frames")
            }
        } else {
            logger.notice("the I²C bus speed is not exposed here; assuming the configured \(c.display.panel.busSpeedHz / 1000) kHz")
        }
        logger.info("display on /dev/i2c-\(c.display.bus) at 0x\(String(c.display.address, radix: 16)) (\(bus.capabilities))")

        let panel = SSD1306(bus: bus, configuration: panelConfiguration, logger: logger, clock: { clock.now().instant })
        let presenter = ThreadedPresenter(panel: panel, width: c.display.panel.width, height: c.display.panel.height, logger: logger)
        // The maintainer's commands find the daemon through the state directory and reach it on
        // the control socket; the files are loaded holding the state lock (see MaintenanceHost).
        let host: MaintenanceHost
        do {
            host = try MaintenanceHost(stateDirectory: c.stateDirectory, socketPath: socket, contentDirectory: c.contentDirectory,
                                       logger: logger, now: clock.now().wall, recentLog: recentLog)
        } catch {
            throw fail("cannot start: \(error)", code: .failure)
        }
        host.server?.displayHealth = { panel.isLost ? "lost (the panel does not answer on the bus; see the journal)" : "ok" }
        let persistence = StatePersistence(store: store, logger: logger, writeInBackground: true, lock: host.lock)
        let content = DeviceContent.directory(override: c.contentDirectory)
        let help = DeviceContent.helpLibrary(in: content)
        let core = host.loading {
            DeviceCore.starting(settings: c.settings, persistence: persistence, help: help, now: clock.now().wall,
                                content: content, counselling: c.counselling, website: c.counsellingWebsite)
        }
        let alerts = try Self.alertLink(c, logger: logger, now: clock.now())
        let alarm: RealtimeAlarm?
        do { alarm = try RealtimeAlarm() } catch {
            logger.error("reminders are off: \(error)")
            alarm = nil
        }
        var camera: GroundingCamera?
        if let command = c.captureCommand {
            camera = GroundingCamera(command: try CaptureCommand(command), logger: logger, inBackground: true)
        }

        signal(SIGTERM) { _ in daemonStop.store(true, ordering: .relaxed) }
        signal(SIGINT) { _ in daemonStop.store(true, ordering: .relaxed) }
        let loop = DeviceLoop(core: core, clock: clock, waiter: waiter, buttons: buttons, motor: motor,
                              presenter: presenter, persistence: persistence, buttonTiming: c.buttonTiming,
                              display: (c.display.panel.width, c.display.panel.height), logger: logger,
                              alarm: alarm, displayControl: panel, camera: camera, alerts: alerts, control: host.server)
        let systemd = SystemdNotifier(environment: ProcessInfo.processInfo.environment)
        logger.info("unwind running; state in \(c.stateDirectory)")
        systemd.notify("READY=1")
        // The loop asks this before every pass: a loop that stops turning stops petting the
        // watchdog, and systemd restarts the service.
        loop.run(until: {
            systemd.petWatchdog(at: clock.now().instant)
            return daemonStop.load(ordering: .relaxed)
        })
        systemd.notify("STOPPING=1")
        // After the last saves: no command may edit the files while the daemon still writes them.
        host.close()
        presenter.stop()
        motor.release()
        buttons.release()
        logger.info("unwind stopped; state saved")
    }

    /// The modem link: the outbox lives beside the state files, so an alert asked for before a
    /// crash or a power cut is sent after the restart. A modem that is missing at start is
    /// looked for again with backoff; alerts wait in the outbox meanwhile.
    static func alertLink(_ c: DeviceConfiguration, logger: Logger, now: Moment) throws -> ModemAlertLink {
        let outbox: Outbox
        do { outbox = try Outbox(storage: try DirectoryStore.outbox(at: c.stateDirectory + "/outbox"), now: now.wall) } catch {
            throw fail("cannot use the outbox directory: \(error)", code: .failure)
        }
        let port: SerialPort
        do { port = try SerialPort(c.modem.serial) } catch {
            throw fail("modem: \(error)", code: ExitCode(2))
        }
        var modemLogger = logger
        modemLogger[metadataKey: "device"] = "modem"
        return ModemAlertLink(modem: GSMModem(port: port, outbox: outbox, configuration: c.modem.modem, logger: modemLogger))
    }
}
