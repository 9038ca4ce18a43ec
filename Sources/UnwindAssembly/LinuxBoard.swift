import Logging
import UnwindCore
import UnwindRuntime
import UnwindSeams
import UnwindLinuxHardware
import UnwindModem

extension Board {
    /// The Raspberry Pi: the motor and buttons on libgpiod lines, the SSD1306 on /dev/i2c-N drawn
    /// from its own thread, CLOCK_MONOTONIC deadlines, a CLOCK_REALTIME alarm for reminders.
    /// A `DeviceError` is a start-up message (it names the line or bus and says what to do); a
    /// capture command that does not parse throws its own problem.
    /// A part that cannot be had undoes the ones already taken, in the board's teardown order,
    /// before the error is thrown.
    public static func linux(_ c: DeviceConfiguration, logger: Logger) throws -> Board {
        var taken: [() -> Void] = []
        var complete = false
        defer { if !complete { for undo in taken { undo() } } }
        let clock = LinuxClock()
        let waiter = try PollWaiter()
        let motor = try LinuxMotorLine(c.gpio.motor, consumer: c.gpio.consumer)
        taken.append(motor.release)
        // From here on the motor line goes low however the process ends (short of SIGKILL).
        try installDriveLowOnExit()
        let buttons = try LinuxButtonLines(configuration: c.gpio)
        taken.append(buttons.release)
        let bus: I2CBus
        var late: LateI2CBus?
        do {
            let opened = try LinuxI2CBus(bus: c.display.bus, address: c.display.address)
            logger.info("display on /dev/i2c-\(c.display.bus) at 0x\(String(c.display.address, radix: 16)) (\(opened.capabilities))")
            bus = opened
        } catch {
            // Exiting would take the panic button with it (systemd restarting into the same
            // failure): the device runs, its display lost, the bus tried again with backoff.
            logger.critical("display: \(error); running without the display (PANIC and the motor work), trying the bus again")
            let waiting = LateI2CBus(bus: c.display.bus, address: c.display.address)
            late = waiting
            bus = waiting
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
        let panel = SSD1306(bus: bus, configuration: panelConfiguration, logger: logger, clock: { clock.now().instant })
        let presenter = ThreadedPresenter(panel: panel, width: c.display.panel.width, height: c.display.panel.height, logger: logger)
        taken.insert(presenter.stop, at: 0)
        let alarm: RealtimeAlarm?
        do { alarm = try RealtimeAlarm() } catch {
            logger.error("reminders are off: \(error)")
            alarm = nil
        }
        var camera: GroundingCamera?
        if let command = c.captureCommand {
            camera = GroundingCamera(command: try CaptureCommand(command), logger: logger, inBackground: true)
        }
        complete = true
        return Board(clock: clock, waiter: waiter, motor: motor, buttons: buttons, presenter: presenter,
                     displayControl: panel,
                     displayHealth: { [late] in
                         if let late, !late.isOpen {
                             return "lost (no /dev/i2c-\(c.display.bus) to reach it on: I²C off, or display.bus wrong; see the journal)"
                         }
                         return panel.isLost ? "lost (the panel does not answer on the bus; see the journal)" : "ok"
                     },
                     alarm: alarm, camera: camera,
                     teardown: taken)
    }
}

/// Why the modem's link could not be opened.
public enum ModemLinkError: Error, CustomStringConvertible {
    case outbox(StoreError)
    case port(DeviceError)

    public var description: String {
        switch self {
        case .outbox(let e): "cannot use the outbox directory: \(e)"
        case .port(let e): "modem: \(e)"
        }
    }
}

extension ModemAlertLink {
    /// The modem link: the outbox lives beside the state files, so an alert asked for before a
    /// crash or a power cut is sent after the restart. A modem that is missing at start is
    /// looked for again with backoff; alerts wait in the outbox meanwhile.
    /// `writer`: the device's writes the outbox on a queue of its own (`OutboxWriter`); the
    /// benchmark also measures it writing at once, as it did before.
    public static func open(stateDirectory: String, serial: SerialConfiguration, modem: ModemConfiguration,
                            logger: Logger, now: Moment,
                            writer: OutboxWriter = .inBackground()) throws(ModemLinkError) -> ModemAlertLink {
        // Whatever is under either name that is not a usable directory (a file, a link, a
        // directory of mode 000) is set aside and a new one made: alerts must go out.
        let suffix = "\(now.wall.secondsSinceEpoch)"
        let outbox: Outbox
        do {
            let opened = try OwnedDirectory.open(Outbox.directoryName, in: stateDirectory, maximumFileSize: 64 * 1024, suffix: suffix)
            if let moved = opened.setAside { logger.error("\(moved) in \(stateDirectory); messages in it are kept there, not sent") }
            // Written on a queue of its own: PANIC's five fsyncs never hold up a frame, and the
            // modem still waits for each before any AT command for that alert (`OutboxWriter`).
            outbox = Outbox(storage: opened.store, now: now.wall, writer: writer)
        } catch {
            // Exiting would leave the person with no panic path at all (systemd would restart
            // it into the same failure): alerts are journaled in memory instead, and sent.
            logger.critical("cannot use \(stateDirectory)/\(Outbox.directoryName) (\(error)); alerts are kept in memory only: they are sent, but one not yet sent is lost if the device restarts")
            outbox = Outbox(storage: MemoryStore(), now: now.wall)
        }
        // Received messages: written here before the SIM lets go of them (see `Inbox`). Without
        // it alerts still go out; replies then stay on the SIM.
        var inbox: Inbox?
        do {
            let opened = try OwnedDirectory.open(Inbox.directoryName, in: stateDirectory, maximumFileSize: 256 * 1024, suffix: suffix)
            if let moved = opened.setAside { logger.error("\(moved) in \(stateDirectory); replies in it are kept there") }
            inbox = Inbox(storage: opened.store, now: now.wall)
        } catch {
            logger.error("replies: cannot use \(stateDirectory)/\(Inbox.directoryName) (\(error)); received messages stay on the SIM")
        }
        let port: SerialPort
        do { port = try SerialPort(serial) } catch { throw .port(error) }
        var modemLogger = logger
        modemLogger[metadataKey: "device"] = "modem"
        return ModemAlertLink(modem: GSMModem(port: port, outbox: outbox, inbox: inbox, configuration: modem, logger: modemLogger))
    }
}
