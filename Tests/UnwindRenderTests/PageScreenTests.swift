import Testing
@testable import UnwindCore
@testable import UnwindRender

@Suite struct GroundingScreenTests {
    func render(_ g: GroundingState) -> Framebuffer {
        var state = DeviceCore().state
        state.page = .grounding
        state.grounding = g
        var fb = Framebuffer()
        Screen.render(state, at: .seconds(1), into: &fb)
        return fb
    }

    /// Frames in the row at the top: (count, filled), read from the pixels along y = framesY + 7.
    func frames(_ fb: Framebuffer) -> (count: Int, filled: Int) {
        let s = GroundingScreen.self
        var count = 0, filled = 0
        var x = 0
        while x < fb.width {
            if fb[x, s.framesY] {
                count += 1
                if fb[x + s.frameWidth / 2, s.framesY + s.frameHeight / 2] { filled += 1 }
                x += s.frameWidth
            } else {
                x += 1
            }
        }
        return (count, filled)
    }

    @Test func theRowShowsNFramesFilledAsCaptured() {
        #expect(frames(render(GroundingState(captured: 0))) == (5, 0))
        #expect(frames(render(GroundingState(captured: 3))) == (5, 3))
        #expect(frames(render(GroundingState(captured: 15))) == (4, 0))     // after 5 see, touch, hear: 4
        #expect(frames(render(GroundingState(captured: 17))) == (4, 2))
        #expect(frames(render(GroundingState(captured: 42))) == (1, 0))
    }

    @Test func theGoalIsShownLarge() {
        var expected = Framebuffer()
        Screen.centered("[TOUCH]", font: .large, y: GroundingScreen.goalY, into: &expected)
        let fb = render(GroundingState(captured: 5))
        for y in GroundingScreen.goalY..<(GroundingScreen.goalY + 20) {
            for x in 0..<128 { #expect(fb[x, y] == expected[x, y]) }
        }
    }

    @Test func theGridShowsAllFortyFive() {
        let fb = render(GroundingState(captured: 45))
        let s = GroundingScreen.self
        let x0 = (128 - (GroundingState.gridColumns * s.cellPitchX - 1)) / 2
        var cells = 0
        var solid = 0
        for i in 0..<45 {
            let x = x0 + (i % 9) * s.cellPitchX, y = s.gridY + (i / 9) * s.cellPitchY
            if fb[x, y] && fb[x + s.cellWidth - 1, y + s.cellHeight - 1] { cells += 1 }
            if fb[x + 1, y + 1] { solid += 1 }
        }
        #expect(cells == 45)
        #expect(solid == 15)      // the [SEE] cells
    }
}

@Suite struct AffirmationsScreenTests {
    func state(_ mantras: [String], page: Page = .affirmations) -> DeviceState {
        var s = DeviceCore(mantras: mantras, reminder: .weekly(.sunday, hour: 21, minute: 30)).state
        s.page = page
        return s
    }

    func render(_ s: DeviceState, at t: Double = 1) -> Framebuffer {
        var fb = Framebuffer()
        Screen.render(s, at: .seconds(t), into: &fb)
        return fb
    }

    func region(_ fb: Framebuffer, y: Int, height: Int) -> [Bool] {
        var out: [Bool] = []
        for yy in y..<(y + height) { for x in 0..<128 { out.append(fb[x, yy]) } }
        return out
    }

    @Test func positionAndReminderAreOnTheStatusRow() {
        var s = state(["a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l"])
        for _ in 0..<11 { s.mantras.next() }
        var expected = Framebuffer()
        expected.text("12/12", font: .small, x: 1, y: 10)
        expected.text("Weekly Sun 21:30", font: .small, x: 128 - 64, y: 10)
        #expect(region(render(s), y: 10, height: 6) == region(expected, y: 10, height: 6))
    }

    @Test func aShortMantraIsCentredAndStill() {
        let s = state(["I am safe."])
        let a = render(s, at: 1), b = render(s, at: 20)
        #expect(a == b)
        var expected = Framebuffer()
        expected.text("I am safe.", font: .regular, x: (128 - 60) / 2, y: MantraView.top + (MantraView.height - 12) / 2 + 1)
        #expect(region(a, y: MantraView.top, height: MantraView.height) == region(expected, y: MantraView.top, height: MantraView.height))
    }

