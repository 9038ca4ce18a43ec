import Testing
@testable import UnwindCore

@Suite struct DeviceCoreTests {
    var core = DeviceCore()
    var effects: [Effect] = []

    mutating func press(_ g: ButtonGesture, at s: Double) {
        core.apply(.button(g), at: Moment(.seconds(s), wall: WallTime(secondsSinceEpoch: 1_000_000 + Int64(s))), effects: &effects)
    }

    mutating func tick(_ s: Double) {
        core.apply(.tick, at: Moment(.seconds(s), wall: WallTime(secondsSinceEpoch: 1_000_000 + Int64(s))), effects: &effects)
    }

    var saves: [StateFile: String] {
        var d: [StateFile: String] = [:]
        for case .save(let f, let t) in effects { d[f] = t }
        return d
    }

    var motorEdges: [MotorEdge] { effects.compactMap { if case .motor(let e) = $0 { e } else { nil } } }

    @Test mutating func startsOnBreathingWithStartLabel() {
        #expect(core.state.page == .breathing)
        #expect(core.state.breathing.selectLabel == "Start")
        #expect(core.state.breathing.sessionSeconds(at: .seconds(99)) == 0)
    }

    @Test mutating func selectStartsStopsRestarts() {
        press(.down(.select), at: 10)
        #expect(core.state.breathing.selectLabel == "Stop")
        #expect(core.state.breathing.sessionSeconds(at: .seconds(75.5)) == 65)
        press(.down(.select), at: 75.5)
        #expect(core.state.breathing.selectLabel == "Restart")
        #expect(core.state.breathing.sessionSeconds(at: .seconds(200)) == 65) // stays on screen
        #expect(core.state.breathing.totals == BreathingTotals(totalSeconds: 65, shortestSeconds: 65, longestSeconds: 65, count: 1))
        #expect(saves[.totalTime] == "5\n1\n0\n65\n65\n1\n")
        #expect(saves[.sessionHistory] == "1000010 65 box\n")     // the pattern beside the session
        press(.down(.select), at: 300)
        #expect(core.state.breathing.selectLabel == "Stop")
        #expect(core.state.breathing.sessionSeconds(at: .seconds(300)) == 0)   // restart: from 00:00
    }

    @Test mutating func pageChangesAreLockedDuringASession() {
        press(.down(.select), at: 1)
        press(.short(.page), at: 2)
        #expect(core.state.page == .breathing)
        #expect(core.state.showsLockNotice(at: .seconds(3)))
        #expect(!core.state.showsLockNotice(at: .seconds(5)))
        #expect(core.state.breathing.isRunning)
        press(.down(.select), at: 6)
        press(.short(.page), at: 7)
        #expect(core.state.page == .grounding)
    }

    @Test mutating func pageCyclesAndLeavingResetsTheSessionTimer() {
        press(.down(.select), at: 1)
        press(.down(.select), at: 31)
        effects = []
        press(.short(.page), at: 40)
        #expect(core.state.breathing.session == .ready)
        #expect(saves[.totalTime] == "30\n0\n0\n30\n30\n1\n")      // saved on leaving the page
        press(.short(.page), at: 41)
        press(.short(.page), at: 42)
        #expect(core.state.page == .panic)
        press(.short(.page), at: 43)
        #expect(core.state.page == .howAmIDoing)        // "How am I doing?" after the alert page
        press(.short(.page), at: 44)
        #expect(core.state.page == .breathing)
        #expect(core.state.breathing.sessionSeconds(at: .seconds(50)) == 0)
    }

    @Test mutating func helpOpensOnLongPageAndScrolls() {
        core = DeviceCore(help: HelpLibrary(lines: [.breathing: (0..<20).map { "line \($0)" }]))
        press(.long(.page), at: 1)
        #expect(core.state.overlay == .help(scroll: 0))
        press(.down(.right), at: 2)
        press(.down(.right), at: 3)
        press(.down(.left), at: 4)
        #expect(core.state.overlay == .help(scroll: 1))
        press(.down(.left), at: 5); press(.down(.left), at: 6)
        #expect(core.state.overlay == .help(scroll: 0))
        press(.short(.page), at: 7)   // the release of the long press does not close it; a new press does
        #expect(core.state.overlay == .none)
        #expect(core.state.page == .breathing)
    }

