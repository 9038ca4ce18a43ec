import UnwindCore
import UnwindSeams

/// A received SMS on the SD card.
public struct StoredReply: Equatable, Sendable {
    /// Stable: the same message read again (after a restart that came before its deletion from
    /// the SIM) gets the same id, and is not stored twice.
    public var id: String
    public var from: String
    /// `from` is an alphanumeric sender's name, never a number (whatever it spells).
    public var fromName = false
    public var text: String
    /// The service centre's time stamp, when it was a real time.
    public var sent: WallTime?
    /// When the device stored it (its own wall clock).
    public var received: WallTime
    /// Order of arrival on this device.
    public var sequence: Int
    /// The person dismissed it (`markRepliesSeen`).
    public var seen: Bool
    public var parts: Int
    /// Parts that never came: the text ends with "…".
    public var missingParts: Int
    /// The concatenation group a long reply was assembled from (a late copy of one of its parts
    /// is then known for what it is).
    public var group: String?

    public var reply: IncomingReply { IncomingReply(id: id, from: from, text: text, sent: sent, fromName: fromName) }
}

/// One part of a long reply, held on the card until the rest comes.
struct HeldPart: Equatable {
    var group: String
    var from: String
    var fromName = false
    var sent: WallTime?
    var alphabet: ReceivedAlphabet
    var reference: Int
    var parts: Int
    var part: Int
    var payload: [UInt8]
    var fingerprint: UInt64
}

/// Every SMS the device received, one small file each in the state directory's `replies/`,
/// written (and fsynced) before the message may leave the SIM; the parts of a long message wait
/// there too, each in its own file, until the message is whole (or its patience is over). The
/// person's "seen" is kept in the reply's file.
///
/// `<id>.reply` (UTF-8, one field a line, in this order):
///
///     unwind-reply 1
///     from <sender: +digits, digits, or a service's name>
///     from-name yes          (only for an alphanumeric sender: a name, never a number)
///     received <unix seconds, the device's clock>
///     sent <unix seconds from the service centre's stamp, or ->
///     sequence <n>
///     seen <yes|no>
///     parts <n>
///     missing <n>            (only when some parts never came)
///     group <key>            (only for a long reply)
///     text <the text; "\" is written "\\" and a line break "\n">
///
/// `<group>-<part>.part`: `unwind-reply-part 1`, then `from` (and `from-name`), `sent`, `alphabet`
/// (gsm7|ucs2|data), `reference`, `parts`, `part`, `fingerprint` (16 hex digits) and `payload`
/// (the part's septets or octets in hex). Every field is validated on reading; a file that fails
/// is set aside as `<name>.corrupt-<time>`.
public final class Inbox {
    /// The inbox's directory in the state directory.
    public static let directoryName = "replies"
    public static let replyExtension = ".reply"
    public static let partExtension = ".part"
    /// Replies kept: beyond it the oldest dismissed go first, then the oldest.
    public static let maximumReplies = 500
    /// Long replies waiting for parts: beyond it the oldest is shown as far as it came.
    public static let maximumGroups = 32

    public let storage: ListableStore
    /// Set here and by a restore (`adopt`).
    public internal(set) var replies: [StoredReply] = []
    public private(set) var problems: [String] = []
    private(set) var held: [HeldPart] = []
    /// When each group's first part was taken (the monotonic clock; after a restart, the first look).
    private var heldSince: [String: Instant] = [:]
    var nextSequence = 1

    /// `setAside`: a file that cannot be read is moved out of the way (the device); a reader
    /// that must change nothing (`unwind replies`) only reports it.
    public init(storage: ListableStore, now: WallTime = WallTime(secondsSinceEpoch: 0), setAside: Bool = true) {
        self.storage = storage
        self.setAside = setAside
        reload(now: now)
    }

    private let setAside: Bool

    public func reload(now: WallTime) {
        replies.removeAll()
        held.removeAll()
        heldSince.removeAll()
        problems = storage.recoveryProblems
        let names: [String]
        do { names = try storage.names() } catch {
            problems.append("cannot list the replies: \(error)")
            return
        }
        for name in names.sorted() where name.hasSuffix(Self.replyExtension) || name.hasSuffix(Self.partExtension) {
            do {
                guard let bytes = try storage.read(name) else { continue }
                if name.hasSuffix(Self.replyExtension) {
                    replies.append(try Self.parseReply(bytes, id: String(name.dropLast(Self.replyExtension.count))))
                } else {
                    held.append(try Self.parsePart(bytes))
                }
            } catch let e as InboxFileProblem {
                guard setAside else {
                    problems.append("\(name): \(e)")
                    continue
                }
                let moved = (try? storage.quarantine(name, suffix: "\(now.secondsSinceEpoch)")) ?? name
                problems.append("\(name): \(e) (kept as \(moved))")
            } catch {
                problems.append("\(name): \(error)")
            }
        }
        replies.sort { ($0.sequence, $0.id) < ($1.sequence, $1.id) }
        nextSequence = min((replies.map(\.sequence).max() ?? 0) + 1, 1 << 40)
        // Parts of a reply already whole (a kill between writing it and removing them): gone now.
        let done = held.filter { p in replies.contains { $0.group == p.group && Self.closeInTime($0.sent, p.sent) } }
        if setAside, !done.isEmpty {
            for p in done { try? storage.remove(Self.partName(p)) }
            held.removeAll { p in done.contains(p) }
        }
    }