    @Test func aLongMantraScrollsSmoothlyAndComesBack() {
        let long = "I have come through hard nights before, and I will come through this one. One breath at a time is enough for me tonight."
        let s = state([long])
        #expect(s.mantras.lines.count > 3)
        let overflow = s.mantras.lines.count * MantraView.pitch - MantraView.height
        var last = -1
        var steps: [Int] = []
        var t = 0.0
        while t < 60 {
            let o = MantraView.scrollOffset(overflow: overflow, elapsed: .seconds(t))
            #expect(o >= 0 && o <= overflow)
            if last >= 0 { steps.append(abs(o - last)) }
            last = o
            t += 1.0 / 30
        }
        #expect(steps.allSatisfy { $0 <= 1 })        // at most a pixel a frame: smooth
        #expect(MantraView.scrollOffset(overflow: overflow, elapsed: .seconds(1)) == 0)   // it waits at the top first
        #expect(steps.contains(1))
        // Pictures differ while it moves, and the box's edges cut the lines.
        #expect(render(s, at: 1) != render(s, at: 6))
        let fb = render(s, at: 5.3)
        for x in 0..<128 { for y in 9..<MantraView.top where y >= 16 { #expect(!fb[x, y]) } }
    }

    @Test func theEmptyListShowsTheSpecsMessage() {
        let fb = render(state([]))
        var expected = Framebuffer()
        for (i, l) in ["No mantras found.", "Please create a new", "mantra"].enumerated() {
            expected.text(l, font: .regular, x: (128 - l.count * 6) / 2, y: MantraView.top + i * MantraView.pitch + 1)
        }
        #expect(region(fb, y: MantraView.top, height: MantraView.height) == region(expected, y: MantraView.top, height: MantraView.height))
    }

    @Test func confirmSettingsAndReminderScreensDraw() {
        var s = state(["Peace begins with this breath."])
        s.overlay = .confirmDelete
        let confirm = render(s)
        var title = Framebuffer()
        Screen.centered("Delete this mantra?", font: .regular, y: 11, into: &title)
        #expect(region(confirm, y: 11, height: 10) == region(title, y: 11, height: 10))

        var e = ReminderEditor(.daily(hour: 7, minute: 5))
        e.field = .minute
        s.overlay = .reminderSettings(e)
        let settings = render(s)
        // The minute is focused: drawn dark on a lit box.
        let mx = ReminderSettingsScreen.valueX + 3 * 6
        #expect(settings[mx - 1, ReminderSettingsScreen.rowY[2] - 1])
        #expect(settings != confirm)

        s.overlay = .none
        s.reminders.shownSince = .seconds(0)
        let reminder = render(s, page: .breathing)
        #expect(reminder[0, 9] && reminder[127, 16])   // the inverted title bar
    }

    func render(_ s: DeviceState, page: Page) -> Framebuffer {
        var s = s
        s.page = page
        return render(s)
    }

    @Test func everyScreenTextFits() {
        let small = BitmapFont.small
        #expect(MantraList.columns * BitmapFont.regular.width <= 128)
        #expect(small.textWidth("Weekly Wed 23:59") + small.textWidth("999/999") < 128)
        #expect(BitmapFont.regular.textWidth("Delete this mantra?") <= 128)
        #expect(ReminderSettingsScreen.valueX + BitmapFont.regular.textWidth("Wednesday") + 2 <= 128)
        #expect(ReminderSettingsScreen.valueX + BitmapFont.regular.textWidth("every hour") <= 128)
        for g in GroundingGoal.allCases {
            #expect(BitmapFont.large.textWidth(g.label) <= 128)
            #expect(small.textWidth("5 things you can " + g.verb) <= 128)
        }
    }
}

@Suite struct ScreenCareRenderTests {
    @Test func aSleepingDisplayIsDark() {
        var core = DeviceCore()
        var effects: [Effect] = []
        core.apply(.tick, at: Moment(.seconds(0)), effects: &effects)
        core.apply(.tick, at: Moment(.seconds(121)), effects: &effects)
        #expect(core.state.display.asleep)
        var fb = Framebuffer()
        Screen.render(core.state, at: .seconds(121), into: &fb)
        #expect(fb.litPixels == 0)
    }

    @Test func pixelShiftMovesTheWholePicture() {
        let state = DeviceCore().state
        var still = Framebuffer(), moved = Framebuffer()
        Screen.render(state, at: .seconds(1), into: &still)
        Screen.render(state, at: .seconds(180 * 2 + 1), into: &moved)     // (1, 1)
        for y in 0..<63 { for x in 0..<127 { #expect(moved[x + 1, y + 1] == still[x, y]) } }
        for x in 0..<128 { #expect(!moved[x, 0]) }
    }

    @Test func shiftIsExactAcrossPages() {
        var fb = Framebuffer()
        fb.plot(0, 7); fb.plot(5, 15); fb.plot(126, 62); fb.plot(127, 63)
        fb.shift(dx: 1, dy: 1)
        #expect(fb[1, 8] && fb[6, 16] && fb[127, 63])
        #expect(fb.litPixels == 3)            // the corner pixel fell off
    }
}
