import Testing
@testable import UnwindCore
@testable import UnwindRender

/// The screens after the alerts, read back from the pixels: what the person sees is exactly
/// what the core knows (delivered, replied, ringing, "I'm OK now"), and nothing more.
@Suite struct HelpScreenTests {
    var core: DeviceCore
    var effects: [Effect] = []

    init() throws {
        var settings = DeviceSettings()
        settings.screen.pixelShiftPeriod = nil   // the picture stays put for the comparisons
        var c = DeviceCore(settings: settings)
        c.alertSlotsChanged([
            .ready(try AlertSlot(name: "Mum", number: "+17785551234", message: "Having a panic attack, please call")),
            .ready(try AlertSlot(name: "Sam", number: "6045557654", message: "Please come over")),
            .ready(try AlertSlot(name: "Ana", number: "6045550000", message: "Please come over")),
        ])
        core = c
        core.apply(.button(.down(.panic)), at: Moment(.zero), effects: &effects)
        core.apply(.tick, at: Moment(.seconds(1.5)), effects: &effects)
    }

    func render(at s: Double = 10) -> Framebuffer {
        var fb = Framebuffer()
        Screen.render(core.state, at: .seconds(s), into: &fb)
        return fb
    }

    /// Whether `text` is drawn at (x, y) in the ink `ink`, compared cell by cell.
    func shows(_ fb: Framebuffer, _ text: String, font: BitmapFont = .small, x: Int, y: Int, _ ink: Ink = .on) -> Bool {
        var expected = Framebuffer()
        if ink == .off { expected.fill(x: 0, y: 0, width: expected.width, height: expected.height) }
        expected.text(text, font: font, x: x, y: y, ink)
        let w = font.textWidth(text)
        for yy in y..<(y + font.height) {
            for xx in x..<min(fb.width, x + w) where fb[xx, yy] != expected[xx, yy] { return false }
        }
        return true
    }

    func row(_ i: Int) -> Int { 20 + i * 7 }

    @Test mutating func eachContactShowsWhatIsKnown() {
        core.apply(.alertDelivery(slot: 0, .delivered), at: Moment(.seconds(5)), effects: &effects)
        core.apply(.alertDelivery(slot: 1, .sent), at: Moment(.seconds(5)), effects: &effects)
        let fb = render()
        #expect(shows(fb, "ALERTS 2 of 3 sent, 1 delivered", x: 1, y: 11))
        #expect(shows(fb, "DELIVERED", x: PanicScreen.statusX, y: row(0)))
        #expect(shows(fb, "SENT", x: PanicScreen.statusX, y: row(1)))
        #expect(shows(fb, "queued", x: PanicScreen.statusX, y: row(2)))
        #expect(shows(fb, "SEL: breathe  hold: I'm OK", x: 1, y: 57, .off))
    }

    @Test mutating func aReplyIsShownWithTheContactsName() {
        core.apply(.alertDelivery(slot: 0, .sent), at: Moment(.seconds(5)), effects: &effects)
        core.apply(.replyReceived(IncomingReply(id: "a", from: "17785551234", text: "On my way, 10 min")),
                   at: Moment(.seconds(6)), effects: &effects)
        core.apply(.replyReceived(IncomingReply(id: "b", from: "+16045557654", text: "Coming too")),
                   at: Moment(.seconds(7)), effects: &effects)
        var fb = render()
        #expect(shows(fb, "Mum replied:", x: 1, y: 20))
        #expect(shows(fb, "+1 more", x: 100, y: 20))
        #expect(shows(fb, "On my way, 10 min", x: 1, y: 27))
        #expect(shows(fb, "Any button: seen", x: 1, y: 57, .off))
        core.apply(.button(.down(.left)), at: Moment(.seconds(8)), effects: &effects)
        fb = render()
        #expect(shows(fb, "Sam replied:", x: 1, y: 20))
        core.apply(.button(.down(.left)), at: Moment(.seconds(9)), effects: &effects)
        fb = render()
        #expect(shows(fb, "REPLIED", x: PanicScreen.statusX, y: row(0)))
        #expect(shows(fb, "REPLIED", x: PanicScreen.statusX, y: row(1)))
    }

    @Test mutating func theCallBeingMadeIsShown() {
        core.apply(.tick, at: Moment(.seconds(181.5)), effects: &effects)
        let fb = render(at: 182)
        #expect(core.state.panic.aftercare.ringing == 0)
        #expect(shows(fb, "CALLING", x: PanicScreen.statusX, y: row(0)), "\(fb.ascii(rows: 18..<64))")
        #expect(shows(fb, "Calling. RIGHT stops calls", x: 1, y: 57, .off))
    }

