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
import UnwindLinuxHardware
import UnwindModem

/// `unwind replies`: every SMS the device received, from the inbox on the card — contacts'
/// replies and everybody else's (which the person is never shown).
struct RepliesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replies",
        abstract: "List the text messages the device received (replies from the alert contacts and anyone else).",
        discussion: """
            Read from the inbox in the state directory (replies/), whether or not the device runs; nothing is \
            changed. A sender that matches an alert slot's number (in any form: +1778…, 1778…, 778…) is named. \
            "new" marks a reply the person has not dismissed; a stranger's reply is never shown to the person.
            """)

    @OptionGroup var options: MaintenanceOptions

    @Flag(help: "Print the replies as JSON.")
    var json = false

    struct Entry: Codable {
        var id: String
        var from: String
        /// The alert slot (1-5) whose contact sent it, and the contact's name.
        var slot: Int?
        var contact: String?
        var text: String
        /// Unix seconds: the service centre's time stamp (when readable) and when the device stored it.
        var sent: Int64?
        var received: Int64
        var seen: Bool
        var parts: Int
        var missingParts: Int
    }

    func run() throws {
        let m = try options.maintainer()
        try m.checkStateDirectory()
        let slots = AlertSlotStore.load(from: try StateFiles(m).store)
        let directory = m.stateDirectory + "/" + Inbox.directoryName
        var replies: [StoredReply] = []
        var problems: [String] = []
        // Whatever is under the name, said as it is: a link (dangling, looping or to a real
        // directory) is never followed and never taken for "no messages".
        var info = stat()
        if lstat(directory, &info) != 0 {
            let e = errno
            if e != ENOENT { throw ControlFailure.failed("cannot read the replies in \(directory): \(String(cString: strerror(e)))") }
        } else {
            guard info.st_mode & S_IFMT == S_IFDIR else {
                let what = info.st_mode & S_IFMT == S_IFLNK ? "a symbolic link" : "not a directory"
                throw ControlFailure.failed("cannot read the replies in \(directory): it is \(what), not the device's directory; nothing read from it (the device sets it aside when it starts)")
            }
            let store: DirectoryStore
            do { store = try DirectoryStore(directory: directory) } catch {
                throw ControlFailure.failed("cannot read the replies in \(directory): \(error)")
            }
            let inbox = Inbox(storage: store, setAside: false)
            replies = inbox.replies
            problems = inbox.problems
        }
        // Named exactly as the device's screen would: the same rule and the same numbers.
        let counselling = (try? options.configuration(lenient: true))?.counselling.dialNumber
        let entries = replies.map { r -> Entry in
            let k = AlertSlotState.slot(of: r.reply, in: slots, counselling: counselling)
            return Entry(id: r.id, from: r.from, slot: k.map { $0 + 1 }, contact: k.flatMap { slots[$0].alert?.name }, text: r.text,
                         sent: r.sent?.secondsSinceEpoch, received: r.received.secondsSinceEpoch, seen: r.seen, parts: r.parts,
                         missingParts: r.missingParts)
        }
        if json {
            let e = JSONEncoder()
            e.outputFormatting = [.prettyPrinted, .sortedKeys]
            let text = String(decoding: try e.encode(entries), as: UTF8.self)
            for line in text.split(separator: "\n", omittingEmptySubsequences: false) { say(String(line)) }
        } else if entries.isEmpty {
            say("No text messages received (\(directory)).")
        } else {
            let new = entries.filter { !$0.seen }.count
            say("\(entries.count) text message\(entries.count == 1 ? "" : "s") received, \(new) not dismissed by the person:")
            for e in entries {
                let who = e.contact.map { "\($0), slot \(e.slot ?? 0)" } ?? (e.from.isEmpty ? "unknown sender" : "not a contact")
                let parts = e.missingParts > 0 ? " [\(e.parts - e.missingParts) of \(e.parts) parts came]" : ""
                say("\(localTimeText(e.sent ?? e.received))  \(e.from.isEmpty ? "?" : e.from) (\(who))\(e.seen ? "" : "  new")\(parts)")
                for line in e.text.split(separator: "\n", omittingEmptySubsequences: false) { say("    " + line) }
            }
        }
        for p in problems { writeError("unwind: replies: \(p)") }
    }
}
