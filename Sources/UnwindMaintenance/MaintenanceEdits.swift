#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import UnwindCore
import UnwindModem

/// The rules of the maintainer's edits, shared by the two places they are carried out — the
/// running device (`DeviceLoop`'s control handler) and a command editing the files itself when
/// no device runs (`OfflineState`) — so both accept and refuse exactly the same input, with
/// the same words.
public enum MaintenanceEdits {
    public static let testPrefix = "[TEST] "

    /// Slot numbers are 1 to 5; returns the 0-based index.
    public static func slotIndex(_ slot: Int) throws(ControlFailure) -> Int {
        guard (1...AlertSlotFile.slotCount).contains(slot) else {
            throw .input("slot \(slot): there is no such slot; slots are numbered 1 to \(AlertSlotFile.slotCount)")
        }
        return slot - 1
    }

    /// The slot's alert after changing the given fields. Fields are checked in file order
    /// (name, number, message) and the first that breaks a rule is named with the rule.
    public static func mergedAlert(_ current: AlertSlotState, slot: Int, name: String?, number: String?,
                                   message: String?) throws(ControlFailure) -> AlertSlot {
        if name == nil && number == nil && message == nil {
            throw .input("nothing to change: give --name, --number and/or --message")
        }
        let existing = current.alert
        guard let n = name ?? existing?.name, let num = number ?? existing?.number.text, let m = message ?? existing?.message else {
            let missing = [name == nil ? "--name" : nil, number == nil ? "--number" : nil, message == nil ? "--message" : nil]
                .compactMap { $0 }.joined(separator: ", ")
            let why = if case .needsAttention = current { "needs attention (its file is not valid)" } else { "is empty" }
            throw .input("slot \(slot) \(why): give all of --name, --number and --message (missing: \(missing))")
        }
        do {
            return try AlertSlot(name: n, number: num, message: m)
        } catch {
            throw .input(error.description)
        }
    }

    /// A name or a message as a command was given it: in NFC, and refused (exit 2) by the rules
    /// the device applies when it saves the slot, so nothing is sent that the device would
    /// refuse and both say it in the same words.
    public static func alertText(_ text: String?, _ field: AlertField) throws(ControlFailure) -> String? {
        guard let text else { return nil }
        let normalized = TextSafety.nfc(text)
        do {
            switch field {
            case .name: try AlertSlot.validateName(normalized)
            case .message: try AlertSlot.validateMessage(normalized)
            case .number: _ = try PhoneNumber(normalized)
            }
        } catch {
            throw .input(error.description)
        }
        return normalized
    }

    /// The alert `unwind alerts test` sends: the slot's, its message marked "[TEST] ".
    public static func testAlert(_ alert: AlertSlot, slot: Int) throws(ControlFailure) -> AlertSlot {
        let message = testPrefix + alert.message
        do {
            return try AlertSlot(name: alert.name, number: alert.number, message: message)
        } catch {
            // The limit it really hit (the characters, or the parts an SMS may be split into).
            throw .failed("slot \(slot): marked \"\(testPrefix)\" the message does not fit — \(error); a test needs room for the \(testPrefix.count) characters of the mark")
        }
    }

    public static func report(slot: Int, _ a: AlertSlot) -> AlertReport {
        AlertReport(slot: slot, name: a.name, number: a.number.text, message: a.message, encoding: a.encoding.description)
    }

    /// A new mantra for a list of `count`: the same checks as the device's (1–160 printable
    /// characters the display can draw, no surrounding space, at most 1000 mantras). `text`
    /// is expected in NFC (`mantraText`): "e" and a combining accent is a character the
    /// display cannot draw, "é" is one it can.
    public static func checkMantra(_ text: String, count: Int) throws(ControlFailure) {
        if let p = MantrasFile.problem(with: text) { throw .input("mantra: \(p)") }
        if count >= MantrasFile.maximumCount { throw .input("mantra: the list already has \(count) mantras; at most \(MantrasFile.maximumCount)") }
    }

    /// A mantra as a command or the control socket gave it, in the form it is checked and stored in.
    public static func mantraText(_ text: String) -> String { TextSafety.nfc(text) }

