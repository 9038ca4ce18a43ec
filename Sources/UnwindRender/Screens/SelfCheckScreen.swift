import UnwindCore

/// "How am I doing?": the page's entries, and the screens a self-check brings (the items, the
/// safety screen, the results). The other screens of the page: SelfCheckViews.swift.
enum SelfCheckScreen {
    static let hintY = 57

    static func draw(_ view: SelfCheckView, _ state: DeviceState, at now: Instant, fonts: Fonts, into fb: inout Framebuffer) {
        switch view {
        case .questionnaire(let run): drawQuestion(run, at: now, into: &fb)
        case .safety(let step): drawSafety(step, state.panic, into: &fb)
        case .result(let outcome): drawResult(outcome, into: &fb)
        case .mood(let q): MoodScreen.draw(q, into: &fb)
        case .progress(let chart): ProgressScreen.draw(chart, into: &fb)
        case .cards(let viewer): CardsScreen.draw(viewer, count: state.selfCheck.cards.count, at: now, fonts: fonts, into: &fb)
        case .reminder(let editor): ReminderSettingsScreen.draw(editor, title: "Self-check reminder", into: &fb)
        }
    }

    // MARK: The page

    /// The entries as a wheel: the one SELECT opens in the middle, inverted, with a line about
    /// it beneath; the ones LEFT and RIGHT reach above and below.
    static func drawPage(_ state: DeviceState, at now: Instant, into fb: inout Framebuffer) {
        let s = state.selfCheck
        fb.text("How am I doing?", font: .small, x: 1, y: 10)
        var x = fb.number(Int64(s.entry.rawValue + 1), font: .small, x: fb.width - 4 * BitmapFont.small.width, y: 10)
        x = fb.text("/", font: .small, x: x, y: 10)
        fb.number(Int64(SelfCheckEntry.allCases.count), font: .small, x: x, y: 10)
        Screen.centered(s.entry.moved(by: -1).label, font: .small, y: 18, into: &fb)
        fb.fill(x: 0, y: 26, width: fb.width, height: 12)
        Screen.centered(s.entry.label, font: .regular, y: 27, into: &fb, .off)
        drawDetail(s, into: &fb)
        Screen.centered(s.entry.moved(by: 1).label, font: .small, y: 48, into: &fb)
        fb.text("<>", font: .small, x: 0, y: hintY)
        fb.text("choose", font: .small, x: 10, y: hintY)
        selectHint("open", x: 40, y: hintY, into: &fb)
    }

    /// What the entry holds now, under it.
    static func drawDetail(_ s: SelfCheckState, into fb: inout Framebuffer) {
        let y = 40
        switch s.entry {
        case .mood:
            if let r = s.summary.moodToday {
                let words = MoodEntry.words(r)
                let w = (7 + 1 + 2) * BitmapFont.small.width + BitmapFont.small.textWidth(words)
                var x = fb.text("Today: ", font: .small, x: (fb.width - w) / 2, y: y)
                x = fb.number(Int64(r), font: .small, x: x, y: y)
                x = fb.text(", ", font: .small, x: x, y: y)
                fb.text(words, font: .small, x: x, y: y)
            } else {
                Screen.centered("Not rated today", font: .small, y: y, into: &fb)
            }
        case .quick: Screen.centered("4 questions, 2 minutes", font: .small, y: y, into: &fb)
        case .anxietyCheck: lastTaken(s.summary.lastAnxietyCheck, items: 7, y: y, into: &fb)
        case .moodCheck: lastTaken(s.summary.lastMoodCheck, items: 9, y: y, into: &fb)
        case .progress: Screen.centered("The last 8 weeks", font: .small, y: y, into: &fb)
        case .cards:
            if s.cards.isEmpty {
                Screen.centered("None yet", font: .small, y: y, into: &fb)
            } else {
                let label = s.cards.count == 1 ? " card" : " cards"
                let w = (s.cards.count >= 10 ? (s.cards.count >= 100 ? 3 : 2) : 1) * BitmapFont.small.width + BitmapFont.small.textWidth(label)
                let x = fb.number(Int64(s.cards.count), font: .small, x: (fb.width - w) / 2, y: y)
                fb.text(label, font: .small, x: x, y: y)
            }
        case .reminder:
            ReminderSummary.draw(s.reminder.schedule, rightEdge: fb.width / 2 + 31, y: y, into: &fb)
        }
    }

