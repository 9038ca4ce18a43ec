import ArgumentParser
import Glibc
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import UnwindAssembly
import UnwindMaintenance
import UnwindCore
import UnwindRuntime
import UnwindModem

/// `unwind modem …`: the GSM modem, through the daemon (only it owns the modem's tty).
struct ModemCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "modem",
        abstract: "The GSM modem, through the running device: run the start-up checks, or one AT command.",
        subcommands: [Check.self, AT.self])

    struct Check: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "check",
            abstract: "Run the modem's start-up sequence again and report each step (SIM, registration, signal, operator).",
            discussion: "The steps run between the device's own work; an alert waiting to go is always sent first.")
        @OptionGroup var options: MaintenanceOptions

        func run() throws {
            let r = try options.maintainer().ask(.modemCheck, timeout: .seconds(60), acceptingFailure: true)
            let steps = r.steps ?? []
            let width = max(10, (steps.map(\.command.count).max() ?? 0) + 2)
            for s in steps {
                let pad = String(repeating: " ", count: max(1, width - s.command.count))
                say("\(s.ok ? "ok  " : "FAIL") \(s.command)\(pad)\(s.outcome)" + (s.lines.isEmpty ? "" : "   " + s.lines.joined(separator: " | ")))
            }
            if let m = r.status?.modem {
                say("modem: \(m.link); SIM \(m.sim); \(m.registration); signal \(m.signal)" + (m.operatorName.map { "; operator \($0)" } ?? ""))
            }
            if let f = r.failure { throw f }
        }
    }

    struct AT: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "at",
            abstract: "Send one AT command to the modem (for technicians) and print its answer.",
            discussion: """
                Through the running device, between its own work (an alert that is due always goes first). \
                Refused, so that nothing is sent, stored or dialled by mistake and the device's own conversation \
                with the modem is not broken: +CMGS, +CMGW, +CMSS, +CMGC; basic commands other than AT, ATI and \
                AT&V (ATD, ATA, ATZ, ATV0 …); A/; +CFUN=, power-down, +IPR=, +ICF=, +IFC=, +CMEE=; anything \
                with a control character, a space, a quote or a ";". Examples: AT+CSQ, AT+CREG?, AT+COPS?, ATI.
                """)
        @OptionGroup var options: MaintenanceOptions
        @Argument(help: "The command, e.g. AT+CSQ, AT+CREG?, ATI.") var command: String

        func run() throws {
            do { _ = try TechnicianCommand(command) } catch { throw ControlFailure.input(error.reason) }
            let r = try options.maintainer().ask(.modemCommand(command), timeout: .seconds(30), acceptingFailure: true)
            for s in r.steps ?? [] {
                for line in s.lines { say(line) }
                say(s.outcome)
            }
            if let f = r.failure { throw f }
        }
    }
}

/// `unwind config check`.
struct ConfigCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "config",
        abstract: "The configuration file.",
        subcommands: [Check.self])

    struct Check: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "check",
            abstract: "Check the configuration file and say exactly what is wrong (every wrong key, one per line).")
        @OptionGroup var options: MaintenanceOptions

        func run() throws {
            let config = options.config ?? DeviceConfiguration.defaultPath
            let loaded: DeviceConfiguration?
            do { loaded = try ConfigurationFile.load(config) } catch {
                for line in error.lines { writeError("unwind: " + line) }
                throw ExitCode(error.exitCode)
            }
            guard let c = loaded else {
                if config == DeviceConfiguration.defaultPath {
                    say("no configuration file at \(config): every default of the reference build applies")
                    return
                }
                throw ControlFailure.failed("cannot read \(config): no such file")
            }
            say("\(config) is valid")
            say("  state directory: \(c.stateDirectory)")
            say("  display:         /dev/i2c-\(c.display.bus) at 0x\(String(c.display.address, radix: 16)), \(c.display.panel.width)x\(c.display.panel.height)")
            say("  motor:           \(c.gpio.motor)")
            say("  modem:           \(c.modem.serial.path) at \(c.modem.serial.baud) baud")
            let p = c.settings.pattern
            say("  breathing:       \(c.settings.breathing.patternName.map { "\($0) (\(p.text))" } ?? p.text), sessions \(SessionLength.label(c.settings.breathing.sessionMinutes))\(c.settings.breathing.checkIn ? ", check-in before and after" : "")")
            say("  time zone:       \(c.settings.timeZone.name)")
        }
    }
}
