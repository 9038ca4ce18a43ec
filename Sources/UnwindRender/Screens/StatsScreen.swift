import UnwindCore

/// Spec 2.6: shortest, longest, average, count and total, with a bar chart of recent sessions;
/// with ratings in the history, a second view (LEFT/RIGHT): the anxiety before and after.
enum StatsScreen {
    static let bars = 12
    static let chartX = 74, chartBottom = 54, chartHeight = 38

    static func draw(_ b: BreathingState, into fb: inout Framebuffer) {
        if b.statsShowRatings && b.hasRatings { return drawRatings(b, into: &fb) }
        let t = b.totals
        row("Sessions", y: 11, into: &fb); fb.number(t.count, font: .small, x: 36, y: 11)
        row("Total", y: 18, into: &fb); fb.clock(t.totalSeconds, font: .small, x: 36, y: 18)
        row("Shortest", y: 25, into: &fb); fb.clock(t.shortestSeconds, font: .small, x: 36, y: 25)
        row("Longest", y: 32, into: &fb); fb.clock(t.longestSeconds, font: .small, x: 36, y: 32)
        row("Average", y: 39, into: &fb); fb.clock(t.averageSeconds, font: .small, x: 36, y: 39)
        fb.text(b.hasRatings ? "</> anxiety, other: close" : "Any button closes", font: .small, x: 0, y: 57)

        // Recent sessions, newest on the right, scaled to the longest shown.
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

    /// The rated sessions: averages before and after, the mean change, and for each of the last
    /// rated sessions a stroke from its before to its after, a dot at the after (0 at the bottom).
    static func drawRatings(_ b: BreathingState, into fb: inout Framebuffer) {
        let s = RatingSummary(b.history)
        fb.text("Anxiety 0-10", font: .small, x: 0, y: 11)
        row("Rated", y: 18, into: &fb); fb.number(Int64(s.sessions), font: .small, x: 36, y: 18)
        row("Before", y: 25, into: &fb); tenths(s.averageBeforeTenths, x: 36, y: 25, into: &fb)
        row("After", y: 32, into: &fb); tenths(s.averageAfterTenths, x: 36, y: 32, into: &fb)
        row("Change", y: 41, into: &fb)
        var x = 36
        if s.averageChangeTenths != 0 { x = fb.text(s.averageChangeTenths < 0 ? "-" : "+", font: .regular, x: x, y: 39) }
        tenths(abs(s.averageChangeTenths), x: x, y: 39, font: .regular, into: &fb)
        fb.text("</> times, other: close", font: .small, x: 0, y: 57)

        fb.text("10", font: .small, x: chartX - 10, y: level(10) - 2)
        fb.text("0", font: .small, x: chartX - 6, y: level(0) - 2)
        fb.verticalLine(x: chartX - 1, y0: level(10), y1: chartBottom + 1)
        fb.horizontalLine(x0: chartX - 1, x1: fb.width - 1, y: chartBottom + 1)
        // The last `bars` rated sessions, newest on the right.
        var rated = 0
        var i = b.history.count - 1
        while i >= 0 && rated < bars {
            if let before = b.history[i].before, let after = b.history[i].after {
                let cx = chartX + (bars - 1 - rated) * 4 + 2
                let y0 = level(before), y1 = level(after)
                fb.verticalLine(x: cx, y0: y0, y1: y1)
                fb.fill(x: cx - 1, y: y1 - 1, width: 3, height: 3)
                rated += 1
            }
            i -= 1
        }
    }

    /// The chart's row for a rating 0–10.
    static func level(_ rating: Int) -> Int { chartBottom - rating * (chartHeight - 2) / 10 }

    /// `6.1`: tenths drawn without building a String.
    static func tenths(_ t: Int, x: Int, y: Int, font: BitmapFont = .small, into fb: inout Framebuffer) {
        var cx = fb.number(Int64(t / 10), font: font, x: x, y: y)
        cx = fb.text(".", font: font, x: cx, y: y)
        fb.number(Int64(t % 10), font: font, x: cx, y: y)
    }

    static func row(_ label: String, y: Int, into fb: inout Framebuffer) {
        fb.text(label, font: .small, x: 0, y: y)
    }
}

/// How anxious are you, 0–10: before a session (SELECT starts it) or after (SELECT keeps the
/// answer); PAGE skips. Blank until LEFT or RIGHT gives a number.
enum RatingScreen {
    static let scaleX = 9, scaleStep = 11, scaleY = 47

    static func draw(_ q: AnxietyRating, into fb: inout Framebuffer) {
        Screen.centered(q.isBefore ? "How anxious are you?" : "How anxious now?", font: .regular, y: 11, into: &fb)
        let font = BitmapFont.large
        if let r = q.rating {
            let w = (r >= 10 ? 2 : 1) * font.width
            fb.number(Int64(r), font: font, x: (fb.width - w) / 2, y: 23)
        } else {
            fb.fill(x: (fb.width - font.width) / 2, y: 40, width: font.width, height: 2)
        }
        fb.horizontalLine(x0: scaleX, x1: scaleX + 10 * scaleStep, y: scaleY)
        for i in AnxietyRating.scale {
            let tx = scaleX + i * scaleStep
            if q.rating == i {
                fb.fill(x: tx - 2, y: scaleY - 3, width: 5, height: 7)
            } else {
                fb.verticalLine(x: tx, y0: scaleY - 1, y1: scaleY + 1)
            }
        }
        fb.text("0 calm", font: .small, x: scaleX - 1, y: scaleY + 3)
        let worst = "10 worst"
        fb.text(worst, font: .small, x: scaleX + 10 * scaleStep + 2 - BitmapFont.small.textWidth(worst), y: scaleY + 3)
        Screen.centered(q.isBefore ? "</> rate  SEL start  PAGE skip" : "</> rate  SEL save  PAGE skip",
                        font: .small, y: 57, into: &fb)
    }
}