    public func reply(_ id: String) -> StoredReply? { replies.first { $0.id == id } }

    /// Replies the person has not dismissed, oldest first.
    public var unseen: [StoredReply] { replies.filter { !$0.seen } }

    /// Long replies waiting for parts.
    public var waitingParts: Int { held.count }

    // MARK: Taking messages

    /// Puts a received message on the card, durable on return. Returns the replies it completes:
    /// itself, or a long reply whose last part it was (none while parts are missing, or when it
    /// was already stored). Throws when the card refused: the message must stay on the SIM.
    public func accept(_ m: SMSDeliver, at wall: WallTime, instant: Instant) throws(StoreError) -> [StoredReply] {
        let id = Self.replyID(m.fingerprint)
        let name = m.sender.kind == .alphanumeric
        guard let c = m.concatenation else {
            if reply(id) != nil { return [] }
            return [try store(id: id, from: m.sender.text, fromName: name, text: m.text, sent: m.serviceCentreTime, parts: 1,
                              missing: 0, group: nil, at: wall)]
        }
        let group = Self.groupKey(from: m.sender.text, name: name, reference: c.reference, parts: c.parts)
        // The same group within the hour is the same message (its parts are stamped minutes
        // apart at most); later, the sender's 8-bit reference has come round again: a new one.
        if let done = replies.last(where: { $0.group == group && Self.closeInTime($0.sent, m.serviceCentreTime) }) {
            // A copy of a part already in a whole reply (read again after a restart): nothing new.
            // A part that comes after its reply was shown without it: shown on its own.
            if done.missingParts == 0 || reply(id) != nil { return [] }
            return [try store(id: id, from: m.sender.text, fromName: name, text: "… " + m.text, sent: m.serviceCentreTime,
                              parts: 1, missing: 0, group: nil, at: wall)]
        }
        let part = HeldPart(group: group, from: m.sender.text, fromName: name, sent: m.serviceCentreTime, alphabet: m.alphabet,
                            reference: c.reference, parts: c.parts, part: c.part, payload: m.payload, fingerprint: m.fingerprint)
        try storage.replace(Self.partName(part), with: Array(Self.format(part).utf8))
        held.removeAll { $0.group == group && $0.part == c.part }
        held.append(part)
        if heldSince[group] == nil { heldSince[group] = instant }
        var out: [StoredReply] = []
        if Set(held.filter { $0.group == group }.map(\.part)).count == c.parts {
            out.append(try assemble(group, at: wall))
        }
        // Too many long replies waiting (a sender playing with headers): the oldest is shown now.
        while Set(held.map(\.group)).count > Self.maximumGroups, let oldest = heldSince.min(by: { $0.value < $1.value })?.key {
            out.append(try assemble(oldest, at: wall))
        }
        return out
    }

    /// A message that could not be decoded: kept for the maintainer (its hex and why), so the
    /// SIM can let go of it too.
    public func acceptUnreadable(_ pdu: String, problem: String, at wall: WallTime) throws(StoreError) -> StoredReply? {
        let id = Self.replyID(Self.fnv(Array(pdu.utf8)))
        if reply(id) != nil { return nil }
        let shown = pdu.count > 80 ? String(pdu.prefix(80)) + "…" : pdu
        return try store(id: id, from: "", text: "(a message that could not be read: \(problem); PDU \(shown))", sent: nil,
                         parts: 1, missing: 0, group: nil, at: wall)
    }

    /// When the oldest long reply's patience runs out.
    public func partsDeadline(patience: Duration) -> Instant? {
        heldSince.values.min().map { $0 + patience }
    }

    /// Long replies whose parts stopped coming: shown as far as they came, with "…". Parts read
    /// back after a restart start their wait at the first call.
    public func flushStale(now: Instant, patience: Duration, at wall: WallTime) -> (replies: [StoredReply], errors: [StoreError]) {
        for g in Set(held.map(\.group)) where heldSince[g] == nil { heldSince[g] = now }
        var out: [StoredReply] = [], errors: [StoreError] = []
        for (g, since) in heldSince.sorted(by: { $0.value < $1.value }) where now >= since + patience {
            do { out.append(try assemble(g, at: wall)) } catch {
                errors.append(error)
                heldSince[g] = now  // the card refused: tried again after another wait, not at once
            }
        }
        return (out, errors)
    }

