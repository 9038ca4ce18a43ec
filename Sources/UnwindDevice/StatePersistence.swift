import Dispatch
import Logging
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

    public init(store: StateStore, logger: Logger, writeInBackground: Bool) {
        self.store = store
        self.logger = logger
        self.queue = writeInBackground ? DispatchQueue(label: "unwind.state-writer") : nil
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
        if protected.contains(file.rawValue) {
            logger.error("not saving \(file.rawValue): the unusable file on the card is kept for inspection")
            return
        }
        let bytes = Array(text.utf8)
        let write: @Sendable () -> Void = { [store, logger] in
            do { try store.replace(file.rawValue, with: bytes) } catch {
                logger.error("saving \(file.rawValue) failed: \(error)")
            }
        }
        if let queue { queue.async(execute: write) } else { write() }
    }

    /// Waits for every write already asked for; used on shutdown.
    public func flush() { queue?.sync {} }
}
