#if canImport(Glibc)
import Glibc
#endif
import UnwindCore
import UnwindSeams

/// Names a message in the outbox (its file is `<id>.msg`).
public struct MessageID: Hashable, Sendable, Comparable, CustomStringConvertible {
    public let rawValue: String
    public init(_ rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }
    public static func < (a: MessageID, b: MessageID) -> Bool { a.rawValue < b.rawValue }
}

/// One failed attempt, as the outbox remembers it.
public struct OutboxAttempt: Equatable, Sendable {
    public var at: WallTime
    public var problem: String
    public init(at: WallTime, problem: String) {
        self.at = at
        self.problem = problem
    }
}

/// A message that was asked for and has not been confirmed sent.
public struct OutboxEntry: Equatable, Sendable {
    public let id: MessageID
    public var created: WallTime
    /// Order of asking: lower goes first.
    public var sequence: Int
    /// The panic page's slot it came from (1–5), if any.
    public var slot: Int?
    public var alert: AlertSlot
    /// The concatenation reference, kept so a resent part joins the same message.
    public var reference: UInt16
    /// Parts confirmed by `+CMGS` (a multipart message continues where it stopped).
    public var partsSent: Int
    public var attempts: Int
    /// Set when the message will not be retried (an unassigned number) until someone asks.
    public var failure: String?
    /// The latest failed attempts, oldest first (at most `Outbox.historyLimit`).
    public var history: [OutboxAttempt]
    /// Why it goes out: an alert (`.panic`, `.checkIn`) or a follow-up (`.allClear`, `.test`).
    public var purpose: AlertPurpose = .panic
    /// Each accepted part's TP-MR (`+CMGS: <mr>`), by part: its status report names it.
    public var references: [Int?] = []
    /// Set once every part was accepted: the message now waits for its status reports.
    public var sentAt: WallTime?
    /// The latest TP-ST each part's status report gave, by part.
    public var reports: [Int?] = []

    public init(id: MessageID, created: WallTime, sequence: Int, slot: Int?, alert: AlertSlot, reference: UInt16,
                partsSent: Int = 0, attempts: Int = 0, failure: String? = nil, history: [OutboxAttempt] = [],
                purpose: AlertPurpose = .panic) {
        self.purpose = purpose
        self.id = id
        self.created = created
        self.sequence = sequence
        self.slot = slot
        self.alert = alert
        self.reference = reference
        self.partsSent = partsSent
        self.attempts = attempts
        self.failure = failure
        self.history = history
    }
}

/// Every alert that was asked for, one file per message, written (and fsynced) before any AT
/// traffic for it, kept with its failure history until every part got `+CMGS` — and then,
/// while status reports can come, until they settle it (delivered, failed, or no report in
/// `ModemTimeouts.reports`) — and read back after a restart, so nothing asked for is ever
/// silently lost and a report that comes after a restart still finds its message.
///
/// File format (`<id>.msg`, UTF-8, one field per line, in this order):
///
///     unwind-outbox 1
///     created <unix seconds>
///     sequence <n>
///     slot <1–5 or ->
///     name <contact name>
///     number <+digits>
///     reference <0–65535>
///     parts-sent <n>
///     attempts <n>
///     purpose <panic|check-in|all-clear|test>  (absent in older files: panic)
///     references <mr or -> …                  (each part's +CMGS reference, once one was accepted)
///     sent <unix seconds>                      (every part accepted; waiting for status reports)
///     reports <TP-ST in hex or -> …           (each part's latest status report, once one came)
///     failure <why it is not retried>          (only when so)
///     message <the message>
///     attempt <unix seconds> <what went wrong>  (zero or more, oldest first)
///
/// Name, number and message are validated again on reading, exactly as at save time, so a
/// hand-edited outbox file cannot put a control character anywhere near the modem.
public final class Outbox {
    public static let fileExtension = ".msg"
    /// Its directory, inside the state directory.
    public static let directoryName = "outbox"
    /// Far beyond any real count of alerts; a file claiming more is not an outbox file.
    public static let maximumSequence = 1 << 40
    public static let historyLimit = 20