    /// The person dismissed these: kept, never reported again.
    public func markSeen(_ ids: [String]) throws(StoreError) { try markSeen(ids, writer: .atOnce) }

    /// Marked at once, written by `writer`: on the device on its queue, since the person's
    /// press that dismissed them must not wait for the card.
    public func markSeen(_ ids: [String], writer: OutboxWriter) throws(StoreError) {
        for id in ids {
            guard let k = replies.firstIndex(where: { $0.id == id }), !replies[k].seen else { continue }
            replies[k].seen = true
            let storage = self.storage, name = id + Self.replyExtension, bytes = Array(Self.format(replies[k]).utf8)
            try writer.write(MessageID(id), .replySeen) { () throws(StoreError) in try storage.replace(name, with: bytes) }
        }
    }

    // MARK: Storing

    private func store(id: String, from: String, fromName: Bool = false, text: String, sent: WallTime?, parts: Int, missing: Int,
                       group: String?, at wall: WallTime) throws(StoreError) -> StoredReply {
        // 255 parts of UCS-2 would outgrow a small file: the rest is cut, visibly.
        let text = text.unicodeScalars.count > Self.maximumText / 4
            ? String(String.UnicodeScalarView(text.unicodeScalars.prefix(Self.maximumText / 4))) + "…" : text
        let r = StoredReply(id: id, from: from, fromName: fromName, text: text, sent: sent, received: wall, sequence: nextSequence,
                            seen: false, parts: parts, missingParts: missing, group: group)
        try storage.replace(id + Self.replyExtension, with: Array(Self.format(r).utf8))
        nextSequence = min(nextSequence + 1, 1 << 40)
        replies.append(r)
        prune()
        return r
    }

    /// The reply goes to the card first, then its parts leave it: a kill between leaves parts
    /// whose reply exists, which the next start recognises (same group) and removes.
    private func assemble(_ group: String, at wall: WallTime) throws(StoreError) -> StoredReply {
        let parts = held.filter { $0.group == group }.sorted { $0.part < $1.part }
        guard let first = parts.first else { throw StoreError(operation: "assemble", path: group, errno: 2, message: "no parts") }
        let missing = first.parts - parts.count
        let text: String
        if parts.allSatisfy({ $0.alphabet == first.alphabet }) && missing == 0 {
            text = SMSText.decode(parts.flatMap(\.payload), first.alphabet)
        } else {
            var pieces: [String] = []
            var expected = 1
            for p in parts {
                if p.part > expected { pieces.append("…") }
                pieces.append(SMSText.decode(p.payload, p.alphabet))
                expected = p.part + 1
            }
            if expected <= first.parts { pieces.append("…") }
            text = pieces.joined()
        }
        var h: UInt64 = Self.fnv(Array(group.utf8))
        for p in parts { h = Self.fnv(withUnsafeBytes(of: p.fingerprint.littleEndian) { Array($0) }, seed: h) }
        let id = Self.replyID(h)
        var r: StoredReply
        if let existing = reply(id) { r = existing } else {
            r = try store(id: id, from: first.from, fromName: first.fromName, text: text, sent: first.sent, parts: first.parts, missing: missing,
                          group: group, at: wall)
        }
        for p in parts { try storage.remove(Self.partName(p)) }
        held.removeAll { $0.group == group }
        heldSince[group] = nil
        return r
    }

    private func prune() {
        while replies.count > Self.maximumReplies {
            let k = replies.firstIndex(where: \.seen) ?? 0
            let r = replies.remove(at: k)
            try? storage.remove(r.id + Self.replyExtension)
        }
    }

    static func closeInTime(_ a: WallTime?, _ b: WallTime?) -> Bool {
        guard let a, let b else { return true }
        return abs(a.secondsSinceEpoch - b.secondsSinceEpoch) <= 3600
    }

    // MARK: Names

    static func replyID(_ h: UInt64) -> String { "r" + hex16(h) }

    /// A name's parts are never joined with a number's that spells the same.
    static func groupKey(from: String, name: Bool = false, reference: Int, parts: Int) -> String {
        "g" + hex16(fnv(Array("\(name ? "name:" : "")\(from)|\(reference)|\(parts)".utf8)))
    }

    static func partName(_ p: HeldPart) -> String { "\(p.group)-\(p.part)\(partExtension)" }

    static func hex16(_ v: UInt64) -> String {
        let s = String(v, radix: 16)
        return String(repeating: "0", count: 16 - s.count) + s
    }

    /// FNV-1a, 64 bits: stable across runs and builds (Swift's own hashing is seeded per process).
    static func fnv(_ bytes: [UInt8], seed: UInt64 = 0xCBF2_9CE4_8422_2325) -> UInt64 {
        var h = seed
        for b in bytes {
            h ^= UInt64(b)
            h = h &* 0x0000_0100_0000_01B3
        }
        return h
    }
}
