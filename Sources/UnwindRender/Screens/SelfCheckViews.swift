import UnwindCore

/// Today's mood, 1 to 5: blank until LEFT or RIGHT gives a number, its word beneath.
enum MoodScreen {
    static let scaleX = 24, scaleStep = 20, scaleY = 50

    static func draw(_ q: MoodQuestion, into fb: inout Framebuffer) {
        Screen.centered("Your mood today?", font: .regular, y: 11, into: &fb)
        let font = BitmapFont.large
        if let r = q.rating {
            fb.number(Int64(r), font: font, x: (fb.width - font.width) / 2, y: 22)
            Screen.centered(MoodEntry.words(r), font: .small, y: 43, into: &fb)
        } else {
            fb.fill(x: (fb.width - font.width) / 2, y: 38, width: font.width, height: 2)
        }
        fb.horizontalLine(x0: scaleX, x1: scaleX + 4 * scaleStep, y: scaleY)
        for i in MoodEntry.scale {
            let tx = scaleX + (i - 1) * scaleStep
            if q.rating == i {
                fb.fill(x: tx - 2, y: scaleY - 2, width: 5, height: 5)
            } else {
                fb.verticalLine(x: tx, y0: scaleY - 1, y1: scaleY + 1)
            }
        }
        fb.text("1", font: .small, x: scaleX - 9, y: scaleY - 2)
        fb.text("5", font: .small, x: scaleX + 4 * scaleStep + 6, y: scaleY - 2)
        Screen.centered("</> rate  SEL keep  PAGE back", font: .small, y: 57, into: &fb)
    }
}

/// The chart of the last eight weeks, one view at a time (LEFT/RIGHT): the moods as bars, the
/// GAD-7 and PHQ-9 totals as dots joined by lines, the bands' edges dotted across; today on the
/// right, a tick under each week's first day.
enum ProgressScreen {
    static let left = 12, top = 19, bottom = 53
    static let dayWidth = 2

    static func draw(_ chart: ProgressChart, into fb: inout Framebuffer) {
        let view = chart.view
        fb.text(view.title, font: .small, x: 1, y: 10)
        fb.text("</>", font: .small, x: fb.width - 12, y: 10)
        let scale = view.scale
        func y(_ v: Int) -> Int { bottom - v * (bottom - top) / scale.maximum }
        fb.number(Int64(scale.maximum), font: .small, x: 0, y: top - 2)
        if view != .moods { fb.text("0", font: .small, x: 4, y: bottom - 5) }
        fb.verticalLine(x: left - 1, y0: top, y1: bottom + 1)
        fb.horizontalLine(x0: left - 1, x1: fb.width - 1, y: bottom + 1)
        for edge in scale.lines {
            var x = left
            while x < fb.width { fb.plot(x, y(edge)); x += 3 }
        }
        // A tick under each week's start, counted back from today.
        var d = ProgressChart.days - 1
        while d >= 0 {
            fb.verticalLine(x: left + d * dayWidth, y0: bottom + 2, y1: bottom + 3)
            d -= 7
        }
        let points = chart.points
        if points.isEmpty {
            fb.fill(x: 20, y: 29, width: 96, height: 9, .off)
            Screen.centered("Nothing yet in 8 weeks", font: .small, y: 31, into: &fb)
        }
        var previous: (x: Int, y: Int)?
        for p in points {
            let x = left + p.day * dayWidth
            if view == .moods {
                fb.fill(x: x, y: y(p.value), width: dayWidth - 1 + 1, height: bottom - y(p.value) + 1)
            } else {
                let py = y(p.value)
                if let prev = previous { line(from: prev, to: (x, py), into: &fb) }
                fb.fill(x: x - 1, y: py - 1, width: 3, height: 3)
                previous = (x, py)
            }
        }
        fb.text("8 weeks to today", font: .small, x: 0, y: 57)
        fb.text("other: close", font: .small, x: 80, y: 57)
    }

    /// A straight line between two points (Bresenham).
    static func line(from a: (x: Int, y: Int), to b: (x: Int, y: Int), into fb: inout Framebuffer) {
        var x = a.x, y = a.y
        let dx = abs(b.x - a.x), dy = -abs(b.y - a.y)
        let sx = a.x < b.x ? 1 : -1, sy = a.y < b.y ? 1 : -1
        var err = dx + dy
        while true {
            fb.plot(x, y)
            if x == b.x && y == b.y { return }
            let e2 = 2 * err
            if e2 >= dy { err += dy; x += sx }
            if e2 <= dx { err += dx; y += sy }
        }
    }
}

