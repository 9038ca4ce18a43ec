import ArgumentParser
import Glibc
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import UnwindMaintenance
import UnwindCore
import UnwindRuntime

/// `unwind patterns …`: the breathing patterns the page offers — the shipped presets and the
/// maintainer's own (`patterns.txt`).
struct PatternsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "patterns",
        abstract: "The breathing patterns: list them, add your own, remove one.",
        discussion: """
            A pattern is the seconds of breathing in, holding, breathing out and holding, like 4,7,8,0 (tenths \
            allowed, a hold may be 0); the breath in may be followed by a short top-up sip: 2+1,0,6,0; and the pace \
            may start faster and slow down: 4,0,6,0 from 11 over 180 (from 11 breaths a minute to the pattern's own \
            over 180 seconds). The person chooses among them with LEFT/RIGHT on the breathing page; the shipped \
            ones cannot be removed. A name is 1 to 10 lower-case letters, digits, '-' or '.'; at most 20 of your own.
            """,
        subcommands: [List.self, Add.self, Remove.self])

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "List the patterns, the shipped ones first.")
        @OptionGroup var options: MaintenanceOptions

        func run() throws {
            let m = try options.maintainer()
            let files = try StateFiles(m)
            let custom = try OfflineState(stateDirectory: m.stateDirectory, contentDirectory: m.contentDirectory).patterns()
            let chosen = (try? files.bytes(BreathingChoiceFile.name)).flatMap { $0 }.flatMap { try? BreathingChoiceFile.parse($0) }
            let width = (BreathingPreset.builtIn + custom).map(\.name.count).max() ?? 4
            for (title, list) in [("shipped", BreathingPreset.builtIn), ("yours (\(PatternsFile.name))", custom)] {
                say("\(title):")
                if list.isEmpty { say("  none — add one: unwind patterns add NAME 4,2,6,0") }
                for p in list {
                    let mark = p.name == chosen?.pattern ? "* " : "  "
                    say(mark + p.name + String(repeating: " ", count: width - p.name.count) + "  " + p.pattern.text
                        + "  (" + Self.shape(p.pattern) + Self.source(p.name) + ")")
                }
            }
            if let chosen { say("(* the one chosen last on the device, \(SessionLength.label(chosen.minutes)) sessions)") }
        }

        static func shape(_ p: BreathingPattern) -> String {
            let t = p.tenthsPerMinute
            return "\(t / 10).\(t % 10) breaths a minute" + (p.ramp.map { r in ", slowing from \(r.fromTenths / 10)\(r.fromTenths % 10 == 0 ? "" : ".\(r.fromTenths % 10)") over \(r.over.wholeSeconds) s" } ?? "")
        }

        static func source(_ name: String) -> String {
            switch name {
            case "box": "; the spec's square"
            case "calm": "; long exhale, Van Diest 2014; slowing pace as Dodow"
            case "478": "; Weil's 4-7-8"
            case "sigh": "; cyclic sighing, Balban 2023"
            case "resonance": "; resonance breathing, Lehrer"
            default: ""
            }
        }
    }

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "add",
            abstract: "Add a pattern of your own; the device offers it at once.",
            discussion: "Examples: unwind patterns add evening 4,2,8,0 — unwind patterns add slowing 4,0,6,0 from 11 over 180")
        @OptionGroup var options: MaintenanceOptions
        @Argument(help: "Its name, as the breathing page shows it.") var name: String
        @Argument(help: "IN,HOLD,OUT,HOLD seconds (IN may be 2+1), optionally followed by: from RATE over SECONDS.")
        var words: [String] = []

        func run() throws {
            let pattern = words.joined(separator: " ")
            // Checked here first, so a wrong one says so even when no device runs and nothing is written.
            _ = try MaintenanceEdits.newPattern(name: name, words: pattern, existing: BreathingPreset.builtIn)
            report(try options.maintainer().change(.addPattern(name: name, pattern: pattern)))
        }
    }

    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "remove", abstract: "Remove a pattern of your own (a shipped one cannot be).")
        @OptionGroup var options: MaintenanceOptions
        @Argument(help: "Its name.") var name: String

        func run() throws {
            report(try options.maintainer().change(.removePattern(name: name)))
        }
    }
}
