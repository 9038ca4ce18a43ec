import Logging
import UnwindMaintenance
import UnwindCore

import UnwindRender
import UnwindSeams
import UnwindModem

/// What the loop measured about itself.
public struct LoopStatistics: Sendable, Equatable {
    public var framesRendered = 0
    /// Frame deadlines that passed before the loop could draw them (dropped, not queued).
    public var framesMissed = 0
    public var motorEdgesApplied = 0
    /// The worst lateness of a motor edge, from its scheduled instant to the line changing.
    public var worstMotorLateness: Duration = .zero
    /// Every motor edge's lateness, in steps (its median and 99th percentile).
    public var motorLateness = LatenessCounts()
    public var errors = 0
    /// Reminder alarms that went off (whether or not the core showed a reminder for them).
    public var alarmsFired = 0
    /// Times the wall clock was set while an alarm was armed (the due time was recomputed).
    public var clockChanges = 0
}

/// The real-time loop: reads buttons, runs the core, drives the motor on the exact instants the
/// core scheduled, and draws at 30 frames per second on absolute deadlines.
///
/// Everything it touches is injected — clock, waiter, lines, presenter, store — so the same
/// loop runs on the board, in the terminal simulator and in tests on simulated time.
public final class DeviceLoop {
    public static let framesPerSecond: Int64 = 30

    public private(set) var core: DeviceCore
    public internal(set) var statistics = LoopStatistics()
    public private(set) var framebuffer: Framebuffer
    /// What the screen draws with (Unifont, when the system has it).
    public let fonts: Fonts

    let clock: DeviceClock
    let waiter: LoopWaiter
    let buttons: ButtonLines
    let motor: MotorLine
    let presenter: FramePresenter
    let persistence: StatePersistence
    let logger: Logger
    let display: DisplayControl?
    let camera: GroundingCamera?
    let alerts: AlertLink?
    /// The maintainer's control socket (none: no commands reach this device).
    let control: ControlServer?
    /// Effects produced while performing effects (the core's answer to a failed send).
    var deferred: [Effect] = []
    var buttonsFailing = false

    var classifier: ButtonClassifier
    var timeline = MotorTimeline()
    var motorOn = false
    var motorFailing = false
    /// What the core was last told of the display and the SD card (the motor: `motorFailing`).
    private var displayFailing = false
    private var cardFailing = false
    var effects: [Effect] = []
    var gestures: [ButtonGesture] = []
    var edges: [ButtonEdge] = []
    let frameOrigin: Instant
    var frameIndex: Int64 = 0
    var descriptors: [Int32] = []
    /// Alarm, modem, control socket and whatever the assembly adds (the stop signals), each
    /// serviced once a pass in this order.
    var participants: [LoopParticipant] = []
    let reminderAlarm: ReminderAlarm?
    /// Set by `requestStop` (a stop signal, a test): the current `run` ends after this pass.
    public private(set) var stopRequested = false
    /// Called with every gesture, after the core has seen it (the simulator's log uses it).
    public var onGesture: ((ButtonGesture, Instant) -> Void)?

    /// - Parameters:
    ///   - alarm: the wall-clock alarm for reminders (none: reminders never fire).
    ///   - displayControl: the panel's power and contrast, for screen care (none: left as is).
    ///   - camera: the grounding capture command (none: captures write nothing).
    ///   - control: the control socket the maintainer's commands talk to (none: they cannot).
    ///     Serviced on every pass without blocking; see `ControlServer`.
    ///   - participants: anything else to wake for and service each pass (after the others).
    ///   - fonts: what the screen draws a reply's or a mantra's other scripts with (Unifont).
    public init(core: DeviceCore, clock: DeviceClock, waiter: LoopWaiter, buttons: ButtonLines,
                motor: MotorLine, presenter: FramePresenter, persistence: StatePersistence,
                buttonTiming: ButtonClassifier.Timing = .init(), display: (width: Int, height: Int) = (128, 64),
                logger: Logger, alarm: WallClockAlarm? = nil, displayControl: DisplayControl? = nil,
                camera: GroundingCamera? = nil, alerts: AlertLink? = nil, control: ControlServer? = nil,
                participants extra: [LoopParticipant] = [], fonts: Fonts = .builtIn) {
        self.fonts = fonts
        self.core = core
        self.clock = clock
        self.waiter = waiter
        self.buttons = buttons
        self.motor = motor
        self.presenter = presenter
        self.persistence = persistence
        self.logger = logger
        self.classifier = ButtonClassifier(timing: buttonTiming)
        self.framebuffer = Framebuffer(width: display.width, height: display.height)
        self.frameOrigin = clock.now().instant
        self.display = displayControl
        self.camera = camera
        self.alerts = alerts
        self.control = control
        self.reminderAlarm = alarm.map(ReminderAlarm.init)
        if let reminderAlarm { participants.append(reminderAlarm) }
        if let alerts { participants.append(AlertNews(alerts)) }
        if let control { participants.append(ControlService(control, desk: MaintenanceDesk(device: self, server: control, logger: logger))) }
        participants.append(contentsOf: extra)
        descriptors.reserveCapacity(32)
        effects.reserveCapacity(64)
        gestures.reserveCapacity(16)
        edges.reserveCapacity(16)
        setMotor(false, scheduled: frameOrigin, now: frameOrigin)
        // No way to send alerts at all: the menu bar says so from the first frame (and the
        // person is told, as for any lasting "not ready").
        if alerts == nil {
            self.core.apply(.alertReadiness(AlertReadiness(problems: [.noModem])), at: clock.now(), effects: &effects)
            perform()
        }
    }

