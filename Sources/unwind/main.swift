import ArgumentParser
import Glibc
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Logging
import UnwindAssembly
import UnwindMaintenance
import UnwindSimulatedHardware
import UnwindCore
import UnwindRuntime
import UnwindLinuxHardware
import UnwindModem
import UnwindSimulator
import UnwindSeams

struct Unwind: ParsableCommand {
    // Every command here names itself (`commandName`): without it ArgumentParser derives the
    // name from `String(describing:)` of the command's type, which the Swift runtime answers by
    // scanning all of the executable's protocol conformances, the first time for each type;
    // that costs more than half of the instructions `unwind --version` runs (callgrind).
    static let configuration = CommandConfiguration(
        commandName: "unwind",
        abstract: "Unwind, the bedside haptic breathing companion.",
        discussion: """
            The maintainer's commands (status, screen, alerts, mantras, reminders, stats, modem, hw, backup, \
            restore, config, patterns, progress, cards) work beside the running device: they ask it through its control socket, and edit \
            the state files themselves only when no device runs. Each takes --config, --state and --socket. \
            Exit status: 0 done, 1 could not be done (the device is not running, a file cannot be read, the \
            modem failed …), 2 bad usage or input.
            """,
        // `unwind --version`: the release, as `status --json` reports it and the Debian package
        // is versioned (deploy/debian/changelog's first entry).
        version: UnwindVersion.current,
        subcommands: [Sim.self, Run.self, StatusCommand.self, ScreenCommand.self, AlertsCommand.self, MantrasCommand.self,
                      RemindersCommand.self, StatsCommand.self, ModemCommand.self, RepliesCommand.self, HardwareCommand.self,
                      BackupCommand.self, RestoreCommand.self, ConfigCommand.self, SetupCommand.self,
                      PatternsCommand.self, ProgressCommand.self, CardsCommand.self, VersionCommand.self])

    /// Bare `unwind`. On a board (a device configuration at /etc/unwind/unwind.conf, or the
    /// daemon's state directory /var/lib/unwind) it says what it is, the device's status and the
    /// commands: a maintainer who types it over SSH must not start a simulator beside the real
    /// device. Without a terminal it prints the same overview. Only on a computer that is no
    /// device, in a terminal, does it start the simulator, as `unwind sim` does.
    mutating func run() throws {
        let fm = FileManager.default
        let isDevice = fm.fileExists(atPath: DeviceConfiguration.defaultPath) || fm.fileExists(atPath: DeviceConfiguration().stateDirectory)
        if !isDevice && isatty(STDIN_FILENO) == 1 && isatty(STDOUT_FILENO) == 1 {
            let sim = try Sim.parse([])
            return try sim.run()
        }
        print("""
            Unwind, the bedside haptic breathing companion\(isDevice ? " — this computer is set up as a device" : "").

            Commands (each has --help):
              unwind status                the device at a glance        unwind screen [--watch]   its screen
              unwind alerts list|set|test  the five alert contacts       unwind mantras list|add   the mantras
              unwind reminders show|set    the mantra reminder           unwind stats [--csv]      breathing statistics
              unwind patterns list|add     the breathing patterns        unwind progress [--csv]   self-checks, moods
              unwind cards list|add        the coping cards
              unwind modem check|at        the GSM modem                 unwind hw test …          the hardware
              unwind backup|restore FILE   the state files               unwind config check       the configuration
              unwind setup check|import F  the SD card's setup file
              unwind version               the release (also --version)
              unwind run                   the device itself (systemd runs it: sudo systemctl start unwind)
              unwind sim                   the whole device simulated in a terminal
            """)
        guard isDevice else { return }
        print("Status:")
        do {
            let status = try StatusCommand.parse([])
            try status.run()
        } catch let failure as ControlFailure {
            print("  (\(failure.message))")
        } catch {
            print("  (\(error))")
        }
    }
}

/// `unwind version`: what `unwind --version` prints.
struct VersionCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "version",
        abstract: "Print the release (the Debian package's version, and the one 'unwind status --json' reports).")

    func run() {
        print(UnwindVersion.current)
    }
}

/// Options every way of running the device shares.
struct DeviceOptions: ParsableArguments {
    @Option(name: .customLong("pattern"),
            help: ArgumentHelp("The breathing pattern to start with: a preset (box, calm, 478, sigh, resonance) or seconds of IN,HOLD,OUT,HOLD like 4,7,8,0 (a hold may be 0; IN may be 2+1 for a top-up sip; 'from 11 over 180' after it slows the pace from 11 breaths a minute over 180 s). Default: --config's breathing.*, else the last one chosen, else box.",
                               valueName: "name|lengths"))
    var pattern: String?

    @Option(help: "Length of the short motor pulses (breathe in, hold), in milliseconds (20 to 1000; default: --config's haptics.*, else 120).")
    var pulseMs: Int?

    @Option(help: "A directory of help files and shipped mantras laid out as Sources/UnwindRuntime/Content (default: the ones built into unwind).")
    var content: String?