    /// Mantra `number` (1-based) of a list of `count`; returns the 0-based index.
    public static func mantraIndex(_ number: Int, count: Int) throws(ControlFailure) -> Int {
        guard count > 0 else { throw .input("mantra \(number): the list is empty") }
        guard (1...count).contains(number) else {
            throw .input("mantra \(number): there is no such mantra; the list has \(count) (1 to \(count))")
        }
        return number - 1
    }

    public static func listChanged(_ number: Int, _ items: [String]) -> ControlFailure {
        let now = items.indices.contains(number - 1) ? " (mantra \(number) is now \"\(items[number - 1])\")" : ""
        return .failed("the list changed on the device while the command ran\(now); nothing deleted — run 'unwind mantras list' and try again")
    }

    public static func reminder(_ line: String) throws(ControlFailure) -> ReminderSchedule {
        let s: ReminderSchedule
        do { s = try RemindersFile.parse(line: line) } catch {
            if case .malformed(let why) = error { throw .input("reminder \"\(line)\": \(why)") }
            throw .input("reminder \"\(line)\": \(error)")
        }
        if let p = s.problem { throw .input("reminder \"\(line)\": \(p)") }
        return s
    }

    // MARK: Setup import

    /// The files a setup import replaces as one change — the contacts' slots and the screen's
    /// result (`setupResult.txt`) — each alert checked as the device saves it.
    public static func setupImport(_ alerts: [ImportedAlert], screen: [String]) throws(ControlFailure)
        -> (alerts: [(slot: Int, alert: AlertSlot)], files: [(name: String, bytes: [UInt8])]) {
        var checked: [(slot: Int, alert: AlertSlot)] = []
        for a in alerts {
            _ = try slotIndex(a.slot)
            do { checked.append((a.slot, try AlertSlot(name: a.name, number: a.number, message: a.message))) } catch {
                throw .input("contact \(a.slot): \(error.description)")
            }
        }
        let files = checked.map { (name: AlertSlotFile.name(slot: $0.slot), bytes: Array(AlertSlotFile.format($0.alert).utf8)) }
            + [(name: SetupResultFile.name, bytes: Array(SetupResultFile.format(screen).utf8))]
        return (checked, files)
    }

    public static func importedMessage(_ alerts: [(slot: Int, alert: AlertSlot)]) -> String {
        alerts.isEmpty ? "the setup's result saved for the screen"
            : "slot\(alerts.count == 1 ? "" : "s") \(alerts.map { "\($0.slot)" }.joined(separator: ", ")) and the setup's result for the screen saved as one change"
    }

    // MARK: Restore

    /// The state an archive holds, every file parsed by the parser the device loads it with.
    public struct RestorableState: Sendable {
        public var totals: BreathingTotals
        public var history: [SessionRecord]
        public var mantras: [String]
        public var reminder: ReminderSchedule
        /// The five slot files' bytes (an empty file: an empty slot), each valid.
        public var alertFiles: [[UInt8]]
        public var alertSlots: [AlertSlotState]
        /// Outbox messages in the archive: checked, never restored (an old alert is never sent
        /// again from a backup).
        public var outboxMessages: Int
        /// The maintainer's patterns and the person's breathing choice, when the archive has them
        /// (nil: an archive from before them; the device keeps its own). An empty `breathing.txt`
        /// is `.some(nil)`: nothing chosen.
        public var patterns: [BreathingPreset]?
        public var choice: BreathingChoice??
        /// The help state, when the archive has it (nil: from before it; the device keeps its
        /// own). `.some(nil)`: the file was empty. The check-in's grace period and a ladder under
        /// way are never restored: they belong to their moment (a restore never sends or rings).
        public var checkIn: CheckInRecord??
        public var alertTest: AlertTestRecord??
        public var escalation: EscalationRecord??
        /// "How am I doing?"'s files the archive has (nil each: the device keeps its own).
        public var selfCheck = SelfCheckRestore()
        /// The archive's replies (`replies/`), each read by the inbox's own parser; taken into
        /// the device's inbox by `Inbox.adopt`'s rule, never replacing what it holds.
        public var replies: [StoredReply] = []

