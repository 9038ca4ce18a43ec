import UnwindCore

/// The panic alert page (spec 5.2–5.4): the five slots, the counselling line always at the
/// bottom, the selected row inverted, empty or broken slots greyed; and the screens PANIC
/// brings up wherever the person is.
enum PanicScreen {
    static let rowHeight = 8
    /// Where a row's status word starts: room for nine characters ("DELIVERED").
    static let statusX = 92

    static func outline(x: Int, y: Int, width: Int, height: Int, into fb: inout Framebuffer) {
        fb.horizontalLine(x0: x, x1: x + width - 1, y: y)
        fb.horizontalLine(x0: x, x1: x + width - 1, y: y + height - 1)
        fb.verticalLine(x: x, y0: y, y1: y + height - 1)
        fb.verticalLine(x: x + width - 1, y0: y, y1: y + height - 1)
    }

    static func draw(_ state: DeviceState, at now: Instant, into fb: inout Framebuffer) {
        let p = state.panic
        // SELECT held down: the chosen line is drawn hollow (outlined, not filled) until its
        // release sends (or its hold shows the QR code).
        let pressed = state.selectPressed && state.overlay == .none
        for i in 0..<PanicState.slotCount {
            let y = 10 + i * rowHeight
            let selected = p.selection == i
            let ink: Ink = selected && !pressed ? .off : .on
            if selected { pressed ? outline(x: 0, y: y, width: fb.width, height: rowHeight, into: &fb)
                                  : fb.fill(x: 0, y: y, width: fb.width, height: rowHeight) }
            fb.number(Int64(i + 1), font: .small, x: 1, y: y + 1, ink)
            switch p.slots[i] {
            case .ready(let alert):
                ContactName.draw(alert.name, of: .slot(i, alert.number), font: .small, x: 8, y: y + 1, ink,
                                 maxCharacters: 21, into: &fb)
            case .empty:
                fb.text("empty", font: .small, x: 8, y: y + 1, ink)
                fb.dither(x: 8, y: y, width: 20, height: rowHeight)
            case .needsAttention:
                fb.text("needs attention", font: .small, x: 8, y: y + 1, ink)
                fb.dither(x: 8, y: y, width: 60, height: rowHeight)
            }
            if let d = p.progress(ofSlot: i) {
                fb.text(d.word, font: .small, x: statusX, y: y + 1, ink, maxCharacters: 9)
            }
        }
        // The counselling line, always visible.
        let y = 10 + PanicState.slotCount * rowHeight + 2
        fb.horizontalLine(x0: 0, x1: fb.width - 1, y: y - 2)
        let selected = p.isCounsellingSelected
        let ink: Ink = selected && !pressed ? .off : .on
        if selected { pressed ? outline(x: 0, y: y - 1, width: fb.width, height: fb.height - y + 1, into: &fb)
                              : fb.fill(x: 0, y: y - 1, width: fb.width, height: fb.height - y + 1) }
        if p.callActive {
            fb.text("Calling. SELECT hangs up", font: .small, x: 1, y: y, ink)
        } else {
            var x = ContactName.draw(p.counselling.name, of: .counselling, font: .small, x: 1, y: y, ink,
                                     maxCharacters: 15, into: &fb)
            x += 4
            fb.text(p.counselling.displayNumber, font: .small, x: x, y: y, ink, maxCharacters: (fb.width - x) / 4)
        }
        if p.showsNotice(at: now), let n = p.notice { drawNotice(n, into: &fb) }
        if p.armingSince != nil { drawArming(p, at: now, into: &fb) }
    }

    static func drawNotice(_ n: PanicNotice, into fb: inout Framebuffer) {
        fb.fill(x: 8, y: 22, width: 112, height: 22, .off)
        fb.rectangle(x: 8, y: 22, width: 112, height: 22)
        let (a, b) = n.lines
        Screen.centered(a, font: .small, y: 26, into: &fb)
        Screen.centered(b, font: .small, y: 34, into: &fb)
    }

    /// While PANIC is held: how far the hold has come, and that letting go sends nothing.
    static func drawArming(_ p: PanicState, at now: Instant, into fb: inout Framebuffer) {
        fb.fill(x: 0, y: 10, width: fb.width, height: fb.height - 10, .off)
        Screen.centered("Keep holding PANIC", font: .regular, y: 14, into: &fb)
        Screen.centered("to send your alerts", font: .small, y: 27, into: &fb)
        fb.rectangle(x: 10, y: 37, width: 108, height: 10)
        if let since = p.armingSince {
            let part = min(1, Double((now - since).nanoseconds) / Double(max(1, p.holdNanoseconds)))
            fb.fill(x: 12, y: 39, width: Int(104 * part), height: 6)
        }
        Screen.centered("Let go to stop", font: .small, y: 53, into: &fb)
    }

