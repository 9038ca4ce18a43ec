/// "How am I doing?": the self-checks kept, the mood diary, the coping cards, the weekly
/// reminder, and where the person is on the page.
public struct SelfCheckState: Equatable, Sendable {
    /// Every completed self-check, oldest first (`selfChecks.txt`).
    public internal(set) var results: [SelfCheckResult]
    /// One mood a day at most, in day order (`moods.txt`).
    public internal(set) var moods: [MoodEntry]
    /// The person's coping cards (`copingCards.txt`).
    public internal(set) var cards: [CopingCard]
    /// The weekly self-check reminder, kept as the mantra reminder is.
    public internal(set) var reminder: ReminderState
    /// The entry the page shows.
    public internal(set) var entry: SelfCheckEntry = .mood
    /// The affirmations page shows its way to the coping cards (between its last mantra and its first).
    public internal(set) var cardsOnMantraPage = false
    /// What the page says beside its entries, worked out when it can change (a new day, a new
    /// result or mood), so drawing a frame works out nothing.
    public internal(set) var summary = SelfCheckSummary()
    /// The last press on one of the page's screens: one left alone for `idleLimit` closes, so
    /// half-given answers are not left on a bedside screen.
    var lastPress = Instant.zero
    /// The wall-clock second the day was last looked at, and the zone's offset kept for it.
    var lastSecond: Int64 = .min
    var clock = LocalClockCache()

    public static let idleLimit: Duration = .seconds(30 * 60)

    public init(_ records: SelfCheckRecords = SelfCheckRecords()) {
        results = Array(records.results.suffix(SelfChecksFile.capacity))
        moods = Array(records.moods.suffix(MoodsFile.capacity))
        cards = Array(records.cards.prefix(CopingCardsFile.maximumCount))
        reminder = ReminderState(schedule: records.reminder)
    }

    /// Whether the affirmations page is on its way to the cards now.
    public var showsCardsOnMantraPage: Bool { cardsOnMantraPage && !cards.isEmpty }

    /// The mood given on local day `day`, if any.
    public func mood(onDay day: Int64) -> Int? { moods.last { $0.day == day }?.mood }

    /// The newest result of `instrument`.
    public func latest(_ instrument: Instrument) -> SelfCheckResult? { results.last { $0.instrument == instrument } }
}

/// Today's mood and when each full check was last answered, as the page shows them.
public struct SelfCheckSummary: Equatable, Sendable {
    /// The local day this was worked out for (days since 1970-01-01).
    public internal(set) var today: Int64?
    public internal(set) var moodToday: Int?
    /// "3 Mar": the local day of the newest GAD-7 and PHQ-9.
    public internal(set) var lastAnxietyCheck: String?
    public internal(set) var lastMoodCheck: String?

    init() {}

    init(_ s: SelfCheckState, today: Int64, zone: LocalTimeZone) {
        self.today = today
        moodToday = s.mood(onDay: today)
        func day(_ r: SelfCheckResult?) -> String? {
            guard let r else { return nil }
            let c = CivilDate.civil(ofDay: CivilDate.local(r.taken.secondsSinceEpoch, in: zone).day)
            return "\(c.day) \(CivilDate.monthAbbreviations[Int(c.month) - 1])"
        }
        lastAnxietyCheck = day(s.latest(.gad7))
        lastMoodCheck = day(s.latest(.phq9))
    }
}

extension DeviceState {
    /// "How am I doing?" is on the screen (its page, or one of its screens over another page):
    /// what the person answers and keeps there is theirs, and `unwind screen` does not show it.
    public var showsHowAmIDoing: Bool {
        if case .selfCheck = overlay { return true }
        return page == .howAmIDoing && overlay == .none
    }
}

/// What the state files hold of the page, as the device starts with them.
public struct SelfCheckRecords: Equatable, Sendable {
    public var results: [SelfCheckResult]
    public var moods: [MoodEntry]
    public var cards: [CopingCard]
    public var reminder: ReminderSchedule

    public init(results: [SelfCheckResult] = [], moods: [MoodEntry] = [], cards: [CopingCard] = [],
                reminder: ReminderSchedule = .never) {
        self.results = results
        self.moods = moods
        self.cards = cards
        self.reminder = reminder
    }
}