        /// The bytes a restore writes for `name`: the archive's, except that `checkIn.txt` keeps
        /// the device's own grace period (`grace`) and `escalation.txt` is ended (never rung).
        public func bytes(of name: String, archive: [String: [UInt8]], grace: CheckInGrace?) -> [UInt8]? {
            switch name {
            case CheckInFile.name: checkIn.map { Array(CheckInFile.format($0, grace: grace).utf8) }
            case EscalationFile.name: escalation.map { Array(EscalationFile.format($0?.restored).utf8) }
            default: archive[name]
            }
        }
    }

    public static func restorable(_ files: [String: [UInt8]]) throws(ControlFailure) -> RestorableState {
        func file(_ name: String) throws(ControlFailure) -> [UInt8] {
            guard let b = files[name] else { throw .input("the archive has no \(name)") }
            return b
        }
        func wrap<T>(_ name: String, _ body: () throws -> T) throws(ControlFailure) -> T { try parsed(name, body) }
        for name in files.keys where !StateArchive.isKnown(name) { throw .input("the archive holds \(name), not a state file") }
        let totals = try wrap(TotalTimeFile.name) { try TotalTimeFile.parse(try file(TotalTimeFile.name)) }
        let history = try wrap(SessionHistoryFile.name) { try SessionHistoryFile.parse(try file(SessionHistoryFile.name)) }
        // The parser keeps the newest `capacity` of a longer file (the device's own tolerance),
        // but the archive's bytes are what is restored: a longer file is not one the device wrote.
        let sessions = try file(SessionHistoryFile.name).split(separator: UInt8(ascii: "\n")).count
        if sessions > SessionHistoryFile.capacity {
            throw .input("the archive's \(SessionHistoryFile.name) is not valid: \(sessions) sessions; at most \(SessionHistoryFile.capacity)")
        }
        let mantras = try wrap(MantrasFile.name) { try MantrasFile.parse(try file(MantrasFile.name)) }
        let reminder = try wrap(RemindersFile.name) { () throws -> ReminderSchedule in
            let s = try RemindersFile.parse(try file(RemindersFile.name))
            if let p = s.problem { throw RemindersFile.Problem.malformed(p) }
            return s
        }
        var alertFiles: [[UInt8]] = []
        var slots: [AlertSlotState] = []
        for name in AlertSlotFile.names {
            let bytes = try file(name)
            let slot = try wrap(name) { try AlertSlotFile.parse(bytes) }
            alertFiles.append(bytes)
            slots.append(slot.map(AlertSlotState.ready) ?? .empty)
        }
        var outbox = 0
        for name in files.keys.sorted() where name.hasPrefix(StateArchive.outboxPrefix) {
            let id = MessageID(String(name.dropFirst(StateArchive.outboxPrefix.count).dropLast(Outbox.fileExtension.count)))
            _ = try wrap(name) { try Outbox.parse(files[name]!, id: id) }
            outbox += 1
        }
        var patterns: [BreathingPreset]?
        if let b = files[PatternsFile.name] { patterns = try wrap(PatternsFile.name) { try PatternsFile.parse(b) } }
        var choice: BreathingChoice??
        if let b = files[BreathingChoiceFile.name] {
            choice = .some(try wrap(BreathingChoiceFile.name) { () throws -> BreathingChoice? in b.isEmpty ? nil : try BreathingChoiceFile.parse(b) })
        }
        var checkIn: CheckInRecord??, alertTest: AlertTestRecord??, escalation: EscalationRecord??
        if let b = files[CheckInFile.name] { checkIn = .some(try wrap(CheckInFile.name) { try CheckInFile.parse(b) }) }
        if let b = files[AlertTestFile.name] { alertTest = .some(try wrap(AlertTestFile.name) { try AlertTestFile.parse(b) }) }
        if let b = files[EscalationFile.name] { escalation = .some(try wrap(EscalationFile.name) { try EscalationFile.parse(b) }) }
        var state = RestorableState(totals: totals, history: history, mantras: mantras, reminder: reminder,
                                    alertFiles: alertFiles, alertSlots: slots, outboxMessages: outbox,
                                    patterns: patterns, choice: choice, checkIn: checkIn, alertTest: alertTest, escalation: escalation)
        state.replies = try restorableReplies(files)
        state.selfCheck = try restorableSelfCheck(files)
        return state
    }

