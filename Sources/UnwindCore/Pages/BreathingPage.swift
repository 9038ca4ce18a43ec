/// The breathing page: spec 2.1–2.6, with the presets and session lengths chosen before a
/// session starts, and a session that may end by itself.
public struct BreathingState: Equatable, Sendable {
    public enum Session: Equatable, Sendable {
        /// Nothing has run since the page was opened: the timer shows 00:00, SELECT says Start.
        case ready
        /// A session is running; the picture animates from `clock.start`.
        case running(BreathingClock)
        /// A session ended; its time stays on screen and SELECT says Restart.
        case finished(seconds: Int64)
    }

    public var session: Session = .ready
    /// Lifetime totals, not counting a running session.
    public var totals: BreathingTotals
    /// Recent sessions, not counting a running session.
    public var history: [SessionRecord]
    /// Every pattern the page offers, in LEFT/RIGHT order: the shipped presets (a pattern the
    /// configuration gave by its lengths first), then the maintainer's own.
    public internal(set) var presets: [BreathingPreset]
    /// The one SELECT starts (an index into `presets`).
    public internal(set) var chosen: Int
    /// The session length SELECT starts, in minutes; 0: open.
    public internal(set) var minutes: Int
    /// The corner at which the running session ends by itself; nil: it runs until stopped.
    public internal(set) var endCorner: Int?
    /// LEFT or RIGHT is down on the page: its arrow is drawn pressed until the release acts.
    public internal(set) var arrowPressed: Button?
    /// The preset the running session breathes (its name goes into the history).
    public internal(set) var runningName = ""
    /// The person's rating before the running session, if they gave one.
    public internal(set) var beforeRating: Int?
    /// The statistics screen shows the anxiety ratings rather than the times.
    public internal(set) var statsShowRatings = false
    var nextCorner = 0
    var lastCheckpoint = Instant.zero
    var startedWall = WallTime(secondsSinceEpoch: 0)

    public init(totals: BreathingTotals, history: [SessionRecord], presets: [BreathingPreset] = BreathingPreset.builtIn,
                chosen: Int = 0, minutes: Int = 0) {
        self.totals = totals
        self.history = history
        self.presets = presets.isEmpty ? [.box] : presets
        self.chosen = max(0, min(chosen, self.presets.count - 1))
        self.minutes = SessionLength.choices.contains(minutes) ? minutes : 0
    }

    public var isRunning: Bool {
        if case .running = session { return true }
        return false
    }

    /// The preset SELECT starts.
    public var preset: BreathingPreset { presets[chosen] }

    /// The session timer's value.
    public func sessionSeconds(at now: Instant) -> Int64 {
        switch session {
        case .ready: 0
        case .running(let c): (now - c.start).wholeSeconds
        case .finished(let s): s
        }
    }

    /// When the running session ends by itself; nil when it is open (or not running).
    public var endsAt: Instant? {
        guard case .running(let c) = session, let k = endCorner else { return nil }
        return c.corner(k)
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

    /// The presets offered and the one chosen at start: the shipped ones, the configured pattern
    /// (by its shipped name, else by its lengths, first in the list), the maintainer's; the
    /// person's last choice unless `--pattern` said otherwise.
    static func offered(settings: DeviceSettings, custom: [BreathingPreset], remembered: BreathingChoice?)
        -> (presets: [BreathingPreset], chosen: Int, minutes: Int) {
        var list = BreathingPreset.builtIn
        let configured: Int
        if let name = settings.breathing.patternName, let i = list.firstIndex(where: { $0.name == name }) {
            configured = i
        } else if let i = list.firstIndex(where: { $0.pattern == settings.pattern }) {
            configured = i
        } else {
            let numbers = settings.pattern.numbersName
            var name = numbers.count <= BreathingPreset.maximumNameLength ? numbers : "custom"
            // A maintainer's own pattern keeps its name (`unwind patterns add custom …` is
            // allowed): the configured one, which has none of its own, takes a free one.
            var n = 2
            while custom.contains(where: { $0.isCustom && $0.name == name }) {
                name = "custom\(n)"
                n += 1
            }
            list.insert(BreathingPreset(name: name, pattern: settings.pattern), at: 0)
            configured = 0
        }
        for p in custom where p.isCustom && !list.contains(where: { $0.name == p.name }) { list.append(p) }
        var chosen = configured
        var minutes = settings.breathing.sessionMinutes
        if let r = remembered {
            if !settings.breathing.patternOverridesRemembered, let i = list.firstIndex(where: { $0.name == r.pattern }) { chosen = i }
            if SessionLength.choices.contains(r.minutes) { minutes = r.minutes }
        }
        return (list, chosen, minutes)
    }
}

extension DeviceCore {
    /// SELECT answers on the press itself (the first breath is one press away). LEFT and RIGHT
    /// act on their release, so that holding them can mean something else: a short press
    /// chooses the previous / next pattern, holding RIGHT the next session length, holding LEFT
    /// opens the statistics (the spec's Stats button). Their arrow shows the press at once.
    mutating func handleBreathing(_ gesture: ButtonGesture, at now: Moment, effects: inout [Effect]) {
        let idle = !state.breathing.isRunning
        switch gesture {
        case .down(.select):
            if state.breathing.isRunning {
                stopSession(at: now, effects: &effects)
                // A reminder never interrupts a session: one that came due waits for its end.
                if state.reminders.waiting { showReminder(at: now, effects: &effects) }
            } else {
                startSession(at: now, effects: &effects)
            }
        case .down(let b) where idle && (b == .left || b == .right):
            state.breathing.arrowPressed = b
        case .short(.left) where idle: choosePreset(by: -1, effects: &effects)
        case .short(.right) where idle: choosePreset(by: 1, effects: &effects)
        case .long(.right) where idle: chooseNextLength(effects: &effects)
        case .long(.left) where idle:
            state.breathing.statsShowRatings = false
            state.overlay = .stats
        default: break
        }
    }

