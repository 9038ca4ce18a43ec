/// The "How am I doing?" page: its entries, the self-checks, the mood diary, the chart and the
/// coping cards. Every screen acts on the press (none of them gives holding a meaning, except
/// the counselling line's website on the safety screen); PANIC works over all of them.
extension DeviceCore {
    /// On the page: LEFT/RIGHT choose an entry, SELECT opens it.
    mutating func handleSelfCheckPage(_ gesture: ButtonGesture, at now: Moment, effects: inout [Effect]) {
        switch gesture {
        case .down(.left): state.selfCheck.entry = state.selfCheck.entry.moved(by: -1)
        case .down(.right): state.selfCheck.entry = state.selfCheck.entry.moved(by: 1)
        case .down(.select):
            swallowPress(.select)
            open(state.selfCheck.entry, at: now, effects: &effects)
        default: break
        }
    }

    mutating func open(_ entry: SelfCheckEntry, at now: Moment, effects: inout [Effect]) {
        let day = today(now)
        let s = state.selfCheck
        switch entry {
        case .mood: show(.mood(MoodQuestion(rating: s.mood(onDay: day))), at: now)
        case .quick: startSelfCheck(.quick, at: now, effects: &effects)
        case .anxietyCheck: startSelfCheck(.anxiety, at: now, effects: &effects)
        case .moodCheck: startSelfCheck(.mood, at: now, effects: &effects)
        case .progress: show(.progress(ProgressChart(s, today: day, zone: settings.timeZone)), at: now)
        case .cards: show(.cards(CardViewer(cards: s.cards, at: now.instant)), at: now)
        case .reminder: show(.reminder(ReminderEditor(s.reminder.schedule, offering: [.never, .weekly])), at: now)
        }
    }

    /// The local day of `now`, as the diary counts days.
    mutating func today(_ now: Moment) -> Int64 {
        state.selfCheck.clock.localDay(now.wall, in: settings.timeZone)
    }

    /// What the page says of today and of the last checks, again (after a change).
    mutating func refreshSelfCheckSummary(today: Int64) {
        state.selfCheck.summary = SelfCheckSummary(state.selfCheck, today: today, zone: settings.timeZone)
    }

    mutating func show(_ view: SelfCheckView, at now: Moment) {
        state.overlay = .selfCheck(view)
        state.selfCheck.lastPress = now.instant
    }

    /// A sitting starts on the page's first item (from the page, a result or the reminder).
    mutating func startSelfCheck(_ kind: SelfCheckKind, at now: Moment, effects: inout [Effect]) {
        if state.page != .howAmIDoing {
            leave(state.page, at: now, effects: &effects)
            state.page = .howAmIDoing
        }
        show(.questionnaire(QuestionnaireRun(kind, at: now.instant)), at: now)
    }

    /// A screen of the page over the page (or over the mantras: the cards).
    mutating func handleSelfCheckView(_ gesture: ButtonGesture, _ view: SelfCheckView, at now: Moment,
                                      effects: inout [Effect]) {
        if gesture.button == .panic { return }
        state.selfCheck.lastPress = now.instant
        switch view {
        case .questionnaire(let run): handleQuestionnaire(gesture, run, at: now, effects: &effects)
        case .safety(let step): handleSafety(gesture, step, at: now, effects: &effects)
        case .result(let outcome): handleResult(gesture, outcome, at: now, effects: &effects)
        case .mood(let q): handleMood(gesture, q, at: now, effects: &effects)
        case .progress(var chart):
            guard case .down(let b) = gesture else { return }
            swallowPress(b)
            if b == .left || b == .right {
                chart.turn(by: b == .left ? -1 : 1)
                state.overlay = .selfCheck(.progress(chart))
            } else {
                state.overlay = .none
            }
        case .cards(var viewer):
            guard case .down(let b) = gesture else { return }
            swallowPress(b)
            let cards = state.selfCheck.cards
            switch b {
            case .left where !cards.isEmpty: viewer.move(by: -1, in: cards, at: now.instant)
            case .right where !cards.isEmpty: viewer.move(by: 1, in: cards, at: now.instant)
            case .select where !cards.isEmpty: viewer.turn(in: cards, at: now.instant)
            default:
                state.overlay = .none
                return
            }
            state.overlay = .selfCheck(.cards(viewer))
        case .reminder(var editor):
            let step = editor.press(gesture)
            if step != .ignored, case .down(let b) = gesture, b == .select || b == .page { swallowPress(b) }
            switch step {
            case .ignored: return
            case .editing: state.overlay = .selfCheck(.reminder(editor))
            case .cancelled: state.overlay = .none
            case .finished:
                state.overlay = .none
                setSelfCheckReminder(editor.schedule, at: now, effects: &effects)
            }
        }
    }

    /// LEFT/RIGHT choose the answer, SELECT takes it and shows the next item (after the last, the
    /// results are saved), PAGE goes back an item (from the first, leaves: nothing is saved).
    mutating func handleQuestionnaire(_ gesture: ButtonGesture, _ run: QuestionnaireRun, at now: Moment,
                                      effects: inout [Effect]) {
        guard case .down(let b) = gesture else { return }
        var r = run
        switch b {
        case .left: r.choose(by: -1)
        case .right: r.choose(by: 1)
        case .select:
            swallowPress(.select)
            guard r.answer != nil else { return }
            if !r.advance(at: now.instant) { return finish(r, at: now, effects: &effects) }
        case .page:
            swallowPress(.page)
            if !r.back(at: now.instant) {
                state.overlay = .none
                return
            }
        case .panic: return
        }
        state.overlay = .selfCheck(.questionnaire(r))
    }