    public let storage: ListableStore
    /// Where the files are written (see `OutboxWriter`): `add`, `save` and `remove` change the
    /// entries at once and, on the device, the card a moment later.
    public let writer: OutboxWriter
    public private(set) var entries: [OutboxEntry] = []
    /// Files that could not be read (moved aside as `<name>.corrupt-<time>`), for the status.
    public private(set) var problems: [String] = []
    private var nextSequence = 1

    /// Reads every message file in `storage`.
    public init(storage: ListableStore, now: WallTime = WallTime(secondsSinceEpoch: 0), writer: OutboxWriter = .atOnce) {
        self.storage = storage
        self.writer = writer
        reload(now: now)
    }

    /// Reads the files again (what a restarted daemon sees).
    public func reload(now: WallTime) {
        writer.flush()
        entries.removeAll()
        // A journal planted in the outbox directory and set aside when it was opened.
        problems = storage.recoveryProblems
        let names: [String]
        do { names = try storage.names() } catch {
            problems.append("cannot list the outbox: \(error)")
            return
        }
        for name in names.sorted() where name.hasSuffix(Self.fileExtension) {
            let id = MessageID(String(name.dropLast(Self.fileExtension.count)))
            do {
                guard let bytes = try storage.read(name) else { continue }
                entries.append(try Self.parse(bytes, id: id))
            } catch let e as OutboxFileProblem {
                let moved = (try? storage.quarantine(name, suffix: "\(now.secondsSinceEpoch)")) ?? name
                problems.append("\(name): \(e) (kept as \(moved))")
            } catch {
                problems.append("\(name): \(error)")
            }
        }
        entries.sort { ($0.sequence, $0.id) < ($1.sequence, $1.id) }
        nextSequence = min((entries.map(\.sequence).max() ?? 0) + 1, Outbox.maximumSequence)
    }

    public func entry(_ id: MessageID) -> OutboxEntry? { entries.first { $0.id == id } }

    /// An entry numbered like the others but never written nor kept: a maintainer's test message,
    /// which must not outlive its own wait (a restart would send it again, for days).
    /// `kind` begins its id: `test`, or `text` for a STATUS answer or a maintainer's text.
    public func transient(_ alert: AlertSlot, at created: WallTime, reference: UInt16, nonce: UInt16,
                          kind: String = "test") -> OutboxEntry {
        let seq = nextSequence
        nextSequence = min(nextSequence + 1, Outbox.maximumSequence)
        var hex = String(nonce, radix: 16)
        while hex.count < 4 { hex = "0" + hex }
        return OutboxEntry(id: MessageID("\(kind)-\(created.secondsSinceEpoch)-\(seq)-\(hex)"), created: created, sequence: seq,
                           slot: nil, alert: alert, reference: reference)
    }

    /// Adds a message and writes its file: durable on return, or (a background writer) once
    /// `writer` no longer `isWriting` it. The entry is returned — and kept in memory, so it is
    /// still sent — even when the write failed (`error` says why; a background writer's failure
    /// comes from `writer.collect()`).
    public func add(_ alert: AlertSlot, slot: Int?, at created: WallTime, reference: UInt16,
                    nonce: UInt16, purpose: AlertPurpose = .panic) -> (entry: OutboxEntry, error: StoreError?) {
        let seq = nextSequence
        nextSequence = min(nextSequence + 1, Outbox.maximumSequence)
        var hex = String(nonce, radix: 16)
        while hex.count < 4 { hex = "0" + hex }
        let id = MessageID("alert-\(created.secondsSinceEpoch)-\(seq)-\(hex)")
        // A slot number the file format cannot hold would make the file unreadable after a
        // restart, and the alert lost: such a message is journaled without its slot instead.
        let storedSlot = slot.flatMap { (1...AlertSlotFile.slotCount).contains($0) ? $0 : nil }
        let entry = OutboxEntry(id: id, created: created, sequence: seq, slot: storedSlot, alert: alert, reference: reference,
                                purpose: purpose)
        entries.append(entry)
        do {
            try put(entry, .added)
            return (entry, nil)
        } catch {
            return (entry, error)
        }
    }

