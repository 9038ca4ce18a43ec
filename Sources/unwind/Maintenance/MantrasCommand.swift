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

/// `unwind mantras …`: the person's positive affirmations (spec 4.x).
struct MantrasCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mantras",
        abstract: "The person's mantras: list, add, delete, reset to the shipped list.",
        discussion: """
            A mantra is 1 to 160 characters the display can draw (Latin-1), without control characters and \
            without a space at either end; the list holds at most 1000. A new mantra is shown on the device at \
            once. Changes made here and deletions made on the device never undo each other.
            """,
        subcommands: [List.self, Add.self, Delete.self, Reset.self])

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "List the mantras, numbered.")
        @OptionGroup var options: MaintenanceOptions

        func run() throws {
            let m = try options.maintainer()
            let items = try StateFiles(m).mantras()
            var current = 0
            if try m.runningDeviceSocket() != nil, let s = try? m.ask(.status).status { current = s.currentMantra }
            if items.isEmpty { say("no mantras (the device shows \"\(MantraList.emptyMessage)\")") }
            let width = String(items.count).count
            for (i, text) in items.enumerated() {
                let n = String(i + 1)
                say((i + 1 == current ? "* " : "  ") + String(repeating: " ", count: width - n.count) + n + "  " + text)
            }
            if current > 0 { say("(* the one the device shows now)") }
        }
    }

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "add", abstract: "Add a mantra at the end; the device shows it at once.")
        @OptionGroup var options: MaintenanceOptions
        @Argument(help: "The mantra (quote it: unwind mantras add \"I am safe.\").") var text: String

        func run() throws {
            let text = MaintenanceEdits.mantraText(text)
            try MaintenanceEdits.checkMantra(text, count: 0)
            report(try options.maintainer().change(.addMantra(text: text)))
        }
    }

    struct Delete: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "delete",
            abstract: "Delete mantra N (as 'unwind mantras list' numbers them).",
            discussion: "If the list changed on the device meanwhile (the person deleted one), nothing is deleted and you are told.")
        @OptionGroup var options: MaintenanceOptions
        @Argument(help: "The mantra's number.") var number: Int

        func run() throws {
            let m = try options.maintainer()
            let items = try StateFiles(m).mantras()
            let index = try MaintenanceEdits.mantraIndex(number, count: items.count)
            report(try m.change(.deleteMantra(number: number, expected: items[index])))
        }
    }

    struct Reset: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "reset", abstract: "Replace the person's list with the shipped mantras (asks first).")
        @OptionGroup var options: MaintenanceOptions
        @Flag(help: "Do not ask.") var yes = false

        func run() throws {
            let m = try options.maintainer()
            try m.checkStateDirectory()
            try confirm("Replace the person's \(try StateFiles(m).mantras().count) mantras with the shipped list?", yes: yes)
            report(try m.change(.resetMantras))
        }
    }
}

/// `unwind reminders …`: the mantra reminder (spec 4.6).
struct RemindersCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reminders",
        abstract: "The mantra reminder: show it, or set it to never, weekly DAY HH:MM, daily HH:MM or hourly :MM.",
        subcommands: [Show.self, SetReminder.self])

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "show", abstract: "Show the reminder and when it comes next.")
        @OptionGroup var options: MaintenanceOptions

        func run() throws {
            let c = try options.configuration(lenient: options.state != nil)
            let m = try options.maintainer()
            let schedule = try StateFiles(m).reminder()
            say("reminder: \(RemindersFile.line(schedule)) — \(Self.words(schedule))")
            guard schedule != .never else { return }
            if try m.runningDeviceSocket() != nil, let s = try? m.ask(.status).status {
                say(s.nextReminder.map { "next: \(localTimeText($0, zone: c.settings.timeZone)) (\(c.settings.timeZone.name))" }
                    ?? "next: when the device's clock is synchronised")
            } else if let next = schedule.nextDue(after: WallTime(secondsSinceEpoch: Int64(Date().timeIntervalSince1970)),
                                                   in: c.settings.timeZone) {
                say("next: \(localTimeText(next.secondsSinceEpoch, zone: c.settings.timeZone)) (\(c.settings.timeZone.name); the device is not running)")
            }
        }

        static func words(_ s: ReminderSchedule) -> String {
            func two(_ v: Int) -> String { v < 10 ? "0\(v)" : "\(v)" }
            switch s {
            case .never: return "no reminders"
            case .weekly(let d, let h, let m): return "every \(d.name) at \(two(h)):\(two(m))"
            case .daily(let h, let m): return "every day at \(two(h)):\(two(m))"
            case .hourly(let m): return "every hour at \(two(m)) minutes past"
            }
        }
    }

    struct SetReminder: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "set",
            abstract: "Set the reminder: never | weekly DAY HH:MM | daily HH:MM | hourly :MM (local time).",
            discussion: "DAY is mon … sun (or the full name). Examples: 'daily 21:30', 'weekly sun 09:05', 'hourly :15'.")
        @OptionGroup var options: MaintenanceOptions
        @Argument(help: "The schedule's words.") var words: [String] = []

        func run() throws {
            guard !words.isEmpty else {
                throw ControlFailure.input("reminder: expected 'never', 'hourly :MM', 'daily HH:MM' or 'weekly DAY HH:MM'")
            }
            report(try options.maintainer().change(.setReminder(line: Self.normalised(words))))
        }

        /// Lower case, full day names shortened, "9:05" as "09:05", "hourly 15" as "hourly :15":
        /// how a person writes it, in the file's words. Anything else is left for the rules to refuse.
        static func normalised(_ words: [String]) -> String {
            var w = words.map { $0.lowercased() }
            for (i, word) in w.enumerated() {
                if let d = Weekday.allCases.first(where: { $0.name.lowercased() == word }) { w[i] = d.abbreviation }
                let parts = word.split(separator: ":", omittingEmptySubsequences: false)
                if parts.count == 2, parts[0].count == 1, parts[0].allSatisfy(\.isNumber) { w[i] = "0" + word }
            }
            if w.count == 2, w[0] == "hourly", w[1].count <= 2, w[1].allSatisfy(\.isNumber) {
                w[1] = ":" + (w[1].count == 1 ? "0" : "") + w[1]
            }
            return w.joined(separator: " ")
        }
    }
}
