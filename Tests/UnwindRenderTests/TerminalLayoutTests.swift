import Testing
import UnwindCore
@testable import UnwindRender

/// The simulator's terminal drawing, judged from the text it writes, as a person would see it.
@Suite struct TerminalLayoutTests {
    static let required = [" MOTOR \u{1B}[7m ~~~ BUZZ ~~~ \u{1B}[0m",
                           " p/Tab PAGE   P/h hold PAGE (help)   a/← LEFT   d/→ RIGHT",
                           " space/Enter SELECT   S hold SELECT   ! hold PANIC   q quit",
                           " state and log: /home/someone/.local/state/unwind-sim"]
    static let optional = [" simulated modem: 1 SMS delivered, last to +15550100001: I'm having a panic attack. Please call me.",
                           " maintainer's commands, from another terminal: unwind status --state /home/someone/.local/state/unwind-sim"]

    func screen() -> Framebuffer {
        var fb = Framebuffer()
        Screen.render(DeviceCore().state, at: .seconds(1), into: &fb)
        return fb
    }

    /// The lines the terminal shows: cursor-home and erase sequences taken out.
    func lines(_ columns: Int, _ rows: Int) -> [String] {
        var text = ""
        TerminalLayout(columns: columns, rows: rows).compose(screen(), required: Self.required, optional: Self.optional, into: &text)
        return text.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            var visible = String.UnicodeScalarView()
            var inEscape = false
            for u in line.unicodeScalars {
                if inEscape { if (0x40...0x7E).contains(u.value) && u != "[" { inEscape = false } } else if u == "\u{1B}" { inEscape = true } else { visible.append(u) }
            }
            return String(visible)
        }
    }

    @Test(arguments: [(80, 24, TextArt.Density.braille), (100, 30, .braille), (140, 45, .halfBlocks)])
    func fits(columns: Int, rows: Int, density: TextArt.Density) {
        let shown = lines(columns, rows)
        #expect(shown.count <= rows)
        for l in shown { #expect(l.unicodeScalars.count <= columns, "\(l)") }
        // The whole frame: both borders and every row between them, each the picture's width.
        let inner = density == .braille ? 64 : 128
        let height = density == .braille ? 16 : 32
        #expect(shown.first == "┌" + String(repeating: "─", count: inner) + "┐")
        #expect(shown[height + 1] == "└" + String(repeating: "─", count: inner) + "┘")
        for row in shown[1...height] {
            #expect(row.unicodeScalars.count == inner + 2 && row.hasPrefix("│") && row.hasSuffix("│"))
        }
        // The motor, the keys and the state directory are all on screen.
        #expect(shown.contains { $0.contains("MOTOR") })
        #expect(shown.contains { $0.contains("p/Tab PAGE") })
        #expect(shown.contains { $0.contains("q quit") })
        #expect(shown.contains { $0.contains("state and log:") })
    }

    @Test func theSameScreenInBothDensities() {
        // A lit pixel in any 2x4 cell lights that cell's braille dot: spot checks on the menu bar.
        let fb = screen()
        let braille = TextArt.braille(fb).split(separator: "\n").map { Array($0.unicodeScalars) }
        for cy in 0..<16 {
            for cx in 0..<64 {
                let bits = braille[cy + 1][cx + 1].value - 0x2800
                var lit = 0
                for dy in 0..<4 { for dx in 0..<2 where fb[cx * 2 + dx, cy * 4 + dy] { lit += 1 } }
                #expect(bits.nonzeroBitCount == lit)
            }
        }
        #expect(TextArt.halfBlocks(fb).split(separator: "\n").count == 34)
    }

    @Test func tooSmallSaysHowBig() {
        let shown = lines(60, 20).joined(separator: " ")
        #expect(shown.contains("60x20"))
        #expect(shown.contains("66x22"))
        for l in lines(60, 20) { #expect(l.unicodeScalars.count <= 60) }
        #expect(!shown.contains("┌"))
    }

    @Test func notATerminalGetsFullSize() {
        #expect(lines(0, 0).first?.unicodeScalars.count == 130)
    }
}

@Suite struct PressFeedbackScreenTests {
    @Test func theMenuBarBracketsThePageAPageReleaseOpens() {
        for page in Page.allCases {
            var state = DeviceCore().state
            state.page = page
            var plain = Framebuffer(), pressed = Framebuffer()
            Screen.render(state, at: .seconds(1), into: &plain)
            state.pagePressed = true
            Screen.render(state, at: .seconds(1), into: &pressed)
            let x = MenuBar.tabX(page.next.rawValue, width: 128)
            let end = MenuBar.tabX(page.next.rawValue + 1, width: 128) - 1
            #expect(!plain[x, 4] && pressed[x, 4] && pressed[end, 4])
            // Only the current tab is filled (its top row lit), pressed or not.
            #expect(!pressed[x + 1, 0] && pressed[MenuBar.tabX(page.rawValue, width: 128) + 1, 0])
        }
    }

    @Test func selectHeldChangesTheMantraAndAlertPages() {
        for page in [Page.affirmations, .panic] {
            var state = DeviceCore(mantras: ["Breathe."]).state
            state.page = page
            var plain = Framebuffer(), pressed = Framebuffer()
            Screen.render(state, at: .seconds(1), into: &plain)
            state.selectPressed = true
            Screen.render(state, at: .seconds(1), into: &pressed)
            #expect(plain.bytes != pressed.bytes)
        }
    }
}