    /// Every item answered: the results are dated and saved, then shown — after the counselling
    /// line, at once, when PHQ-9 item 9 was answered above "Not at all".
    mutating func finish(_ run: QuestionnaireRun, at now: Moment, effects: inout [Effect]) {
        let taken = WallTime(secondsSinceEpoch: max(0, now.wall.secondsSinceEpoch))
        let results = run.results(taken: taken)
        state.selfCheck.results.append(contentsOf: results)
        if state.selfCheck.results.count > SelfChecksFile.capacity {
            state.selfCheck.results.removeFirst(state.selfCheck.results.count - SelfChecksFile.capacity)
        }
        effects.append(.save(.selfChecks, SelfChecksFile.format(state.selfCheck.results)))
        refreshSelfCheckSummary(today: today(now))
        let outcome = SelfCheckOutcome(results, hasCards: !state.selfCheck.cards.isEmpty)
        if results.contains(where: \.needsSafetyStep) {
            show(.safety(SafetyStep(outcome: outcome)), at: now)
        } else {
            show(.result(outcome), at: now)
        }
    }

    /// SELECT takes what the screen offers (the full check, the cards, a breathing session);
    /// any other button closes it.
    mutating func handleResult(_ gesture: ButtonGesture, _ outcome: SelfCheckOutcome, at now: Moment,
                               effects: inout [Effect]) {
        guard case .down(let b) = gesture else { return }
        swallowPress(b)
        state.overlay = .none
        guard b == .select else { return }
        switch outcome.offer {
        case .none: break
        case .fullCheck(let kind): startSelfCheck(kind, at: now, effects: &effects)
        case .cards: show(.cards(CardViewer(cards: state.selfCheck.cards, at: now.instant)), at: now)
        case .breathe:
            leave(state.page, at: now, effects: &effects)
            state.page = .breathing
            startSession(at: now, effects: &effects)
        }
    }

    /// LEFT/RIGHT rate 1–5 (the first press gives 3), SELECT keeps it as today's mood (a second
    /// rating the same day replaces the first), PAGE leaves it.
    mutating func handleMood(_ gesture: ButtonGesture, _ question: MoodQuestion, at now: Moment,
                             effects: inout [Effect]) {
        guard case .down(let b) = gesture else { return }
        var q = question
        let scale = MoodEntry.scale
        switch b {
        case .left: q.rating = q.rating.map { max(scale.lowerBound, $0 - 1) } ?? MoodQuestion.startingPoint
        case .right: q.rating = q.rating.map { min(scale.upperBound, $0 + 1) } ?? MoodQuestion.startingPoint
        case .select:
            swallowPress(.select)
            guard let rating = q.rating else { return }
            state.overlay = .none
            state.selfCheck.moods.recording(MoodEntry(day: today(now), mood: rating))
            if state.selfCheck.moods.count > MoodsFile.capacity {
                state.selfCheck.moods.removeFirst(state.selfCheck.moods.count - MoodsFile.capacity)
            }
            effects.append(.save(.moods, MoodsFile.format(state.selfCheck.moods)))
            refreshSelfCheckSummary(today: today(now))
            // One short tick: "kept".
            pulses(at: now.instant, count: 1, on: .milliseconds(60), off: .zero, effects: &effects)
            return
        case .page:
            swallowPress(.page)
            state.overlay = .none
            return
        case .panic: return
        }
        state.overlay = .selfCheck(.mood(q))
    }

    /// Every frame: a screen of the page left alone for `SelfCheckState.idleLimit` closes (a
    /// half-answered self-check is not kept); the weekly reminder that waited is shown.
    mutating func tickSelfCheck(at now: Moment, effects: inout [Effect]) {
        // Once a wall-clock second: a new day changes what the page says of today.
        if now.wall.secondsSinceEpoch != state.selfCheck.lastSecond {
            state.selfCheck.lastSecond = now.wall.secondsSinceEpoch
            let day = state.selfCheck.clock.localDay(now.wall, in: settings.timeZone)
            if day != state.selfCheck.summary.today { refreshSelfCheckSummary(today: day) }
        }
        if case .selfCheck = state.overlay, now.instant - state.selfCheck.lastPress >= SelfCheckState.idleLimit {
            state.overlay = .none
        }
        if state.selfCheck.reminder.waiting, !selfCheckReminderMustWait {
            showSelfCheckReminder(at: now, effects: &effects)
        }
    }

    // MARK: The coping cards on the affirmations page

    /// LEFT/RIGHT on the affirmations page, with coping cards: their entry sits between the last
    /// mantra and the first. Returns false when the press is the mantras' own.
    mutating func browseTowardsCards(_ step: Int) -> Bool {
        let m = state.mantras
        guard !state.selfCheck.cards.isEmpty else {
            state.selfCheck.cardsOnMantraPage = false
            return false
        }
        if state.selfCheck.cardsOnMantraPage {
            state.selfCheck.cardsOnMantraPage = false
            // From the cards RIGHT goes on to the first mantra; LEFT back to the last.
            if step > 0 { state.mantras.next() }
            return true
        }
        let atEnd = m.isEmpty || (step > 0 ? m.current == m.count - 1 : m.current == 0)
        guard atEnd else { return false }
        if step < 0 { state.mantras.previous() }
        state.selfCheck.cardsOnMantraPage = true
        return true
    }
}
