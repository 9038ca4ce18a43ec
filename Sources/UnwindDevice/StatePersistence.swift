import Dispatch
import Logging
import UnwindCore
import UnwindHardware

/// Loads the spec's state files at start and writes what the core asks, never stalling the loop:
/// on the device writes go to a serial background queue (an fsync on an SD card can take
/// longer than a frame); in the simulator they happen at once so tests see them.
public final class StatePersistence: @unchecked Sendable {
    public let store: StateStore
    let logger: Logger
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

    private func load<T>(_ name: String, now: WallTime, empty: T, format: (T) -> String,
                         parse: ([UInt8]) throws -> T) -> T {
        let problem: String
        do {
            guard let bytes = try store.read(name) else { return empty }
            return try parse(bytes)
        } catch {
            // Unreadable (too large, not a file, an I/O error) or unparsable: the same recovery.
            problem = "\(error)"
        }
        let aside: String
        do {
            aside = try store.quarantine(name, suffix: String(now.secondsSinceEpoch))
        } catch {
            protected.insert(name)
            logger.error("\(name) is unusable (\(problem)) and could not be moved aside (\(error)); starting from zero and leaving the file untouched")
            return empty
        }
        logger.error("\(name) is unusable (\(problem)); moved aside as \(aside), starting from zero")
        do { try store.replace(name, with: Array(format(empty).utf8)) } catch {
            logger.error("writing a fresh \(name) failed: \(error)")
        }
        return empty
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
