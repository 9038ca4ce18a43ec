/// The files the core asks the edge to write, each replaced atomically.
public enum StateFile: String, Sendable, CaseIterable {
    case totalTime = "totalTime.txt"
    case sessionHistory = "sessionHistory.txt"
}

/// What the core asks the edge to do. Nothing here has happened yet.
public enum Effect: Equatable, Sendable {
    /// Change the motor line at an exact instant.
    case motor(MotorEdge)
    /// Drop every scheduled motor edge and drive the line low now.
    case cancelMotor
    /// Replace a state file with these contents.
    case save(StateFile, String)
}

/// Everything about the device's behaviour that configuration may change.
public struct DeviceSettings: Equatable, Sendable {
    public var pattern: BreathingPattern
    public var haptics: HapticStyle
    /// A running session is written out this often, so a power cut loses at most this much.
    public var checkpointInterval: Duration
    /// How long "stop first" stays on screen after a locked PAGE press.
    public var lockNotice: Duration
    /// Motor edges are handed to the loop this far ahead of their corner.
    public var hapticLookahead: Duration

    public init(pattern: BreathingPattern = .box, haptics: HapticStyle = HapticStyle(),
                checkpointInterval: Duration = .seconds(60), lockNotice: Duration = .milliseconds(2500),
                hapticLookahead: Duration = .milliseconds(250)) {
        self.pattern = pattern
        self.haptics = haptics
        self.checkpointInterval = checkpointInterval
        self.lockNotice = lockNotice
        self.hapticLookahead = hapticLookahead
    }
}

/// What is drawn over the page.
public enum Overlay: Equatable, Sendable {
    case none
    /// The page's help, scrolled down by `scroll` lines.
    case help(scroll: Int)
    /// The breathing statistics screen.
    case stats
}

/// The breathing page: spec 2.1–2.6.
public struct BreathingState: Equatable, Sendable {
    public enum Session: Equatable, Sendable {
        /// Nothing has run since the page was opened: the timer shows 00:00, SELECT says Start.
        case ready
        /// A session is running; the square animates from `clock.start`.
        case running(BreathingClock)
        /// A session ended; its time stays on screen and SELECT says Restart.
        case finished(seconds: Int64)
    }

    public var session: Session = .ready
    /// Lifetime totals, not counting a running session.
    public var totals: BreathingTotals
    /// Recent sessions, not counting a running session.
    public var history: [SessionRecord]
    var nextCorner = 0
    var lastCheckpoint = Instant.zero
    var startedWall = WallTime(secondsSinceEpoch: 0)

    public var isRunning: Bool {
        if case .running = session { return true }
        return false
    }

    /// The session timer's value.
    public func sessionSeconds(at now: Instant) -> Int64 {
        switch session {
        case .ready: 0
        case .running(let c): (now - c.start).wholeSeconds
        case .finished(let s): s
        }
    }

    /// The totals as they would stand if the running session ended at `now`.
    public func totals(at now: Instant) -> BreathingTotals {
        if case .running(let c) = session { return totals.adding(session: (now - c.start).wholeSeconds) }
        return totals
    }

    /// What SELECT will do, for its label.
    public var selectLabel: String {
        switch session {
        case .ready: "Start"
        case .running: "Stop"
        case .finished: "Restart"
        }
    }
}

/// The whole device as the person sees it.
public struct DeviceState: Equatable, Sendable {
    public var page: Page = .breathing
    public var overlay: Overlay = .none
    public var breathing: BreathingState
    /// "Stop first" is shown until this instant after PAGE was pressed during a session.
    public var lockNoticeUntil: Instant?
    public var help: HelpLibrary

    public func showsLockNotice(at now: Instant) -> Bool {
        guard let until = lockNoticeUntil else { return false }
        return now < until
    }
}

/// The device's behaviour: state + event + time → new state + effects. No I/O, no clock.
public struct DeviceCore: Sendable {
    public private(set) var state: DeviceState
    public let settings: DeviceSettings

    public init(settings: DeviceSettings = DeviceSettings(), totals: BreathingTotals = .zero,
                history: [SessionRecord] = [], help: HelpLibrary = HelpLibrary()) {
        self.settings = settings
        self.state = DeviceState(breathing: BreathingState(totals: totals, history: history), help: help)
    }

    // MARK: Buttons

    public mutating func handle(_ gesture: ButtonGesture, at now: Moment, effects: inout [Effect]) {
        switch state.overlay {
        case .help(let scroll): return handleHelp(gesture, scroll: scroll)
        case .stats:
            // Any press closes the statistics; acting on the press that closes them would surprise.
            if case .down(let b) = gesture, b != .panic { state.overlay = .none }
            return
        case .none: break
        }
        switch gesture {
        case .short(.page):
            if state.breathing.isRunning {
                state.lockNoticeUntil = now.instant + settings.lockNotice
            } else {
                leave(state.page, at: now, effects: &effects)
                state.page = state.page.next
                state.lockNoticeUntil = nil
            }
        case .long(.page):
            state.overlay = .help(scroll: 0)
        default:
            if state.page == .breathing { handleBreathing(gesture, at: now, effects: &effects) }
        }
    }