    /// "7 questions" and when it was last answered: "7 questions, last 3 Mar".
    static func lastTaken(_ date: String?, items: Int, y: Int, into fb: inout Framebuffer) {
        let small = BitmapFont.small
        let w = small.textWidth(" questions") + small.width + (date.map { small.textWidth(", last " + $0) } ?? 0)
        var x = fb.number(Int64(items), font: small, x: (fb.width - w) / 2, y: y)
        x = fb.text(" questions", font: small, x: x, y: y)
        if let date {
            x = fb.text(", last ", font: small, x: x, y: y)
            fb.text(date, font: small, x: x, y: y)
        }
    }

    /// "SEL" inverted, then what it does.
    static func selectHint(_ label: String, x: Int, y: Int, into fb: inout Framebuffer) {
        fb.fill(x: x, y: y - 1, width: 15, height: 8)
        fb.text("SEL", font: .small, x: x + 2, y: y, .off)
        fb.text(label, font: .small, x: x + 17, y: y)
    }

    // MARK: One item

    /// The instrument and the item's number, what SELECT and PAGE do; the stem; the item in the
    /// questionnaire's words (a long one scrolls); the answer chosen, between the arrows that
    /// change it.
    static let itemTop = 31, itemHeight = 21, itemPitch = 7

    static func drawQuestion(_ run: QuestionnaireRun, at now: Instant, into fb: inout Framebuffer) {
        let small = BitmapFont.small
        let overflow = max(0, run.lines.count * itemPitch - itemHeight)
        let y0 = itemTop - (overflow > 0 ? MantraView.scrollOffset(overflow: overflow, elapsed: now - run.shownAt) : 0)
        var i = 0
        while i < run.lines.count {
            let y = y0 + i * itemPitch
            if y + small.height > itemTop && y < itemTop + itemHeight { fb.text(run.lines[i], font: small, x: 1, y: y) }
            i += 1
        }
        // Lines half out of the item's box are cut at its edges; the stem is drawn above them.
        fb.fill(x: 0, y: 9, width: fb.width, height: itemTop - 9, .off)
        fb.fill(x: 0, y: itemTop + itemHeight, width: fb.width, height: 55 - itemTop - itemHeight, .off)

        let c = run.current
        var x = fb.text(c.instrument.name, font: small, x: 1, y: 10)
        x = fb.text(" ", font: small, x: x, y: 10)
        x = fb.number(Int64(run.step + 1), font: small, x: x, y: 10)
        x = fb.text("/", font: small, x: x, y: 10)
        fb.number(Int64(run.count), font: small, x: x, y: 10)
        let hint = run.step + 1 == run.count ? "SEL done PAGE back" : "SEL next PAGE back"
        fb.text(hint, font: small, x: fb.width - small.textWidth(hint), y: 10)
        for (i, line) in QuestionnaireRun.stemLines.enumerated() { fb.text(line, font: small, x: 1, y: 17 + i * 7) }

        fb.fill(x: 0, y: 55, width: fb.width, height: 9)
        if let a = run.answer {
            if a > 0 { fb.text("<", font: small, x: 1, y: hintY, .off) }
            if a < Instrument.highestAnswer { fb.text(">", font: small, x: fb.width - 4, y: hintY, .off) }
            Screen.centered(Instrument.answers[a], font: small, y: hintY, into: &fb, .off)
        } else {
            Screen.centered("LEFT or RIGHT to answer", font: small, y: hintY, into: &fb, .off)
        }
    }

    // MARK: The results