    mutating func choosePreset(by step: Int, effects: inout [Effect]) {
        let n = state.breathing.presets.count
        state.breathing.chosen = ((state.breathing.chosen + step) % n + n) % n
        saveChoice(effects: &effects)
    }

    mutating func chooseNextLength(effects: inout [Effect]) {
        let choices = SessionLength.choices
        let i = choices.firstIndex(of: state.breathing.minutes) ?? 0
        state.breathing.minutes = choices[(i + 1) % choices.count]
        saveChoice(effects: &effects)
    }

    func saveChoice(effects: inout [Effect]) {
        let b = state.breathing
        effects.append(.save(.breathingChoice, BreathingChoiceFile.format(BreathingChoice(pattern: b.preset.name, minutes: b.minutes))))
    }

    // MARK: Breathing sessions

    mutating func startSession(at now: Moment, rating: Int? = nil, effects: inout [Effect]) {
        let preset = state.breathing.preset
        let clock = BreathingClock(pattern: preset.pattern, start: now.instant)
        state.breathing.session = .running(clock)
        state.breathing.runningName = preset.name
        state.breathing.beforeRating = rating
        state.breathing.endCorner = state.breathing.minutes > 0
            ? clock.firstBreathStart(atOrAfter: now.instant + .seconds(state.breathing.minutes * 60)) : nil
        state.breathing.nextCorner = 0
        state.breathing.lastCheckpoint = now.instant
        state.breathing.startedWall = now.wall
        state.breathing.arrowPressed = nil
        scheduleCorners(clock, until: now.instant + settings.hapticLookahead, effects: &effects)
    }

    /// Ends the running session at `endedAt` (default: now) and saves it. A session stopped by a
    /// press drops the motor's pending pulses; one that ended by itself keeps its end cue.
    mutating func stopSession(at now: Moment, endedAt: Instant? = nil, asking: Bool = true, effects: inout [Effect]) {
        guard case .running(let clock) = state.breathing.session else { return }
        let end = endedAt ?? now.instant
        let seconds = (end - clock.start).wholeSeconds
        if endedAt == nil { effects.append(.cancelMotor) }
        state.breathing.totals = state.breathing.totals.adding(session: seconds)
        let counted = seconds >= BreathingTotals.minimumSession
        if counted {
            state.breathing.history.append(runningRecord(seconds: seconds))
            if state.breathing.history.count > SessionHistoryFile.capacity {
                state.breathing.history.removeFirst(state.breathing.history.count - SessionHistoryFile.capacity)
            }
        }
        state.breathing.session = .finished(seconds: seconds)
        state.breathing.endCorner = nil
        saveBreathing(at: end, effects: &effects)
        if counted && asking { askAfterSession(at: now.instant) }
    }

    func runningRecord(seconds: Int64) -> SessionRecord {
        SessionRecord(started: state.breathing.startedWall, seconds: seconds, pattern: state.breathing.runningName,
                      before: state.breathing.beforeRating)
    }

    /// A timed session reached its end corner: it ends there (not at the tick that noticed),
    /// is saved like a stop, and the display may sleep soon after, so a person who fell asleep
    /// breathing is not kept awake by the screen.
    mutating func endSessionByItself(_ clock: BreathingClock, at end: Instant, now: Moment, effects: inout [Effect]) {
        stopSession(at: now, endedAt: end, effects: &effects)
        if let sleep = settings.screen.sleepAfter {
            let asleepAt = end + min(sleep, settings.breathing.sleepAfterEnd)
            let last = state.display.lastActivity ?? end
            state.display.lastActivity = max(last, asleepAt - sleep)
        }
        if state.reminders.waiting { showReminder(at: now, effects: &effects) }
    }