    /// Every `replies/<id>.reply` of an archive, read as the device reads its inbox: one that is
    /// too large or does not parse refuses the whole archive (the names were checked by
    /// `StateArchive.isKnown`; a name twice cannot be, as members or as dictionary keys).
    static func restorableReplies(_ files: [String: [UInt8]]) throws(ControlFailure) -> [StoredReply] {
        var replies: [StoredReply] = []
        for name in files.keys.sorted() where name.hasPrefix(StateArchive.repliesPrefix) {
            guard let id = StateArchive.replyID(name), let bytes = files[name] else { throw .input("the archive holds \(name), not a state file") }
            if bytes.count > Inbox.maximumReplyFile {
                throw .input("the archive's \(name) is not valid: \(bytes.count) bytes; a reply file has at most \(Inbox.maximumReplyFile)")
            }
            do { replies.append(try Inbox.readReply(bytes, id: id)) } catch {
                throw .input("the archive's \(name) is not valid: \(error)")
            }
        }
        if replies.count > Inbox.maximumReplies {
            throw .input("the archive holds \(replies.count) replies; the inbox keeps at most \(Inbox.maximumReplies)")
        }
        return replies
    }

    /// An archive's file read by the device's own parser; its problem said of the archive.
    static func parsed<T>(_ name: String, _ body: () throws -> T) throws(ControlFailure) -> T {
        do { return try body() } catch {
            let text = "\(error)"
            throw .input("the archive's \(name) is not valid: " + (text.hasPrefix(name) ? text.dropFirst(name.count).trimming { $0 == " " || $0 == ":" } : text))
        }
    }

    /// The archive's self-checks, moods, cards and reminder, each read by the parser the device
    /// loads it with. A list longer than the device keeps is not one it wrote.
    static func restorableSelfCheck(_ files: [String: [UInt8]]) throws(ControlFailure) -> SelfCheckRestore {
        var r = SelfCheckRestore()
        for (name, capacity) in [(SelfChecksFile.name, SelfChecksFile.capacity), (MoodsFile.name, MoodsFile.capacity)] {
            let lines = files[name]?.split(separator: UInt8(ascii: "\n")).count ?? 0
            if lines > capacity { throw .input("the archive's \(name) is not valid: \(lines) lines; at most \(capacity)") }
        }
        if let b = files[SelfChecksFile.name] { r.results = try parsed(SelfChecksFile.name) { try SelfChecksFile.parse(b) } }
        if let b = files[MoodsFile.name] { r.moods = try parsed(MoodsFile.name) { try MoodsFile.parse(b) } }
        if let b = files[CopingCardsFile.name] { r.cards = try parsed(CopingCardsFile.name) { try CopingCardsFile.parse(b) } }
        if let b = files[SelfCheckReminderFile.name] {
            r.reminder = try parsed(SelfCheckReminderFile.name) { try SelfCheckReminderFile.parse(b) }
        }
        return r
    }

    public static func restoredMessage(_ r: RestorableState) -> String {
        var s = "restored: \(r.totals.count) sessions, \(r.mantras.count) mantras, reminder \(RemindersFile.line(r.reminder)), "
            + "\(r.alertSlots.filter { $0.alert != nil }.count) alert slots set"
        if let p = r.patterns { s += ", \(p.count) breathing pattern\(p.count == 1 ? "" : "s") of your own" }
        if !r.replies.isEmpty { s += ", \(r.replies.count) repl\(r.replies.count == 1 ? "y" : "ies") in the archive" }
        if r.outboxMessages > 0 {
            s += "; \(r.outboxMessages) unsent message(s) in the archive's outbox were checked but not restored (an old alert is never sent again)"
        }
        return s
    }
}