    @Test mutating func statsScreenOpensWhenIdleAndAnyButtonCloses() {
        // LEFT held is the spec's Stats button (a short LEFT/RIGHT chooses the pattern).
        press(.down(.left), at: 0.5)
        #expect(core.state.overlay == .none)
        press(.long(.left), at: 1.3)
        #expect(core.state.overlay == .stats)
        press(.up(.left, heldFor: .seconds(1)), at: 1.5)
        #expect(core.state.overlay == .stats)   // the release of the press that opened them
        press(.down(.select), at: 2)
        #expect(core.state.overlay == .none)
        #expect(!core.state.breathing.isRunning) // the closing press did not also start a session
        press(.down(.select), at: 3)
        press(.down(.left), at: 4)
        press(.long(.left), at: 4.8)
        #expect(core.state.overlay == .none) // not during a session
    }

    @Test mutating func cornerPulsesAreScheduledAhead() {
        press(.down(.select), at: 10)
        // Corner 0 at the start: one pulse (a breath corner).
        #expect(motorEdges == [MotorEdge(at: .seconds(10), on: true), MotorEdge(at: .seconds(10.12), on: false)])
        effects = []
        tick(13.7)   // 13.7 + 0.25 lookahead < 14: nothing yet
        #expect(motorEdges.isEmpty)
        tick(13.8)   // the hold corner at 14: two pulses
        #expect(motorEdges.map(\.at) == [.seconds(14), .seconds(14.12), .seconds(14.22), .seconds(14.34)])
        effects = []
        tick(13.9)
        #expect(motorEdges.isEmpty) // never scheduled twice
        press(.down(.select), at: 15)
        #expect(effects.contains(.cancelMotor))
    }

    @Test mutating func longSessionIsCheckpointedEveryMinute() {
        press(.down(.select), at: 0)
        effects = []
        var t = 0.0
        var checkpoints: [String] = []
        while t < 185 {
            t += 1.0 / 30
            tick(t)
            if let s = saves[.totalTime] { checkpoints.append(s); effects = [] }
        }
        #expect(checkpoints == ["0\n1\n0\n60\n60\n1\n", "0\n2\n0\n120\n120\n1\n", "0\n3\n0\n180\n180\n1\n"])
        // The totals in memory still exclude the running session; the checkpoint counts it once.
        #expect(core.state.breathing.totals == .zero)
    }

    @Test mutating func shutdownCountsTheRunningSession() {
        press(.down(.select), at: 0)
        effects = []
        core.apply(.shutdown, at: Moment(.seconds(42.9)), effects: &effects)
        #expect(saves[.totalTime] == "42\n0\n0\n42\n42\n1\n")
        #expect(effects.contains(.cancelMotor))
        #expect(!core.state.breathing.isRunning)
    }

    /// `unwind hw test motor`: three pulses of 300 ms, 600 ms apart, from 20 ms after the
    /// request, each edge at its instant (the end-to-end test runs on a real clock, where a busy
    /// machine may apply an edge late; the pulses' lengths are the core's, and checked here).
    @Test mutating func aMotorTestIsThreePulsesOf300ms() {
        let now = Moment(.seconds(10), wall: WallTime(secondsSinceEpoch: 1_000_010))
        #expect(core.apply(.maintainer(.motorTest), at: now, effects: &effects) == nil)
        let first = now.instant + .milliseconds(20)
        #expect(motorEdges == (0..<3).flatMap { k in
            let on = first + .milliseconds(600 * k)
            return [MotorEdge(at: on, on: true), MotorEdge(at: on + .milliseconds(300), on: false)]
        })
    }
}