    /// Hands the motor every phase start before `horizon`, each with its phase's pulses (softened
    /// in a timed session's last stretch), and the end cue at a timed session's end.
    mutating func scheduleCorners(_ clock: BreathingClock, until horizon: Instant, effects: inout [Effect]) {
        let end = state.breathing.endCorner
        let endAt = end.map { clock.corner($0) }
        while true {
            let k = state.breathing.nextCorner
            let at = clock.corner(k)
            guard at < horizon else { return }
            if let end, let endAt, k >= end {
                if k == end { playEndCue(at: endAt, effects: &effects) }
                state.breathing.nextCorner = end + 1
                return
            }
            let softened = endAt.map { at >= $0 - settings.breathing.softenLast } ?? false
            settings.haptics.forEachEdge(phaseAt: at, phase: clock.phase(ofCorner: k), until: clock.corner(k + 1),
                                         softened: softened) {
                effects.append(.motor($0))
            }
            state.breathing.nextCorner += 1
        }
    }

    func playEndCue(at t: Instant, effects: inout [Effect]) {
        var at = t
        var on = true
        for d in settings.breathing.endCue {
            effects.append(.motor(MotorEdge(at: at, on: on)))
            at = at + d
            on.toggle()
        }
        if !on { effects.append(.motor(MotorEdge(at: at, on: false))) }
    }

    /// Every frame during a session: the next pulses, a timed session's end, the checkpoint.
    mutating func tickBreathing(at now: Moment, effects: inout [Effect]) {
        guard case .running(let clock) = state.breathing.session else { return }
        // Scheduled first: the end cue is handed over before the session ends, even by a late tick.
        scheduleCorners(clock, until: now.instant + settings.hapticLookahead, effects: &effects)
        if let k = state.breathing.endCorner {
            let end = clock.corner(k)
            if now.instant >= end { return endSessionByItself(clock, at: end, now: now, effects: &effects) }
        }
        if now.instant - state.breathing.lastCheckpoint >= settings.checkpointInterval {
            state.breathing.lastCheckpoint = now.instant
            saveBreathing(at: now.instant, effects: &effects)
        }
    }

    /// Writes totals and history as they stand at `now`, a running session included, so the
    /// files on the card are never more than one checkpoint behind.
    func saveBreathing(at now: Instant, effects: inout [Effect]) {
        let b = state.breathing
        var history = b.history
        if case .running(let c) = b.session, (now - c.start).wholeSeconds >= BreathingTotals.minimumSession {
            history.append(runningRecord(seconds: (now - c.start).wholeSeconds))
        }
        effects.append(.save(.totalTime, TotalTimeFile.format(b.totals(at: now))))
        effects.append(.save(.sessionHistory, SessionHistoryFile.format(history)))
    }

    mutating func leave(_ page: Page, at now: Moment, effects: inout [Effect]) {
        guard page == .breathing else { return }
        // Spec 2.4.1: switching away resets the session timer; the data table: saved on leaving.
        state.breathing.session = .ready
        state.breathing.arrowPressed = nil
        saveBreathing(at: now.instant, effects: &effects)
    }

    /// A restore's choice: the named pattern if it is offered (else the one chosen now stays),
    /// and the length; saved.
    mutating func setBreathingChoice(_ choice: BreathingChoice, effects: inout [Effect]) {
        if let i = state.breathing.presets.firstIndex(where: { $0.name == choice.pattern }) { state.breathing.chosen = i }
        if SessionLength.choices.contains(choice.minutes) { state.breathing.minutes = choice.minutes }
        saveChoice(effects: &effects)
    }

    /// The maintainer's patterns changed (`unwind patterns add|remove`): the page offers the new
    /// list, the chosen pattern stays chosen by name (a removed one: the first offered), and the
    /// list is saved. A running session goes on with the pattern it started with.
    mutating func setCustomPatterns(_ custom: [BreathingPreset], effects: inout [Effect]) {
        let name = state.breathing.preset.name
        var list = state.breathing.presets.filter { !$0.isCustom }
        for p in custom where !list.contains(where: { $0.name == p.name }) {
            list.append(BreathingPreset(name: p.name, pattern: p.pattern, isCustom: true))
        }
        state.breathing.presets = list
        state.breathing.chosen = list.firstIndex { $0.name == name } ?? 0
        effects.append(.save(.patterns, PatternsFile.format(list)))
        if state.breathing.preset.name != name { saveChoice(effects: &effects) }
    }
}