/// A restore's files of the page: nil where the archive had none (the device keeps its own).
public struct SelfCheckRestore: Equatable, Sendable {
    public var results: [SelfCheckResult]?
    public var moods: [MoodEntry]?
    public var cards: [CopingCard]?
    public var reminder: ReminderSchedule?

    public init(results: [SelfCheckResult]? = nil, moods: [MoodEntry]? = nil, cards: [CopingCard]? = nil,
                reminder: ReminderSchedule? = nil) {
        self.results = results
        self.moods = moods
        self.cards = cards
        self.reminder = reminder
    }

    public var isEmpty: Bool { results == nil && moods == nil && cards == nil && reminder == nil }
}

/// The page's entries, in LEFT/RIGHT order.
public enum SelfCheckEntry: Int, CaseIterable, Sendable {
    case mood, quick, anxietyCheck, moodCheck, progress, cards, reminder

    public var label: String {
        switch self {
        case .mood: "Today's mood"
        case .quick: "Quick check"
        case .anxietyCheck: "Anxiety check (GAD-7)"
        case .moodCheck: "Mood check (PHQ-9)"
        case .progress: "Progress"
        case .cards: "Coping cards"
        case .reminder: "Reminder"
        }
    }

    public func moved(by step: Int) -> SelfCheckEntry {
        let n = Self.allCases.count
        return SelfCheckEntry(rawValue: ((rawValue + step) % n + n) % n)!
    }
}

/// What the page shows over itself.
public enum SelfCheckView: Equatable, Sendable {
    /// One item at a time.
    case questionnaire(QuestionnaireRun)
    /// PHQ-9 item 9 answered above "Not at all": the counselling line, and the offer to tell the contacts.
    case safety(SafetyStep)
    /// The total and its band.
    case result(SelfCheckOutcome)
    /// Today's mood, 1–5.
    case mood(MoodQuestion)
    /// The chart of the last weeks.
    case progress(ProgressChart)
    case cards(CardViewer)
    /// The weekly reminder: never, or weekly on a day at a time.
    case reminder(ReminderEditor)

    /// Whether the self-check itself is under way (its answers are not saved yet).
    public var isQuestionnaire: Bool {
        if case .questionnaire = self { return true }
        return false
    }
}

/// A self-check being answered: its items in order, the answer chosen for each.
public struct QuestionnaireRun: Equatable, Sendable {
    /// Characters a line of the small font holds across the screen.
    public static let columns = 31
    /// The stem, wrapped once.
    public static let stemLines = HelpLibrary.wrap(Instrument.stem, columns: columns)

    public let kind: SelfCheckKind
    /// The item on screen, counted across the sitting's instruments.
    public internal(set) var step = 0
    /// One per item; nil until LEFT or RIGHT gives one, so every answer is the person's.
    public internal(set) var answers: [Int?]
    /// The item on screen, wrapped.
    public internal(set) var lines: [String] = []
    /// When the item appeared: a long one scrolls from here.
    public internal(set) var shownAt: Instant

    public init(_ kind: SelfCheckKind, at now: Instant) {
        self.kind = kind
        answers = Array(repeating: nil, count: kind.instruments.reduce(0) { $0 + $1.itemCount })
        shownAt = now
        rewrap()
    }

    public var count: Int { answers.count }

    /// The instrument and its item (0-based) of `step`.
    public func item(_ step: Int) -> (instrument: Instrument, index: Int) {
        var s = step
        for i in kind.instruments {
            if s < i.itemCount { return (i, s) }
            s -= i.itemCount
        }
        let last = kind.instruments[kind.instruments.count - 1]
        return (last, last.itemCount - 1)
    }

    public var current: (instrument: Instrument, index: Int) { item(step) }
    public var answer: Int? { answers[step] }

    /// LEFT (-1) / RIGHT (+1): the answer beside the chosen one, stopping at the ends (a slip
    /// never wraps "Nearly every day" round to "Not at all"); the first press gives "Not at all".
    mutating func choose(by d: Int) {
        answers[step] = answers[step].map { min(Instrument.highestAnswer, max(0, $0 + d)) } ?? 0
    }