    /// After alerts were asked for: where each one stands (sent, delivered, who replied, who is
    /// being rung), the first reply not yet dismissed, "I'm OK now" and its confirmation.
    static func drawStatus(_ state: DeviceState, at now: Instant, fonts: Fonts, into fb: inout Framebuffer) {
        let p = state.panic
        let a = p.aftercare
        if a.confirmingAllClear { return drawConfirmAllClear(p, into: &fb) }
        let rows = a.allClear.isEmpty ? p.progress : a.allClear
        var sent = 0, delivered = 0
        for r in rows {
            if r.delivery == .sent || r.delivery == .delivered { sent += 1 }
            if r.delivery == .delivered { delivered += 1 }
        }
        var x = fb.text(a.allClear.isEmpty ? "ALERTS " : "I'M OK ", font: .small, x: 1, y: 11)
        x = fb.number(Int64(sent), font: .small, x: x, y: 11)
        x = fb.text(" of ", font: .small, x: x, y: 11)
        x = fb.number(Int64(rows.count), font: .small, x: x, y: 11)
        x = fb.text(" sent", font: .small, x: x, y: 11)
        if delivered > 0 {
            x = fb.text(", ", font: .small, x: x, y: 11)
            x = fb.number(Int64(delivered), font: .small, x: x, y: 11)
            fb.text(" delivered", font: .small, x: x, y: 11)
        }
        fb.horizontalLine(x0: 0, x1: fb.width - 1, y: 18)
        if let reply = a.replies.first {
            drawReply(reply, more: a.replies.count - 1, fonts: fonts, since: a.replyShownSince, at: now, into: &fb)
        } else {
            var row = 0
            for r in rows.prefix(5) {
                let y = 20 + row * 7
                ContactName.draw(r.name, of: .slot(r.slot, r.number), font: .small, x: 1, y: y, maxCharacters: 21, into: &fb)
                // "CALLING", not "ringing": the device dialled; whether that phone rings, it cannot know.
                let word = a.allClear.isEmpty && r.acknowledged ? (r.answeredCall ? "ANSWERED" : "REPLIED")
                    : a.allClear.isEmpty && a.ringing == r.slot ? "CALLING" : r.delivery.word
                fb.text(word, font: .small, x: statusX, y: y, maxCharacters: 9)
                row += 1
            }
        }
        fb.fill(x: 0, y: 55, width: fb.width, height: 9)
        if let at = p.sendingAt {
            var x = fb.text("Sending in ", font: .small, x: 1, y: 57, .off)
            x = fb.number(max(0, ((at - now).nanoseconds + 999_999_999) / 1_000_000_000), font: .small, x: x, y: 57, .off)
            fb.text("s. Any key cancels", font: .small, x: x, y: 57, .off)
        } else if !a.replies.isEmpty {
            fb.text("Any button: seen", font: .small, x: 1, y: 57, .off)
        } else if p.progress.contains(where: { if case .blocked = $0.delivery { true } else { false } }) {
            // Alerts cannot go out: say so, and what to do now instead of waiting.
            let x = fb.text("Can't send. Call ", font: .small, x: 1, y: 57, .off)
            fb.text(p.counselling.displayNumber, font: .small, x: x, y: 57, .off, maxCharacters: (fb.width - x) / 4)
        } else if a.escalation.isActive, a.ringing != nil || { if case .between = a.escalation { true } else { false } }() {
            fb.text("Calling. RIGHT stops calls", font: .small, x: 1, y: 57, .off)
        } else if !a.allClearSent && a.purpose != nil {
            fb.text("SEL: breathe  hold: I'm OK", font: .small, x: 1, y: 57, .off)
        } else {
            fb.text("SELECT: breathe  other: OK", font: .small, x: 1, y: 57, .off)
        }
        // A second PANIC while these are on their way says so over the list.
        if p.showsNotice(at: now), let n = p.notice { drawNotice(n, into: &fb) }
    }

    /// Where a reply's text goes: below "Mum replied:", above the hints.
    static let replyTop = 27, replyBottom = 55

