import UnwindCore

/// The positive affirmations page (spec 4.x): the mantra's position and the reminder setting
/// on top, the current mantra in the middle (already wrapped by the core; a long one scrolls
/// slowly up and back), the controls beneath.
enum AffirmationsScreen {
    static let statusY = 10
    static let hintY = 57

    static func draw(_ state: DeviceState, at now: Instant, fonts: Fonts, into fb: inout Framebuffer) {
        if state.selfCheck.showsCardsOnMantraPage {
            CardsScreen.drawEntry(state.selfCheck.cards.count, into: &fb)
            ReminderSummary.draw(state.reminders.schedule, rightEdge: fb.width - 1, y: statusY, into: &fb)
            return
        }
        let m = state.mantras
        MantraView.draw(m.lines, fonts: fonts, since: state.mantraShownAt, at: now, into: &fb)

        let small = BitmapFont.small
        if !m.isEmpty {
            var x = fb.number(Int64(m.current + 1), font: small, x: 1, y: statusY)
            x = fb.text("/", font: small, x: x, y: statusY)
            fb.number(Int64(m.count), font: small, x: x, y: statusY)
        }
        ReminderSummary.draw(state.reminders.schedule, rightEdge: fb.width - 1, y: statusY, into: &fb)

        if m.isEmpty {
            let pressed = state.selectPressed && state.overlay == .none
            fb.fill(x: 0, y: hintY - 1, width: pressed ? 52 : 15, height: 8)
            fb.text("SEL", font: small, x: 2, y: hintY, .off)
            fb.text("reminder", font: small, x: 18, y: hintY, pressed ? .off : .on)
        } else {
            fb.text("<>", font: small, x: 0, y: hintY)
            fb.text("browse", font: small, x: 10, y: hintY)
            // SELECT held down: the whole "SEL remind" lights, what its release opens.
            let pressed = state.selectPressed && state.overlay == .none
            fb.fill(x: 37, y: hintY - 1, width: pressed ? 43 : 15, height: 8)
            fb.text("SEL", font: small, x: 39, y: hintY, .off)
            fb.text("remind", font: small, x: 54, y: hintY, pressed ? .off : .on)
            fb.text("hold:del", font: small, x: 96, y: hintY)
        }
    }
}

/// "Daily 21:30", "Weekly Sun 21:30", "Hourly :15", "No reminder", right-aligned, in pieces.
enum ReminderSummary {
    static func draw(_ s: ReminderSchedule, rightEdge: Int, y: Int, into fb: inout Framebuffer) {
        let small = BitmapFont.small
        let w = small.width
        switch s {
        case .never:
            fb.text("No reminder", font: small, x: rightEdge + 1 - 11 * w, y: y)
        case .hourly(let m):
            var x = fb.text("Hourly :", font: small, x: rightEdge + 1 - 10 * w, y: y)
            x = fb.number(Int64(m), digits: 2, font: small, x: x, y: y)
        case .daily(let h, let m):
            var x = fb.text("Daily ", font: small, x: rightEdge + 1 - 11 * w, y: y)
            x = fb.clock(Int64(h * 60 + m), font: small, x: x, y: y)
        case .weekly(let d, let h, let m):
            var x = fb.text("Weekly ", font: small, x: rightEdge + 1 - 16 * w, y: y)
            x = fb.glyph3(d.name, font: small, x: x, y: y)
            x = fb.text(" ", font: small, x: x, y: y)
            x = fb.clock(Int64(h * 60 + m), font: small, x: x, y: y)
        }
    }
}

/// A mantra's lines in the box between the status row and the hints. Up to three lines stand
/// still, centred; a longer mantra waits, scrolls smoothly down to its end at `speed` pixels a
/// second, waits, and scrolls back, for as long as it is shown. The offset is a function of
/// the time since the mantra appeared, so the same instant always gives the same picture.
/// A row with a Unifont glyph or an emoji is taller (see `Paragraph`).
enum MantraView {
    static let top = 18
    static let height = 36
    static let pitch = 12
    static let pause: Int64 = 3_000_000_000
    static let speed: Int64 = 6

