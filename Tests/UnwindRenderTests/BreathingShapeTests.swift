import Testing
@testable import UnwindCore
@testable import UnwindRender

/// The picture follows the pattern: the square for four-phase patterns (the spec's page, pixel
/// for pixel), the bar for the others; the chooser, the countdown of a timed session,
/// the check-in and the ratings' statistics.
@Suite struct BreathingShapeTests {
    func running(_ preset: BreathingPreset, minutes: Int = 0, at start: Double = 0) -> DeviceCore {
        var core = DeviceCore(settings: DeviceSettings(pattern: preset.pattern),
                              breathingChoice: BreathingChoice(pattern: preset.name, minutes: minutes))
        var effects: [Effect] = []
        core.apply(.button(.down(.select)), at: Moment(.seconds(start)), effects: &effects)
        return core
    }

    func render(_ state: DeviceState, at t: Double) -> Framebuffer {
        var fb = Framebuffer()
        Screen.render(state, at: .seconds(t), into: &fb)
        return fb
    }

    func ascii(_ fb: Framebuffer, x: Int, y: Int, width: Int, height: Int) -> [String] {
        fb.ascii(x: x, y: y, width: width, height: height)
    }

    /// The README's picture of the square page, 5.6 s into a session, pinned to the pixel: the
    /// square, its marker and countdown, the menu bar with its five tabs.
    @Test func theBoxPageIsThePictureItAlwaysWas() {
        let fb = render(running(.box).state, at: 5.6)
        #expect(TextArt.halfBlocks(fb) == Self.boxAt5_6 + "\n")
    }

    @Test func eachPresetHasItsShape() {
        #expect(BreathingPreset.builtIn.map { BreathingShape($0.pattern) } == [.square, .bar, .bar, .bar, .bar])
    }

    /// The column just inside the bar's left edge (clear of the digits): lit rows from the bottom.
    func fill(_ fb: Framebuffer) -> Int {
        let s = BreathingShapes.self
        var n = 0
        var y = s.y + s.side - 2
        while y > s.y && fb[s.barX + 1, y] { n += 1; y -= 1 }
        return n
    }

    @Test func theBarRisesOnTheInhaleAndFallsOnTheExhale() {
        let core = running(.resonance)
        // 4.4 s in, 6.5 s out: half-way through each, half full (21 of 43 rows).
        #expect(fill(render(core.state, at: 0)) == 0)
        #expect(fill(render(core.state, at: 2.2)) == 21)
        #expect(fill(render(core.state, at: 4.4)) == 43)
        #expect(fill(render(core.state, at: 4.4 + 3.25)) == 21)
        #expect(fill(render(core.state, at: 10.9 - 0.001)) == 0)
        // calm's first breath, at 11 a minute: 2.18 s in.
        let calm = running(.calm)
        #expect(fill(render(calm.state, at: 60.0 / 11 * 0.4 / 2)) == 21)
    }

