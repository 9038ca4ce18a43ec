import ArgumentParser
import CLinuxSystem
import Glibc
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SystemPackage
import UnwindAssembly
import UnwindMaintenance
import UnwindCore
import UnwindSeams
import UnwindRuntime
import UnwindLinuxHardware

/// Where a maintainer's command finds the device: every maintenance command takes these.
struct MaintenanceOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The configuration file (a missing file means every default).", valueName: "file"))
    var config: String?

    @Option(help: ArgumentHelp("The state directory (default: the configuration's state_directory, /var/lib/unwind).",
                               valueName: "dir"))
    var state: String?

    @Option(help: ArgumentHelp("The device's control socket (default: the one the running device announced in <state>/.daemon).",
                               valueName: "path"))
    var socket: String?

    /// The configuration, or every default when the file is missing. A file that does not
    /// parse fails the command (exit 2), unless `lenient` (then the defaults are used: a
    /// command given --state does not need the file).
    func configuration(lenient: Bool = false) throws(ControlFailure) -> DeviceConfiguration {
        let path = config ?? DeviceConfiguration.defaultPath
        let loaded: DeviceConfiguration?
        do { loaded = try ConfigurationFile.load(path) } catch {
            if lenient { return DeviceConfiguration() }
            if case .invalid = error { throw .input(error.description + "; run 'unwind config check'") }
            throw ControlFailure(error.exitCode, error.description)
        }
        guard let loaded else {
            if config != nil && !lenient { throw .failed("cannot read the configuration \(path): no such file") }
            return DeviceConfiguration()
        }
        return loaded
    }

    func maintainer() throws(ControlFailure) -> MaintenanceAccess {
        let c = try configuration(lenient: state != nil)
        return MaintenanceAccess(stateDirectory: state ?? c.stateDirectory, socket: socket, contentDirectory: c.contentDirectory)
    }
}

// MARK: - Output

/// What a command prints after a change: the device's words, and how the change was made.
func report(_ result: (response: ControlResponse, viaDevice: Bool)) {
    if let m = result.response.message { say(m) }
    if !result.viaDevice { say("(the device is not running: the files were changed directly; it reads them when it starts)") }
}

/// One line on standard output. Everything a command prints goes through here or
/// `writeError`: names, messages, the modem's answers, file contents and whatever the control
/// socket sent are outside text, and `TextSafety.escaped` keeps their escape sequences, bidi
/// controls and line breaks from acting on the maintainer's terminal.
func say(_ line: String, terminator: String = "\n") {
    print(TextSafety.escaped(line), terminator: terminator)
}

/// One line on standard error, escaped as `say` does.
func writeError(_ line: String) {
    var text = TextSafety.escaped(line) + "\n"
    text.withUTF8 { bytes in
        // A standard error that takes nothing more has nowhere to be told so: the rest is dropped.
        try? writingAll(UnsafeRawBufferPointer(bytes)) { Glibc.write(2, $0.baseAddress, $0.count) }
    }
}

/// A number of seconds as a person types one: digits, at most one decimal point. Swift's
/// Double(_:) would also take "1e3", "0x10", "inf" and "nan", which nobody means as a duration.
func plainSeconds(_ text: String) throws -> Double {
    let parts = text.split(separator: ".", omittingEmptySubsequences: false)
    guard !text.isEmpty, parts.count <= 2, parts.allSatisfy({ $0.allSatisfy { $0.isASCII && $0.isNumber } }),
          !(parts.first ?? "").isEmpty, parts.count == 1 || !parts[1].isEmpty, let value = Double(text) else {
        throw ValidationError("--seconds takes a plain number of seconds, like 10 or 2.5, not \"\(text)\"")
    }
    return value
}

/// mm:ss, or h:mm:ss from an hour.
func clockText(_ seconds: Int64) -> String {
    let h = seconds / 3600, m = seconds / 60 % 60, s = seconds % 60
    func two(_ v: Int64) -> String { v < 10 ? "0\(v)" : "\(v)" }
    return h > 0 ? "\(h):\(two(m)):\(two(s))" : "\(two(m)):\(two(s))"
}

/// The board's time zone, read once.
let boardZone = LocalTimeZone.system()

