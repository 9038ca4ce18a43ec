/// The optional before/after question (`breathing.check_in`): how anxious is the person, 0–10.
/// It never stands between the person and the first breath: SELECT starts the session at once,
/// rated if LEFT/RIGHT gave a number, unrated if not; PAGE skips the question.
public struct AnxietyRating: Equatable, Sendable {
    public enum Stage: Equatable, Sendable {
        /// Asked on arriving at the breathing page; SELECT starts the session.
        case before
        /// Asked when a session ends; SELECT keeps the answer for the session that began at `session`.
        case after(session: WallTime)
    }

    public var stage: Stage
    /// nil until LEFT or RIGHT is pressed: the question starts blank, so a rating is always the
    /// person's and never a default they let through.
    public var rating: Int?
    /// Where the first LEFT/RIGHT press starts from: the middle, or the rating before the session.
    var startingPoint: Int
    /// When the after-question was put (nil for the one before): it stands for `afterLimit`.
    var askedAt: Instant? = nil

    public static let scale = 0...10
    /// How long "How anxious now?" waits after a session. A person who fell asleep breathing
    /// (what the device is for) must not meet the evening's question before the morning's
    /// first breath, and an answer given hours later is no "after" of that session.
    public static let afterLimit: Duration = .seconds(10 * 60)

    public var isBefore: Bool { stage == .before }
}

extension DeviceCore {
    /// On arriving at the breathing page (and at start-up), with check-in on.
    mutating func askBeforeSession() {
        guard settings.breathing.checkIn, state.page == .breathing, state.overlay == .none, !state.breathing.isRunning else { return }
        state.overlay = .rating(AnxietyRating(stage: .before, rating: nil, startingPoint: 5))
    }

    /// When a counted session ends, with check-in on (unless something more urgent is showing).
    mutating func askAfterSession(at now: Instant) {
        guard settings.breathing.checkIn, state.overlay == .none else { return }
        state.overlay = .rating(AnxietyRating(stage: .after(session: state.breathing.startedWall), rating: nil,
                                         startingPoint: state.breathing.beforeRating ?? 5, askedAt: now))
    }

    /// An after-question left unanswered for `AnxietyRating.afterLimit` goes away, unanswered.
    mutating func expireAfterQuestion(at now: Instant) {
        guard case .rating(let q) = state.overlay, case .after = q.stage, let asked = q.askedAt,
              now - asked >= AnxietyRating.afterLimit else { return }
        state.overlay = .none
    }

    mutating func handleRating(_ gesture: ButtonGesture, _ question: AnxietyRating, at now: Moment, effects: inout [Effect]) {
        var q = question
        switch gesture {
        case .down(.left):
            q.rating = q.rating.map { max(AnxietyRating.scale.lowerBound, $0 - 1) } ?? q.startingPoint
            state.overlay = .rating(q)
        case .down(.right):
            q.rating = q.rating.map { min(AnxietyRating.scale.upperBound, $0 + 1) } ?? q.startingPoint
            state.overlay = .rating(q)
        case .down(.select):
            state.overlay = .none
            switch q.stage {
            case .before:
                startSession(at: now, rating: q.rating, effects: &effects)
            case .after(let session):
                swallowPress(.select)
                if let r = q.rating { rateSession(startedAt: session, after: r, effects: &effects) }
            }
        case .short(.page):
            state.overlay = .none
        default: break
        }
    }

    /// The answer after a session goes beside it in the history (if the history still has it:
    /// the maintainer may have reset the statistics meanwhile).
    mutating func rateSession(startedAt started: WallTime, after rating: Int, effects: inout [Effect]) {
        guard let i = state.breathing.history.lastIndex(where: { $0.started == started }) else { return }
        state.breathing.history[i].after = rating
        effects.append(.save(.sessionHistory, SessionHistoryFile.format(state.breathing.history)))
    }

    /// The statistics screen: with ratings in the history, LEFT/RIGHT turn between the times
    /// and the anxiety ratings; any other press closes it (and does nothing else).
    mutating func handleStats(_ gesture: ButtonGesture) {
        guard case .down(let b) = gesture, b != .panic else { return }
        if (b == .left || b == .right) && state.breathing.hasRatings {
            state.breathing.statsShowRatings.toggle()
        } else {
            state.overlay = .none
        }
        swallowPress(b)
    }
}

extension BreathingState {
    /// Whether any recent session has both ratings (the statistics then have a second view).
    public var hasRatings: Bool { history.contains { $0.change != nil } }
}
