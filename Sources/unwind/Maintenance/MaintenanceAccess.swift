#if canImport(Glibc)
import Glibc
#endif
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import UnwindRuntime
import UnwindMaintenance
import UnwindCore
import UnwindLinuxHardware
import UnwindModem

/// How a maintainer's command reaches the device's state.
///
/// - When a device runs on the state directory (`DaemonPresence`), every request goes to it
///   through the control socket: it applies the change to its own state and saves it (the one
///   writer). A command never edits the files behind a running device's back; when it cannot
///   reach the socket (permissions) it says so and changes nothing.
/// - When none runs, a change is made to the files directly (`OfflineState`), holding the state
///   lock for the whole read-modify-write; under the lock it checks once more that no device
///   has started meanwhile (a device takes the same lock to load its files, so it loads the
///   result).
public struct MaintenanceAccess {
    public var stateDirectory: String
    /// Overrides the socket the device wrote into `.daemon`.
    public var socket: String?
    public var contentDirectory: String?

    public init(stateDirectory: String, socket: String? = nil, contentDirectory: String? = nil) {
        self.stateDirectory = stateDirectory
        self.socket = socket
        self.contentDirectory = contentDirectory
    }

    /// The state directory must exist (a command never creates one).
    public func checkStateDirectory() throws(ControlFailure) {
        var info = stat()
        if stat(stateDirectory, &info) != 0 {
            let e = errno
            throw .failed("cannot use the state directory \(stateDirectory): \(errnoText(e))"
                          + (e == ENOENT ? " (wrong --state, or the device never ran here?)" : ""))
        }
        guard info.st_mode & S_IFMT == S_IFDIR else { throw .failed("\(stateDirectory) is not a directory") }
    }

    /// The running device's socket, or nil when no device runs.
    public func runningDeviceSocket() throws(ControlFailure) -> String? {
        try checkStateDirectory()
        switch try DaemonPresence.probe(stateDirectory: stateDirectory) {
        case .stopped: return socket.flatMap { s in ControlClient.answers(s) ? s : nil }
        case .running(let pid, .some(DaemonPresence.noSocket)):
            throw .failed("a headless simulation\(pid.map { " (pid \($0))" } ?? "") is running on \(stateDirectory); it takes no commands and its files change until it ends")
        case .running(_, let s): return socket ?? s ?? ControlSocket.daemon()
        }
    }

    /// Asks the running device; fails (exit 1) when none runs. With `acceptingFailure`, an
    /// answer that reports a failure is returned rather than thrown (its details are wanted).
    public func ask(_ request: ControlRequest, timeout: Duration = .seconds(20),
                    acceptingFailure: Bool = false) throws(ControlFailure) -> ControlResponse {
        guard let path = try runningDeviceSocket() else {
            throw .failed("the device is not running on \(stateDirectory) (start it: sudo systemctl start unwind)")
        }
        return try send(request, to: path, timeout: timeout, acceptingFailure: acceptingFailure)
    }

    /// Sends, retrying the connection for a moment: a device that has just claimed the state
    /// directory may not listen yet.
    func send(_ request: ControlRequest, to path: String, timeout: Duration,
              acceptingFailure: Bool = false) throws(ControlFailure) -> ControlResponse {
        let clock = ContinuousClock()
        let end = clock.now + .seconds(3)
        while true {
            do throws(ControlFailure) {
                let response = try ControlClient.request(request, path: path, timeout: timeout)
                if let f = response.failure, !acceptingFailure { throw f }
                return response
            } catch {
                if error.message.hasPrefix("the device is not running") {
                    if clock.now < end {
                        usleep(50_000)
                        continue
                    }
                    // It holds the state directory but nobody answers: say that, not "not running".
                    if case .running(let pid, _)? = try? DaemonPresence.probe(stateDirectory: stateDirectory) {
                        throw .failed("the device runs\(pid.map { " (pid \($0))" } ?? "") but nobody answers on \(path); its control socket could not be made? (journalctl -u unwind)")
                    }
                }
                throw error
            }
        }
    }