    /// SELECT: the next item; false after the last (the sitting is complete).
    mutating func advance(at now: Instant) -> Bool {
        guard step + 1 < count else { return false }
        step += 1
        shownAt = now
        rewrap()
        return true
    }

    /// PAGE: the item before, its answer kept; false on the first (the sitting is left).
    mutating func back(at now: Instant) -> Bool {
        guard step > 0 else { return false }
        step -= 1
        shownAt = now
        rewrap()
        return true
    }

    /// The sitting's results, every item answered.
    func results(taken: WallTime) -> [SelfCheckResult] {
        var out: [SelfCheckResult] = []
        var k = 0
        for i in kind.instruments {
            out.append(SelfCheckResult(taken: taken, instrument: i, answers: answers[k..<k + i.itemCount].map { $0 ?? 0 }))
            k += i.itemCount
        }
        return out
    }

    private mutating func rewrap() {
        let c = current
        lines = HelpLibrary.wrap(c.instrument.items[c.index], columns: Self.columns)
    }
}

/// After PHQ-9 item 9: the counselling line (call it, or its website's code), the offer to
/// tell the alert contacts and its confirmation; then the results.
public struct SafetyStep: Equatable, Sendable {
    public enum Stage: Equatable, Sendable {
        case offer
        /// The counselling website as a QR code.
        case code
        /// "Tell your contacts?": SELECT sends, any other button goes back.
        case confirmTelling
    }

    public internal(set) var stage: Stage = .offer
    /// Shown when the person goes on.
    public let outcome: SelfCheckOutcome
}

/// The end of a sitting: each result's total and band, and what SELECT offers next.
public struct SelfCheckOutcome: Equatable, Sendable {
    public enum Offer: Equatable, Sendable {
        case none
        /// A quick check came out 3 or more: the full check.
        case fullCheck(SelfCheckKind)
        /// Moderate or above: the person's coping cards.
        case cards
        /// Moderate or above and no cards yet: a breathing session.
        case breathe
    }

    public let results: [SelfCheckResult]
    public let offer: Offer

    init(_ results: [SelfCheckResult], hasCards: Bool) {
        self.results = results
        // A low mood leads to the PHQ-9 first: it asks the item the counselling line answers.
        if let r = results.first(where: { $0.instrument == .phq2 && $0.band == .fullCheckSuggested })
            ?? results.first(where: { $0.band == .fullCheckSuggested }) {
            offer = .fullCheck(.full(r.instrument))
        } else if results.contains(where: { $0.band.isHigh }) {
            offer = hasCards ? .cards : .breathe
        } else {
            offer = .none
        }
    }
}

/// Today's mood: nil until LEFT or RIGHT gives a number.
public struct MoodQuestion: Equatable, Sendable {
    public internal(set) var rating: Int?
    /// Where the first press starts: the middle of the scale.
    static let startingPoint = 3
}

/// The coping cards, one at a time: the concern first, SELECT turns it to the answer.
public struct CardViewer: Equatable, Sendable {
    public internal(set) var index = 0
    public internal(set) var showsAnswer = false
    /// The card's side on screen, wrapped.
    public internal(set) var lines: [String] = []
    /// When that side appeared: a long one scrolls from here.
    public internal(set) var shownAt: Instant
    public static let columns = MantraList.columns

    init(cards: [CopingCard], index: Int = 0, at now: Instant) {
        self.index = cards.isEmpty ? 0 : min(max(0, index), cards.count - 1)
        shownAt = now
        rewrap(cards)
    }

    mutating func move(by d: Int, in cards: [CopingCard], at now: Instant) {
        guard !cards.isEmpty else { return }
        index = ((index + d) % cards.count + cards.count) % cards.count
        showsAnswer = false
        shownAt = now
        rewrap(cards)
    }

    mutating func turn(in cards: [CopingCard], at now: Instant) {
        guard !cards.isEmpty else { return }
        showsAnswer.toggle()
        shownAt = now
        rewrap(cards)
    }

    mutating func rewrap(_ cards: [CopingCard]) {
        if cards.isEmpty { index = 0; lines = []; return }
        index = min(index, cards.count - 1)
        let c = cards[index]
        lines = HelpLibrary.wrap(showsAnswer ? c.answer : c.concern, columns: Self.columns)
    }
}