    static func drawResult(_ o: SelfCheckOutcome, into fb: inout Framebuffer) {
        if o.results.count == 1, let r = o.results.first {
            Screen.centered(r.instrument.name + ", " + r.instrument.topic, font: .small, y: 10, into: &fb)
            let w = BitmapFont.regular.textWidth(String(r.total) + " of " + String(r.instrument.maximumTotal))
            var x = fb.number(Int64(r.total), font: .regular, x: (fb.width - w) / 2, y: 18)
            x = fb.text(" of ", font: .regular, x: x, y: 18)
            fb.number(Int64(r.instrument.maximumTotal), font: .regular, x: x, y: 18)
            Screen.centered(r.band.words, font: .regular, y: 30, into: &fb)
        } else {
            fb.text("Quick check", font: .small, x: 1, y: 10)
            var y = 18
            for r in o.results {
                fb.text(r.instrument.name, font: .small, x: 1, y: y)
                fb.text(r.instrument.topic, font: .small, x: 25, y: y)
                var x = fb.number(Int64(r.total), font: .small, x: 60, y: y)
                x = fb.text(" of ", font: .small, x: x, y: y)
                x = fb.number(Int64(r.instrument.maximumTotal), font: .small, x: x, y: y)
                fb.text(r.band == .fullCheckSuggested ? "  3+" : "", font: .small, x: x, y: y)
                y += 7
            }
            if case .fullCheck(let kind) = o.offer {
                Screen.centered("3 or more suggests the full", font: .small, y: 33, into: &fb)
                Screen.centered(kind == .mood ? "check: PHQ-9." : "check: GAD-7.", font: .small, y: 40, into: &fb)
            } else {
                Screen.centered("Both under 3.", font: .small, y: 36, into: &fb)
            }
        }
        Screen.centered("A self-check, not a diagnosis.", font: .small, y: 47, into: &fb)
        switch o.offer {
        case .none:
            Screen.centered("Any button closes", font: .small, y: hintY, into: &fb)
        case .fullCheck:
            selectHint("full check", x: 0, y: hintY, into: &fb)
            fb.text("other: close", font: .small, x: 80, y: hintY)
        case .cards:
            selectHint("your cards", x: 0, y: hintY, into: &fb)
            fb.text("other: close", font: .small, x: 80, y: hintY)
        case .breathe:
            selectHint("breathe", x: 0, y: hintY, into: &fb)
            fb.text("other: close", font: .small, x: 80, y: hintY)
        }
    }

    // MARK: Safety first

    /// PHQ-9 item 9 answered above "Not at all": warm words, the counselling line, the call,
    /// and the offer to tell the alert contacts (never sent without the confirmation's SELECT).
    static func drawSafety(_ step: SafetyStep, _ p: PanicState, into fb: inout Framebuffer) {
        let small = BitmapFont.small
        fb.fill(x: 0, y: 9, width: fb.width, height: 8)
        if step.stage == .confirmTelling {
            Screen.centered("Tell your contacts?", font: small, y: 10, into: &fb, .off)
            for (i, line) in SafetyWords.confirmation.enumerated() { fb.text(line, font: small, x: 1, y: 19 + i * 7) }
            selectHint("send it now", x: 0, y: 48, into: &fb)
            fb.text("Other buttons: not now", font: small, x: 0, y: hintY)
            return
        }
        Screen.centered(SafetyWords.heading, font: small, y: 10, into: &fb, .off)
        for (i, line) in SafetyWords.offer.enumerated() { fb.text(line, font: small, x: 1, y: 18 + i * 7) }
        var x = ContactName.draw(p.counselling.name, of: .counselling, font: small, x: 1, y: 40, maxCharacters: 15, into: &fb)
        x += 4
        fb.text(p.counselling.displayNumber, font: small, x: x, y: 40, maxCharacters: (fb.width - x) / 4)
        if p.callActive {
            fb.text("Calling. SEL hangs up", font: small, x: 0, y: 49)
        } else {
            selectHint("call", x: 0, y: 49, into: &fb)
            if p.websiteCode != nil { fb.text("hold: website", font: small, x: 76, y: 49) }
        }
        if p.hasAContact {
            fb.text("> tell my contacts", font: small, x: 0, y: hintY)
            fb.text("PAGE on", font: small, x: fb.width - 28, y: hintY)
        } else {
            fb.text("PAGE: go on", font: small, x: 0, y: hintY)
        }
    }
}

/// The safety screen's words, written for a person who has just said they have had thoughts of
/// being better off dead or of hurting themselves: warm, plain, no alarm, and what they can do
/// now. The README quotes them.
public enum SafetyWords {
    public static let heading = "You are not alone"
    public static let offer = ["Thoughts like these are heavy", "to carry alone. You can talk", "to someone now:"]
    public static let confirmation = ["Each contact gets the message", "set for PANIC, as PANIC sends",
                                      "it. Nothing goes unless you", "press SELECT now."]
}