    static func paragraph(_ lines: [String], fonts: Fonts, width: Int) -> Paragraph {
        Paragraph(lines: lines, lettering: fonts.lettering(.regular), width: width, gap: pitch - BitmapFont.regular.height)
    }

    static func draw(_ lines: [String], fonts: Fonts, since: Instant, at now: Instant, into fb: inout Framebuffer) {
        let text = paragraph(lines, fonts: fonts, width: fb.width)
        let total = text.height
        let overflow = max(0, total - height)
        let y0 = overflow > 0 ? top - scrollOffset(overflow: overflow, elapsed: now - since) : top + (height - total) / 2
        text.draw(left: 0, top: y0 + 1, centred: true, clipTop: top, clipBottom: top + height, into: &fb)
        // Lines half out of the box are cut at its edges.
        fb.fill(x: 0, y: 9, width: fb.width, height: top - 9, .off)
        fb.fill(x: 0, y: top + height, width: fb.width, height: fb.height - top - height, .off)
    }

    /// Pixels scrolled at `elapsed` into the mantra's showing.
    static func scrollOffset(overflow: Int, elapsed: Duration) -> Int {
        let perPixel = 1_000_000_000 / speed
        let travel = Int64(overflow) * perPixel
        let period = 2 * pause + 2 * travel
        var t = max(0, elapsed.nanoseconds) % period
        if t < pause { return 0 }
        t -= pause
        if t < travel { return Int(t / perPixel) }
        t -= travel
        if t < pause { return overflow }
        t -= pause
        return overflow - Int(t / perPixel)
    }
}

/// The reminder, over whatever page is shown (spec 4.6.1): the current mantra, and how to
/// close it.
enum ReminderScreen {
    static func draw(_ state: DeviceState, at now: Instant, fonts: Fonts, into fb: inout Framebuffer) {
        MantraView.draw(state.mantras.lines, fonts: fonts, since: state.reminders.shownSince ?? now, at: now, into: &fb)
        fb.fill(x: 0, y: 9, width: fb.width, height: 8)
        Screen.centered("A mantra for you", font: .small, y: 10, into: &fb, .off)
        Screen.centered("Any button closes", font: .small, y: 57, into: &fb)
    }
}

/// Spec 4.3: "Delete this mantra?" after a long SELECT; a second SELECT deletes.
enum ConfirmDeleteScreen {
    static func draw(_ state: DeviceState, fonts: Fonts, into fb: inout Framebuffer) {
        Screen.centered("Delete this mantra?", font: .regular, y: 11, into: &fb)
        // Its first rows, as many as fit above the hints.
        let text = Paragraph(lines: state.mantras.lines, lettering: fonts.lettering(.regular), width: fb.width, gap: 1)
        var y = 24
        for r in text.rows {
            if y + text.height(r) > 46 { break }
            fb.row(text.lines[r.line], text.lettering, first: r.first, count: r.count, tall: r.tall,
                   x: (fb.width - r.width) / 2, y: y)
            y += text.pitch(r)
        }
        fb.fill(x: 0, y: 48, width: 15, height: 8)
        fb.text("SEL", font: .small, x: 2, y: 49, .off)
        fb.text("deletes it", font: .small, x: 18, y: 49)
        fb.text("Other buttons keep it", font: .small, x: 0, y: 57)
    }
}

/// Spec 4.6, 4.6.1: how often, then the day, hour and minute as the frequency needs them;
/// the field being changed is drawn inverted.
enum ReminderSettingsScreen {
    static let labelX = 2, valueX = 50
    static let rowY = [19, 31, 43]

