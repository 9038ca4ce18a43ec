import Dispatch
import Logging
import Synchronization
import UnwindCore
import UnwindHardware

/// Loads the spec's state files at start and writes what the core asks, never stalling the loop:
/// on the device writes go to a serial background queue (an fsync on an SD card can take
/// longer than a frame); in the simulator they happen at once so tests see them.
public final class StatePersistence: @unchecked Sendable {
    public let store: StateStore
    public let logger: Logger
    let queue: DispatchQueue?
    /// Files that could be neither read nor moved aside: never overwritten, so what is on the
    /// card (a person's lifetime totals) is not replaced by zeros the device only assumed.
    /// Written during loading, before the loop starts; read-only afterwards.
    private var protected: Set<String> = []
    /// Taken around every write, so a maintainer's command never interleaves with the device's
    /// writes (see `StateLock`); nil: no other writer to fear (tests).
    public let lock: StateLock?
    /// Writes asked for so far (the loop's thread only): barriers are counted in it.
    public private(set) var writesAsked: UInt64 = 0
    /// The latest failed writes: (number of the write, what failed).
    private let failures = WriteFailures()

    public init(store: StateStore, logger: Logger, writeInBackground: Bool, lock: StateLock? = nil) {
        self.store = store
        self.logger = logger
        self.queue = writeInBackground ? DispatchQueue(label: "unwind.state-writer") : nil
        self.lock = lock
    }

    /// Reads `totalTime.txt`: missing means zeros; a corrupt or truncated file is logged, moved
    /// aside as `totalTime.txt.corrupt-<time>` and replaced by zeros.
    public func loadTotals(now: WallTime) -> BreathingTotals {
        load(TotalTimeFile.name, now: now, empty: .zero, format: TotalTimeFile.format) { bytes in
            try TotalTimeFile.parse(bytes)
        }
    }

    public func loadHistory(now: WallTime) -> [SessionRecord] {
        load(SessionHistoryFile.name, now: now, empty: [], format: SessionHistoryFile.format) { bytes in
            try SessionHistoryFile.parse(bytes)
        }
    }

    /// Reads `reminders.txt`: missing means never; an unusable file is moved aside like
    /// `totalTime.txt` and replaced by `never`.
    public func loadReminder(now: WallTime) -> ReminderSchedule {
        load(RemindersFile.name, now: now, empty: .never, format: RemindersFile.format) { bytes in
            let s = try RemindersFile.parse(bytes)
            if let p = s.problem { throw RemindersFile.Problem.malformed(p) }
            return s
        }
    }

    /// Reads the person's `mantras.txt`. On first start (no file yet) it is seeded with `seed()`,
    /// the shipped list, and written; after that the file is the truth, even when empty (every
    /// mantra deleted), and is never seeded again. A file that does not parse is moved aside
    /// (nothing is lost) and what can be read of it is kept: well-formed lines stay, the rest
    /// are dropped, and the cleaned list is written back.
    public func loadMantras(now: WallTime, seed: @escaping () -> [String]) -> [String] {
        var missing = false
        let list = load(MantrasFile.name, now: now, empty: [String](), format: MantrasFile.format,
                        missing: { missing = true; return seed() }, recover: MantrasFile.salvage) { bytes in
            try MantrasFile.parse(bytes)
        }
        if missing {
            do {
                try store.replace(MantrasFile.name, with: Array(MantrasFile.format(list).utf8))
                logger.notice("\(MantrasFile.name) seeded with the \(list.count) shipped mantras")
            } catch {
                logger.error("cannot seed \(MantrasFile.name): \(error)")
            }
        }
        return list
    }

    /// - Parameters:
    ///   - missing: what a missing file means (default: `empty`).
    ///   - recover: what is kept of an unusable file once it is moved aside (default: `empty`).
    private func load<T>(_ name: String, now: WallTime, empty: T, format: (T) -> String,
                         missing: (() -> T)? = nil, recover: (([UInt8]) -> T)? = nil,
                         parse: ([UInt8]) throws -> T) -> T {
        let problem: String
        var unusable: [UInt8]?
        do {
            guard let bytes = try store.read(name) else { return missing?() ?? empty }
            unusable = bytes
            return try parse(bytes)
        } catch {
            // Unreadable (too large, not a file, an I/O error) or unparsable: the same recovery.
            problem = "\(error)"
        }
        let kept = unusable.flatMap { b in recover.map { $0(b) } } ?? empty
        let aside: String
        do {
            aside = try store.quarantine(name, suffix: String(now.secondsSinceEpoch))
        } catch {
            protected.insert(name)
            logger.error("\(name) is unusable (\(problem)) and could not be moved aside (\(error)); starting from zero and leaving the file untouched")
            return kept
        }
        logger.error("\(name) is unusable (\(problem)); moved aside as \(aside), starting from \(recover == nil ? "zero" : "what could be kept")")
        do { try store.replace(name, with: Array(format(kept).utf8)) } catch {
            logger.error("writing a fresh \(name) failed: \(error)")
        }
        return kept
    }

    public func save(_ file: StateFile, _ text: String) {
        save(named: file.rawValue, Array(text.utf8))
    }

    /// Replaces any state file (an alert slot's) the way `save` does: in the background on the
    /// device, under the state lock.
    public func save(named name: String, _ bytes: [UInt8]) {
        if protected.contains(name) {
            logger.error("not saving \(name): the unusable file on the card is kept for inspection")
            return
        }
        writesAsked += 1
        let number = writesAsked
        let write: @Sendable () -> Void = { [store, logger, lock, failures] in
            do {
                let held = try lock?.acquire(timeout: nil)
                defer { held?.release() }
                try store.replace(name, with: bytes)
            } catch {
                logger.error("saving \(name) failed: \(error)")
                failures.record(number, "saving \(name) failed: \(error)")
            }
        }
        if let queue { queue.async(execute: write) } else { write() }
    }

    /// Done once every write asked for so far is on the card; `failure` then says whether one
    /// asked for after write number `after` failed. The loop polls it: nothing waits.
    public func barrier(after: UInt64) -> WriteBarrier {
        let barrier = WriteBarrier(after: after, upTo: writesAsked, failures: failures)
        if let queue { queue.async { barrier.finish() } } else { barrier.finish() }
        return barrier
    }

    /// Waits for every write already asked for; used on shutdown.
    public func flush() { queue?.sync {} }
}

/// The point in the writer's queue after which a maintainer's change is on the card.
public final class WriteBarrier: Sendable {
    let after: UInt64
    let upTo: UInt64
    let failures: WriteFailures
    private let done = Atomic<Bool>(false)

    init(after: UInt64, upTo: UInt64, failures: WriteFailures) {
        self.after = after
        self.upTo = upTo
        self.failures = failures
    }

    func finish() { done.store(true, ordering: .releasing) }

    public var isDone: Bool { done.load(ordering: .acquiring) }

    /// The first failed write between the change and the barrier.
    public var failure: String? {
        failures.first(after: after, upTo: upTo)
    }
}

/// The latest failed writes, numbered, shared with the writer queue.
final class WriteFailures: Sendable {
    private let list = Mutex<[(UInt64, String)]>([])

    func record(_ number: UInt64, _ what: String) {
        list.withLock { f in
            f.append((number, what))
            if f.count > 16 { f.removeFirst(f.count - 16) }
        }
    }

    func first(after: UInt64, upTo: UInt64) -> String? {
        list.withLock { f in f.first { $0.0 > after && $0.0 <= upTo }?.1 }
    }
}
