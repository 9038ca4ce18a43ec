import UnwindCore
import UnwindSeams

/// A backup's replies taken into the inbox (`unwind restore`). The rule, one for a running
/// device and a stopped one:
///
/// - union by the reply's id (a hash of the message itself, so the same SMS has the same id on
///   every device): nothing the inbox holds is removed or replaced — replies received after the
///   backup stay as they are;
/// - a reply both have stays the inbox's, marked seen if either says seen: a reply the person
///   dismissed is never shown again because an older backup had it as new;
/// - a reply only the backup has comes in as seen: it is old news from before the restore (as a
///   restored ladder is ended, never rung again), so it is never put in front of the person;
///   `unwind replies` lists it;
/// - the backup never pushes the inbox's own replies out: when both together are more than
///   `maximumReplies`, the backup's oldest are left out (and counted).
extension Inbox {
    /// What a restore changes in the inbox.
    public struct Merge: Equatable, Sendable {
        /// Replies only the backup had, as they will be written (seen).
        public var added: [StoredReply] = []
        /// Replies the inbox had as new and the backup as seen.
        public var markedSeen: [StoredReply] = []
        /// Replies both had, already as they should be.
        public var unchanged = 0
        /// The backup's replies left out for want of room.
        public var leftOut = 0
        /// What was under a reply's name that the inbox could not read, kept aside before the
        /// reply was written there (`StateStore.keepAside`).
        public var keptAside: [String] = []

        public var description: String {
            var s = "\(added.count) repl\(added.count == 1 ? "y" : "ies") added"
            if !markedSeen.isEmpty { s += ", \(markedSeen.count) marked seen" }
            if unchanged > 0 { s += ", \(unchanged) already here" }
            if leftOut > 0 { s += ", \(leftOut) of the oldest left out (the inbox keeps \(Inbox.maximumReplies))" }
            for k in keptAside { s += "; \(k)" }
            return s
        }
    }

    /// The rule above, without touching the card.
    public static func merge(own: [StoredReply], backup: [StoredReply], capacity: Int = maximumReplies) -> Merge {
        var m = Merge()
        var fresh: [StoredReply] = []
        for b in backup {
            if let o = own.first(where: { $0.id == b.id }) {
                if b.seen && !o.seen {
                    var r = o
                    r.seen = true
                    m.markedSeen.append(r)
                } else {
                    m.unchanged += 1
                }
            } else if !fresh.contains(where: { $0.id == b.id }) {
                var r = b
                r.seen = true
                fresh.append(r)
            }
        }
        let room = max(0, capacity - own.count)
        fresh.sort { ($0.sequence, $0.id) < ($1.sequence, $1.id) }
        m.leftOut = max(0, fresh.count - room)
        m.added = Array(fresh.suffix(room))
        return m
    }

    /// Takes a backup's replies in by the rule above, each file replaced atomically. Whatever
    /// is under a reply's name that the inbox could not read (a FIFO, a huge file, bytes that
    /// do not parse) is kept aside first, never written over. A reply the card refused is not
    /// in memory either; what was written before it stays (the merge is a union: running the
    /// restore again finishes it).
    @discardableResult
    public func adopt(_ backup: [StoredReply], now: WallTime) throws(InboxAdoptFailure) -> Merge {
        var m = Self.merge(own: replies, backup: backup)
        for r in m.markedSeen + m.added {
            let name = r.id + Self.replyExtension
            do {
                if let kept = try storage.keepAside(name, suffix: "\(now.secondsSinceEpoch)", problem: { bytes in
                    (try? Self.parseReply(bytes, id: r.id)) == nil ? "not a valid reply" : nil
                }) { m.keptAside.append(kept) }
            } catch {
                throw .cannotKeep(error)
            }
            do { try storage.replace(name, with: Array(Self.format(r).utf8)) } catch { throw .store(error) }
            if let k = replies.firstIndex(where: { $0.id == r.id }) { replies[k] = r } else { replies.append(r) }
        }
        replies.sort { ($0.sequence, $0.id) < ($1.sequence, $1.id) }
        nextSequence = min((replies.map(\.sequence).max() ?? 0) + 1, 1 << 40)
        return m
    }

    /// A reply file as the device reads it (for a backup's checks).
    public static func readReply(_ bytes: [UInt8], id: String) throws(InboxFileProblem) -> StoredReply {
        try parseReply(bytes, id: id)
    }

    /// The largest reply file the inbox reads.
    public static let maximumReplyFile = maximumText + 1024
}

/// Why a restore's replies were not all taken in.
public enum InboxAdoptFailure: Error, CustomStringConvertible {
    /// A file under a reply's name could not be kept aside: it is left as it is.
    case cannotKeep(KeepAsideFailure)
    case store(StoreError)

    public var description: String {
        switch self {
        case .cannotKeep(let f): "\(f)"
        case .store(let e): "\(e)"
        }
    }
}
