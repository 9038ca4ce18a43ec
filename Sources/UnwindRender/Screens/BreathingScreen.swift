import UnwindCore

/// The breathing page (spec 2.x): the pattern's picture on the left (the square, or the bar),
/// on the right the phase, the session timer, the total and what SELECT does. Before a session
/// the right side offers the pattern (LEFT/RIGHT) and shows the session length (RIGHT held).
enum BreathingScreen {
    static let squareX = 5, squareY = 14, side = 45
    static let panelX = 56
    /// The chooser's row: arrows at the panel's edges, the name centred between them.
    static let chooserY = 11, arrowWidth = 5

    static func draw(_ state: DeviceState, at now: Instant, into fb: inout Framebuffer) {
        let b = state.breathing
        if case .running(let clock) = b.session {
            let pos = clock.position(at: now)
            BreathingShapes.draw(clock.pattern, at: pos, into: &fb)
            fb.text(pos.phase.label, font: .regular, x: panelX, y: 12)
        } else {
            BreathingShapes.drawWaiting(b.preset.pattern, into: &fb)
            if case .finished = b.session { drawWellDone(into: &fb) }
            drawChooser(b, into: &fb)
        }

        fb.clock(b.sessionSeconds(at: now), font: .large, x: panelX, y: 23)

        if state.showsLockNotice(at: now) {
            fb.fill(x: panelX - 2, y: 44, width: fb.width - panelX + 2, height: 20)
            fb.text("Pages locked.", font: .small, x: panelX, y: 46, .off)
            fb.text("SELECT stops.", font: .small, x: panelX, y: 55, .off)
            return
        }
        let totalEnd = drawTotal(b.totals(at: now).totalSeconds, into: &fb)
        fb.fill(x: panelX - 1, y: 54, width: 18, height: 8)
        fb.text("SEL", font: .small, x: panelX + 2, y: 55, .off)
        fb.text(b.selectLabel, font: .small, x: panelX + 20, y: 55)
        if b.isRunning {
            // A timed session counts down what is left at the bottom right.
            if let end = b.endsAt {
                let left = max(0, (end - now).nanoseconds + 999_999_999) / 1_000_000_000
                let w = BitmapFont.small.width + Framebuffer.clockWidth(left, font: .small)
                let x = fb.text("-", font: .small, x: fb.width - w, y: 55)
                fb.clock(left, font: .small, x: x, y: 55)
            }
        } else {
            let length = SessionLength.label(b.minutes)
            fb.text(length, font: .small, x: fb.width - BitmapFont.small.textWidth(length), y: 55)
            // The statistics are LEFT held: the arrow drawn held (filled), as the chooser's is
            // while pressed, then the word.
            let hintX = fb.width - 26
            if totalEnd + 2 <= hintX {
                fb.fill(x: hintX, y: 45, width: 5, height: 7)
                for col in 0..<3 { fb.verticalLine(x: hintX + 1 + col, y0: 48 - col, y1: 48 + col, .off) }
                fb.text("Stats", font: .small, x: hintX + 6, y: 46)
            }
        }
    }

    /// "Total h:mm:ss"; returns the x after it.
    static func drawTotal(_ seconds: Int64, into fb: inout Framebuffer) -> Int {
        let x = fb.text("Total ", font: .small, x: panelX, y: 46)
        return fb.clock(seconds, font: .small, x: x, y: 46)
    }

    /// ◂ name ▸: the pattern SELECT will start. A pressed arrow is drawn filled.
    static func drawChooser(_ b: BreathingState, into fb: inout Framebuffer) {
        let right = fb.width - arrowWidth
        drawArrow(x: panelX, pointingLeft: true, pressed: b.arrowPressed == .left, into: &fb)
        drawArrow(x: right, pointingLeft: false, pressed: b.arrowPressed == .right, into: &fb)
        let name = b.preset.name
        let room = right - (panelX + arrowWidth)
        let w = min(room, BitmapFont.regular.textWidth(name))
        fb.text(name, font: .regular, x: panelX + arrowWidth + (room - w) / 2, y: chooserY,
                maxCharacters: room / BitmapFont.regular.width)
    }

    /// A 5x9 triangle; pressed: a filled box with the triangle cut out.
    static func drawArrow(x: Int, pointingLeft: Bool, pressed: Bool, into fb: inout Framebuffer) {
        let top = chooserY
        if pressed { fb.fill(x: x, y: top, width: arrowWidth, height: 9) }
        let ink: Ink = pressed ? .off : .on
        for col in 0..<4 {
            // Column `col` from the point: 2*col+1 pixels tall, centred on row 4.
            let cx = pointingLeft ? x + col + (pressed ? 1 : 0) : x + arrowWidth - 1 - col - (pressed ? 1 : 0)
            fb.verticalLine(x: cx, y0: top + 4 - col, y1: top + 4 + col, ink)
        }
    }

    /// After a session, in the middle of the picture.
    static func drawWellDone(into fb: inout Framebuffer) {
        let cx = squareX + side / 2
        let w = BitmapFont.regular.textWidth("done")
        fb.fill(x: cx - w / 2 - 2, y: squareY + side / 2 - 11, width: w + 4, height: 22, .off)
        fb.text("Well", font: .regular, x: cx - w / 2, y: squareY + side / 2 - 10)
        fb.text("done", font: .regular, x: cx - w / 2, y: squareY + side / 2)
    }
}
