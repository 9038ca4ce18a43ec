import Synchronization

/// The point in the writer's queue after which a maintainer's change is on the card.
public final class WriteBarrier: Sendable {
    let after: UInt64
    let upTo: UInt64
    let failures: WriteNotes
    let kept: WriteNotes
    private let done = Atomic<Bool>(false)

    init(after: UInt64, upTo: UInt64, failures: WriteNotes, keptAside: WriteNotes) {
        self.after = after
        self.upTo = upTo
        self.failures = failures
        self.kept = keptAside
    }

    func finish() { done.store(true, ordering: .releasing) }

    public var isDone: Bool { done.load(ordering: .acquiring) }

    /// The first failed write between the change and the barrier.
    public var failure: String? {
        failures.all(after: after, upTo: upTo).first
    }

    /// What the writes between the change and the barrier kept aside before replacing it.
    public var keptAside: [String] {
        kept.all(after: after, upTo: upTo)
    }
}

/// The latest writes' notes (what failed, what was kept aside), numbered by write, shared with
/// the writer queue.
final class WriteNotes: Sendable {
    private let list = Mutex<[(UInt64, String)]>([])

    func record(_ number: UInt64, _ what: String) {
        list.withLock { f in
            f.append((number, what))
            if f.count > 16 { f.removeFirst(f.count - 16) }
        }
    }

    func all(after: UInt64, upTo: UInt64) -> [String] {
        list.withLock { f in f.filter { $0.0 > after && $0.0 <= upTo }.map(\.1) }
    }
}

/// Writes kept because the state lock could not be had: the newest bytes of each file (an older
/// write of a file is dropped once a newer one is kept or done). Shared with the writer queue.
final class PendingWrites: Sendable {
    enum Write: Sendable {
        case one(String, [UInt8])
        case all([(name: String, bytes: [UInt8])])

        var names: String { files.joined(separator: ", ") }

        var files: [String] {
            switch self {
            case .one(let name, _): [name]
            case .all(let files): files.map(\.name)
            }
        }
    }

    private struct State {
        var writes: [(number: UInt64, write: Write)] = []
        var retryScheduled = false
        /// Set when a wait for the lock just timed out: the next writes in the queue go
        /// straight to `writes` instead of each waiting again.
        var lockIsBusy = false
    }
    private let state = Mutex(State())

    var lockIsBusy: Bool {
        get { state.withLock { $0.lockIsBusy } }
        set { state.withLock { $0.lockIsBusy = newValue } }
    }

    /// Keeps `write`; false when it was already kept (a retry that failed again: said once).
    func keep(_ write: Write, _ number: UInt64) -> Bool {
        state.withLock { s in
            if s.writes.contains(where: { $0.number == number }) { return false }
            s.writes.append((number, write))
            return true
        }
    }

    /// A write reached the card: older kept writes of the same files are no longer wanted.
    func done(_ write: Write, _ number: UInt64) {
        let names = Set(write.files)
        state.withLock { s in
            s.writes.removeAll { $0.number <= number && Set($0.write.files).isSubset(of: names) }
        }
    }

    func snapshot() -> [(UInt64, Write)] {
        state.withLock { s in s.writes.map { ($0.number, $0.write) } }
    }

    func claimRetry() -> Bool {
        state.withLock { s in
            if s.retryScheduled { return false }
            s.retryScheduled = true
            return true
        }
    }

    func retryDone() { state.withLock { $0.retryScheduled = false } }

    var names: [String] { state.withLock { $0.writes.map(\.write.names) } }
}
