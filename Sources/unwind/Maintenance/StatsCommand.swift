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

/// `unwind stats`: the breathing statistics (spec 2.x, totalTime.txt), the anxiety ratings of
/// the recent sessions, and the history as CSV for a clinician.
struct StatsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stats",
        abstract: "Show the breathing statistics, export the session history (--csv), or reset them to zero (--reset, asks first).",
        discussion: """
            --csv writes one line per recent session (the last \(SessionHistoryFile.capacity)) to standard output: \
            start (ISO 8601 in the configured time zone), start_unix, seconds, pattern, anxiety_before, anxiety_after \
            (0-10, empty when not given) and change (after minus before). A running session is in it as of its last \
            checkpoint (at most a minute old).
            """)

    @OptionGroup var options: MaintenanceOptions
    @Flag(help: "Reset the totals and the session history to zero.") var reset = false
    @Flag(help: "With --reset: do not ask.") var yes = false
    @Flag(help: "Print the session history as CSV (to save: unwind stats --csv > sessions.csv).") var csv = false

    func validate() throws {
        if yes && !reset { throw ValidationError("--yes goes with --reset") }
        if csv && reset { throw ValidationError("--csv and --reset do not go together") }
    }

    func run() throws {
        let m = try options.maintainer()
        if reset {
            try m.checkStateDirectory()
            try confirm("Reset every breathing statistic (sessions, total, shortest, longest) to zero?", yes: yes)
            report(try m.change(.resetStatistics))
            return
        }
        if csv {
            let zone = try options.configuration(lenient: options.state != nil).settings.timeZone
            print(Self.csv(try StateFiles(m).history(), zone: zone), terminator: "")
            return
        }
        var totals: BreathingTotals
        var live = ""
        if try m.runningDeviceSocket() != nil, let s = try m.ask(.status).status {
            totals = BreathingTotals(totalSeconds: s.totalSeconds, shortestSeconds: s.shortestSeconds,
                                     longestSeconds: s.longestSeconds, count: s.sessions)
            if s.session.hasPrefix("running") { live = " (the session running now included)" }
        } else {
            totals = try StateFiles(m).totals()
        }
        let history = (try? StateFiles(m).history()) ?? []
        say("Sessions: \(totals.count)\(live)")
        say("Total:    \(clockText(totals.totalSeconds))")
        say("Shortest: \(clockText(totals.shortestSeconds))")
        say("Longest:  \(clockText(totals.longestSeconds))")
        say("Average:  \(clockText(totals.averageSeconds))")
        if let last = history.last {
            say("Last:     \(clockText(last.seconds)) on \(localTimeText(last.started.secondsSinceEpoch))\(last.pattern.map { ", \($0)" } ?? "") (\(history.count) recent sessions kept)")
        }
        for line in Self.ratings(history) { say(line) }
    }

    /// The anxiety ratings: the averages, and a small chart of the last rated sessions, one line
    /// each, the change drawn as one mark a point (▼ calmer, ▲ more anxious).
    static func ratings(_ history: [SessionRecord], last: Int = 10) -> [String] {
        let s = RatingSummary(history)
        guard s.sessions > 0 else { return [] }
        func tenths(_ t: Int) -> String { "\(t / 10).\(abs(t) % 10)" }
        var out = ["", "Anxiety, 0-10 (\(s.sessions) of the \(history.count) recent sessions rated before and after):",
                   "  before \(tenths(s.averageBeforeTenths)) → after \(tenths(s.averageAfterTenths)) on average: "
                   + "\(RatingSummary.signed(s.averageChangeTenths)) (\(s.averageChangeTenths < 0 ? "calmer" : s.averageChangeTenths > 0 ? "more anxious" : "no change"))"]
        let rated = history.filter { $0.change != nil }.suffix(last)
        let width = rated.map { ($0.pattern ?? "-").count }.max() ?? 1
        for r in rated {
            guard let b = r.before, let a = r.after else { continue }
            let name = r.pattern ?? "-"
            let change = a - b
            let bar = String(repeating: change < 0 ? "▼" : "▲", count: abs(change))
            out.append("  \(localTimeText(r.started.secondsSinceEpoch))  \(name)\(String(repeating: " ", count: width - name.count))  "
                       + "\(b < 10 ? " " : "")\(b) → \(a)\(a < 10 ? " " : "")  \(change > 0 ? "+" : "")\(change) \(bar)")
        }
        return out
    }

    static func csv(_ history: [SessionRecord], zone: LocalTimeZone) -> String {
        var out = "start,start_unix,seconds,pattern,anxiety_before,anxiety_after,change\n"
        for r in history {
            let start = internetTimeText(r.started.secondsSinceEpoch, zone: zone)
            out += "\(start),\(r.started.secondsSinceEpoch),\(r.seconds),\(r.pattern ?? ""),"
                + "\(r.before.map(String.init) ?? ""),\(r.after.map(String.init) ?? ""),\(r.change.map(String.init) ?? "")\n"
        }
        return out
    }
}