    /// A change: through the running device, or on the files when none runs. `viaDevice` says which.
    /// `outside`: files beyond the state directory that change with it, as one change; the
    /// running device writes only its own directory, so they are refused while it runs.
    public func change(_ request: ControlRequest, outside: [OutsideFile] = [], timeout: Duration = .seconds(40)) throws(ControlFailure)
        -> (response: ControlResponse, viaDevice: Bool) {
        if let path = try runningDeviceSocket() {
            try refuseOutside(outside)
            return (try send(request, to: path, timeout: timeout), true)
        }
        let lock = StateLock(stateDirectory: stateDirectory)
        let held = try lock.acquire()
        // A device that started while this command waited for the lock takes the change.
        if let path = try runningDeviceSocket() {
            held.release()
            try refuseOutside(outside)
            return (try send(request, to: path, timeout: timeout), true)
        }
        defer { held.release() }
        var offline = try OfflineState(stateDirectory: stateDirectory, contentDirectory: contentDirectory)
        offline.outside = outside
        return (try offline.apply(request), false)
    }

    func refuseOutside(_ outside: [OutsideFile]) throws(ControlFailure) {
        guard !outside.isEmpty else { return }
        throw .failed("the device is running on \(stateDirectory): \(outside.map(\.path).joined(separator: ", ")) change together with its state only while it is stopped; nothing changed — stop it (sudo systemctl stop unwind), run the command again, and start it")
    }
}

/// The maintainer's changes made to the files themselves, when no device runs (the caller holds
/// the state lock). Same rules and words as the running device's (`MaintenanceEdits`); files
/// are replaced atomically by `DirectoryStore`, which follows no link. When the command runs as
/// root the new files are given the state directory's owner (`fchown` on the new file before it
/// gets its name), so the service user can still read them.
public struct OfflineState {
    public let store: DirectoryStore
    /// The shipped content's directory (nil: the built-in texts).
    public let contentDirectory: String?
    /// Files outside the state directory that change together with a setup import's state files.
    public var outside: [OutsideFile] = []

    public init(stateDirectory: String, contentDirectory: String? = nil) throws(ControlFailure) {
        do { store = try DirectoryStore(directory: stateDirectory, ownership: .directoryOwner) } catch {
            throw .failed("cannot use the state directory: \(error)")
        }
        self.contentDirectory = contentDirectory
    }

    /// What was moved aside on the way, said with the answer.
    private final class Notes { var lines: [String] = [] }
    private let notes = Notes()

    public func apply(_ request: ControlRequest) throws(ControlFailure) -> ControlResponse {
        var r = try change(request)
        if !notes.lines.isEmpty { r.message = (r.message ?? "done") + "; " + notes.lines.joined(separator: "; ") }
        return r
    }