    /// The entry's file, written by `writer`: the bytes are made here, on the caller's thread.
    private func put(_ entry: OutboxEntry, _ kind: OutboxWriter.Kind) throws(StoreError) {
        let storage = self.storage, name = Self.fileName(entry.id), bytes = Array(Self.format(entry).utf8)
        try writer.write(entry.id, kind) { () throws(StoreError) in try storage.replace(name, with: bytes) }
    }

    /// Writes a changed entry (progress, attempts, history).
    public func save(_ entry: OutboxEntry) throws(StoreError) {
        var e = entry
        if e.history.count > Self.historyLimit { e.history.removeFirst(e.history.count - Self.historyLimit) }
        if let i = entries.firstIndex(where: { $0.id == e.id }) { entries[i] = e } else { entries.append(e) }
        try put(e, .saved)
    }

    /// Removes a message: after its last `+CMGS`, or when the person or the maintainer cancels it.
    public func remove(_ id: MessageID, cancelled: Bool = false) throws(StoreError) {
        entries.removeAll { $0.id == id }
        let storage = self.storage, name = Self.fileName(id)
        try writer.write(id, cancelled ? .cancelled : .sent) { () throws(StoreError) in try storage.remove(name) }
    }

    public static func fileName(_ id: MessageID) -> String { id.rawValue + fileExtension }

    // MARK: - Format