/// The coping cards: the concern, SELECT turns to the person's answer; LEFT/RIGHT the others.
enum CardsScreen {
    static func draw(_ v: CardViewer, count: Int, at now: Instant, fonts: Fonts, into fb: inout Framebuffer) {
        let small = BitmapFont.small
        guard count > 0 else {
            Screen.centered("No coping cards yet.", font: .regular, y: 14, into: &fb)
            Screen.centered("A concern and your own", font: .small, y: 28, into: &fb)
            Screen.centered("answer to it. Write them with", font: .small, y: 35, into: &fb)
            Screen.centered("the one who looks after this.", font: .small, y: 42, into: &fb)
            Screen.centered("Any button closes", font: .small, y: 57, into: &fb)
            return
        }
        MantraView.draw(v.lines, fonts: fonts, since: v.shownAt, at: now, into: &fb)
        var x = fb.text("Card ", font: small, x: 1, y: 10)
        x = fb.number(Int64(v.index + 1), font: small, x: x, y: 10)
        x = fb.text("/", font: small, x: x, y: 10)
        fb.number(Int64(count), font: small, x: x, y: 10)
        let side = v.showsAnswer ? "YOUR ANSWER" : "CONCERN"
        let w = small.textWidth(side)
        fb.fill(x: fb.width - w - 3, y: 9, width: w + 3, height: 8)
        fb.text(side, font: small, x: fb.width - w - 1, y: 10, .off)
        fb.text("<>", font: small, x: 0, y: 57)
        fb.text("cards", font: small, x: 10, y: 57)
        SelfCheckScreen.selectHint(v.showsAnswer ? "concern" : "answer", x: 34, y: 57, into: &fb)
        fb.text("PAGE:close", font: small, x: 88, y: 57)
    }

    /// The affirmations page's way to the cards, between its last mantra and its first.
    static func drawEntry(_ count: Int, into fb: inout Framebuffer) {
        let small = BitmapFont.small
        fb.text("cards", font: small, x: 1, y: AffirmationsScreen.statusY)
        Screen.centered("Your coping cards", font: .regular, y: 24, into: &fb)
        let label = count == 1 ? " card" : " cards"
        let w = (count >= 10 ? (count >= 100 ? 3 : 2) : 1) * small.width + small.textWidth(label)
        let x = fb.number(Int64(count), font: small, x: (fb.width - w) / 2, y: 38)
        fb.text(label, font: small, x: x, y: 38)
        fb.text("<>", font: small, x: 0, y: AffirmationsScreen.hintY)
        fb.text("browse", font: small, x: 10, y: AffirmationsScreen.hintY)
        SelfCheckScreen.selectHint("open", x: 37, y: AffirmationsScreen.hintY, into: &fb)
    }
}

/// The weekly self-check reminder, over whatever page is shown.
enum SelfCheckReminderScreen {
    static func draw(into fb: inout Framebuffer) {
        fb.fill(x: 0, y: 9, width: fb.width, height: 8)
        Screen.centered("Your weekly self-check", font: .small, y: 10, into: &fb, .off)
        Screen.centered("4 short questions", font: .regular, y: 22, into: &fb)
        Screen.centered("about the last 2 weeks.", font: .small, y: 36, into: &fb)
        SelfCheckScreen.selectHint("start", x: 40, y: 48, into: &fb)
        Screen.centered("Other buttons: not now", font: .small, y: 57, into: &fb)
    }
}

/// What `unwind screen` shows while "How am I doing?" is on the device's screen: the menu bar,
/// and that the rest is the person's own.
public enum PrivateScreen {
    public static func render(_ state: DeviceState, into fb: inout Framebuffer) {
        fb.clear()
        MenuBar.draw(current: state.page, readiness: state.panic.readiness.current, into: &fb)
        Screen.centered("How am I doing?", font: .regular, y: 22, into: &fb)
        Screen.centered("is on the screen: the person's", font: .small, y: 38, into: &fb)
        Screen.centered("own, not shown here.", font: .small, y: 45, into: &fb)
    }
}