    /// `base` (a configuration's settings, or the defaults) with what the options say on top.
    func settings(base: DeviceSettings = DeviceSettings()) throws -> DeviceSettings {
        var s = base
        if let pattern {
            do {
                let p = try BreathingConfiguration.pattern(pattern)
                s.pattern = p.pattern
                s.breathing.patternName = p.name
                s.breathing.patternOverridesRemembered = true
            } catch {
                throw ValidationError("--pattern: \(error)")
            }
        }
        if let pulseMs {
            let pulse = Duration.milliseconds(pulseMs)
            s.haptics.inhale = s.haptics.inhale.map { _ in pulse }
            s.haptics.hold = s.haptics.hold.map { _ in pulse }
            if let p = s.haptics.problem { throw ValidationError("--pulse-ms: \(p)") }
        }
        return s
    }
}

struct Sim: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sim",
        abstract: "Run the whole device on this computer with simulated hardware.",
        discussion: """
            Without --headless: draws the OLED in this terminal and maps keys to the buttons.
            With --headless SCRIPT: runs a script of timed presses on simulated time, as fast as
            it can, and writes what crossed each simulated device into --out (the script's and
            the files' formats: Sources/UnwindSimulator/README.md in the source tree).
            """)

    @OptionGroup var device: DeviceOptions

    @Option(help: "Directory for the state files (totalTime.txt, …). Created if missing.")
    var state: String?

    @Option(help: "Run this script of button presses on simulated time, without a terminal.")
    var headless: String?

    @Option(help: "With --headless: where to write motor.log, frames.log, screen.png, summary.txt.")
    var out: String = "sim-out"

    @Flag(help: "With --headless: skip frames.log (2 KB a frame).")
    var noFrames = false

    @Option(help: ArgumentHelp("Drive a real modem on this tty (a USB dongle, a pseudo-terminal) instead of the simulated one.",
                               valueName: "path"))
    var modem: String?

    @Option(help: "With --modem: the line's rate (default: modem.baud of --config, else 115200).")
    var baud: Int?

    @Option(help: ArgumentHelp("A device configuration to try before deploying it: every key that means something without the hardware applies (breathing, haptics, buttons' timing, display contrast and bus speed, screen care, reminders, panic, counselling, the grounding camera; modem keys with --modem). Its paths, GPIO lines, display bus, address, height and rotation do not.",
                               valueName: "file"))
    var config: String?

    @Option(help: ArgumentHelp("The display bus's speed in Hz (10000 to 3400000): the SSD1306 driver holds each frame to 30 ms of it, so at 100000 whole-screen changes are held over several frames, as i2c.log shows (default: --config's display.bus_speed_hz, else 400000).",
                               valueName: "hz"))
    var busSpeed: Int?

    func run() throws {
        let logger = Logger(label: "unwind.sim")
        let configuration = try config.map { try loadConfiguration($0, logger: logger) }
        let settings = try device.settings(base: configuration?.settings ?? DeviceSettings())
        let content = device.content ?? configuration?.contentDirectory
        // The panel's contrast and bus speed; not its rotation (a mounting fix: the terminal
        // would show the picture upside down) nor its height (the simulator has a 128x64 panel).
        var panel = SSD1306.Configuration()
        if let c = configuration?.display.panel {
            panel.contrast = c.contrast
            panel.busSpeedHz = c.busSpeedHz
        }
        if let busSpeed {
            guard (10_000...3_400_000).contains(busSpeed) else { throw ValidationError("--bus-speed takes 10000 to 3400000 Hz") }
            panel.busSpeedHz = busSpeed
        }
        if let headless {
            let text: String
            do { text = String(decoding: try readFile(headless, limit: 1 << 20), as: UTF8.self) } catch {
                throw ValidationError("cannot read the script: \(error.message)")
            }
            let script: ButtonScript
            do { script = try ButtonScript.parse(text) } catch { throw ValidationError("\(headless): \(error)") }
            let stateDir = state ?? out + "/state"
            try makeDirectories(out)
            var sim = HeadlessSimulation(script: script, stateDirectory: stateDir, outputDirectory: out,
                                         settings: settings, contentDirectory: content,
                                         recordFrames: !noFrames, logger: logger)
            sim.panelConfiguration = panel
            if let c = configuration {
                sim.buttonTiming = c.buttonTiming
                sim.counselling = c.counselling
                sim.counsellingWebsite = c.counsellingWebsite
                sim.captureCommand = c.captureCommand
            }
            let clock = ContinuousClock()
            let started = clock.now
            let r = try sim.run()
            let elapsed = (clock.now - started).components
            let took = Double(elapsed.seconds) + Double(elapsed.attoseconds) / 1e18
            say("simulated \(script.end.secondsString) s in \(took.fixed(2)) s: "
                + "\(r.statistics.framesRendered) frames, \(r.statistics.framesMissed) missed, "
                + "\(r.motor.filter(\.on).count) motor pulses, \(r.bus.framesDeferred) frames held over at \(panel.busSpeedHz / 1000) kHz; "
                + "output in \(out)/, state in \(stateDir)/")
        } else {
            let stateDir = state ?? Self.defaultStateDirectory()
            say("Unwind simulator: state in \(stateDir)")
            // Its log goes to sim.log; the latest warnings and errors also to `unwind status`.
            let recent = RecentLog()
            let simLogger = recent.logger(label: "unwind.sim") { EscapingLogHandler(StreamLogHandler.standardError(label: $0)) }
            var simulator = TerminalSimulator(stateDirectory: stateDir, settings: settings,
                                              contentDirectory: content, logger: simLogger)
            simulator.recentLog = recent
            simulator.panelConfiguration = panel
            // Reminders in this computer's local time, unless the configuration names a zone.
            if configuration == nil { simulator.settings.timeZone = .system() }
            if let c = configuration {
                simulator.buttonTiming = c.buttonTiming
                simulator.counselling = c.counselling
                simulator.counsellingWebsite = c.counsellingWebsite
                if modem != nil { simulator.realModem = (c.modem.serial, c.modem.modem) }
            }
            if let modem {
                var serial = simulator.realModem?.serial ?? SerialConfiguration(path: modem)
                serial.path = modem
                if let baud {
                    guard SerialConfiguration.supportedBauds.contains(baud) else {
                        throw ValidationError("--baud \(baud) is not a supported rate; one of \(SerialConfiguration.supportedBauds.map(String.init).joined(separator: ", "))")
                    }
                    serial.baud = baud
                }
                simulator.realModem = (serial, simulator.realModem?.modem ?? ModemConfiguration())
                say("Driving the modem on \(modem) at \(serial.baud) baud")
            } else if baud != nil {
                throw ValidationError("--baud goes with --modem PATH")
            }
            try simulator.run()
            say("Unwind simulator stopped; state kept in \(stateDir)")
        }
    }

    static func defaultStateDirectory() -> String {
        let env = ProcessInfo.processInfo.environment
        let base = env["XDG_STATE_HOME"] ?? ((env["HOME"] ?? ".") + "/.local/state")
        try? FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
        return base + "/unwind-sim"
    }
}

