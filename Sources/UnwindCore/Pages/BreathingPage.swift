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

extension DeviceCore {
    /// SELECT and RIGHT answer on the press itself: the breathing page gives them no long meaning,
    /// so there is no reason to wait for the release.
    mutating func handleBreathing(_ gesture: ButtonGesture, at now: Moment, effects: inout [Effect]) {
        switch gesture {
        case .down(.select):
            if state.breathing.isRunning {
                stopSession(at: now, effects: &effects)
                // A reminder never interrupts a session: one that came due waits for its end.
                if state.reminders.waiting { showReminder(at: now, effects: &effects) }
            } else {
                startSession(at: now, effects: &effects)
            }
        case .down(.right), .down(.left):
            if !state.breathing.isRunning { state.overlay = .stats }
        default: break
        }
    }

    // MARK: Breathing sessions

    mutating func startSession(at now: Moment, effects: inout [Effect]) {
        let clock = BreathingClock(pattern: settings.pattern, start: now.instant)
        state.breathing.session = .running(clock)
        state.breathing.nextCorner = 0
        state.breathing.lastCheckpoint = now.instant
        state.breathing.startedWall = now.wall
        scheduleCorners(clock, until: now.instant + settings.hapticLookahead, effects: &effects)
    }

    mutating func stopSession(at now: Moment, effects: inout [Effect]) {
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

    mutating func scheduleCorners(_ clock: BreathingClock, until horizon: Instant, effects: inout [Effect]) {
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
    func saveBreathing(at now: Instant, effects: inout [Effect]) {
        let b = state.breathing
        var history = b.history
        if case .running(let c) = b.session, (now - c.start).wholeSeconds >= BreathingTotals.minimumSession {
            history.append(SessionRecord(started: b.startedWall, seconds: (now - c.start).wholeSeconds))
        }
        effects.append(.save(.totalTime, TotalTimeFile.format(b.totals(at: now))))
        effects.append(.save(.sessionHistory, SessionHistoryFile.format(history)))
    }

    mutating func leave(_ page: Page, at now: Moment, effects: inout [Effect]) {
        guard page == .breathing else { return }
        // Spec 2.4.1: switching away resets the session timer; the data table: saved on leaving.
        state.breathing.session = .ready
        saveBreathing(at: now.instant, effects: &effects)
    }
}