    private func change(_ request: ControlRequest) throws(ControlFailure) -> ControlResponse {
        switch request {
        case .status, .screen, .testAlert, .modemCheck, .modemCommand, .motorTest:
            throw .failed("the device is not running; this needs it (start it: sudo systemctl start unwind)")

        case .addMantra(let text):
            var items = try mantras()
            try MaintenanceEdits.checkMantra(text, count: items.count)
            items.append(text)
            try write(MantrasFile.name, MantrasFile.format(items))
            return withMantras(.done("added mantra \(items.count): \"\(text)\" (shown when the device starts)"), items, current: items.count)

        case .deleteMantra(let number, let expected):
            var items = try mantras()
            let index = try MaintenanceEdits.mantraIndex(number, count: items.count)
            if let expected, items[index] != expected { throw MaintenanceEdits.listChanged(number, items) }
            let text = items.remove(at: index)
            try write(MantrasFile.name, MantrasFile.format(items))
            return withMantras(.done("deleted mantra \(number): \"\(text)\"; \(items.count) left"), items, current: 0)

        case .resetMantras:
            let shipped = DeviceContent.shippedMantras(in: contentDirectory)
            guard !shipped.isEmpty else { throw .failed("the shipped mantras cannot be read from \(contentDirectory ?? "the executable")") }
            try write(MantrasFile.name, MantrasFile.format(shipped))
            return withMantras(.done("the \(shipped.count) shipped mantras are back; the person's own were replaced"), shipped, current: 1)

        case .setReminder(let line):
            let schedule = try MaintenanceEdits.reminder(line)
            try write(RemindersFile.name, RemindersFile.format(schedule))
            return .done("reminder: \(RemindersFile.line(schedule))")

        case .setAlert(let slot, let name, let number, let message):
            _ = try MaintenanceEdits.slotIndex(slot)
            let current = try slotState(slot)
            let alert = try MaintenanceEdits.mergedAlert(current, slot: slot, name: name, number: number, message: message)
            try write(AlertSlotFile.name(slot: slot), AlertSlotFile.format(alert))
            var r = ControlResponse.done("slot \(slot) saved")
            r.alert = MaintenanceEdits.report(slot: slot, alert)
            return r

        case .clearAlert(let slot):
            _ = try MaintenanceEdits.slotIndex(slot)
            let wasEmpty = (try? slotState(slot)) == .empty
            try write(AlertSlotFile.name(slot: slot), "")
            return .done(wasEmpty ? "slot \(slot) was already empty" : "slot \(slot) cleared")

        case .resetStatistics:
            // One change: a kill between two writes once left the totals zeroed and the history old.
            let files = [(name: TotalTimeFile.name, bytes: Array(TotalTimeFile.format(.zero).utf8)),
                         (name: SessionHistoryFile.name, bytes: Array(SessionHistoryFile.format([]).utf8))]
            try setAsideUnusable(files.map(\.name))
            do { try store.replaceAll(files) } catch { throw .failed("cannot reset the statistics (nothing changed): \(error)") }
            return .done("breathing statistics reset to zero")

        case .addPattern(let name, let words):
            let custom = try patterns()
            let p = try MaintenanceEdits.newPattern(name: name, words: words, existing: BreathingPreset.builtIn + custom)
            try write(PatternsFile.name, PatternsFile.format(custom + [p]))
            return .done("added pattern \(MaintenanceEdits.describe(p)) (offered when the device starts)")

        case .removePattern(let name):
            let remaining = try MaintenanceEdits.removingPattern(name, from: try patterns())
            try write(PatternsFile.name, PatternsFile.format(remaining))
            return .done("removed pattern \(name)")

        case .importSetup(let alerts, let screen):
            let change = try MaintenanceEdits.setupImport(alerts, screen: screen)
            try setAsideUnusable(change.files.map(\.name))
            do { try store.replaceAll(change.files, outside: outside) } catch {
                throw .failed("cannot import the setup file (nothing changed): \(error)")
            }
            return .done(MaintenanceEdits.importedMessage(change.alerts))

        case .addCard(let concern, let answer):
            var cards = try copingCards()
            let card = MaintenanceEdits.card(concern: concern, answer: answer)
            try MaintenanceEdits.checkCard(card, count: cards.count)
            cards.append(card)
            try write(CopingCardsFile.name, CopingCardsFile.format(cards))
            return .done("added card \(cards.count): \"\(card.concern)\" (shown when the device starts)")

        case .deleteCard(let number, let concern, let answer):
            var cards = try copingCards()
            let index = try MaintenanceEdits.cardIndex(number, count: cards.count)
            if let expected = MaintenanceEdits.expectedCard(concern: concern, answer: answer), cards[index] != expected {
                throw MaintenanceEdits.cardsChanged(number)
            }
            let card = cards.remove(at: index)
            try write(CopingCardsFile.name, CopingCardsFile.format(cards))
            return .done("deleted card \(number): \"\(card.concern)\"; \(cards.count) left")

        case .setSelfCheckReminder(let line):
            let schedule = try MaintenanceEdits.selfCheckReminder(line)
            try write(SelfCheckReminderFile.name, SelfCheckReminderFile.format(schedule))
            return .done("self-check reminder: \(RemindersFile.line(schedule))")

        case .restore(let files):
            let bytes = files.mapValues { [UInt8]($0) }
            let state = try MaintenanceEdits.restorable(bytes)
            // The device's own grace period stays; it is read as the device would load it.
            let grace = (try? store.read(CheckInFile.name)).flatMap { $0 }.flatMap { try? CheckInFile.parseWithGrace($0).grace }
            let files = (StateArchive.stateFiles + StateArchive.optionalFiles).compactMap { name in
                state.bytes(of: name, archive: bytes, grace: grace).map { (name: name, bytes: $0) }
            }
            // The replies first: a union (`Inbox.adopt`), so a failure has lost nothing and left
            // the state files as they were.
            let replies = try adoptReplies(state.replies)
            try setAsideUnusable(files.map(\.name))
            do { try store.replaceAll(files) } catch { throw .failed("cannot restore (no state file changed): \(error)") }
            return .done(MaintenanceEdits.restoredMessage(state) + replies)
        }
    }

