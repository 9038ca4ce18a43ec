import UnwindCore

/// Draws the device's whole screen: the menu bar, then the page or its overlay.
/// A pure function of the state and the instant; it writes into a framebuffer the caller
/// keeps, so a frame costs no allocation.
public enum Screen {
    /// The help overlay's text width in characters of the small font, for wrapping at load.
    public static let helpColumns = 31
    static let helpLines = 7
    static let contentTop = 10

    /// - Parameter fonts: what a contact's reply and a mantra fall back to for the characters the
    ///   built-in fonts lack (Unifont, read by the device's edge at start-up).
    public static func render(_ state: DeviceState, at now: Instant, fonts: Fonts = .builtIn, into fb: inout Framebuffer) {
        fb.clear()
        // Asleep: a dark frame (the panel is also switched off when the edge can).
        if state.display.asleep { return }
        // The QR code takes the whole screen: every module counts.
        if (state.overlay == .counsellingCode || state.overlay.showsCounsellingCode) && !state.reminders.isShowing
            && !state.selfCheck.reminder.isShowing {
            return PanicScreen.drawCounselling(state, into: &fb)
        }
        MenuBar.draw(current: state.page, marked: state.pagePressed && state.overlay == .none ? state.page.next : nil,
                     readiness: state.panic.readiness.current, into: &fb)
        if state.checkIn.showing {
            DailyCheckInScreen.draw(state.checkIn, into: &fb)
        } else if state.reminders.isShowing {
            ReminderScreen.draw(state, at: now, fonts: fonts, into: &fb)
        } else if state.selfCheck.reminder.isShowing {
            SelfCheckReminderScreen.draw(into: &fb)
        } else if let notice = state.setupNotice {
            drawHelp(notice, scroll: 0, into: &fb)
        } else {
            switch state.overlay {
            case .help(let scroll): drawHelp(state.help.lines(for: state.page), scroll: scroll, into: &fb)
            case .stats: StatsScreen.draw(state.breathing, into: &fb)
            case .reminderSettings(let editor): ReminderSettingsScreen.draw(editor, into: &fb)
            case .confirmDelete: ConfirmDeleteScreen.draw(state, fonts: fonts, into: &fb)
            case .alertStatus: PanicScreen.drawStatus(state, at: now, fonts: fonts, into: &fb)
            case .counsellingCode: PanicScreen.drawCounselling(state, into: &fb)
            case .rating(let question): RatingScreen.draw(question, into: &fb)
            case .selfCheck(let view): SelfCheckScreen.draw(view, state, at: now, fonts: fonts, into: &fb)
            case .none:
                switch state.page {
                case .breathing: BreathingScreen.draw(state, at: now, into: &fb)
                case .grounding: GroundingScreen.draw(state.grounding, into: &fb)
                case .affirmations: AffirmationsScreen.draw(state, at: now, fonts: fonts, into: &fb)
                case .panic: PanicScreen.draw(state, at: now, into: &fb)
                case .howAmIDoing: SelfCheckScreen.drawPage(state, at: now, into: &fb)
                }
            }
        }
        // "Alerts can't go out now" over whatever is up, for a few seconds.
        if state.panic.readiness.showsNotice(at: now), let n = state.panic.readiness.notice {
            DailyCheckInScreen.drawReadinessNotice(n, into: &fb)
        }
        // Holding PANIC shows its progress over whatever page is up.
        if state.panic.armingSince != nil && state.page != .panic { PanicScreen.drawArming(state.panic, at: now, into: &fb) }
        // Now and then everything moves by a pixel, so no pixel stays lit in one place for long.
        let shift = state.display.pixelShift(at: now)
        if shift.dx != 0 || shift.dy != 0 { fb.shift(dx: shift.dx, dy: shift.dy) }
    }

    static func drawHelp(_ lines: [String], scroll: Int, into fb: inout Framebuffer) {
        var row = 0
        while row < helpLines && scroll + row < lines.count {
            fb.text(lines[scroll + row], font: .small, x: 1, y: contentTop + 1 + row * 7)
            row += 1
        }
        // Scroll bar: where the visible lines sit in the whole text.
        let trackTop = contentTop, trackHeight = fb.height - contentTop
        fb.verticalLine(x: fb.width - 2, y0: trackTop, y1: fb.height - 1)
        if lines.count > helpLines {
            let thumb = max(4, trackHeight * helpLines / lines.count)
            let top = trackTop + (trackHeight - thumb) * min(scroll, lines.count - 1) / max(1, lines.count - 1)
            fb.fill(x: fb.width - 3, y: top, width: 3, height: thumb)
        }
    }