/// `mkdir -p`, failing with the path and the system's reason (not a Foundation error domain).
func makeDirectories(_ path: String) throws {
    var built = path.hasPrefix("/") ? "" : "."
    for part in path.split(separator: "/") {
        built += "/" + part
        if mkdir(built, 0o755) != 0 && errno != EEXIST {
            throw ValidationError("cannot create the directory \(built): \(String(cString: strerror(errno)))")
        }
    }
}

/// Exit status 0 done, 1 failed, 2 bad usage or input — argument-parser's usage errors (64)
/// become 2 — and every error one line on standard error, "unwind: …".
func runUnwind() -> Never {
    do {
        try checkArgumentsAreUTF8()
        var command = try Unwind.parseAsRoot()
        try command.run()
        exit(0)
    } catch let failure as ControlFailure {
        writeError("unwind: " + failure.message)
        exit(failure.code)
    } catch let code as ExitCode {
        exit(code.rawValue)  // the message was printed where the exit was decided
    } catch {
        let code = Unwind.exitCode(for: error)
        if code == .success {
            print(Unwind.fullMessage(for: error))  // --help
            exit(0)
        }
        let message = Unwind.message(for: error).split(separator: "\n").first.map(String.init) ?? "\(error)"
        if code == .validationFailure {
            writeError("unwind: \(message.hasPrefix("Error: ") ? String(message.dropFirst(7)) : message) (see --help)")
            exit(2)
        }
        writeError("unwind: \(message)")
        exit(code.rawValue == 0 ? 1 : code.rawValue)
    }
}

/// Refuses an argument whose bytes are not UTF-8 (exit 2). `CommandLine.arguments` has
/// already replaced such bytes with U+FFFD, so a name or a message typed in a Latin-1
/// terminal would otherwise go out in a text message with "�" where letters were; only the
/// raw argv shows them.
func checkArgumentsAreUTF8() throws(ControlFailure) {
    let argv = CommandLine.unsafeArgv
    for i in 1..<Int(CommandLine.argc) {
        guard let p = argv[i] else { continue }
        let bytes = UnsafeRawBufferPointer(start: p, count: strlen(p))
        guard let offset = TextSafety.firstInvalidUTF8(bytes) else { continue }
        let shown = String(decoding: bytes, as: UTF8.self)
        let previous = CommandLine.arguments[i - 1]
        let isValue = i > 1 && previous.hasPrefix("--") && !previous.contains("=") && !shown.hasPrefix("-")
        let option = isValue ? " (the value of \(previous))" : ""
        throw .input("argument \(i) \"\(shown)\"\(option) is not UTF-8 text: byte \(offset + 1) is 0x\(String(bytes[offset], radix: 16, uppercase: true)); "
                     + "nothing was done — set the terminal or script to UTF-8 (e.g. LANG=C.UTF-8) and type it again")
    }
}

// Log lines carry outside text (file names, a modem's answers): escaped before they reach a terminal.
LoggingSystem.bootstrap { EscapingLogHandler(StreamLogHandler.standardError(label: $0)) }
runUnwind()