    /// The instant frame `k` is due: computed from the origin each time, so no drift accumulates.
    func frameDeadline(_ k: Int64) -> Instant {
        Instant(nanoseconds: frameOrigin.nanoseconds + k * 1_000_000_000 / Self.framesPerSecond)
    }

    /// Runs until `shouldStop` says so (or `requestStop`), then shuts down cleanly (session
    /// saved, motor low).
    public func run(until shouldStop: () -> Bool = { false }) {
        while !stopRequested && !shouldStop() { step() }
        shutdown()
    }

    /// Ends `run` after the current pass (a stop signal's participant calls it).
    public func requestStop() { stopRequested = true }

    /// An event from a participant (the modem's news, the alarm, …): the core changes, and what
    /// it asks for (saves, motor edges) is done at once.
    public func apply(_ event: DeviceEvent, at now: Moment) {
        core.apply(event, at: now, effects: &effects)
        perform()
        applyMotor(now.instant)
    }

    /// One pass: whatever is due now, then one wait for the next thing that will be.
    public func step() {
        var now = clock.now()
        // Buttons first: a stop pressed on a corner's instant cancels that corner's pulse
        // instead of letting it start for no time at all.
        edges.removeAll(keepingCapacity: true)
        do {
            try buttons.readEdges(into: &edges)
            buttonsFailing = false
        } catch {
            // Said once until the lines answer again, not on every pass.
            if !buttonsFailing { report(error) }
            buttonsFailing = true
        }
        gestures.removeAll(keepingCapacity: true)
        for e in edges { classifier.feed(e, into: &gestures) }
        classifier.advance(to: now.instant, into: &gestures)
        for g in gestures {
            core.apply(.button(g), at: now, effects: &effects)
            onGesture?(g, now.instant)
        }
        perform()
        applyMotor(now.instant)
        for p in participants { p.service(self, at: now) }

        if now.instant >= frameDeadline(frameIndex) {
            core.apply(.tick, at: now, effects: &effects)
            perform()
            now = clock.now()
            applyMotor(now.instant)
            Screen.render(core.state, at: now.instant, fonts: fonts, into: &framebuffer)
            presenter.present(framebuffer, at: now.instant)
            statistics.framesRendered += 1
            watchHealth(at: now)
            // The frame due now is drawn; any whose deadline also passed are dropped.
            let due = (now.instant.nanoseconds - frameOrigin.nanoseconds) * Self.framesPerSecond / 1_000_000_000
            if due > frameIndex { statistics.framesMissed += Int(due - frameIndex) }
            frameIndex = max(frameIndex, due) + 1
        }

        var deadline = frameDeadline(frameIndex)
        if let t = timeline.next, t < deadline { deadline = t }
        if let t = classifier.nextDeadline(), t < deadline { deadline = t }
        if let t = buttons.nextEdgeTime, t < deadline { deadline = t }
        for p in participants { if let t = p.nextDeadline, t < deadline { deadline = t } }
        if deadline > clock.now().instant && !stopRequested {
            descriptors.removeAll(keepingCapacity: true)
            descriptors.append(contentsOf: buttons.pollDescriptors)
            for p in participants { descriptors.append(contentsOf: p.pollDescriptors) }
            do { try waiter.wait(until: deadline, watching: descriptors) } catch { report(error) }
        }
    }

    /// Ends a running session, saves, drives the motor low and waits for the writes.
    public func shutdown() {
        let now = clock.now()
        core.apply(.shutdown, at: now, effects: &effects)
        perform()
        setMotor(false, scheduled: now.instant, now: now.instant)
        reminderAlarm?.disarm()
        persistence.flush()
        // Nothing of the grounding exercise outlives the daemon.
        camera?.close()
        alerts?.close()
    }

    /// A maintainer's change (from the control socket), applied between passes as a button's
    /// is: the core changes, and what it asks for (saves, motor edges) is done at once.
    @discardableResult
    func maintain(_ change: MaintenanceChange) -> EventRefusal? {
        let now = clock.now()
        let start = effects.count
        let refusal = core.apply(.maintainer(change), at: now, effects: &effects)
        saveTogether(from: start)
        perform()
        applyMotor(now.instant)
        return refusal
    }

