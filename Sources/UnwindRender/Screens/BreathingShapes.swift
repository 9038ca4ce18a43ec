import UnwindCore

/// The picture follows the pattern. A four-phase pattern (in, hold, out, hold) is the spec's
/// square: one side per phase. Any other — no holds, one hold, a top-up sip — is a bar, the
/// lungs: it fills while breathing in (up to a notch, then on to the top for a top-up), stays
/// full or empty while holding (the hold traced along its top or bottom edge, as the square's
/// top and bottom sides are), and empties while breathing out. Either way the phase's seconds
/// left are in the middle. Drawing is allocation-free.
public enum BreathingShape: Equatable, Sendable {
    case square, bar

    public init(_ pattern: BreathingPattern) { self = pattern.isSquare ? .square : .bar }
}

enum BreathingShapes {
    static let x = BreathingScreen.squareX, y = BreathingScreen.squareY, side = BreathingScreen.side
    /// The bar: 23 px wide, the square's height, centred where the square is.
    static let barWidth = 23
    static var barX: Int { x + (side - barWidth) / 2 }

    static func draw(_ pattern: BreathingPattern, at pos: BreathingClock.Position, into fb: inout Framebuffer) {
        switch BreathingShape(pattern) {
        case .square: drawSquare(pos, into: &fb)
        case .bar: drawBar(pattern, pos, into: &fb)
        }
        // Whole seconds left in the phase, counting down 4, 3, 2, 1.
        let left = (pos.remaining.nanoseconds + 999_999_999) / 1_000_000_000
        let font = BitmapFont.large
        let digits = left >= 10 ? 2 : 1
        let nx = x + (side - digits * font.width) / 2, ny = y + (side - font.height) / 2
        // Over the bar's fill the digits are drawn inverted, so they read on lit and dark alike.
        fb.number(left, font: font, x: nx, y: ny, BreathingShape(pattern) == .bar ? .invert : .on)
    }

    /// Before a session: the shape of the chosen pattern, waiting at its start.
    static func drawWaiting(_ pattern: BreathingPattern, into fb: inout Framebuffer) {
        switch BreathingShape(pattern) {
        case .square:
            fb.rectangle(x: x, y: y, width: side, height: side)
            drawMarker(x: x, y: y + side - 1, into: &fb)
        case .bar:
            fb.rectangle(x: barX, y: y, width: barWidth, height: side)
            drawNotch(pattern, into: &fb)
        }
    }

    // MARK: The square

    /// The corner the side of `phase` starts from, going round: breathe in up the left side,
    /// hold along the top, breathe out down the right side, hold along the bottom.
    static func path(_ phase: BreathingPhase, _ progress: Double) -> (x: Int, y: Int) {
        let l = side - 1
        let d = Int((Double(l) * progress).rounded(.down))
        let left = x, top = y, right = x + l, bottom = y + l
        switch phase {
        case .inhale, .topUp: return (left, bottom - d)
        case .holdAfterInhale: return (left + d, top)
        case .exhale: return (right, top + d)
        case .holdAfterExhale: return (right - d, bottom)
        }
    }

    static func drawSquare(_ pos: BreathingClock.Position, into fb: inout Framebuffer) {
        fb.rectangle(x: x, y: y, width: side, height: side)
        let from = path(pos.phase, 0)
        let to = path(pos.phase, pos.progress)
        // The travelled part of the current side is drawn thick, inside the square.
        switch pos.phase {
        case .inhale, .topUp: fb.fill(x: from.x, y: to.y, width: 3, height: from.y - to.y + 1)
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

    // MARK: The bar

    /// How full the lungs are, 0…1: the first inhale fills to the notch, the top-up on to the top.
    static func level(_ pattern: BreathingPattern, _ pos: BreathingClock.Position) -> Double {
        let notch = notchLevel(pattern)
        switch pos.phase {
        case .inhale: return pos.progress * notch
        case .topUp: return notch + pos.progress * (1 - notch)
        case .holdAfterInhale: return 1
        case .exhale: return 1 - pos.progress
        case .holdAfterExhale: return 0
        }
    }

    /// Where the first inhale ends, as a share of the bar: the inhale's share of both inhales.
    static func notchLevel(_ pattern: BreathingPattern) -> Double {
        let i = Double(pattern.inhale.nanoseconds), t = Double(pattern.topUp.nanoseconds)
        return t > 0 && i + t > 0 ? i / (i + t) : 1
    }

    /// Inside the frame, the rows from `inner` (bottom) up.
    static let inner = side - 2

    static func drawBar(_ pattern: BreathingPattern, _ pos: BreathingClock.Position, into fb: inout Framebuffer) {
        fb.rectangle(x: barX, y: y, width: barWidth, height: side)
        drawNotch(pattern, into: &fb)
        let filled = Int((Double(inner) * level(pattern, pos)).rounded(.down))
        if filled > 0 { fb.fill(x: barX + 1, y: y + side - 1 - filled, width: barWidth - 2, height: filled) }
        // A hold traces the bar's edge, as the square's holds trace its top and bottom.
        let d = Int((Double(barWidth - 1) * pos.progress).rounded(.down))
        switch pos.phase {
        case .holdAfterInhale: fb.fill(x: barX, y: y - 2, width: d + 1, height: 2)
        case .holdAfterExhale: fb.fill(x: barX + barWidth - 1 - d, y: y + side, width: d + 1, height: 2)
        default: break
        }
    }

    /// Small triangles either side of the bar, pointing at where the first inhale ends and the
    /// top-up begins.
    static func drawNotch(_ pattern: BreathingPattern, into fb: inout Framebuffer) {
        guard pattern.topUp > .zero else { return }
        let ny = y + side - 1 - Int((Double(inner) * notchLevel(pattern)).rounded(.down))
        for i in 0..<3 {
            fb.verticalLine(x: barX - 2 - i, y0: ny - i, y1: ny + i)
            fb.verticalLine(x: barX + barWidth + 1 + i, y0: ny - i, y1: ny + i)
        }
    }
}
