/// The self-check questionnaires, in their published words: the PHQ-9 (mood) and the GAD-7
/// (anxiety), by Drs Robert L. Spitzer, Janet B. W. Williams, Kurt Kroenke and colleagues, free
/// to reproduce, translate, display and distribute without permission; and their two-item
/// screens, the PHQ-2 and the GAD-2 (the first two items of each). Each item is answered with
/// one of the same four answers, scored 0 to 3; the total is the sum.
public enum Instrument: String, CaseIterable, Sendable {
    case gad7, phq9, gad2, phq2

    /// As the instrument is called in print: "GAD-7".
    public var name: String {
        switch self {
        case .gad7: "GAD-7"
        case .phq9: "PHQ-9"
        case .gad2: "GAD-2"
        case .phq2: "PHQ-2"
        }
    }

    /// What it asks about, in the person's words.
    public var topic: String {
        switch self {
        case .gad7, .gad2: "anxiety"
        case .phq9, .phq2: "mood"
        }
    }

    /// The stem every item finishes, on every item's screen.
    public static let stem = "Over the last 2 weeks, how often have you been bothered by"

    /// The four answers, scored by their position (0 to 3).
    public static let answers = ["Not at all", "Several days", "More than half the days", "Nearly every day"]
    public static let highestAnswer = 3

    /// The GAD-7's items (the GAD-2 is the first two).
    public static let gad7Items = [
        "Feeling nervous, anxious, or on edge",
        "Not being able to stop or control worrying",
        "Worrying too much about different things",
        "Trouble relaxing",
        "Being so restless that it is hard to sit still",
        "Becoming easily annoyed or irritable",
        "Feeling afraid, as if something awful might happen",
    ]

    /// The PHQ-9's items (the PHQ-2 is the first two).
    public static let phq9Items = [
        "Little interest or pleasure in doing things",
        "Feeling down, depressed, or hopeless",
        "Trouble falling or staying asleep, or sleeping too much",
        "Feeling tired or having little energy",
        "Poor appetite or overeating",
        "Feeling bad about yourself \u{2014} or that you are a failure or have let yourself or your family down",
        "Trouble concentrating on things, such as reading the newspaper or watching television",
        "Moving or speaking so slowly that other people could have noticed? Or the opposite \u{2014} being so fidgety or restless that you have been moving around a lot more than usual",
        "Thoughts that you would be better off dead or of hurting yourself in some way",
    ]

    /// The PHQ-9's item 9 (0-based 8): thoughts of being better off dead or of self-harm. Any
    /// answer above "Not at all" brings the counselling line at once.
    public static let safetyItem = 8

    public var items: [String] {
        switch self {
        case .gad7: Self.gad7Items
        case .phq9: Self.phq9Items
        case .gad2: Array(Self.gad7Items.prefix(2))
        case .phq2: Array(Self.phq9Items.prefix(2))
        }
    }

    public var itemCount: Int {
        switch self {
        case .gad7: 7
        case .phq9: 9
        case .gad2, .phq2: 2
        }
    }

    public var maximumTotal: Int { itemCount * Self.highestAnswer }

    /// The published bands of a total (a total out of range is clamped to the nearest band).
    /// GAD-7: 0–4 minimal, 5–9 mild, 10–14 moderate, 15–21 severe. PHQ-9: 0–4 minimal, 5–9
    /// mild, 10–14 moderate, 15–19 moderately severe, 20–27 severe. PHQ-2 and GAD-2: 3 or more
    /// suggests the full check.
    public func band(total: Int) -> SelfCheckBand {
        switch self {
        case .gad7:
            switch total {
            case ..<5: .minimal
            case ..<10: .mild
            case ..<15: .moderate
            default: .severe
            }
        case .phq9:
            switch total {
            case ..<5: .minimal
            case ..<10: .mild
            case ..<15: .moderate
            case ..<20: .moderatelySevere
            default: .severe
            }
        case .gad2, .phq2:
            total >= Self.screenCutOff ? .fullCheckSuggested : .belowCutOff
        }
    }

    /// PHQ-2 and GAD-2: a total of 3 or more suggests the full check.
    public static let screenCutOff = 3

    /// The full instrument a two-item screen leads to.
    public var fullCheck: Instrument {
        switch self {
        case .gad2, .gad7: .gad7
        case .phq2, .phq9: .phq9
        }
    }
}

/// Where a total falls, in the instrument's published words.
public enum SelfCheckBand: Equatable, Sendable {
    case minimal, mild, moderate, moderatelySevere, severe
    /// PHQ-2 / GAD-2 under 3.
    case belowCutOff
    /// PHQ-2 / GAD-2 of 3 or more: the full check is suggested.
    case fullCheckSuggested

    public var words: String {
        switch self {
        case .minimal: "minimal"
        case .mild: "mild"
        case .moderate: "moderate"
        case .moderatelySevere: "moderately severe"
        case .severe: "severe"
        case .belowCutOff: "under 3"
        case .fullCheckSuggested: "3 or more"
        }
    }

    /// Moderate or above: the result screen offers the person's coping cards.
    public var isHigh: Bool {
        switch self {
        case .moderate, .moderatelySevere, .severe: true
        default: false
        }
    }
}

/// What one sitting asks: the quick weekly check (GAD-2 then PHQ-2, four items), or one of the
/// full checks.
public enum SelfCheckKind: Equatable, Sendable {
    case quick, anxiety, mood

    public var instruments: [Instrument] {
        switch self {
        case .quick: [.gad2, .phq2]
        case .anxiety: [.gad7]
        case .mood: [.phq9]
        }
    }

    /// The sitting that asks `instrument` in full.
    public static func full(_ instrument: Instrument) -> SelfCheckKind { instrument.fullCheck == .gad7 ? .anxiety : .mood }
}

/// One completed questionnaire: when, which, and every answer (0–3 each, in item order).
public struct SelfCheckResult: Equatable, Sendable {
    public var taken: WallTime
    public var instrument: Instrument
    public var answers: [Int]

    public init(taken: WallTime, instrument: Instrument, answers: [Int]) {
        self.taken = taken
        self.instrument = instrument
        self.answers = answers
    }

    public var total: Int { answers.reduce(0, +) }
    public var band: SelfCheckBand { instrument.band(total: total) }

    /// PHQ-9 item 9 answered above "Not at all".
    public var needsSafetyStep: Bool {
        instrument == .phq9 && answers.count > Instrument.safetyItem && answers[Instrument.safetyItem] > 0
    }

    /// Why these answers are not a result of `instrument`, or nil.
    public static func problem(instrument: Instrument, answers: [Int]) -> String? {
        if answers.count != instrument.itemCount {
            return "\(instrument.name) has \(instrument.itemCount) items; \(answers.count) answers given"
        }
        if let bad = answers.first(where: { !(0...Instrument.highestAnswer).contains($0) }) {
            return "an answer is 0 to \(Instrument.highestAnswer), not \(bad)"
        }
        return nil
    }
}