    /// The files one maintainer's change saves (a statistics reset: the totals and the history;
    /// a pattern removed: the list and the choice) are committed as one, as a restore's are: a
    /// kill between two writes must not leave half a change on the card.
    private func saveTogether(from start: Int) {
        var files: [(name: String, bytes: [UInt8])] = []
        for case .save(let file, let text) in effects[start...] {
            if let i = files.firstIndex(where: { $0.name == file.name }) {
                files[i].bytes = Array(text.utf8)
            } else {
                files.append((file.name, Array(text.utf8)))
            }
        }
        guard files.count > 1 else { return }
        var rest = Array(effects[..<start])
        rest += effects[start...].filter { if case .save = $0 { false } else { true } }
        effects = rest
        persistence.saveAll(files)
    }

    private func perform() {
        for effect in effects {
            switch effect {
            case .motor(let edge): timeline.insert(edge)
            case .cancelMotor:
                timeline.removeAll()
                let now = clock.now().instant
                setMotor(false, scheduled: now, now: now)
            case .save(let file, let text): persistence.save(file, text)
            case .displayPower(let on): display?.setSleeping(!on)
            case .displayContrast(let level): display?.setContrast(level)
            case .captureImage(let index): camera?.capture(index)
            case .discardCapture(let index): camera?.discard(index)
            case .deleteCaptures: camera?.deleteAll()
            case .sendAlerts(let requests):
                if let alerts { alerts.send(requests, at: clock.now()) } else {
                    logger.error("PANIC: no alert link configured; \(requests.count) alert(s) not sent")
                    for r in requests {
                        let event: DeviceEvent = switch r.purpose {
                        case .panic, .checkIn: .alertDelivery(slot: r.slot, .failed("no modem configured"))
                        case .allClear, .test: .followUpDelivery(slot: r.slot, purpose: r.purpose, .failed("no modem configured"))
                        }
                        core.apply(event, at: clock.now(), effects: &deferred)
                    }
                }
            case .sendText(let text):
                if let alerts { alerts.sendText(text, at: clock.now()) } else {
                    logger.error("no alert link configured; a text to \(text.message.name) is not sent")
                }
            case .dial(let number): alerts?.dial(number, at: clock.now())
            case .hangUp: alerts?.hangUp()
            case .followCallLeftUp: alerts?.followCallLeftUp()
            case .markRepliesSeen(let ids): alerts?.markRepliesSeen(ids)
            case .cancelAlerts(let slots): alerts?.cancelAlerts(slots)
            case .log(let line): logger.notice("\(line)")
            case .runSelfTest:
                if let alerts { alerts.runSelfTest(at: clock.now()) } else {
                    core.apply(.alertReadiness(AlertReadiness(problems: [.noModem])), at: clock.now(), effects: &deferred)
                }
            }
        }
        effects.removeAll(keepingCapacity: true)
        if !deferred.isEmpty {
            swap(&effects, &deferred)
            perform()
        }
    }

    private func applyMotor(_ now: Instant) {
        timeline.takeDue(now) { edge in setMotor(edge.on, scheduled: edge.at, now: now) }
    }

    private func setMotor(_ on: Bool, scheduled: Instant, now: Instant) {
        let late = now - scheduled
        if late > statistics.worstMotorLateness { statistics.worstMotorLateness = late }
        statistics.motorLateness.record(late)
        statistics.motorEdgesApplied += 1
        do {
            try motor.set(on)
            motorOn = on
            if motorFailing {
                motorFailing = false
                core.apply(.deviceProblem(.motor, failing: false), at: clock.now(), effects: &deferred)
                logger.notice("motor line answers again")
            }
        } catch {
            // A failing motor must never stop the breathing square; say it once.
            if !motorFailing {
                logger.error("motor: \(error)")
                core.apply(.deviceProblem(.motor, failing: true), at: clock.now(), effects: &deferred)
            }
            motorFailing = true
            statistics.errors += 1
        }
    }

    /// The display and the SD card, told to the core when they start or stop failing.
    private func watchHealth(at now: Moment) {
        let display = presenter.isFailing, card = persistence.writesFailing
        if display != displayFailing {
            displayFailing = display
            core.apply(.deviceProblem(.display, failing: display), at: now, effects: &effects)
        }
        if card != cardFailing {
            cardFailing = card
            core.apply(.deviceProblem(.stateDisk, failing: card), at: now, effects: &effects)
        }
    }

    func report(_ error: Error) {
        statistics.errors += 1
        logger.error("\(error)")
    }
}

extension DeviceLoop: MaintenanceDevice {
    var modem: GSMModem? { alerts?.attachedModem }
}
