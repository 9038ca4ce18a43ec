#if canImport(Glibc)
import Glibc
#endif
import ArgumentParser
import CLinuxSystem
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import UnwindMaintenance
import UnwindCore
import UnwindRuntime
import UnwindLinuxHardware
import UnwindModem
import UnwindRender

/// `unwind status`: the device at a glance.
struct StatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show whether the device runs, its page and session, display, modem, outbox and recent errors.",
        discussion: """
            With the device running, everything comes from it. When it is not running, what the state files \
            hold is shown, the first line says NOT RUNNING, and the exit status is 1. Reaching a running \
            device needs membership of the maintainer group that owns its socket's directory (/run/unwind); \
            see 'unwind --help'.
            """)

    @OptionGroup var options: MaintenanceOptions

    @Flag(help: "Print the device's report as JSON (only while it runs).")
    var json = false

    @Option(help: ArgumentHelp("The system update's record an imaged card keeps (none on a plain install).",
                               valueName: "file"))
    var updateRecord = SystemUpdateRecord.defaultPath

    func run() throws {
        let m = try options.maintainer()
        guard try m.runningDeviceSocket() != nil else {
            if json { throw ControlFailure.failed("the device is not running on \(m.stateDirectory)") }
            try printFromFiles(m)
            throw ControlFailure.failed("the device is not running (start it: sudo systemctl start unwind)")
        }
        let r = try m.ask(.status)
        guard let s = r.status else { throw ControlFailure.failed("the device sent no status") }
        let update = SystemUpdateRecord.read(updateRecord)
        if json {
            let e = JSONEncoder()
            e.outputFormatting = [.prettyPrinted, .sortedKeys]
            // JSONEncoder escapes C0 inside strings and writes raw line feeds only between
            // members: escaping line by line turns what is left (DEL, C1, bidi controls) into
            // JSON's own \u escapes, so the output still decodes to the device's text.
            let report = ReportWithUpdate(report: s, update: update, setAside: Self.keptAside(m.stateDirectory))
            let json = String(decoding: try e.encode(report), as: UTF8.self)
            for line in json.split(separator: "\n", omittingEmptySubsequences: false) { say(String(line)) }
            return
        }
        // The wall clock may have been set since the start: a start "later than now" is said so.
        let (up, overflow) = s.now.subtractingReportingOverflow(s.startedAt)
        let upText = overflow || up < 0 ? "up since \(localTimeText(s.startedAt)) by a clock since set back"
            : "up \(up >= 3600 ? "\(up / 3600) h \(up / 60 % 60) min" : "\(up / 60) min \(up % 60) s")"
        say("Device:    running (pid \(s.pid), \(upText)), state in \(s.stateDirectory)")
        sayIfInMemory(s.stateDirectory)
        if let update { say("Update:    \(update)") }
        say("Screen:    \(s.page) page\(s.overlay == "none" ? "" : ", showing \(s.overlay)"); display \(s.display)"
            + (s.displayHealth.map { ", panel \($0)" } ?? ""))
        say("Session:   \(s.session)")
        if let b = s.breathing { say("Pattern:   \(b)") }
        say("Breathing: \(s.sessions) session\(s.sessions == 1 ? "" : "s"), total \(clockText(s.totalSeconds)) (shortest \(clockText(s.shortestSeconds)), longest \(clockText(s.longestSeconds)))")
        say("Mantras:   \(s.mantraCount)" + (s.currentMantra > 0 ? " (showing number \(s.currentMantra))" : ""))
        say("Reminder:  \(s.reminder)" + (s.reminder == "never" ? ""
            : s.nextReminder.map { "; next \(localTimeText($0))" } ?? "; waiting for the clock to be synchronised"))
        say("Alerts:    " + s.alertSlots.enumerated().map { "\($0.offset + 1) \($0.element)" }.joined(separator: " · "))
        if let h = s.help { sayHelp(h, now: s.now) }
        if let modem = s.modem {
            say("Modem:     \(modem.link) on \(modem.port); SIM \(modem.sim); \(modem.registration); signal \(modem.signal)"
                + (modem.operatorName.map { "; operator \($0)" } ?? ""))
            if let p = modem.lastProblem { say("           last problem: \(p)") }
            if let c = modem.serviceCentre { say("           message centre: \(c)") }
            if modem.call != "none" { say("           call: \(modem.call)") }
        } else {
            say("Modem:     none (a simulation with scripted alerts)")
        }
        say("Outbox:    \(s.outboxPending) pending, \(s.outboxFailed) failed")
        for msg in s.messages where msg.state != "sent" {
            say("           \(msg.id) to \(msg.contact): \(msg.state), \(msg.attempts) attempt(s)")
        }
        say("Loop:      \(s.framesRendered) frames, \(s.framesMissed) missed, \(s.loopErrors) errors")
        if s.recentErrors.isEmpty {
            say("Recent errors: none")
        } else {
            say("Recent errors:")
            for e in s.recentErrors { say("  \(e)") }
        }
        sayKeptAside(m.stateDirectory)
    }

    /// A state directory in memory (an imaged card whose data partition is missing or did not
    /// mount gets a tmpfs in its place): everything looks normal until the next restart forgets it.
    private func sayIfInMemory(_ stateDirectory: String) {
        guard Self.isInMemory(stateDirectory) else { return }
        say("           the state is in memory (tmpfs), not on the card: nothing set here is kept after a restart")
    }

    /// statfs(2)'s file system type (sys/vfs.h, through CLinuxSystem) is TMPFS_MAGIC or RAMFS_MAGIC.
    static func isInMemory(_ path: String) -> Bool {
        var info = statfs()
        guard statfs(path, &info) == 0 else { return false }
        return [0x0102_1994, 0x8584_58F6].contains(Int(info.f_type))
    }

    /// What the device set aside (a state file it could not use, an outbox that was a link …):
    /// kept until the maintainer looks, so said every time, not only while it is a recent error.
    private func sayKeptAside(_ stateDirectory: String) {
        let kept = Self.keptAside(stateDirectory)
        guard !kept.isEmpty else { return }
        say("Set aside: \(kept.count) item\(kept.count == 1 ? "" : "s") the device could not use, kept for inspection in \(stateDirectory):")
        for k in kept.prefix(20) { say("  \(k)") }
        if kept.count > 20 { say("  … and \(kept.count - 20) more") }
    }

    /// The names that end up in the state directory when something is set aside, and in its
    /// outbox and replies directories, where a message or reply the device could not read is set
    /// aside beside the others (an alert left unsent among them), each with what it is; none for a
    /// directory that cannot be listed.
    ///
    /// The outbox comes first: an alert left unsent is what the maintainer must not miss when the
    /// list is cut short. A link in place of either directory is not followed (lstat(2)): it is
    /// the device's to set aside, and it may lead anywhere.
    static func keptAside(_ stateDirectory: String) -> [String] {
        [Outbox.directoryName, Inbox.directoryName].flatMap { name in
            var info = stat()
            guard lstat(stateDirectory + "/" + name, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else { return [String]() }
            return keptAside(in: stateDirectory + "/" + name, shownAs: name + "/")
        } + keptAside(in: stateDirectory, shownAs: "")
    }

    private static func keptAside(in directory: String, shownAs prefix: String) -> [String] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return [] }
        return names.filter { $0.contains(".corrupt-") }.sorted().map { name in
            var info = stat()
            guard lstat(directory + "/" + name, &info) == 0 else { return prefix + name }
            let kind = switch info.st_mode & S_IFMT {
            case S_IFREG: "file, \(info.st_size) bytes"
            case S_IFDIR: "directory"
            case S_IFLNK: "symbolic link"
            case S_IFIFO: "FIFO"
            default: "special file"
            }
            return "\(prefix)\(name) (\(kind))"
        }
    }

    /// What followed the last alerts, as the person's screen shows it; then readiness and the checks.
    private func sayHelp(_ h: StatusReport.Help, now: Int64) {
        say("Readiness: \(h.readiness)" + (h.readinessProblems.isEmpty ? "" : ": " + h.readinessProblems.joined(separator: "; "))
            + (h.readinessSince.map { " (since \(momentText($0, now: now)))" } ?? ""))
        for p in h.problems ?? [] { say("Problem:   \(p.words) (\(p.name), since \(momentText(p.since, now: now)))") }
        if let why = h.alertsFor {
            func line(_ c: StatusReport.Contact) -> String {
                "\(c.slot) \(c.name) \(c.state)" + (c.detail.map { " (\($0))" } ?? "") + (c.acknowledged ? ", replied" : "")
            }
            say("Last alerts (\(why)): " + h.contacts.map(line).joined(separator: " · "))
            if h.repliesShown > 0 { say("           \(h.repliesShown) repl\(h.repliesShown == 1 ? "y" : "ies") on the screen, not yet dismissed") }
            for r in h.replies ?? [] { say("           " + r.line) }
            say("           calls: \(h.escalation)")
            for c in h.calls { say("           rang \(c)") }
            if !h.allClear.isEmpty { say("           \"I'm OK now\": " + h.allClear.map(line).joined(separator: " · ")) }
        }
        if h.alertsFor == nil { for r in h.replies ?? [] { say("Reply:     " + r.line) } }
        say("Check-in:  \(h.checkIn)")
        say("Monthly test: \(h.monthlyTest)")
        // Times in seconds since 1970, as the rest of the status gives them.
        if let r = h.statusRequests, !r.isEmpty { say("STATUS by SMS: " + r.suffix(5).joined(separator: " · ")) }
        if let t = h.textsSent, !t.isEmpty { say("Texts sent:  " + t.suffix(5).joined(separator: " · ")) }
    }

    private func printFromFiles(_ m: MaintenanceAccess) throws {
        let f = try StateFiles(m)
        say("Device:    NOT RUNNING; the state files in \(m.stateDirectory) say:")
        sayIfInMemory(m.stateDirectory)
        if let update = SystemUpdateRecord.read(updateRecord) { say("Update:    \(update)") }
        do {
            let t = try f.totals()
            say("Breathing: \(t.count) session\(t.count == 1 ? "" : "s"), total \(clockText(t.totalSeconds)) (shortest \(clockText(t.shortestSeconds)), longest \(clockText(t.longestSeconds)))")
        } catch { say("Breathing: \(error)") }
        do { say("Mantras:   \(try f.mantras().count)") } catch { say("Mantras:   \(error)") }
        do { say("Reminder:  \(RemindersFile.line(try f.reminder()))") } catch { say("Reminder:  \(error)") }
        var slots: [String] = []
        for n in 1...AlertSlotFile.slotCount {
            switch try f.slot(n) {
            case .empty: slots.append("\(n) empty")
            case .ready(let a): slots.append("\(n) \(a.name) \(a.number.text)")
            case .needsAttention(let p): slots.append("\(n) needs attention: \(p)")
            }
        }
        say("Alerts:    " + slots.joined(separator: " · "))
        say("Outbox:    " + Self.outboxSummary(m.stateDirectory + "/outbox"))
        sayKeptAside(m.stateDirectory)
    }

    /// What the outbox's files say, read without changing anything: a message stays there after
    /// the network took it, while it waits for its delivery report, so a file is not "waiting
    /// to be sent" unless its journal says so.
    static func outboxSummary(_ path: String) -> String {
        var info = stat()
        guard lstat(path, &info) == 0 else { return "empty" }
        guard info.st_mode & S_IFMT == S_IFDIR, let store = try? DirectoryStore.outbox(at: path),
              let names = try? store.names() else { return "outbox is not a directory that can be read; nothing read from it" }
        var toSend = 0, awaitingReport = 0, notRetried = 0, unreadable = 0
        for name in names where name.hasSuffix(Outbox.fileExtension) {
            let id = MessageID(String(name.dropLast(Outbox.fileExtension.count)))
            guard let bytes = try? store.read(name), let entry = try? Outbox.parse(bytes, id: id) else {
                unreadable += 1
                continue
            }
            if entry.failure != nil { notRetried += 1 } else if entry.sentAt != nil { awaitingReport += 1 } else { toSend += 1 }
        }
        var parts: [String] = []
        if toSend > 0 { parts.append("\(toSend) waiting to be sent when the device starts") }
        if awaitingReport > 0 { parts.append("\(awaitingReport) sent, waiting for a delivery report") }
        if notRetried > 0 { parts.append("\(notRetried) failed, not retried (the device says why in unwind status once it runs)") }
        if unreadable > 0 { parts.append("\(unreadable) unreadable (set aside when the device starts)") }
        return parts.isEmpty ? "empty" : parts.joined(separator: "; ")
    }
}

