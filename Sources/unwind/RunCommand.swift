import ArgumentParser
import Glibc
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Logging
import Synchronization
import UnwindMaintenance
import UnwindCore
import UnwindRuntime
import UnwindLinuxHardware
import UnwindModem
import UnwindAssembly
import UnwindSeams

/// `unwind run`: the daemon on the board's real GPIO lines and I²C display.
struct Run: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
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
        // First, before any thread: SIGTERM and SIGINT only ever wake the loop's poll.
        let stop: StopOnSignals
        let board: Board
        do {
            stop = try StopOnSignals([SIGTERM, SIGINT])
            board = try Board.linux(c, logger: logger)
        } catch let error as DeviceError {
            throw fail("cannot start: \(error)", code: .failure)
        }
        var recipe = DeviceRecipe(stateDirectory: c.stateDirectory, contentDirectory: c.contentDirectory,
                                  settings: c.settings, socket: socket, writeInBackground: true)
        recipe.counselling = c.counselling
        recipe.website = c.counsellingWebsite
        recipe.buttonTiming = c.buttonTiming
        recipe.displaySize = (c.display.panel.width, c.display.panel.height)
        recipe.recentLog = recentLog
        let device: DeviceAssembly
        do {
            device = try DeviceAssembly(board: board, recipe: recipe, alerts: { now in
                try ModemAlertLink.open(stateDirectory: c.stateDirectory, serial: c.modem.serial, modem: c.modem.modem,
                                        logger: logger, now: now)
            }, participants: [stop], logger: logger)
        } catch {
            if case .alerts(let e) = error, let m = e as? ModemLinkError, case .port = m {
                throw fail(error.description, code: ExitCode(2))
            }
            throw fail(error.description, code: .failure)
        }
        let systemd = SystemdNotifier(environment: ProcessInfo.processInfo.environment)
        logger.info("unwind running; state in \(c.stateDirectory)")
        systemd.notify("READY=1")
        LoopPriority.request(logger: logger)
        // The loop asks this before every pass: a loop that stops turning stops petting the
        // watchdog, and systemd restarts the service.
        device.loop.run(until: {
            systemd.petWatchdog(at: board.clock.now().instant)
            return false
        })
        systemd.notify("STOPPING=1")
        device.finish()
        logger.info("unwind stopped; state saved")
    }
}