    private mutating func handleHelp(_ gesture: ButtonGesture, scroll: Int) {
        let last = max(0, state.help.lines(for: state.page).count - 1)
        switch gesture {
        case .down(.left): state.overlay = .help(scroll: max(0, scroll - 1))
        case .down(.right): state.overlay = .help(scroll: min(last, scroll + 1))
        case .short(.page), .short(.select): state.overlay = .none
        default: break
        }
    }

    /// SELECT and RIGHT answer on the press itself: the breathing page gives them no long meaning,
    /// so there is no reason to wait for the release.
    private mutating func handleBreathing(_ gesture: ButtonGesture, at now: Moment, effects: inout [Effect]) {
        switch gesture {
        case .down(.select):
            if state.breathing.isRunning {
                stopSession(at: now, effects: &effects)
            } else {
                startSession(at: now, effects: &effects)
            }
        case .down(.right), .down(.left):
            if !state.breathing.isRunning { state.overlay = .stats }
        default: break
        }
    }

    // MARK: Time

    /// Called every frame (and whenever the loop wakes): schedules upcoming corner pulses and
    /// checkpoints a long session.
    public mutating func tick(at now: Moment, effects: inout [Effect]) {
        guard case .running(let clock) = state.breathing.session else { return }
        scheduleCorners(clock, until: now.instant + settings.hapticLookahead, effects: &effects)
        if now.instant - state.breathing.lastCheckpoint >= settings.checkpointInterval {
            state.breathing.lastCheckpoint = now.instant
            saveBreathing(at: now.instant, effects: &effects)
        }
    }

    /// SIGTERM, SIGINT or a maintainer's stop: a running session counts up to now.
    public mutating func shutdown(at now: Moment, effects: inout [Effect]) {
        if state.breathing.isRunning { stopSession(at: now, effects: &effects) }
        effects.append(.cancelMotor)
        saveBreathing(at: now.instant, effects: &effects)
    }

    // MARK: Breathing sessions

    private mutating func startSession(at now: Moment, effects: inout [Effect]) {
        let clock = BreathingClock(pattern: settings.pattern, start: now.instant)
        state.breathing.session = .running(clock)
        state.breathing.nextCorner = 0
        state.breathing.lastCheckpoint = now.instant
        state.breathing.startedWall = now.wall
        scheduleCorners(clock, until: now.instant + settings.hapticLookahead, effects: &effects)
    }

    private mutating func stopSession(at now: Moment, effects: inout [Effect]) {
        guard case .running(let clock) = state.breathing.session else { return }
        let seconds = (now.instant - clock.start).wholeSeconds
        effects.append(.cancelMotor)
        state.breathing.totals = state.breathing.totals.adding(session: seconds)
        if seconds >= BreathingTotals.minimumSession {
            state.breathing.history.append(SessionRecord(started: state.breathing.startedWall, seconds: seconds))
            if state.breathing.history.count > SessionHistoryFile.capacity {
                state.breathing.history.removeFirst(state.breathing.history.count - SessionHistoryFile.capacity)
            }
        }
        state.breathing.session = .finished(seconds: seconds)
        saveBreathing(at: now.instant, effects: &effects)
    }

    private mutating func scheduleCorners(_ clock: BreathingClock, until horizon: Instant, effects: inout [Effect]) {
        while clock.corner(state.breathing.nextCorner) < horizon {
            let k = state.breathing.nextCorner
            settings.haptics.forEachEdge(cornerAt: clock.corner(k), hold: clock.phase(ofCorner: k).isHold) {
                effects.append(.motor($0))
            }
            state.breathing.nextCorner += 1
        }
    }

    /// Writes totals and history as they stand at `now`, a running session included, so the
    /// files on the card are never more than one checkpoint behind.
    private func saveBreathing(at now: Instant, effects: inout [Effect]) {
        let b = state.breathing
        var history = b.history
        if case .running(let c) = b.session, (now - c.start).wholeSeconds >= BreathingTotals.minimumSession {
            history.append(SessionRecord(started: b.startedWall, seconds: (now - c.start).wholeSeconds))
        }
        effects.append(.save(.totalTime, TotalTimeFile.format(b.totals(at: now))))
        effects.append(.save(.sessionHistory, SessionHistoryFile.format(history)))
    }

    private mutating func leave(_ page: Page, at now: Moment, effects: inout [Effect]) {
        guard page == .breathing else { return }
        // Spec 2.4.1: switching away resets the session timer; the data table: saved on leaving.
        state.breathing.session = .ready
        saveBreathing(at: now.instant, effects: &effects)
    }
}
