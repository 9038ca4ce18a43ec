import Testing
@testable import UnwindCore

@Suite struct GroundingStateTests {
    @Test func fortyFiveCapturesInFifteenShrinkingRows() {
        var g = GroundingState()
        var rows: [(Int, GroundingGoal)] = []
        var indices: [Int] = []
        while !g.isComplete {
            if g.filledInRow == 0 { rows.append((g.rowSize, g.goal)) }
            indices.append(g.capture()!)
        }
        #expect(indices == Array(0..<45))
        #expect(rows.map(\.0) == [5, 5, 5, 4, 4, 4, 3, 3, 3, 2, 2, 2, 1, 1, 1])
        #expect(rows.map(\.1) == Array(repeating: [GroundingGoal.see, .touch, .hear], count: 5).flatMap { $0 })
        #expect(g.capture() == nil)          // nothing more to take
        #expect(g.undo() == nil)             // the finished exercise is not undone
    }

    @Test func rowFillsAndShortensByOneAfterEachN() {
        var g = GroundingState()
        for k in 1...5 { _ = g.capture(); #expect(g.filledInRow == k % 5) }
        #expect(g.goal == .touch && g.rowSize == 5 && g.filledInRow == 0)
        for _ in 0..<10 { _ = g.capture() }
        #expect(g.goal == .see && g.rowSize == 4)
        #expect(g.captured == 15)
    }

    @Test func undoTakesBackOnlyTheCurrentRow() {
        var g = GroundingState()
        _ = g.capture(); _ = g.capture()
        #expect(g.undo() == 1)
        #expect(g.undo() == 0)
        #expect(g.undo() == nil)             // an empty row: nothing to undo
        for _ in 0..<5 { _ = g.capture() }   // [SEE] row done, now [TOUCH]
        #expect(g.goal == .touch)
        #expect(g.undo() == nil)             // the finished [SEE] row stays finished
        _ = g.capture()
        #expect(g.undo() == 5)
        #expect(g.captured == 5)
    }

    @Test func retryStartsAgainFromFiveSee() {
        var g = GroundingState(captured: 45)
        #expect(g.isComplete)
        g.retry()
        #expect(g.captured == 0 && g.goal == .see && g.rowSize == 5 && !g.isComplete)
    }

    @Test func gridCellsDescribeTheWholeExercise() {
        let g = GroundingState(captured: 45)
        #expect(GroundingState.gridRows * GroundingState.gridColumns == 45)
        #expect(g.cell(0)! == (GroundingGoal.see, 5, 1))
        #expect(g.cell(4)! == (GroundingGoal.see, 5, 5))
        #expect(g.cell(5)! == (GroundingGoal.touch, 5, 1))
        #expect(g.cell(14)! == (GroundingGoal.hear, 5, 5))
        #expect(g.cell(15)! == (GroundingGoal.see, 4, 1))
        #expect(g.cell(42)! == (GroundingGoal.see, 1, 1))
        #expect(g.cell(43)! == (GroundingGoal.touch, 1, 1))
        #expect(g.cell(44)! == (GroundingGoal.hear, 1, 1))
        #expect(g.cell(45) == nil)
        // Every goal 15 times: 5 + 4 + 3 + 2 + 1.
        for goal in GroundingGoal.allCases {
            #expect((0..<45).filter { g.cell($0)!.goal == goal }.count == 15)
        }
        #expect(GroundingState(captured: 3).cell(3) == nil)
    }
}

@Suite struct GroundingPageTests {
    var core = DeviceCore()
    var effects: [Effect] = []
    var t = 0.0

    init() {
        core.state.page = .grounding
    }

    mutating func press(_ b: Button) {
        t += 1
        for g in [ButtonGesture.down(b), .short(b), .up(b, heldFor: .milliseconds(80))] {
            core.apply(.button(g), at: Moment(.seconds(t)), effects: &effects)
        }
    }

    var captures: [Int] { effects.compactMap { if case .captureImage(let i) = $0 { i } else { nil } } }
    var motorOnsets: [Instant] { effects.compactMap { if case .motor(let e) = $0, e.on { e.at } else { nil } } }

    @Test mutating func selectCapturesWithATickAndTheCameraEffect() {
        press(.select)
        #expect(core.state.grounding.captured == 1)
        #expect(captures == [0])
        #expect(effects.contains(.motor(MotorEdge(at: .seconds(1), on: true))))
        #expect(effects.contains(.motor(MotorEdge(at: .seconds(1) + .milliseconds(40), on: false))))
    }

    @Test mutating func allFortyFiveThenGridThenRetry() {
        for _ in 0..<44 { press(.select) }
        #expect(!effects.contains(.deleteCaptures))
        press(.select)
        #expect(core.state.grounding.isComplete)
        #expect(captures == Array(0..<45))
        // Spec: photos are kept only until the exercise is completed; three pulses say "done".
        #expect(effects.last(where: { if case .captureImage = $0 { true } else { false } }) == .captureImage(44))
        #expect(effects.filter { $0 == .deleteCaptures }.count == 1)
        effects = []
        press(.left)                         // nothing to undo on the grid
        #expect(core.state.grounding.isComplete && effects.isEmpty)
        press(.select)                       // retry
        #expect(core.state.grounding.captured == 0)
        #expect(effects == [.deleteCaptures])
        press(.select)
        #expect(captures == [0])
    }

    @Test mutating func leftUndoesAndDiscardsThePhoto() {
        press(.select); press(.select)
        effects = []
        press(.left)
        #expect(core.state.grounding.captured == 1)
        #expect(effects == [.discardCapture(1)])
    }

    @Test mutating func leavingAndReturningKeepsTheProgress() {
        for _ in 0..<7 { press(.select) }
        for _ in Page.allCases { press(.page) }
        #expect(core.state.page == .grounding)
        #expect(core.state.grounding.captured == 7)
        #expect(core.state.grounding.goal == .touch && core.state.grounding.filledInRow == 2)
    }

    @Test mutating func pageHelpStillOpens() {
        core.apply(.button(.long(.page)), at: Moment(.seconds(1)), effects: &effects)
        #expect(core.state.overlay == .help(scroll: 0))
        press(.select)                       // SELECT closes help; it captures nothing
        #expect(core.state.overlay == .none)
        #expect(core.state.grounding.captured == 0)
    }
}