    static func draw(_ e: ReminderEditor, title: String = "Mantra reminder", into fb: inout Framebuffer) {
        let font = BitmapFont.regular, small = BitmapFont.small
        fb.text(title, font: small, x: 1, y: 10)

        fb.text("Repeat", font: font, x: labelX, y: rowY[0])
        value(e.frequency.label, focused: e.field == .frequency, y: rowY[0], x: valueX, into: &fb)

        fb.text("Day", font: font, x: labelX, y: rowY[1])
        switch e.frequency {
        case .weekly: value(e.day.name, focused: e.field == .day, y: rowY[1], x: valueX, into: &fb)
        case .daily: fb.text("every day", font: font, x: valueX, y: rowY[1])
        case .hourly: fb.text("every hour", font: font, x: valueX, y: rowY[1])
        case .never: fb.text("-", font: font, x: valueX, y: rowY[1])
        }

        fb.text("Time", font: font, x: labelX, y: rowY[2])
        if e.frequency == .never {
            fb.text("-", font: font, x: valueX, y: rowY[2])
        } else {
            let y = rowY[2]
            var x = valueX
            if e.frequency == .hourly {
                x = fb.text("--", font: font, x: x, y: y)
            } else {
                x = number(e.hour, focused: e.field == .hour, x: x, y: y, into: &fb)
            }
            x = fb.text(":", font: font, x: x, y: y)
            number(e.minute, focused: e.field == .minute, x: x, y: y, into: &fb)
        }

        fb.text("<>", font: small, x: 0, y: 57)
        fb.text("change", font: small, x: 10, y: 57)
        fb.fill(x: 37, y: 56, width: 15, height: 8)
        fb.text("SEL", font: small, x: 39, y: 57, .off)
        fb.text(e.isLastField ? "save" : "next", font: small, x: 54, y: 57)
        fb.text("PAGE:cancel", font: small, x: 84, y: 57)
    }

    static func value(_ s: String, focused: Bool, y: Int, x: Int, into fb: inout Framebuffer) {
        let font = BitmapFont.regular
        if focused {
            fb.fill(x: x - 2, y: y - 1, width: font.textWidth(s) + 4, height: font.height + 1)
            fb.text(s, font: font, x: x, y: y, .off)
        } else {
            fb.text(s, font: font, x: x, y: y)
        }
    }

    @discardableResult
    static func number(_ v: Int, focused: Bool, x: Int, y: Int, into fb: inout Framebuffer) -> Int {
        let font = BitmapFont.regular
        if focused {
            fb.fill(x: x - 1, y: y - 1, width: 2 * font.width + 2, height: font.height + 1)
            return fb.number(Int64(v), digits: 2, font: font, x: x, y: y, .off)
        }
        return fb.number(Int64(v), digits: 2, font: font, x: x, y: y)
    }
}

extension Framebuffer {
    /// The first three characters of `s` (a day's name shortened: "Sun"), without a new string.
    @discardableResult
    mutating func glyph3(_ s: String, font: BitmapFont, x: Int, y: Int, _ ink: Ink = .on) -> Int {
        var cx = x
        var n = 0
        for u in s.unicodeScalars {
            if n == 3 { break }
            glyph(u.value, font: font, x: cx, y: y, ink)
            cx += font.width
            n += 1
        }
        return cx
    }

    /// Moves the whole picture right by `dx` and down by `dy` pixels (0…7); what falls off the
    /// edge is lost, what comes in is dark. Spreads the wear of static content on an OLED.
    public mutating func shift(dx: Int, dy: Int) {
        let w = width, np = pages
        if dx > 0 {
            bytes.withUnsafeMutableBufferPointer { b in
                var p = 0
                while p < np {
                    let row = p * w
                    var x = w - 1
                    while x >= dx { b[row + x] = b[row + x - dx]; x -= 1 }
                    while x >= 0 { b[row + x] = 0; x -= 1 }
                    p += 1
                }
            }
        }
        if dy > 0 && dy < 8 {
            bytes.withUnsafeMutableBufferPointer { b in
                var x = 0
                while x < w {
                    var p = np - 1
                    while p >= 0 {
                        let above: UInt8 = p > 0 ? b[(p - 1) * w + x] >> UInt8(8 - dy) : 0
                        b[p * w + x] = b[p * w + x] << UInt8(dy) | above
                        p -= 1
                    }
                    x += 1
                }
            }
        }
    }
}