    @Test func theSighsTopUpFillsAboveTheNotch() {
        let core = running(.sigh)
        let s = BreathingShapes.self
        // The notch: triangles either side at two thirds of the bar.
        let ny = s.y + s.side - 1 - 28
        let fb = render(core.state, at: 1)
        #expect(ascii(fb, x: s.barX - 5, y: ny - 3, width: 5, height: 7) == [
            ".....",
            ".#...",
            ".##..",
            ".###.",
            ".##..",
            ".#...",
            ".....",
        ])
        #expect(fill(render(core.state, at: 2)) == 28)            // the first inhale ends at the notch
        #expect(fill(render(core.state, at: 2.5)) == 35)          // the top-up goes on above it
        #expect(fill(render(core.state, at: 3)) == 43)
        // The phase's name and seconds left are shown in every phase.
        var label = Framebuffer()
        label.text("Sip in more", font: .regular, x: BreathingScreen.panelX, y: 12)
        let top = render(core.state, at: 2.5)
        #expect(ascii(top, x: 56, y: 12, width: 72, height: 10) == ascii(label, x: 56, y: 12, width: 72, height: 10))
    }

    @Test func aHoldTracesTheBarsEdge() {
        let s = BreathingShapes.self
        let core = running(.fourSevenEight)
        // 4 s in, then 7 s held full: half-way through the hold the top edge is traced half-way.
        let fb = render(core.state, at: 7.5)
        #expect(fill(fb) == 43)
        #expect(ascii(fb, x: s.barX, y: s.y - 2, width: s.barWidth, height: 2) == [
            "############...........", "############...........",
        ])
        // A hold after breathing out traces the bottom edge from the right.
        let outHold = BreathingPreset(name: "x", pattern: BreathingPattern(holdAfterInhale: .zero))
        let b = render(running(outHold).state, at: 8 + 2)
        #expect(fill(b) == 0)
        #expect(ascii(b, x: s.barX, y: s.y + s.side, width: s.barWidth, height: 1) == ["...........############"])
    }

    @Test func theChooserShowsThePatternAndThePress() {
        var core = DeviceCore()
        var effects: [Effect] = []
        let normal = ascii(render(core.state, at: 1), x: 56, y: 11, width: 5, height: 9)
        #expect(normal == [".....", "...#.", "..##.", ".###.", "####.", ".###.", "..##.", "...#.", "....."])
        core.apply(.button(.down(.left)), at: Moment(.seconds(1)), effects: &effects)
        let pressed = ascii(render(core.state, at: 1), x: 56, y: 11, width: 5, height: 9)
        #expect(pressed == ["#####", "####.", "###..", "##...", "#....", "##...", "###..", "####.", "#####"])
        core.apply(.button(.short(.left)), at: Moment(.seconds(1.1)), effects: &effects)
        var name = Framebuffer()
        name.text("resonance", font: .regular, x: 61 + (62 - 54) / 2, y: 11)
        #expect(ascii(render(core.state, at: 2), x: 61, y: 11, width: 62, height: 10) == ascii(name, x: 61, y: 11, width: 62, height: 10))
        // Each shipped name fits between the arrows.
        for p in BreathingPreset.builtIn { #expect(BitmapFont.regular.textWidth(p.name) <= 62) }
        #expect(BitmapFont.regular.width * BreathingPreset.maximumNameLength <= 62)
    }

    @Test func aTimedSessionShowsWhatIsLeft() {
        let core = running(.box, minutes: 2)
        // Ends at 128 s (the first breath start after two minutes): at 8 s, 2:00 left.
        var expected = Framebuffer()
        expected.text("-02:00", font: .small, x: 104, y: 55)
        let fb = render(core.state, at: 8)
        #expect(ascii(fb, x: 100, y: 55, width: 28, height: 6) == ascii(expected, x: 100, y: 55, width: 28, height: 6))
        // Before the session: the length, bottom right.
        var ready = DeviceCore(breathingChoice: BreathingChoice(pattern: "box", minutes: 10)).state
        ready.page = .breathing
        var want = Framebuffer()
        want.text("10 min", font: .small, x: 104, y: 55)
        #expect(ascii(render(ready, at: 1), x: 100, y: 55, width: 28, height: 6) == ascii(want, x: 100, y: 55, width: 28, height: 6))
    }

    @Test func theCheckInAsksAndShowsTheNumber() {
        var settings = DeviceSettings()
        settings.breathing.checkIn = true
        var core = DeviceCore(settings: settings)
        var title = Framebuffer()
        Screen.centered("How anxious are you?", font: .regular, y: 11, into: &title)
        let fb = render(core.state, at: 1)
        #expect(ascii(fb, x: 0, y: 11, width: 128, height: 10) == ascii(title, x: 0, y: 11, width: 128, height: 10))
        var effects: [Effect] = []
        for i in 0..<3 { core.apply(.button(.down(.right)), at: Moment(.seconds(2 + Double(i))), effects: &effects) }
        var seven = Framebuffer()
        seven.number(7, font: .large, x: (128 - 10) / 2, y: 23)
        let rated = render(core.state, at: 5)
        #expect(ascii(rated, x: 50, y: 23, width: 28, height: 20) == ascii(seven, x: 50, y: 23, width: 28, height: 20))
        // The mark on the scale is at 7.
        let s = RatingScreen.self
        #expect(rated[s.scaleX + 7 * s.scaleStep - 2, s.scaleY - 3] && !rated[s.scaleX + 6 * s.scaleStep - 2, s.scaleY - 3])
    }

    @Test func theStatisticsShowTheAverageChangeAndAChart() {
        var state = DeviceCore(history: [
            SessionRecord(started: WallTime(secondsSinceEpoch: 1), seconds: 300, pattern: "calm", before: 7, after: 3),
            SessionRecord(started: WallTime(secondsSinceEpoch: 2), seconds: 300, pattern: "calm", before: 6, after: 4),
            SessionRecord(started: WallTime(secondsSinceEpoch: 3), seconds: 60),
        ]).state
        state.overlay = .stats
        state.breathing.statsShowRatings = true
        let fb = render(state, at: 1)
        var want = Framebuffer()
        let x = want.text("-", font: .regular, x: 36, y: 39)
        StatsScreen.tenths(30, x: x, y: 39, font: .regular, into: &want)
        #expect(ascii(fb, x: 36, y: 39, width: 36, height: 10) == ascii(want, x: 36, y: 39, width: 36, height: 10))
        // The newest rated session on the right: a stroke from 6 down to 4, a dot at 4.
        let s = StatsScreen.self
        let cx = s.chartX + 11 * 4 + 2
        #expect(fb[cx, s.level(6)] && fb[cx, s.level(5)] && fb[cx - 1, s.level(4)] && fb[cx + 1, s.level(4)])
        #expect(!fb[cx, s.level(6) - 1] && !fb[cx - 1, s.level(6)])
        #expect(RatingSummary(state.breathing.history) == RatingSummary(sessions: 2, averageChangeTenths: -30, averageBeforeTenths: 65, averageAfterTenths: 35))
    }

    static let boxAt5_6 = """
┌────────────────────────────────────────────────────────────────────────────────────────────────────────────────────────────────┐
│█▀▀██▀▀██▀▀▀██▀██▀▀▀█▀█▀██  ▄▄ ▄▄   ▄  ▄ ▄   ▄ ▄▄    ▄ ▄  ▄    ▄ ▄▄▄ ▄▄   ▄      ▄  ▄   ▄▄▄ ▄▄  ▄▄▄       ▄  ▄ ▄ ▄▄▄  ▄  ▄ ▄    │
│█ ▀▄█ ▀▄█ ▀██ ▀ ██ ██ ▀ ██ █ ▄ █▄▀ █ █ █ █ █▄█ █ █   ███ █▄█ █▄█  █  █▄▀ █▄█    █▄█ █   █▄  █▄▀  █       █ ▀ █▄█ █▄  █ ▀ █▄▀    │
│█ ▀▄█ █ █ ▀▀█ █ ██ ██ █ ██ ▀▄█ █ █ ▀▄▀ █▄█ █ ▀ █▄▀   █ █ █ █ █ ▀  █  █ █ █ █    █ █ █▄▄ █▄▄ █ █  █       ▀▄▀ █ █ █▄▄ ▀▄▀ █ █    │
│██████████████████████████                                                                                                      │
│▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀│
│                   ▄▄▄▄▄▄▄                                                                                                      │
│                   █ ▄▄▄ █                              ▄   ▄        ▄▄       ▄                                                 │
│     ███████████████ ███ █▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀█      █   █  ▄▄▄    █    ▄▄ █                                                 │
│     █▀▀▀▀▀▀▀▀▀▀▀▀▀█▄▄▄▄▄█                       █      █▀▀▀█ █   █   █   █  ▀█                                                 │
│     █                                           █      █   █ ▀▄▄▄▀  ▄█▄  ▀▄▄▀█                                                 │
│     █                                           █                                                                              │
│     █                                           █                                                                              │
│     █                                           █                                                                              │
│     █                                           █         ▄██▄      ▄██▄                ▄██▄    ██▀▀▀▀▀▀                       │
│     █                   ▄▄▄▄                    █        ██  ██    ██  ██              ██  ██   ██                             │
│     █                 ▄█▀  ▀█▄                  █       ██    ██  ██    ██     ▄▄▄    ██    ██  ██ ▄▄▄                         │
│     █                 ▀▀    ██                  █       ██    ██  ██    ██     ▀▀▀    ██    ██  ▀▀▀  ▀█▄                       │
│     █                    ▄▄█▀                   █       ▀█▄  ▄█▀  ▀█▄  ▄█▀            ▀█▄  ▄█▀        ██                       │
│     █                      ▀█▄                  █        ▀█▄▄█▀    ▀█▄▄█▀      ▄▄▄     ▀█▄▄█▀   ▀█▄  ▄█▀                       │
│     █                 ██    ██                  █          ▀▀        ▀▀        ▀▀▀       ▀▀       ▀▀▀▀                         │
│     █                  ▀█▄▄█▀                   █                                                                              │
│     █                                           █                                                                              │
│     █                                           █                                                                              │
│     █                                           █      ▀█▀  ▄  ▄█▄  ▄▄ ▀█      ▄▀▄ ▄▀▄  ▄  ▄▀▄ █▀▀                             │
│     █                                           █       █  █ █  █  █ █  █      █▀█ █▀█     █▀█ ▀▀▄                             │
│     █                                           █       ▀   ▀    ▀  ▀▀ ▀▀▀      ▀   ▀   ▀   ▀  ▀▀                              │
│     █                                           █                                                                              │
│     █                                           █     ████▀▀█▀▀▀█▀██████    ▄▄  ▄                                              │
│     █                                           █     ███▄▀██ ▀██ ██████   ▀▄  ▀█▀ ▄▀▄ █▀▄                                     │
│     ▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀     ███▀▀▄█ ▀▀█ ▀▀████   ▄▄▀  ▀▄ ▀▄▀ █▀                                      │
│                                                       ██████████████████               ▀                                       │
│                                                                                                                                │
└────────────────────────────────────────────────────────────────────────────────────────────────────────────────────────────────┘
"""
}
