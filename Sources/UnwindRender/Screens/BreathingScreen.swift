import UnwindCore

/// The square breathing page (spec 2.x): the square with its marker on the left, the phase,
/// the session timer, the total and what SELECT does on the right.
enum BreathingScreen {
    static let squareX = 5, squareY = 14, side = 45
    static let panelX = 56

    static func draw(_ state: DeviceState, at now: Instant, into fb: inout Framebuffer) {
        let b = state.breathing
        fb.rectangle(x: squareX, y: squareY, width: side, height: side)

        if case .running(let clock) = b.session {
            let pos = clock.position(at: now)
            drawProgress(pos, into: &fb)
            // Whole seconds left in the phase, counting down 4, 3, 2, 1.
            let left = (pos.remaining.nanoseconds + 999_999_999) / 1_000_000_000
            let font = BitmapFont.large
            fb.number(left, font: font, x: squareX + (side - font.width) / 2, y: squareY + (side - font.height) / 2)
            fb.text(pos.phase.label, font: .regular, x: panelX, y: 12)
        } else {
            drawMarker(x: squareX, y: squareY + side - 1, into: &fb)
            fb.text(b.session == .ready ? "Ready" : "Well done", font: .regular, x: panelX, y: 12)
        }

        fb.clock(b.sessionSeconds(at: now), font: .large, x: panelX, y: 23)

        if state.showsLockNotice(at: now) {
            fb.fill(x: panelX - 2, y: 44, width: fb.width - panelX + 2, height: 20)
            fb.text("Pages locked.", font: .small, x: panelX, y: 46, .off)
            fb.text("SELECT stops.", font: .small, x: panelX, y: 55, .off)
            return
        }
        var x = fb.text("Total ", font: .small, x: panelX, y: 46)
        x = fb.clock(b.totals(at: now).totalSeconds, font: .small, x: x, y: 46)
        _ = x
        fb.fill(x: panelX - 1, y: 54, width: 18, height: 8)
        fb.text("SEL", font: .small, x: panelX + 2, y: 55, .off)
        fb.text(b.selectLabel, font: .small, x: panelX + 20, y: 55)
        if !b.isRunning {
            fb.text(">Stats", font: .small, x: fb.width - 24, y: 55 - 9)
        }
    }

    /// The corner the side of `phase` starts from, going round: breathe in up the left side,
    /// hold along the top, breathe out down the right side, hold along the bottom.
    static func path(_ phase: BreathingPhase, _ progress: Double) -> (x: Int, y: Int) {
        let l = side - 1
        let d = Int((Double(l) * progress).rounded(.down))
        let left = squareX, top = squareY, right = squareX + l, bottom = squareY + l
        switch phase {
        case .inhale: return (left, bottom - d)
        case .holdAfterInhale: return (left + d, top)
        case .exhale: return (right, top + d)
        case .holdAfterExhale: return (right - d, bottom)
        }
    }

    static func drawProgress(_ pos: BreathingClock.Position, into fb: inout Framebuffer) {
        let from = path(pos.phase, 0)
        let to = path(pos.phase, pos.progress)
        // The travelled part of the current side is drawn thick, inside the square.
        switch pos.phase {
        case .inhale: fb.fill(x: from.x, y: to.y, width: 3, height: from.y - to.y + 1)
        case .holdAfterInhale: fb.fill(x: from.x, y: from.y, width: to.x - from.x + 1, height: 3)
        case .exhale: fb.fill(x: from.x - 2, y: from.y, width: 3, height: to.y - from.y + 1)
        case .holdAfterExhale: fb.fill(x: to.x, y: from.y - 2, width: from.x - to.x + 1, height: 3)
        }
        drawMarker(x: to.x, y: to.y, into: &fb)
    }

    /// A 7x7 ring centred on the path, hollow so it reads as "you are here".
    static func drawMarker(x: Int, y: Int, into fb: inout Framebuffer) {
        fb.fill(x: x - 3, y: y - 3, width: 7, height: 7, .off)
        fb.rectangle(x: x - 3, y: y - 3, width: 7, height: 7)
        fb.fill(x: x - 1, y: y - 1, width: 3, height: 3)
    }
}

/// Spec 2.6: shortest, longest, average, count and total, with a bar chart of recent sessions.
enum StatsScreen {
    static let bars = 12

    static func draw(_ b: BreathingState, into fb: inout Framebuffer) {
        let t = b.totals
        row("Sessions", y: 11, into: &fb); fb.number(t.count, font: .small, x: 36, y: 11)
        row("Total", y: 18, into: &fb); fb.clock(t.totalSeconds, font: .small, x: 36, y: 18)
        row("Shortest", y: 25, into: &fb); fb.clock(t.shortestSeconds, font: .small, x: 36, y: 25)
        row("Longest", y: 32, into: &fb); fb.clock(t.longestSeconds, font: .small, x: 36, y: 32)
        row("Average", y: 39, into: &fb); fb.clock(t.averageSeconds, font: .small, x: 36, y: 39)
        fb.text("Any button closes", font: .small, x: 0, y: 57)

        // Recent sessions, newest on the right, scaled to the longest shown.
        let chartX = 74, chartBottom = 54, chartHeight = 38
        fb.text("Recent", font: .small, x: chartX + 10, y: 11)
        fb.horizontalLine(x0: chartX, x1: fb.width - 1, y: chartBottom + 1)
        let shown = min(bars, b.history.count)
        var longest: Int64 = 1
        var i = b.history.count - shown
        while i < b.history.count { longest = max(longest, b.history[i].seconds); i += 1 }
        var slot = bars - shown
        i = b.history.count - shown
        while i < b.history.count {
            let h = max(1, Int(b.history[i].seconds * Int64(chartHeight) / longest))
            fb.fill(x: chartX + slot * 4 + 1, y: chartBottom - h + 1, width: 3, height: h)
            slot += 1
            i += 1
        }
        if shown == 0 { fb.text("none yet", font: .small, x: chartX + 6, y: 32) }
    }

    static func row(_ label: String, y: Int, into fb: inout Framebuffer) {
        fb.text(label, font: .small, x: 0, y: y)
    }
}
