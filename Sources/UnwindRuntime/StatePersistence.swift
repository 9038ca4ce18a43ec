#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Logging
import Synchronization
import UnwindMaintenance
import UnwindCore

import UnwindSeams

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
    private var protected: [String: String] = [:]
    /// Writes that could not get the state lock in time, waiting to be tried again.
    private let pending = PendingWrites()
    /// Taken around every write, so a maintainer's command never interleaves with the device's
    /// writes (see `StateLock`); nil: no other writer to fear (tests).
    public let lock: StateLock?
    /// Writes asked for so far (the loop's thread only): barriers are counted in it.
    public private(set) var writesAsked: UInt64 = 0
    /// The latest failed writes: (number of the write, what failed).
    private let failures = WriteNotes()
    /// What the latest writes kept aside before replacing it: (number of the write, where it went).
    private let keptAside = WriteNotes()
    /// The last write failed on the card itself (full, read-only, an I/O error): the
    /// maintainer may be texted about it. Set by the writer, read by the loop.
    private let cardFailing = Atomic<Bool>(false)
    public var writesFailing: Bool { cardFailing.load(ordering: .relaxed) }

    public init(store: StateStore, logger: Logger, writeInBackground: Bool, lock: StateLock? = nil) {
        self.store = store
        self.logger = logger
        self.queue = writeInBackground ? DispatchQueue(label: "unwind.state-writer") : nil
        self.lock = lock
        for problem in store.recoveryProblems { logger.error("\(problem)") }
    }

    /// Reads `totalTime.txt`: missing means zeros; a corrupt or truncated file is logged, moved
    /// aside as `totalTime.txt.corrupt-<time>` and replaced by zeros.
    public func loadTotals(now: WallTime) -> BreathingTotals {
        load(TotalTimeFile.name, now: now, empty: .zero, format: TotalTimeFile.format) { bytes in
            try TotalTimeFile.parse(bytes)
        }
    }

    /// Reads `sessionHistory.txt`; a file with a bad line is moved aside and its good lines kept.
    public func loadHistory(now: WallTime) -> [SessionRecord] {
        load(SessionHistoryFile.name, now: now, empty: [], format: SessionHistoryFile.format,
             recover: SessionHistoryFile.salvage) { bytes in
            try SessionHistoryFile.parse(bytes)
        }
    }

    /// Reads `breathing.txt`: missing or empty means nothing chosen yet (the configured
    /// default); an unusable file is moved aside, replaced by an empty one, and the default used.
    public func loadBreathingChoice(now: WallTime) -> BreathingChoice? {
        load(BreathingChoiceFile.name, now: now, empty: nil, format: { $0.map(BreathingChoiceFile.format) ?? "" }) { bytes in
            bytes.isEmpty ? nil : try BreathingChoiceFile.parse(bytes)
        }
    }

    /// Reads the maintainer's `patterns.txt`: missing means none; a file with a bad line is moved
    /// aside and its good lines kept.
    public func loadPatterns(now: WallTime) -> [BreathingPreset] {
        load(PatternsFile.name, now: now, empty: [], format: PatternsFile.format, recover: PatternsFile.salvage) { bytes in
            try PatternsFile.parse(bytes)
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

    /// Reads `checkIn.txt` (the last settled check-in day and a grace period under way):
    /// missing means none; an unusable file is moved aside and the check-in starts afresh (the
    /// prompt shows again today).
    public func loadCheckIn(now: WallTime) -> (record: CheckInRecord?, grace: CheckInGrace?) {
        load(CheckInFile.name, now: now, empty: (nil, nil), format: { CheckInFile.format($0.record, grace: $0.grace) }) { bytes in
            try CheckInFile.parseWithGrace(bytes)
        }
    }

    /// Reads `escalation.txt` (what followed the last alerts): missing means none; an unusable
    /// file is moved aside and the device starts with no episode (alerts still in the outbox
    /// start theirs again from its wait: calls late rather than none).
    public func loadEscalation(now: WallTime) -> EscalationRecord? {
        load(EscalationFile.name, now: now, empty: nil, format: EscalationFile.format) { bytes in
            try EscalationFile.parse(bytes)
        }
    }

    /// Reads `alertTest.txt` (the last monthly test): missing means none; an unusable file is
    /// moved aside, and a test may go out this month again (a second test beats none).
    public func loadAlertTest(now: WallTime) -> AlertTestRecord? {
        load(AlertTestFile.name, now: now, empty: nil, format: AlertTestFile.format) { bytes in
            try AlertTestFile.parse(bytes)
        }
    }

    /// Reads `setupResult.txt` (what the last import of the card's setup file found): missing or
    /// empty means nothing to show; an unusable file is moved aside and nothing is shown (the
    /// result is also on the card, in unwind-setup-result.txt).
    public func loadSetupResult(now: WallTime) -> [String]? {
        load(SetupResultFile.name, now: now, empty: nil, format: SetupResultFile.format) { bytes in
            try SetupResultFile.parse(bytes)
        }
    }

    /// Reads `statusTexts.txt` (the STATUS answers and maintainer's texts sent, for their
    /// limits): missing means none; an unusable file is moved aside and the limits start afresh
    /// (at worst one answer more, never a device that does not start).
    public func loadStatusTexts(now: WallTime) -> [StatusTextRecord] {
        load(StatusTextsFile.name, now: now, empty: [], format: StatusTextsFile.format) { bytes in
            try StatusTextsFile.parse(bytes)
        }
    }

    /// Reads the person's `mantras.txt`. On first start (no file yet) it is seeded with `seed()`,
    /// the shipped list, and written; after that the file is the truth, even when empty (every
    /// mantra deleted), and is never seeded again. A file that does not parse is moved aside
    /// (nothing is lost) and what can be read of it is kept: well-formed lines stay, the rest
    /// are dropped, and the cleaned list is written back.
    public func loadMantras(now: WallTime, seed: @escaping () -> [String]) -> [String] {
        var missing = false
        // Unreadable: the shipped list is shown (never written), not "No mantras found".
        let list = load(MantrasFile.name, now: now, empty: [String](), format: MantrasFile.format,
                        missing: { missing = true; return seed() }, recover: MantrasFile.salvage,
                        unreadable: seed) { bytes in
            try MantrasFile.parse(bytes)
        }
        if missing && list.isEmpty {
            // The shipped list could not be read (an install without its content): writing an
            // empty file would make "no mantras" the person's choice for good.
            logger.error("the shipped mantras cannot be read; \(MantrasFile.name) is not created, and is seeded at the next start that finds them")
        } else if missing {
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
    ///   - unreadable: what the device shows while a file it cannot read is left alone
    ///     (default: `empty`).
    func load<T>(_ name: String, now: WallTime, empty: T, format: (T) -> String,
                         missing: (() -> T)? = nil, recover: (([UInt8]) -> T)? = nil,
                         unreadable: (() -> T)? = nil,
                         parse: ([UInt8]) throws -> T) -> T {
        let problem: String
        var unusable: [UInt8]?
        do {
            guard let bytes = try store.read(name) else { return missing?() ?? empty }
            unusable = bytes
            return try parse(bytes)
        } catch let error as StoreError where Self.cannotReadNow(error) {
            // The bytes are there but out of reach (permissions, an I/O error): moving them
            // aside and writing an empty file would hide the person's data behind a default.
            protected[name] = "\(name) cannot be read by the device (\(error.message)); it is kept for inspection and not overwritten — fix its owner or mode and restart the device"
            logger.error("\(name) cannot be read (\(error)); it is left alone and not overwritten until it can be read — fix its owner or mode and restart")
            return unreadable?() ?? empty
        } catch {
            // Unparsable, too large, or not a regular file (a directory, a FIFO, a link): the
            // same recovery — moved aside untouched, so nothing is lost, and a fresh file.
            problem = "\(error)"
        }
        // Bytes that were read keep what `recover` can salvage; a name that held no readable
        // file at all (a link, a directory, something huge) starts as if it had been missing.
        let kept = unusable.map { b in recover.map { $0(b) } ?? empty } ?? missing?() ?? empty
        let aside: String
        do {
            aside = try store.quarantine(name, suffix: String(now.secondsSinceEpoch))
        } catch {
            protected[name] = "\(name) is unusable (\(problem)) and could not be moved aside (\(error.message)); it is kept for inspection and not overwritten"
            logger.error("\(name) is unusable (\(problem)) and could not be moved aside (\(error)); starting from zero and leaving the file untouched")
            return kept
        }
        logger.error("\(name) is unusable (\(problem)); moved aside as \(aside), starting from \(recover == nil ? "zero" : "what could be kept")")
        do { try store.replace(name, with: Array(format(kept).utf8)) } catch {
            logger.error("writing a fresh \(name) failed: \(error)")
        }
        return kept
    }

    /// A file whose bytes exist but cannot be read now, as opposed to one that is not a state
    /// file at all (too large, a directory, a FIFO, a link), which can be moved aside whole.
    static func cannotReadNow(_ error: StoreError) -> Bool {
        ![EISDIR, EINVAL, ELOOP, EFBIG, EMLINK].contains(error.errno)
    }

    public func save(_ file: StateFile, _ text: String) {
        save(named: file.name, Array(text.utf8))
    }

    /// Replaces any state file (an alert slot's) the way `save` does: in the background on the
    /// device, under the state lock.
    public func save(named name: String, _ bytes: [UInt8]) {
        if let why = protected[name] { return refuse([name], why) }
        enqueue(.one(name, bytes))
    }

    /// Replaces several state files as one change (a restore, a statistics reset): after a kill
    /// at any moment the card holds all the old files or all the new ones. When one of them is
    /// left alone (kept for inspection), none is written: half a change is not one.
    public func saveAll(_ files: [(name: String, bytes: [UInt8])]) {
        let kept = files.compactMap { f in protected[f.name] }
        if !kept.isEmpty { return refuse(files.map(\.name), kept.joined(separator: "; ")) }
        if !files.isEmpty { enqueue(.all(files)) }
    }

    /// A write not made counts as a failed write: a maintainer's change that asked for it is
    /// answered with the reason (exit 1), not "done" with the reason only in the journal.
    private func refuse(_ names: [String], _ why: String) {
        writesAsked += 1
        logger.error("not saving \(names.joined(separator: ", ")): \(why)")
        failures.record(writesAsked, "not saved: \(why)")
    }

    private func enqueue(_ write: PendingWrites.Write) {
        writesAsked += 1
        let number = writesAsked
        let job: @Sendable () -> Void = { [self] in attempt(number, write) }
        if let queue { queue.async(execute: job) } else { job() }
    }

    /// How long one write waits for the state lock. Anyone in the group can hold the lock (or
    /// a command can hang holding it): the write is then kept and tried again, never waited
    /// for without end — quitting must not hang on it, and the loop never waits at all.
    static let lockWait: Duration = .seconds(2)
    static let retryAfter: Duration = .seconds(2)

    /// On the writer's queue (or at once in the simulator).
    private func attempt(_ number: UInt64, _ write: PendingWrites.Write, withoutLock: Bool = false) {
        do throws(ControlFailure) {
            let held = withoutLock ? nil : try takeLock()
            defer { held?.release() }
            pending.lockIsBusy = false
            do {
                // What is under the names that the device could not use is kept, never written over.
                let kept: [String]
                do { kept = try StateFileCheck.keepAside(write.files, in: store) } catch {
                    logger.error("not saving \(write.names): \(error.message)")
                    failures.record(number, "not saved: \(error.message)")
                    pending.done(write, number)
                    return
                }
                for line in kept {
                    logger.error("\(line)")
                    keptAside.record(number, line)
                }
                switch write {
                case .one(let name, let bytes): try store.replace(name, with: bytes)
                case .all(let files): try store.replaceAll(files)
                }
                pending.done(write, number)
                cardFailing.store(false, ordering: .relaxed)
            } catch {
                cardFailing.store(true, ordering: .relaxed)
                logger.error("saving \(write.names) failed: \(error)")
                failures.record(number, "saving \(write.names) failed: \(error)")
            }
        } catch {
            // Kept: the newest bytes of each file are written once the lock can be had.
            pending.lockIsBusy = true
            if pending.keep(write, number) {
                logger.error("saving \(write.names) waits: \(error.message); trying again every \(Self.retryAfter)")
            }
            failures.record(number, "saving \(write.names) is delayed: \(error.message)")
            scheduleRetry()
        }
    }

    private func takeLock() throws(ControlFailure) -> StateLock.Held? {
        guard let lock else { return nil }
        if pending.lockIsBusy { throw .failed("the state lock \(lock.path) is held by someone else") }
        return try lock.acquire(timeout: Self.lockWait)
    }

    private func scheduleRetry() {
        guard let queue, pending.claimRetry() else { return }
        let delay = Double(Self.retryAfter.components.seconds)
        queue.asyncAfter(deadline: .now() + delay) { [self] in
            pending.retryDone()
            pending.lockIsBusy = false
            for (number, write) in pending.snapshot() { attempt(number, write) }
        }
    }

    /// Done once every write asked for so far is on the card; `failure` then says whether one
    /// asked for after write number `after` failed. The loop polls it: nothing waits.
    public func barrier(after: UInt64) -> WriteBarrier {
        let barrier = WriteBarrier(after: after, upTo: writesAsked, failures: failures, keptAside: keptAside)
        if let queue { queue.async { barrier.finish() } } else { barrier.finish() }
        return barrier
    }

    /// Waits for every write already asked for, and tries once more what waited for the lock;
    /// used on shutdown. Bounded: at most one more wait for the lock.
    public func flush() {
        let work = { [self] in
            pending.lockIsBusy = false
            for (number, write) in pending.snapshot() { attempt(number, write) }
            // Quitting: the person's session matters more than a backup's consistent moment, and
            // every file is replaced atomically anyway — what still waits is written unlocked.
            for (number, write) in pending.snapshot() {
                logger.warning("saving \(write.names) without the state lock before quitting (someone else holds it)")
                attempt(number, write, withoutLock: true)
            }
        }
        if let queue { queue.sync(execute: work) } else { work() }
        for name in pending.names { logger.critical("\(name) could not be saved before quitting") }
    }
}