    /// A backup's replies into `replies/`, by the rule the running device uses (`Inbox.adopt`).
    /// Whatever is under the name that the device could not use (a file, a link, a FIFO) is
    /// moved aside first, as the device does at start; every file is replaced atomically
    /// relative to the directory's descriptor, no link followed, owned by the service user.
    func adoptReplies(_ replies: [StoredReply]) throws(ControlFailure) -> String {
        guard !replies.isEmpty else { return "" }
        let inbox: Inbox
        do {
            if let moved = try OwnedDirectory.claim(Inbox.directoryName, in: store.directory, suffix: "\(time(nil))") {
                notes.lines.append("\(moved)")
            }
            let box = try store.subdirectory(Inbox.directoryName, maximumFileSize: 256 * 1024)
            inbox = Inbox(storage: box, now: WallTime(secondsSinceEpoch: Int64(time(nil))))
        } catch {
            throw .failed("cannot use \(store.directory)/\(Inbox.directoryName) (\(error)); nothing changed")
        }
        for p in inbox.problems { notes.lines.append("replies: \(p)") }
        do { return "; replies: \(try inbox.adopt(replies, now: WallTime(secondsSinceEpoch: Int64(time(nil)))).description)" } catch {
            throw .failed("cannot restore the replies (no state file changed; the replies written so far are kept, a union): \(error)")
        }
    }

    /// The person's list; the shipped one when the device never ran (as the device would seed it).
    public func mantras() throws(ControlFailure) -> [String] {
        let bytes: [UInt8]?
        do { bytes = try store.read(MantrasFile.name) } catch { throw .failed("cannot read \(MantrasFile.name): \(error)") }
        guard let bytes else { return DeviceContent.shippedMantras(in: contentDirectory) }
        do { return try MantrasFile.parse(bytes) } catch {
            throw .failed("\(error); nothing changed — the device sets the file aside and keeps what it can when it starts, or replace the list with 'unwind mantras reset'")
        }
    }

    /// The maintainer's patterns as `patterns.txt` holds them.
    public func patterns() throws(ControlFailure) -> [BreathingPreset] {
        try list(PatternsFile.name) { try PatternsFile.parse($0) }
    }

    /// The person's coping cards as `copingCards.txt` holds them.
    public func copingCards() throws(ControlFailure) -> [CopingCard] {
        try list(CopingCardsFile.name) { try CopingCardsFile.parse($0) }
    }

    /// A list file as the device would load it (missing: none); one that does not parse is
    /// left for the device, which sets it aside and keeps its good lines.
    func list<T>(_ name: String, _ parse: ([UInt8]) throws -> [T]) throws(ControlFailure) -> [T] {
        let bytes: [UInt8]?
        do { bytes = try store.read(name) } catch { throw .failed("cannot read \(name): \(error)") }
        guard let bytes else { return [] }
        do { return try parse(bytes) } catch {
            throw .failed("\(error); nothing changed — the device sets the file aside and keeps its good lines when it starts")
        }
    }

    func slotState(_ slot: Int) throws(ControlFailure) -> AlertSlotState {
        do { return AlertSlotState(file: try store.read(AlertSlotFile.name(slot: slot))) } catch {
            throw .failed("cannot read \(AlertSlotFile.name(slot: slot)): \(error)")
        }
    }