    /// "Mum replied:" and the first words of the text, every character drawn (see `Paragraph`):
    /// rows taller than the box scroll slowly down and back, as a long mantra does.
    static func drawReply(_ r: ContactReply, more: Int, fonts: Fonts, since: Instant, at now: Instant,
                          into fb: inout Framebuffer) {
        let text = Paragraph(lines: r.lines, lettering: fonts.lettering(.small), width: fb.width - 1, gap: 1)
        let overflow = max(0, text.height - (replyBottom - replyTop))
        let top = replyTop - MantraView.scrollOffset(overflow: overflow, elapsed: now - since)
        text.draw(left: 1, top: top, clipTop: replyTop, clipBottom: replyBottom, into: &fb)
        // A row scrolled half out is cut at the box's edges (the hints' bar covers the bottom).
        fb.fill(x: 0, y: 19, width: fb.width, height: replyTop - 19, .off)
        let x = ContactName.draw(r.name, of: .slot(r.slot, r.number), font: .small, x: 1, y: 20, maxCharacters: 18, into: &fb)
        fb.text(" replied:", font: .small, x: x, y: 20)
        if more > 0 {
            var mx = fb.text("+", font: .small, x: fb.width - 28, y: 20)
            mx = fb.number(Int64(more), font: .small, x: mx, y: 20)
            fb.text(" more", font: .small, x: mx, y: 20)
        }
    }

    /// The step between SELECT held and "I'm OK now" going out: nothing is sent by accident.
    static func drawConfirmAllClear(_ p: PanicState, into fb: inout Framebuffer) {
        Screen.centered("Send \"I'm OK now\"", font: .regular, y: 13, into: &fb)
        // Everyone who may have any part of the alert, as the core will send it (not only SENT).
        var reached = 0
        for r in p.progress where r.canHaveIt { reached += 1 }
        if reached == 0 {
            Screen.centered("Nobody had the alert;", font: .small, y: 27, into: &fb)
            Screen.centered("the rest is cancelled.", font: .small, y: 34, into: &fb)
        } else {
            let w = BitmapFont.small.width
            let digits = reached >= 10 ? 2 : 1
            let label = reached == 1 ? " contact?" : " contacts?"
            let total = (3 + digits) * w + BitmapFont.small.textWidth(label)
            var x = fb.text("to ", font: .small, x: (fb.width - total) / 2, y: 28)
            x = fb.number(Int64(reached), font: .small, x: x, y: 28)
            fb.text(label, font: .small, x: x, y: 28)
            Screen.centered("Calls stop, the rest is", font: .small, y: 37, into: &fb)
            Screen.centered("cancelled.", font: .small, y: 44, into: &fb)
        }
        fb.fill(x: 0, y: 55, width: fb.width, height: 9)
        fb.text("SELECT: send   other: back", font: .small, x: 1, y: 57, .off)
    }

    /// Long SELECT on the counselling line: the website as a QR code filling the screen's height,
    /// the service's name and number beside it (spec 5.3). Any button returns.
    static func drawCounselling(_ state: DeviceState, into fb: inout Framebuffer) {
        fb.clear()
        let c = state.panic.counselling
        guard let code = state.panic.websiteCode else {
            let cols = fb.width / BitmapFont.regular.width
            let width = ContactName.width(c.name, of: .counselling, font: .regular, maxCharacters: cols)
            ContactName.draw(c.name, of: .counselling, font: .regular, x: (fb.width - width) / 2, y: 16,
                             maxCharacters: cols, into: &fb)
            Screen.centered(c.displayNumber, font: .regular, y: 30, into: &fb)
            Screen.centered("Any button returns", font: .small, y: 54, into: &fb)
            return
        }
        // As wide a quiet zone as the height allows (at least 2 modules).
        let quiet = max(QRCode.minimumQuietZone, (fb.height / QRCode.pixelsPerModule - code.size) / 2)
        let side = fb.qrCode(code, x: 0, y: (fb.height - (code.size + 2 * quiet) * QRCode.pixelsPerModule) / 2, quietZone: quiet)
        let x = side + 3
        let cols = (fb.width - x) / BitmapFont.small.width
        fb.text("Scan for the", font: .small, x: x, y: 4, maxCharacters: cols)
        fb.text("website", font: .small, x: x, y: 11, maxCharacters: cols)
        ContactName.draw(c.name, of: .counselling, font: .small, x: x, y: 24, maxCharacters: cols, into: &fb)
        fb.text(c.displayNumber, font: .small, x: x, y: 31, maxCharacters: cols)
        fb.text("Any button", font: .small, x: x, y: 50, maxCharacters: cols)
        fb.text("returns", font: .small, x: x, y: 57, maxCharacters: cols)
    }
}