    public static func format(_ e: OutboxEntry) -> String {
        var s = "unwind-outbox 1\n"
        s += "created \(e.created.secondsSinceEpoch)\n"
        s += "sequence \(e.sequence)\n"
        s += "slot \(e.slot.map(String.init) ?? "-")\n"
        s += "name \(e.alert.name)\n"
        s += "number \(e.alert.number.text)\n"
        s += "reference \(e.reference)\n"
        s += "parts-sent \(e.partsSent)\n"
        s += "attempts \(e.attempts)\n"
        s += "purpose \(e.purpose.rawValue)\n"
        if !e.references.isEmpty { s += "references " + e.references.map { $0.map(String.init) ?? "-" }.joined(separator: " ") + "\n" }
        if let t = e.sentAt { s += "sent \(t.secondsSinceEpoch)\n" }
        if !e.reports.isEmpty {
            s += "reports " + e.reports.map { $0.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) } ?? "-" }.joined(separator: " ") + "\n"
        }
        if let f = e.failure { s += "failure \(oneLine(f))\n" }
        s += "message \(e.alert.message)\n"
        for a in e.history.suffix(historyLimit) { s += "attempt \(a.at.secondsSinceEpoch) \(oneLine(a.problem))\n" }
        return s
    }

    /// Our own texts never hold a line break; this makes sure.
    static func oneLine(_ s: String) -> String {
        String(String.UnicodeScalarView(s.unicodeScalars.map { $0.properties.generalCategory == .control ? " " : $0 }))
    }

    public static func parse(_ bytes: [UInt8], id: MessageID) throws(OutboxFileProblem) -> OutboxEntry {
        guard let text = String(validating: bytes, as: UTF8.self) else { throw .notUTF8 }
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        if lines.last == "" { lines.removeLast() }
        var i = 0
        func field(_ key: String) throws(OutboxFileProblem) -> String {
            guard i < lines.count, lines[i].hasPrefix(key + " ") else { throw .missing(key, line: i + 1) }
            defer { i += 1 }
            return String(lines[i].dropFirst(key.count + 1))
        }
        // Every number has a bound far beyond any real value: the file is outside input (the
        // service user, a damaged card), and the counters are incremented later.
        func number(_ key: String, upTo limit: Int) throws(OutboxFileProblem) -> Int {
            let v = try field(key)
            guard let n = Int(v), n >= 0, n <= limit else { throw .malformed(key, line: i) }
            return n
        }
        guard lines.first == "unwind-outbox 1" else { throw .missing("unwind-outbox 1", line: 1) }
        i = 1
        let created = try number("created", upTo: 1 << 40)
        let sequence = try number("sequence", upTo: Outbox.maximumSequence)
        let slotText = try field("slot")
        let slot: Int?
        if slotText == "-" { slot = nil } else {
            guard let s = Int(slotText), (1...AlertSlotFile.slotCount).contains(s) else { throw .malformed("slot", line: i) }
            slot = s
        }
        let name = try field("name")
        let numberText = try field("number")
        let reference = try number("reference", upTo: 0xFFFF)
        let partsSent = try number("parts-sent", upTo: 255)
        let attempts = try number("attempts", upTo: 1_000_000_000)
        var purpose = AlertPurpose.panic
        if i < lines.count, lines[i].hasPrefix("purpose ") {
            guard let p = AlertPurpose(rawValue: try field("purpose")) else { throw .malformed("purpose", line: i) }
            purpose = p
        }
        // Per-part lists: at most the 255 parts a concatenated message can have.
        func perPart(_ key: String, radix: Int) throws(OutboxFileProblem) -> [Int?] {
            let words = try field(key).split(separator: " ", omittingEmptySubsequences: false)
            guard words.count <= 255 else { throw .malformed(key, line: i) }
            var out: [Int?] = []
            for w in words {
                if w == "-" { out.append(nil); continue }
                guard w.count <= 3, let v = Int(w, radix: radix), (0...255).contains(v) else { throw .malformed(key, line: i) }
                out.append(v)
            }
            return out
        }
        var references: [Int?] = []
        if i < lines.count, lines[i].hasPrefix("references ") { references = try perPart("references", radix: 10) }
        var sentAt: WallTime?
        if i < lines.count, lines[i].hasPrefix("sent ") {
            let t = try number("sent", upTo: 1 << 40)
            sentAt = WallTime(secondsSinceEpoch: Int64(t))
        }
        var reports: [Int?] = []
        if i < lines.count, lines[i].hasPrefix("reports ") { reports = try perPart("reports", radix: 16) }
        var failure: String?
        if i < lines.count, lines[i].hasPrefix("failure ") { failure = try field("failure") }
        let message = try field("message")
        let alert: AlertSlot
        do { alert = try AlertSlot(name: name, number: numberText, message: message) } catch { throw .invalid(error) }
        var history: [OutboxAttempt] = []
        while i < lines.count {
            let rest = try field("attempt")
            let parts = rest.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2, let t = Int64(parts[0]), WallTime.calendarRange.contains(t) else { throw .malformed("attempt", line: i) }
            history.append(OutboxAttempt(at: WallTime(secondsSinceEpoch: t), problem: String(parts[1])))
        }
        var entry = OutboxEntry(id: id, created: WallTime(secondsSinceEpoch: Int64(created)), sequence: sequence, slot: slot,
                                alert: alert, reference: UInt16(reference), partsSent: partsSent, attempts: attempts,
                                failure: failure, history: history, purpose: purpose)
        entry.references = references
        entry.sentAt = sentAt
        entry.reports = reports
        return entry
    }
}

/// Why an outbox file could not be read.
public enum OutboxFileProblem: Error, Equatable, CustomStringConvertible {
    case notUTF8
    case missing(String, line: Int)
    case malformed(String, line: Int)
    case invalid(AlertFieldError)

    public var description: String {
        switch self {
        case .notUTF8: "not UTF-8 text"
        case .missing(let k, let l): "line \(l): \"\(k)\" expected"
        case .malformed(let k, let l): "line \(l): \"\(k)\" is malformed"
        case .invalid(let e): "\(e)"
        }
    }
}