    func withMantras(_ r: ControlResponse, _ items: [String], current: Int) -> ControlResponse {
        var r = r
        r.mantras = MantrasReport(items: items, current: items.isEmpty ? 0 : current)
        return r
    }

    func write(_ name: String, _ text: String) throws(ControlFailure) { try write(name, Array(text.utf8)) }

    func write(_ name: String, _ bytes: [UInt8]) throws(ControlFailure) {
        try setAsideUnusable([name])
        do { try store.replace(name, with: bytes) } catch { throw .failed("cannot write \(name): \(error)") }
    }

    /// Before files are replaced: what the device could not have loaded is kept aside
    /// (`StateFileCheck.keepAside`); the answer says where each went.
    func setAsideUnusable(_ names: [String]) throws(ControlFailure) {
        do { notes.lines += try StateFileCheck.keepAside(names, in: store) } catch {
            throw .failed(error.message + "; nothing changed")
        }
    }
}

/// The files of a backup, read from a state directory (`unwind backup`).
public enum StateBackupReader {
    /// Every file of the device's directory `name` that an archive may hold under `prefix`
    /// (no link followed; a directory that is not there holds nothing).
    static func readDirectory(_ name: String, in stateDirectory: String, prefix: String, maximumFileSize: Int,
                              into files: inout [String: [UInt8]]) throws(ControlFailure) {
        let path = stateDirectory + "/" + name
        var info = stat()
        guard lstat(path, &info) == 0 else { return }
        let box: DirectoryStore
        let names: [String]
        do {
            box = try DirectoryStore(directory: path, maximumFileSize: maximumFileSize)
            names = try box.names()
        } catch { throw .failed("cannot use \(path): \(error)") }
        for n in names.sorted() where StateArchive.isKnown(prefix + n) {
            do { if let b = try box.read(n) { files[prefix + n] = b } } catch {
                throw .failed("cannot read \(name)/\(n): \(error)")
            }
        }
    }

    /// The nine state files (what a missing one means, when missing), the breathing choice and
    /// patterns when there are, and the outbox's messages.
    /// Holds the state lock shared while reading, so the files are of one moment.
    public static func read(stateDirectory: String, contentDirectory: String? = nil) throws(ControlFailure) -> [String: [UInt8]] {
        let lock = StateLock(stateDirectory: stateDirectory)
        return try lock.withLock(exclusive: false) { () throws(ControlFailure) -> [String: [UInt8]] in
            var files: [String: [UInt8]] = [:]
            let store: DirectoryStore
            do { store = try DirectoryStore(directory: stateDirectory) } catch { throw .failed("cannot use the state directory: \(error)") }
            func read(_ name: String) throws(ControlFailure) -> [UInt8]? {
                do { return try store.read(name) } catch { throw .failed("cannot read \(name): \(error)") }
            }
            files[TotalTimeFile.name] = try read(TotalTimeFile.name) ?? Array(TotalTimeFile.format(.zero).utf8)
            files[SessionHistoryFile.name] = try read(SessionHistoryFile.name) ?? []
            files[MantrasFile.name] = try read(MantrasFile.name)
                ?? Array(MantrasFile.format(DeviceContent.shippedMantras(in: contentDirectory)).utf8)
            files[RemindersFile.name] = try read(RemindersFile.name) ?? Array(RemindersFile.format(.never).utf8)
            for name in AlertSlotFile.names { files[name] = try read(name) ?? [] }
            // Only when there are: an archive without them keeps the device's own at a restore.
            for name in StateArchive.optionalFiles { if let b = try read(name) { files[name] = b } }
            try Self.readDirectory("outbox", in: stateDirectory, prefix: StateArchive.outboxPrefix, maximumFileSize: 64 * 1024, into: &files)
            // The replies as the inbox wrote them (`.reply` files; parts still waiting are not kept).
            try Self.readDirectory(Inbox.directoryName, in: stateDirectory, prefix: StateArchive.repliesPrefix, maximumFileSize: 256 * 1024, into: &files)
            return files
        }
    }
}