/// "Fri 27 Nov 2026 05:07", in `zone`.
func localTimeText(_ t: Int64, zone: LocalTimeZone = boardZone) -> String {
    let (day, second) = CivilDate.local(t, in: zone)
    let c = CivilDate.civil(ofDay: day)
    func two(_ v: Int64) -> String { v < 10 ? "0\(v)" : "\(v)" }
    return "\(Weekday.of(localDay: day).name.prefix(3)) \(c.day) \(CivilDate.monthAbbreviations[Int(c.month) - 1]) \(c.year) "
        + "\(two(second / 3600)):\(two(second / 60 % 60))"
}

/// How long before `now` the instant `t` was, in people's words: "just now", "40 s ago",
/// "12 min ago", "3 h 5 min ago", "2 days 4 h ago"; a `t` after `now` (the clock was set back
/// since) says so instead of a negative time.
func agoText(_ t: Int64, now: Int64) -> String {
    let (d, overflow) = now.subtractingReportingOverflow(t)
    if overflow || d < 0 { return "later than the clock's now: the clock was set back since" }
    return durationText(d) + " ago"
}

/// A moment in the board's local time and how long ago it was: "Fri 27 Nov 2026 05:07, 3 h ago".
func momentText(_ t: Int64, now: Int64) -> String {
    "\(localTimeText(t)), \(agoText(t, now: now))"
}

/// RFC 3339's internet date-time in `zone`: 2026-11-27T05:07:00Z, 2026-11-26T21:07:00-08:00.
func internetTimeText(_ t: Int64, zone: LocalTimeZone) -> String {
    let (day, second) = CivilDate.local(t, in: zone)
    let offset = zone.offset(at: t)
    func two(_ v: Int64) -> String { v < 10 ? "0\(v)" : "\(v)" }
    let zoneText = offset == 0 ? "Z" : (offset < 0 ? "-" : "+") + two(abs(offset) / 3600) + ":" + two(abs(offset) / 60 % 60)
    return CivilDate.text(ofDay: day) + "T" + two(second / 3600) + ":" + two(second / 60 % 60) + ":" + two(second % 60) + zoneText
}

// MARK: - Files

/// A whole file the maintainer names, with a clear error for each way reading it fails (a
/// FIFO or a device is never opened: see `NamedFile`).
func readFile(_ path: String, limit: Int) throws(ControlFailure) -> [UInt8] {
    do { return try NamedFile.read(path, limit: limit) } catch {
        switch error {
        case .missing: throw .failed("cannot read \(path): No such file or directory")
        case .danglingLink: throw .failed("cannot read \(path): it is a symbolic link to a file that does not exist")
        case .unreadable(let e): throw .failed("cannot read \(path): \(String(cString: strerror(e)))")
        case .notARegularFile(let kind): throw .failed("cannot read \(path): it is \(kind)")
        case .tooLarge(let size): throw .input("\(path) is \(size) bytes; at most \(limit) expected here")
        }
    }
}

/// Writes a new file atomically; refuses to replace an existing one unless `replace`.
///
/// The bytes are written and fsynced into an unnamed file in the target's directory (O_TMPFILE)
/// and only then given a name (linkat through /proc/self/fd): a command interrupted before that
/// (Ctrl-C during the fsync) leaves nothing behind — a backup holds the contacts' numbers, and a
/// forgotten hidden copy of them is a leak. Where the file system has no unnamed files (vfat),
/// a temporary name beside it, removed on failure.
func writeFile(_ path: String, _ bytes: [UInt8], replace: Bool) throws(ControlFailure) {
    if !replace && FileManager.default.fileExists(atPath: path) {
        throw .input("\(path) already exists; add --force to replace it")
    }
    let url = URL(fileURLWithPath: path)
    let directory = url.deletingLastPathComponent().path
    let temporary = directory + "/.\(url.lastPathComponent).tmp-\(getpid())"
    func failure(_ e: Int32) -> ControlFailure { .failed("cannot write \(path): \(String(cString: strerror(e)))") }
    var fd = (try? valueOrErrno { unwind_open_unnamed(directory.isEmpty ? "." : directory, 0o640) }) ?? -1
    let unnamed = fd >= 0
    if !unnamed {
        fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o640)
        if fd < 0 { throw failure(errno) }
    }
    defer { close(fd) }
    // The write's own errno (ENOSPC on a full card), not a generic one.
    let unwritten: Int32? = bytes.withUnsafeBytes { b in
        do throws(Errno) {
            try writingAll(b) { write(fd, $0.baseAddress, $0.count) }
            return fsync(fd) == 0 ? nil : errno
        } catch {
            return error.rawValue
        }
    }
    if let e = unwritten {
        if !unnamed { unlink(temporary) }
        throw failure(e)
    }
    if unnamed {
        let source = "/proc/self/fd/\(fd)"
        if !replace {
            // EEXIST if the name was taken meanwhile: never replaced without --force.
            if linkat(AT_FDCWD, source, AT_FDCWD, path, AT_SYMLINK_FOLLOW) != 0 { throw failure(errno) }
            return
        }
        if linkat(AT_FDCWD, source, AT_FDCWD, temporary, AT_SYMLINK_FOLLOW) != 0 { throw failure(errno) }
    }
    if rename(temporary, path) != 0 {
        let e = errno
        unlink(temporary)
        throw failure(e)
    }
}