    static func centered(_ s: String, font: BitmapFont, y: Int, into fb: inout Framebuffer, _ ink: Ink = .on) {
        fb.text(s, font: font, x: (fb.width - font.textWidth(s)) / 2, y: y, ink)
    }
}

/// The pages' tabs along the top; the current one is drawn inverted (spec 1.2).
enum MenuBar {
    /// Where page `i`'s tab starts: the width shared out as evenly as whole pixels allow, the
    /// spare pixels to the first tabs (their six-letter words).
    static func tabX(_ i: Int, width: Int) -> Int {
        let n = Page.allCases.count
        return i * (width / n) + min(i, width % n)
    }

    /// `marked`: the page a PAGE release will open, bracketed and underlined (row 0 stays dark:
    /// only the current tab is filled).
    /// `readiness`: a small mark at the ALERT tab's right edge — a dot when a PANIC would go out
    /// now, "!" when it would not; nothing until the modem has been heard.
    static func draw(current: Page, marked: Page? = nil, readiness: AlertReadiness? = nil, into fb: inout Framebuffer) {
        for page in Page.allCases {
            let x = tabX(page.rawValue, width: fb.width)
            let tab = tabX(page.rawValue + 1, width: fb.width) - x
            let label = page.menuLabel
            let tx = x + (tab - BitmapFont.small.textWidth(label)) / 2
            if page == current {
                fb.fill(x: x, y: 0, width: tab, height: 8)
                fb.text(label, font: .small, x: tx, y: 1, .off)
            } else {
                fb.text(label, font: .small, x: tx, y: 1)
            }
        }
        if let marked {
            let x = tabX(marked.rawValue, width: fb.width)
            let tab = tabX(marked.rawValue + 1, width: fb.width) - x
            fb.verticalLine(x: x, y0: 1, y1: 7)
            fb.verticalLine(x: x + tab - 1, y0: 1, y1: 7)
            fb.horizontalLine(x0: x, x1: x + tab - 1, y: 7)
        }
        if let readiness {
            let x = tabX(Page.panic.rawValue + 1, width: fb.width) - 3
            let ink: Ink = current == .panic ? .off : .on
            if readiness.isReady {
                fb.fill(x: x, y: 5, width: 2, height: 2, ink)
            } else {
                fb.fill(x: x, y: 1, width: 2, height: 4, ink)
                fb.fill(x: x, y: 6, width: 2, height: 1, ink)
            }
        }
        fb.horizontalLine(x0: 0, x1: fb.width - 1, y: 8)
    }
}

/// The daily check-in's prompt, over everything but PANIC's hold; and the readiness notice.
enum DailyCheckInScreen {
    static func draw(_ c: CheckInState, into fb: inout Framebuffer) {
        fb.fill(x: 0, y: 9, width: fb.width, height: 8)
        Screen.centered("Daily check-in", font: .small, y: 10, into: &fb, .off)
        Screen.centered("Are you OK?", font: .regular, y: 21, into: &fb)
        Screen.centered("Press any button", font: .small, y: 35, into: &fb)
        Screen.centered("to say you are.", font: .small, y: 42, into: &fb)
        if let clock = c.sendsAtClock {
            let w = BitmapFont.small.textWidth("Help is sent at ") + BitmapFont.small.textWidth(clock)
            let x = fb.text("Help is sent at ", font: .small, x: (fb.width - w) / 2, y: 54)
            fb.text(clock, font: .small, x: x, y: 54)
        }
    }

    static func drawReadinessNotice(_ n: ReadinessNotice, into fb: inout Framebuffer) {
        fb.fill(x: 4, y: 20, width: 120, height: 26, .off)
        fb.rectangle(x: 4, y: 20, width: 120, height: 26)
        switch n {
        case .cannotSend(let problem):
            Screen.centered("PANIC can't send now:", font: .small, y: 24, into: &fb)
            Screen.centered(shortReason(problem), font: .small, y: 32, into: &fb)
        case .testFailed:
            Screen.centered("The monthly alert", font: .small, y: 24, into: &fb)
            Screen.centered("test failed.", font: .small, y: 32, into: &fb)
        }
        Screen.centered("See unwind status", font: .small, y: 39, into: &fb)
    }

    static func shortReason(_ p: AlertReadiness.Problem) -> String {
        switch p {
        case .noModem: "no modem is set up"
        case .modemSilent: "the modem is silent"
        case .sim: "a SIM card problem"
        case .notRegistered: "no mobile network"
        case .weakSignal: "the signal is too weak"
        case .noServiceCentre: "SIM has no SMS centre"
        case .serviceCentreRefused: "SMS centre refused"
        }
    }
}
