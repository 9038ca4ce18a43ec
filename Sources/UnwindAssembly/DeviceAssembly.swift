import Logging
import UnwindMaintenance
import UnwindCore
import UnwindRuntime
import UnwindSeams
import UnwindLinuxHardware
import UnwindModem

/// Why a device could not be assembled; the text is what `unwind` prints after "unwind: ".
public enum AssemblyError: Error, CustomStringConvertible {
    case stateDirectory(StoreError)
    case controlSocket(ControlFailure)
    /// Opening the alert link (the modem's outbox and serial line) failed.
    case alerts(any Error)

    public var description: String {
        switch self {
        case .stateDirectory(let e): "cannot use the state directory: \(e)"
        case .controlSocket(let e): "cannot start: \(e)"
        case .alerts(let e): "\(e)"
        }
    }
}

/// One device, built the same way for the daemon, both simulators, the benchmark and the test
/// rigs: the state directory, the maintainer's socket and lock, the state files loaded into the
/// core, the loop with its participants — and one shutdown, in one order.
public final class DeviceAssembly {
    public let loop: DeviceLoop
    public let persistence: StatePersistence
    /// The control socket and state lock (nil without a socket).
    public let host: MaintenanceHost?
    private var board: Board
    private var finished = false

    /// The assembly owns `board` from here on: when it cannot be assembled, the board's parts
    /// are undone here, in the board's order, before the error is thrown — every caller's
    /// failure path shuts down as its success path does.
    ///
    /// - Parameter alerts: opens the alert link once the state files are loaded (the modem's
    ///   outbox lives beside them); nil: no alert link.
    public convenience init(board: Board, recipe: DeviceRecipe, alerts: ((Moment) throws -> AlertLink)? = nil,
                            participants: [LoopParticipant] = [], logger: Logger) throws(AssemblyError) {
        do {
            try self.init(assembling: board, recipe: recipe, alerts: alerts, participants: participants, logger: logger)
        } catch {
            for undo in board.teardown { undo() }
            throw error
        }
    }

    private init(assembling board: Board, recipe: DeviceRecipe, alerts: ((Moment) throws -> AlertLink)?,
                 participants: [LoopParticipant], logger: Logger) throws(AssemblyError) {
        self.board = board
        let clock = board.clock
        let store: DirectoryStore
        do { store = try DirectoryStore(directory: recipe.stateDirectory) } catch { throw .stateDirectory(error) }
        if let socket = recipe.socket {
            // The maintainer's commands find the device through the state directory and reach it
            // on the control socket; the files are loaded holding the state lock.
            do {
                host = try MaintenanceHost(stateDirectory: recipe.stateDirectory, socketPath: socket,
                                           contentDirectory: recipe.contentDirectory, logger: logger,
                                           now: clock.now().wall, recentLog: recipe.recentLog,
                                           controlDeadlines: recipe.controlDeadlines)
            } catch { throw .controlSocket(error) }
            if let health = board.displayHealth { host?.server?.displayHealth = health }
        } else {
            host = nil
        }
        // Only once this device holds the state directory (another running one is never
        // disturbed): every way of starting — the daemon, both simulators, the rigs — starts
        // whatever was planted under the directories it keeps there.
        Self.prepareOwnedDirectories(recipe.stateDirectory, now: clock.now().wall, logger: logger)
        persistence = StatePersistence(store: store, logger: logger, writeInBackground: recipe.writeInBackground,
                                       lock: host?.lock)
        let content = recipe.contentDirectory
        let help = DeviceContent.helpLibrary(in: content)
        let load = { [persistence] in
            DeviceCore.starting(settings: recipe.settings, persistence: persistence, help: help, now: clock.now().wall,
                                content: content, counselling: recipe.counselling, website: recipe.website)
        }
        let core = host.map { $0.loading(load) } ?? load()
        var link: AlertLink?
        if let alerts {
            do { link = try alerts(clock.now()) } catch {
                host?.close()
                throw .alerts(error)
            }
        }
        loop = DeviceLoop(core: core, clock: clock, waiter: board.waiter, buttons: board.buttons, motor: board.motor,
                          presenter: board.presenter, persistence: persistence, buttonTiming: recipe.buttonTiming,
                          display: recipe.displaySize, logger: logger, alarm: board.alarm,
                          displayControl: board.displayControl, camera: board.camera, alerts: link,
                          control: host?.server, participants: participants,
                          fonts: SystemFonts.fonts(unifont: recipe.unifont, logger: logger))
    }

    /// The directories a device keeps in its state directory.
    public static let ownedDirectories = [Outbox.directoryName, Inbox.directoryName]

    /// Each owned directory usable, or what was under its name set aside (said in the log, so
    /// `unwind status` shows it among the recent errors) and a new one made.
    static func prepareOwnedDirectories(_ stateDirectory: String, now: WallTime, logger: Logger) {
        for name in ownedDirectories {
            do {
                let opened = try OwnedDirectory.open(name, in: stateDirectory, maximumFileSize: 256 * 1024,
                                                     suffix: "\(now.secondsSinceEpoch)")
                if let moved = opened.setAside {
                    let unsent = name == Outbox.directoryName ? " (alerts in it are not sent)" : ""
                    logger.error("\(moved) in \(stateDirectory); what it held is kept there for inspection\(unsent)")
                }
            } catch {
                logger.error("cannot prepare \(stateDirectory)/\(name): \(error)")
            }
        }
    }

    /// Runs until `shouldStop` says so (or a participant asks the loop to stop), then shuts down.
    public func run(until shouldStop: () -> Bool = { false }) {
        loop.run(until: shouldStop)
        finish()
    }

    /// The one shutdown order, after the loop's own (session saved, motor driven low, alarm
    /// disarmed, writes flushed, photos deleted, the modem closed): the socket and lock closed —
    /// no command may edit the files while the device still writes them — then the board's
    /// parts, in the order it gave. Safe to call twice.
    public func finish() {
        guard !finished else { return }
        finished = true
        host?.close()
        for undo in board.teardown { undo() }
        board.teardown = []
    }
}

/// The stop signals as a loop participant: SIGTERM/SIGINT wake the loop's poll and end `run`
/// after the current pass.
public final class StopOnSignals: LoopParticipant {
    let signals: StopSignals
    private let descriptors: [Int32]
    public private(set) var received: Int32?

    public init(_ signals: [Int32]) throws(DeviceError) {
        self.signals = try StopSignals(signals)
        descriptors = [self.signals.descriptor]
    }

    public var pollDescriptors: [Int32] { descriptors }
    public var nextDeadline: Instant? { nil }

    public func service(_ loop: DeviceLoop, at now: Moment) {
        if let s = signals.take() {
            received = s
            loop.requestStop()
        }
    }
}