/// Asks before something that cannot be undone: `--yes`, or "y" on a terminal. Without a
/// terminal and without --yes, nothing is done (exit 2).
func confirm(_ question: String, yes: Bool) throws(ControlFailure) {
    if yes { return }
    guard isatty(STDIN_FILENO) == 1 else {
        throw .input("\(question.trimming { $0 == "?" }): needs confirmation; add --yes")
    }
    say(question + " [y/N] ", terminator: "")
    fflush(nil)
    let answer = readLine()?.trimmingBlanks.lowercased() ?? ""
    guard answer == "y" || answer == "yes" else { throw .failed("not confirmed; nothing changed") }
}

// MARK: - The state as the files hold it (when the device is not running)

/// Reads the state files the way the device loads them, for the listing commands.
struct StateFiles {
    let store: DirectoryStore
    let contentDirectory: String?

    init(_ m: MaintenanceAccess) throws(ControlFailure) {
        try m.checkStateDirectory()
        do { store = try DirectoryStore(directory: m.stateDirectory) } catch {
            throw .failed("cannot use the state directory \(m.stateDirectory): \(error)")
        }
        contentDirectory = m.contentDirectory
    }

    func bytes(_ name: String) throws(ControlFailure) -> [UInt8]? {
        do { return try store.read(name) } catch { throw .failed("cannot read \(name): \(error)") }
    }

    func mantras() throws(ControlFailure) -> [String] {
        try OfflineState(stateDirectory: store.directory, contentDirectory: contentDirectory).mantras()
    }

    func totals() throws(ControlFailure) -> BreathingTotals {
        guard let b = try bytes(TotalTimeFile.name) else { return .zero }
        do { return try TotalTimeFile.parse(b) } catch {
            throw .failed("\(error) (the device sets it aside and starts from zero when it starts)")
        }
    }

    func history() throws(ControlFailure) -> [SessionRecord] {
        guard let b = try bytes(SessionHistoryFile.name) else { return [] }
        do { return try SessionHistoryFile.parse(b) } catch { throw .failed("\(error)") }
    }

    func reminder() throws(ControlFailure) -> ReminderSchedule {
        guard let b = try bytes(RemindersFile.name) else { return .never }
        do { return try RemindersFile.parse(b) } catch { throw .failed("\(error) (the device sets it aside and uses 'never')") }
    }

    func selfChecks() throws(ControlFailure) -> [SelfCheckResult] {
        guard let b = try bytes(SelfChecksFile.name) else { return [] }
        do { return try SelfChecksFile.parse(b) } catch { throw .failed("\(error) (the device sets it aside and keeps its good lines)") }
    }

    func moods() throws(ControlFailure) -> [MoodEntry] {
        guard let b = try bytes(MoodsFile.name) else { return [] }
        do { return try MoodsFile.parse(b) } catch { throw .failed("\(error) (the device sets it aside and keeps its good lines)") }
    }

    func cards() throws(ControlFailure) -> [CopingCard] {
        try OfflineState(stateDirectory: store.directory, contentDirectory: contentDirectory).copingCards()
    }

    func selfCheckReminder() throws(ControlFailure) -> ReminderSchedule {
        guard let b = try bytes(SelfCheckReminderFile.name) else { return .never }
        do { return try SelfCheckReminderFile.parse(b) } catch { throw .failed("\(error) (the device sets it aside and uses 'never')") }
    }

    func slot(_ n: Int) throws(ControlFailure) -> AlertSlotState {
        AlertSlotState(file: try bytes(AlertSlotFile.name(slot: n)))
    }
}