/// The device's report with the card's update record beside its keys ("update", only when there
/// is a record): the maintainer's scripts read one object.
private struct ReportWithUpdate: Encodable {
    let report: StatusReport
    let update: String?
    /// What "Set aside" lists in the text (all of it, where the text shows 20), when there is any.
    let setAside: [String]

    private enum Key: String, CodingKey { case update, setAside }

    func encode(to encoder: any Encoder) throws {
        try report.encode(to: encoder)
        var c = encoder.container(keyedBy: Key.self)
        if let update { try c.encode(update, forKey: .update) }
        if !setAside.isEmpty { try c.encode(setAside, forKey: .setAside) }
    }
}

/// `unwind screen`: what the device shows, in the terminal or as a PNG.
struct ScreenCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "screen",
        abstract: "Draw the device's current screen in the terminal (--watch to follow it), or save it with --png.")

    @OptionGroup var options: MaintenanceOptions

    @Flag(help: "Follow the screen live until Ctrl-C.")
    var watch = false

    @Option(help: ArgumentHelp("Save the screen as a PNG (4x, white on black) to this file.", valueName: "file"))
    var png: String?

    @Flag(help: "With --png: replace the file if it exists.")
    var force = false

    @Option(help: ArgumentHelp("With --watch: stop after this many seconds.", valueName: "seconds"), transform: plainSeconds)
    var seconds: Double?

    func validate() throws {
        if let seconds, !(seconds > 0 && seconds <= 86_400) { throw ValidationError("--seconds takes 0 to 86400 seconds") }
        if png != nil && watch { throw ValidationError("--png saves one screen; it does not go with --watch") }
        if let png, png.isEmpty { throw ValidationError("--png needs a file name") }
    }

    func run() throws {
        let m = try options.maintainer()
        guard let path = try m.runningDeviceSocket() else {
            throw ControlFailure.failed("the device is not running on \(m.stateDirectory); there is no screen to show")
        }
        if !watch {
            let r = try m.ask(.screen)
            guard let s = r.screen else { throw ControlFailure.failed("the device sent no screen") }
            let fb = try framebuffer(s)
            if let png {
                try writeFile(png, PNGImage.encode(fb), replace: force)
                say("screen saved to \(png) (\(s.page) page\(s.asleep ? ", display asleep: dark" : ""))")
            } else {
                print(TextArt.halfBlocks(fb), terminator: "")
                say(caption(s))
            }
            return
        }
        let client = try ControlClient(path: path)
        defer { client.close() }
        let tty = isatty(STDOUT_FILENO) == 1
        let clock = ContinuousClock()
        let end = seconds.map { clock.now + .milliseconds(Int64($0 * 1000)) }
        var last: Data?
        // Fitted to the terminal as the simulator is (an SSH window is often 80x24); the size is
        // measured every poll, so a resized window is redrawn within 200 ms.
        var layout = TerminalLayout.measure(STDOUT_FILENO)
        if tty { print("\u{1B}[2J", terminator: "") }
        while end.map({ clock.now < $0 }) ?? true {
            let r = try client.send(.screen)
            if let f = r.failure { throw f }
            guard let s = r.screen else { throw ControlFailure.failed("the device sent no screen") }
            let size = tty ? TerminalLayout.measure(STDOUT_FILENO) : layout
            if s.bytes != last || size != layout {
                if size != layout { print("\u{1B}[2J", terminator: "") }
                last = s.bytes
                layout = size
                let fb = try framebuffer(s)
                if tty {
                    var text = ""
                    layout.compose(fb, required: [TextSafety.escaped(caption(s)) + "  (Ctrl-C stops)"], optional: [], into: &text)
                    print(text, terminator: "")
                } else {
                    print(TextArt.halfBlocks(fb) + TextSafety.escaped(caption(s)))
                }
                fflush(nil)
            }
            usleep(200_000)
        }
    }

    func framebuffer(_ s: ScreenReport) throws(ControlFailure) -> Framebuffer {
        guard s.width > 0, s.height > 0, s.height % 8 == 0, s.bytes.count == s.width * s.height / 8 else {
            throw .failed("the device sent a screen of the wrong size")
        }
        var fb = Framebuffer(width: s.width, height: s.height)
        fb.bytes = [UInt8](s.bytes)
        return fb
    }

    func caption(_ s: ScreenReport) -> String {
        s.asleep ? "\(s.page) page — the display is asleep (dark until a button is pressed)" : "\(s.page) page"
    }
}
