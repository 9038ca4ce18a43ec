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

/// `unwind backup FILE`.
struct BackupCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "backup",
        abstract: "Save the device's state (statistics, mantras, reminder, alert slots, unsent alerts, received replies) to a tar archive.",
        discussion: """
            The archive holds manifest.txt (format version, sizes and CRC-32s), the nine state files, the \
            breathing choice and your own patterns (breathing.txt, patterns.txt), the last check-in, the last \
            monthly test and what followed the last alerts (checkIn.txt, alertTest.txt, escalation.txt) when there \
            are, the \
            outbox's unsent messages and the replies the device received (replies/); 'tar tvf FILE' lists it. A file that is missing is stored as what its \
            absence means (zeros, the shipped mantras, never, an empty slot). Safe while the device runs.
            """)

    @OptionGroup var options: MaintenanceOptions
    @Argument(help: "The archive to write.") var file: String
    @Flag(help: "Replace the file if it exists.") var force = false

    func run() throws {
        let m = try options.maintainer()
        try m.checkStateDirectory()
        if !force && FileManager.default.fileExists(atPath: file) {
            throw ControlFailure.input("\(file) already exists; add --force to replace it")
        }
        let files = try StateBackupReader.read(stateDirectory: m.stateDirectory, contentDirectory: m.contentDirectory)
        let archive = StateArchive.make(files, created: WallTime(secondsSinceEpoch: Int64(Date().timeIntervalSince1970)))
        try writeFile(file, archive, replace: force)
        let outbox = files.keys.filter { $0.hasPrefix(StateArchive.outboxPrefix) }.count
        let replies = files.keys.filter { $0.hasPrefix(StateArchive.repliesPrefix) }.count
        // The archive keeps the bytes as they are (nothing is lost), but a restore checks every
        // file with the device's parsers: say now, not on the day it is needed.
        do { _ = try MaintenanceEdits.restorable(files) } catch {
            writeError("unwind: warning: this backup will not restore as it is: \(error.message); fix that file (unwind alerts/mantras/reminders …) and back up again")
        }
        say("backup of \(m.stateDirectory) written to \(file): \(files.count - outbox - replies) state files, \(outbox) unsent message(s), \(replies) repl\(replies == 1 ? "y" : "ies"), \(archive.count) bytes")
    }
}

/// `unwind restore FILE`.
struct RestoreCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "restore",
        abstract: "Replace the device's state with a backup made by 'unwind backup' (asks first).",
        discussion: """
            Every file in the archive is checked first, with the parsers the device loads them with; a \
            foreign, damaged or truncated archive is refused and nothing is changed. With the device running, \
            it takes the state at once. Unsent messages in the archive are checked but never restored: an old \
            alert is not sent again. Replies are added to the device's own, never replacing them: a reply \
            only the archive has comes back as seen (old news, never shown to the person), one the \
            person dismissed stays dismissed, and replies received since the backup stay.
            """)

    @OptionGroup var options: MaintenanceOptions
    @Argument(help: "The archive to read.") var file: String
    @Flag(help: "Do not ask.") var yes = false

    func run() throws {
        let bytes = try readFile(file, limit: StateArchive.maximumSize)
        let opened: (files: [String: [UInt8]], created: WallTime)
        do { opened = try StateArchive.open(bytes) } catch {
            throw ControlFailure.input("\(file): \(error); nothing changed")
        }
        let state: MaintenanceEdits.RestorableState
        do { state = try MaintenanceEdits.restorable(opened.files) } catch {
            throw ControlFailure.input("\(file): \(error.message); nothing changed")
        }
        let m = try options.maintainer()
        try m.checkStateDirectory()
        try confirm("Replace the state in \(m.stateDirectory) with the backup of \(localTimeText(opened.created.secondsSinceEpoch)) (\(state.totals.count) sessions, \(state.mantras.count) mantras)?", yes: yes)
        do { report(try m.change(.restore(files: opened.files.mapValues { Data($0) }))) } catch {
            // A running device takes one request of at most 1 MB: a very full inbox of long
            // replies does not fit, a stopped device's files have no such limit.
            if error.message.contains("the device takes at most") {
                throw ControlFailure(error.code, error.message + "; nothing changed — stop the device (sudo systemctl stop unwind), restore, and start it again")
            }
            throw error
        }
    }
}
