import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import UnwindMaintenance
import UnwindCore

/// `unwind progress`: "How am I doing?" for the maintainer — the self-checks and moods kept, the
/// export for a clinician (`--csv`), and the weekly self-check reminder. This is the one way any
/// of it leaves the device: nothing of it is in `unwind status`, the STATUS answers or the
/// maintainer's texts.
struct ProgressCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "progress",
        abstract: "The person's self-checks and moods (--csv: the export for a clinician), and the weekly self-check reminder.",
        subcommands: [Show.self, Reminder.self],
        defaultSubcommand: Show.self)

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "show",
            abstract: "The self-checks and moods kept, or --csv for a clinician.",
            discussion: """
                --csv writes one line per self-check and per day's mood, oldest first, to standard output: taken (ISO 8601 \
                in the configured time zone; a mood: its day), taken_unix (empty for a mood), instrument (GAD-7, PHQ-9, \
                GAD-2, PHQ-2, or mood for the diary's 1-5), item1 … item9 (each item's answer, 0-3; a mood: its rating in \
                item1), total, band (the instrument's published band; a mood: its words). To save it: \
                unwind progress --csv > progress.csv
                """)
        @OptionGroup var options: MaintenanceOptions
        @Flag(help: "Print every self-check and mood as CSV.") var csv = false

        func run() throws {
            let m = try options.maintainer()
            let zone = try options.configuration(lenient: options.state != nil).settings.timeZone
            let files = try StateFiles(m)
            let results = try files.selfChecks(), moods = try files.moods()
            if csv { return print(ProgressCommand.csv(results, moods, zone: zone), terminator: "") }
            for line in ProgressCommand.summary(results, moods, cards: (try? files.cards().count) ?? 0,
                                                reminder: try files.selfCheckReminder(), zone: zone) { say(line) }
        }
    }

    struct Reminder: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "reminder",
            abstract: "Show the weekly self-check reminder, or set it: never | weekly DAY HH:MM (local time).",
            discussion: "Examples: 'unwind progress reminder', 'unwind progress reminder weekly sun 18:00', 'unwind progress reminder never'.")
        @OptionGroup var options: MaintenanceOptions
        @Argument(help: "The schedule's words; none: show it.") var words: [String] = []

        func run() throws {
            let m = try options.maintainer()
            guard !words.isEmpty else {
                let s = try StateFiles(m).selfCheckReminder()
                return say("self-check reminder: \(RemindersFile.line(s)) — \(RemindersCommand.Show.words(s))")
            }
            report(try m.change(.setSelfCheckReminder(line: RemindersCommand.SetReminder.normalised(words))))
        }
    }

    /// The self-checks and moods in people's words: each instrument's count and newest result,
    /// the moods of the last two weeks, the cards, the reminder.
    static func summary(_ results: [SelfCheckResult], _ moods: [MoodEntry], cards: Int, reminder: ReminderSchedule,
                        zone: LocalTimeZone) -> [String] {
        var out = ["Self-checks kept: \(results.count)"]
        for i in Instrument.allCases {
            let of = results.filter { $0.instrument == i }
            guard let last = of.last else { continue }
            out.append("  \(i.name) (\(i.topic)): \(of.count), the last \(last.total) of \(i.maximumTotal), \(last.band.words), "
                       + "on \(localTimeText(last.taken.secondsSinceEpoch, zone: zone))")
        }
        out.append("Moods kept: \(moods.count) days")
        if let last = moods.last {
            let recent = moods.filter { $0.day > last.day - 14 }
            out.append("  the last 14 days to \(CivilDate.text(ofDay: last.day)): " + recent.map { String($0.mood) }.joined(separator: " "))
        }
        out.append("Coping cards: \(cards)")
        out.append("Weekly self-check reminder: \(RemindersFile.line(reminder))")
        out.append("(a self-check, not a diagnosis; unwind progress --csv exports every answer)")
        return out
    }

    static func csv(_ results: [SelfCheckResult], _ moods: [MoodEntry], zone: LocalTimeZone) -> String {
        var rows: [(key: Int64, line: String)] = []
        let items = Instrument.phq9.itemCount
        // A day's mood first, then that day's checks.
        for e in moods {
            let start = e.day * 86_400 - zone.offset(at: e.day * 86_400)
            let blanks = String(repeating: ",", count: items - 1)
            rows.append((start, "\(CivilDate.text(ofDay: e.day)),,mood,\(e.mood)\(blanks),\(e.mood),\(MoodEntry.words(e.mood))"))
        }
        for r in results {
            let answers = (0..<items).map { $0 < r.answers.count ? String(r.answers[$0]) : "" }
            let t = r.taken.secondsSinceEpoch
            rows.append((t, "\(internetTimeText(t, zone: zone)),\(t),\(r.instrument.name),\(answers.joined(separator: ",")),\(r.total),\(r.band.words)"))
        }
        var out = "taken,taken_unix,instrument," + (1...items).map { "item\($0)" }.joined(separator: ",") + ",total,band\n"
        for r in rows.enumerated().sorted(by: { ($0.element.key, $0.offset) < ($1.element.key, $1.offset) }) { out += r.element.line + "\n" }
        return out
    }
}
