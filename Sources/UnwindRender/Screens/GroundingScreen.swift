import UnwindCore

/// The 5-4-3-2-1 grounding page (spec 3.2–3.6): the row of n frames across the top, filled as
/// items are captured; the goal ([SEE], [TOUCH], [HEAR]) large in the middle; what to find and
/// the controls beneath. After the 45th capture, the 5x9 grid of the whole exercise.
enum GroundingScreen {
    static let frameWidth = 22, frameHeight = 14, frameGap = 3, framesY = 11
    static let goalY = 28
    static let promptY = 50
    static let hintY = 57
    static let cellWidth = 12, cellHeight = 8, cellPitchX = 13, cellPitchY = 9, gridY = 17

    static func draw(_ g: GroundingState, into fb: inout Framebuffer) {
        if g.isComplete { return drawGrid(g, into: &fb) }

        // The row of frames, centred; the filled ones solid.
        let n = g.rowSize
        let rowWidth = n * frameWidth + (n - 1) * frameGap
        var x = (fb.width - rowWidth) / 2
        var k = 0
        while k < n {
            if k < g.filledInRow {
                fb.fill(x: x, y: framesY, width: frameWidth, height: frameHeight)
            } else {
                fb.rectangle(x: x, y: framesY, width: frameWidth, height: frameHeight)
            }
            x += frameWidth + frameGap
            k += 1
        }

        let goal = g.goal.label
        Screen.centered(goal, font: .large, y: goalY, into: &fb)

        // "5 things you can see", drawn in pieces: no string is built for a frame.
        let small = BitmapFont.small
        let words = n == 1 ? " thing you can " : " things you can "
        let width = small.width + small.textWidth(words) + small.textWidth(g.goal.verb)
        x = (fb.width - width) / 2
        x = fb.number(Int64(n), font: small, x: x, y: promptY)
        x = fb.text(words, font: small, x: x, y: promptY)
        fb.text(g.goal.verb, font: small, x: x, y: promptY)

        fb.fill(x: 0, y: hintY - 1, width: 15, height: 8)
        fb.text("SEL", font: small, x: 2, y: hintY, .off)
        fb.text("capture", font: small, x: 18, y: hintY)
        if g.filledInRow > 0 {
            fb.text("<", font: small, x: 50, y: hintY)
            fb.text("undo", font: small, x: 56, y: hintY)
        }
        // Progress through all 45, right-aligned.
        let done = Int64(g.captured)
        let digits = done >= 10 ? 2 : 1
        x = fb.width - (digits + 3) * small.width
        x = fb.number(done, font: small, x: x, y: hintY)
        fb.text("/45", font: small, x: x, y: hintY)
    }

    /// Spec 3.5: the whole exercise, capture i in row i / 9, column i % 9, each cell marked
    /// with its goal's initial; cells of [SEE] drawn solid so the stages read at a glance.
    static func drawGrid(_ g: GroundingState, into fb: inout Framebuffer) {
        let small = BitmapFont.small
        fb.text("Well done!", font: small, x: 1, y: 10)
        fb.fill(x: fb.width - 58, y: 9, width: 15, height: 8)
        fb.text("SEL", font: small, x: fb.width - 56, y: 10, .off)
        fb.text("again", font: small, x: fb.width - 40, y: 10)
        let gridWidth = GroundingState.gridColumns * cellPitchX - 1
        let x0 = (fb.width - gridWidth) / 2
        var i = 0
        while i < GroundingState.total {
            let x = x0 + (i % GroundingState.gridColumns) * cellPitchX
            let y = gridY + (i / GroundingState.gridColumns) * cellPitchY
            if let c = g.cell(i) {
                if c.goal == .see {
                    fb.fill(x: x, y: y, width: cellWidth, height: cellHeight)
                    fb.text(c.goal.initial, font: small, x: x + 4, y: y + 1, .off)
                } else {
                    fb.rectangle(x: x, y: y, width: cellWidth, height: cellHeight)
                    fb.text(c.goal.initial, font: small, x: x + 4, y: y + 1)
                }
            }
            i += 1
        }
    }
}
