import Testing
import UnwindCore
@testable import UnwindRender

@Suite struct ScreenTests {
    func render(_ state: DeviceState, at t: Double) -> Framebuffer {
        var fb = Framebuffer()
        Screen.render(state, at: .seconds(t), into: &fb)
        return fb
    }

    func running(at start: Double) -> DeviceCore {
        var core = DeviceCore()
        var effects: [Effect] = []
        core.apply(.button(.down(.select)), at: Moment(.seconds(start)), effects: &effects)
        return core
    }

    @Test func menuBarEmphasisesTheCurrentPage() {
        for page in Page.allCases {
            var state = DeviceCore().state
            state.page = page
            let fb = render(state, at: 0)
            for other in Page.allCases {
                // An emphasised tab is filled: its top-left pixel is lit.
                #expect(fb[MenuBar.tabX(other.rawValue, width: 128) + 1, 0] == (other == page))
            }
            #expect((0..<128).allSatisfy { fb[$0, 8] }) // the rule under the bar
        }
    }

    @Test func markerTravelsTheSquare() {
        let core = running(at: 0)
        // Breathe in: up the left side; hold: along the top; out: down the right; hold: the bottom.
        let sq = BreathingScreen.self
        let left = sq.squareX, top = sq.squareY, right = sq.squareX + sq.side - 1, bottom = sq.squareY + sq.side - 1
        let cases: [(Double, Int, Int)] = [(0, left, bottom), (2, left, bottom - 22), (4, left, top),
                                           (6, left + 22, top), (10, right, top + 22), (14, right - 22, bottom)]
        for (t, x, y) in cases {
            let fb = render(core.state, at: t)
            // The marker is a ring with a lit centre and an unlit gap around it.
            #expect(fb[x, y] && !fb[x + 2, y] && fb[x + 3, y], "marker at t=\(t) expected at (\(x), \(y))")
        }
    }

    @Test func sessionTimerShowsMinutesAndSeconds() {
        let core = running(at: 0)
        var expected = Framebuffer()
        expected.clock(83, font: .large, x: BreathingScreen.panelX, y: 23)
        let fb = render(core.state, at: 83.9)
        for x in BreathingScreen.panelX..<(BreathingScreen.panelX + 50) {
            for y in 23..<43 { #expect(fb[x, y] == expected[x, y]) }
        }
    }

    @Test func everyTextOnEveryScreenFits() {
        for p in BreathingPhase.allCases { #expect(BreathingScreen.panelX + BitmapFont.regular.textWidth(p.label) <= 128) }
        for p in Page.allCases {
            #expect(BitmapFont.small.textWidth(p.menuLabel) <= MenuBar.tabX(1, width: 128) - 1)
            #expect(BitmapFont.small.textWidth(p.title) <= 128)
        }
        #expect(BreathingScreen.panelX + Framebuffer.clockWidth(59 * 60 + 59, font: .large) <= 128)
        #expect(BreathingScreen.panelX + 24 + Framebuffer.clockWidth(999 * 3600, font: .small) <= 128)
    }

    @Test func numbersAndClocksDrawWithoutStrings() {
        var a = Framebuffer(), b = Framebuffer()
        a.clock(3725, font: .regular, x: 0, y: 0)
        b.text("1:02:05", font: .regular, x: 0, y: 0)
        #expect(a == b)
        a.clear(); b.clear()
        a.number(7, digits: 3, font: .small, x: 3, y: 5)
        b.text("007", font: .small, x: 3, y: 5)
        #expect(a == b)
    }

    @Test func pngHasSignatureAndSize() {
        let png = PNGImage.encode(Framebuffer(), scale: 2, border: 0)
        #expect(png.prefix(8) == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        #expect(Array(png[16..<24]) == [0, 0, 1, 0, 0, 0, 0, 0x80]) // 256 x 128
        #expect(PNGImage.crc32(Array("IEND".utf8)) == 0xAE42_6082)
    }

    @Test func halfBlockArtIsFramedAndExact() {
        var fb = Framebuffer()
        fb.plot(0, 0); fb.plot(1, 1); fb.plot(2, 0); fb.plot(2, 1)
        let lines = TextArt.halfBlocks(fb).split(separator: "\n")
        #expect(lines.count == 34)
        #expect(lines[1].hasPrefix("│▀▄█ "))
    }
}