    @Test mutating func imOKNowAsksFirst() {
        core.apply(.alertDelivery(slot: 0, .sent), at: Moment(.seconds(5)), effects: &effects)
        core.apply(.alertDelivery(slot: 1, .delivered), at: Moment(.seconds(5)), effects: &effects)
        core.apply(.button(.down(.select)), at: Moment(.seconds(9)), effects: &effects)
        core.apply(.button(.long(.select)), at: Moment(.seconds(9.8)), effects: &effects)
        var fb = render()
        #expect(shows(fb, "Send \"I'm OK now\"", font: .regular, x: (128 - BitmapFont.regular.textWidth("Send \"I'm OK now\"")) / 2, y: 13))
        let line = "to 2 contacts?"
        #expect(shows(fb, line, x: (128 - BitmapFont.small.textWidth(line)) / 2, y: 28))
        #expect(shows(fb, "SELECT: send   other: back", x: 1, y: 57, .off))
        core.apply(.button(.down(.select)), at: Moment(.seconds(11)), effects: &effects)
        fb = render(at: 20)
        #expect(shows(fb, "I'M OK 0 of 2 sent", x: 1, y: 11))
    }

    @Test func theMenuBarSaysWhetherAlertsCanGoOut() {
        var ready = Framebuffer(), notReady = Framebuffer(), unknown = Framebuffer()
        MenuBar.draw(current: .breathing, readiness: .ready, into: &ready)
        MenuBar.draw(current: .breathing, readiness: AlertReadiness(problems: [.notRegistered]), into: &notReady)
        MenuBar.draw(current: .breathing, into: &unknown)
        let x = MenuBar.tabX(Page.panic.rawValue + 1, width: 128) - 3
        #expect(ready[x, 5] && ready[x + 1, 6] && !ready[x, 2])
        #expect(notReady[x, 1] && notReady[x, 4] && !notReady[x, 5] && notReady[x, 6])
        for y in 0..<8 { #expect(!unknown[x, y] && !unknown[x + 1, y]) }
        // On the ALERT tab itself (inverted), the mark is dark on light.
        var onTab = Framebuffer()
        MenuBar.draw(current: .panic, readiness: .ready, into: &onTab)
        #expect(!onTab[x, 5] && onTab[x, 2])
    }

    @Test mutating func theCheckInPromptSaysWhenHelpIsSent() throws {
        var s = DeviceSettings()
        s.checkIn.deadline = 9 * 60
        var c = DeviceCore(settings: s)
        let day = CivilDate.day(year: 2026, month: 11, day: 22) * 86_400
        c.apply(.wallClockSynchronised(true), at: Moment(.zero, wall: WallTime(secondsSinceEpoch: day)), effects: &effects)
        c.apply(.tick, at: Moment(.seconds(1), wall: WallTime(secondsSinceEpoch: day + 9 * 3600)), effects: &effects)
        var fb = Framebuffer()
        Screen.render(c.state, at: .seconds(2), into: &fb)
        #expect(shows(fb, "Are you OK?", font: .regular, x: (128 - BitmapFont.regular.textWidth("Are you OK?")) / 2, y: 21))
        let line = "Help is sent at 09:30"
        #expect(shows(fb, line, x: (128 - BitmapFont.small.textWidth(line)) / 2, y: 54))
    }

    @Test mutating func notReadyIsSaidOverAnyPage() throws {
        var c = DeviceCore()
        c.apply(.alertReadiness(AlertReadiness(problems: [.sim("SIM PIN required")])), at: Moment(.zero), effects: &effects)
        c.apply(.tick, at: Moment(.seconds(121)), effects: &effects)
        var fb = Framebuffer()
        Screen.render(c.state, at: .seconds(122), into: &fb)
        let a = "PANIC can't send now:", b = "a SIM card problem"
        #expect(shows(fb, a, x: (128 - BitmapFont.small.textWidth(a)) / 2, y: 24))
        #expect(shows(fb, b, x: (128 - BitmapFont.small.textWidth(b)) / 2, y: 32))
        Screen.render(c.state, at: .seconds(130), into: &fb)
        #expect(!shows(fb, a, x: (128 - BitmapFont.small.textWidth(a)) / 2, y: 24))
    }
}

extension Framebuffer {
    /// Rows of `#` and `.`, for a failing test's message.
    func ascii(rows: Range<Int>) -> String {
        ascii(x: 0, y: rows.lowerBound, width: width, height: rows.count).joined(separator: "\n")
    }

    /// A region as rows of `#` (lit) and `.` (dark).
    func ascii(x: Int, y: Int, width w: Int, height h: Int) -> [String] {
        (y..<(y + h)).map { row in String((x..<(x + w)).map { self[$0, row] ? "#" : "." }) }
    }
}
