import Dispatch
import Synchronization
import UnwindSeams

/// Where the outbox's files are written: at once, on the caller's thread (tests and the
/// simulators on simulated time, which look at the card right after asking), or on a queue of
/// their own (the device).
///
/// Why a queue on the device: the outbox is written from the loop's thread (PANIC arms five
/// alerts in one pass), and each write is an fsync that an SD card can hold for longer than a
/// frame. The loop must never wait for the card — but the modem must: no AT command for a
/// message goes out while a write of that message is still on its way (`GSMModem` holds its
/// line for it), so "journaled before any AT traffic" holds exactly as when the loop waited.
/// One serial queue keeps every message's writes in the order they were asked for. The inbox's
/// "seen" marks (the person dismissing a reply with a press) go through it too.
public final class OutboxWriter: @unchecked Sendable {
    /// What a write was for, so its failure is told in the right words.
    public enum Kind: Equatable, Sendable {
        /// A new message's first write (before it may be sent at all).
        case added
        /// Its progress (attempts, parts sent, references, reports).
        case saved
        /// Gone from the journal: sent and settled.
        case sent
        case cancelled
        /// A reply the person dismissed (the inbox's file, on the same queue).
        case replySeen
    }

    /// A write that did not reach the card.
    public struct Failure: Equatable, Sendable {
        public var id: MessageID
        public var kind: Kind
        public var error: StoreError
    }

    let queue: DispatchQueue?
    /// Writes done on the queue since the loop last asked: their messages, and the failures.
    private let landed = Mutex<(ids: [MessageID], failures: [Failure])>(([], []))
    /// Writes asked for and not yet seen landed, by message (the caller's thread only).
    private var underWay: [MessageID: Int] = [:]

    init(queue: DispatchQueue?) { self.queue = queue }

    /// Each write done before the call returns.
    public static var atOnce: OutboxWriter { OutboxWriter(queue: nil) }
    /// Writes on a serial queue of their own; `collect()` tells what reached the card.
    public static func inBackground() -> OutboxWriter {
        OutboxWriter(queue: DispatchQueue(label: "unwind.outbox-writer", qos: .userInitiated))
    }

    /// Whether any write is still on its way to the card.
    public var isWriting: Bool { !underWay.isEmpty }

    /// Whether a write of this message is still on its way to the card.
    public func isWritingMessage(_ id: MessageID) -> Bool { underWay[id] != nil }

    /// Runs `write` at once (its error thrown), or queues it (its failure kept for `collect()`).
    func write(_ id: MessageID, _ kind: Kind, _ write: @escaping @Sendable () throws(StoreError) -> Void) throws(StoreError) {
        guard let queue else {
            try write()
            return
        }
        underWay[id, default: 0] += 1
        queue.async { [self] in
            var failure: Failure?
            do throws(StoreError) { try write() } catch { failure = Failure(id: id, kind: kind, error: error) }
            landed.withLock {
                $0.ids.append(id)
                if let failure { $0.failures.append(failure) }
            }
        }
    }

    /// The writes that failed since the last call; the messages whose writes all landed are no
    /// longer `isWriting`.
    public func collect() -> [Failure] {
        let (ids, failures) = landed.withLock { l in
            defer { l = ([], []) }
            return l
        }
        for id in ids {
            let left = (underWay[id] ?? 1) - 1
            underWay[id] = left > 0 ? left : nil
        }
        return failures
    }

    /// Waits until every write asked for has been done (shutdown, a reload).
    public func flush() { queue?.sync {} }
}
