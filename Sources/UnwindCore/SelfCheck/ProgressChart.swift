/// One mark on the progress chart: a day of the window (0 the first, `ProgressChart.days - 1`
/// today) and the value drawn for it.
public struct ChartPoint: Equatable, Sendable {
    public var day: Int
    public var value: Int
    public init(day: Int, value: Int) {
        self.day = day
        self.value = value
    }
}

/// Progress over the last weeks, worked out when the chart opens (drawing a frame computes
/// nothing): the moods, the GAD-7 totals and the PHQ-9 totals of the last `days` local days.
/// The quick checks are not drawn (their 0–6 would read as low on a 0–21 scale); they are in
/// the maintainer's export.
public struct ProgressChart: Equatable, Sendable {
    public enum View: Int, CaseIterable, Sendable {
        case moods, anxietyChecks, moodChecks

        public var title: String {
            switch self {
            case .moods: "Mood diary, 1-5"
            case .anxietyChecks: "Anxiety check, GAD-7"
            case .moodChecks: "Mood check, PHQ-9"
            }
        }

        /// The top of the scale, and the band edges drawn across it.
        public var scale: (maximum: Int, lines: [Int]) {
            switch self {
            case .moods: (5, [3])
            case .anxietyChecks: (21, [5, 10, 15])
            case .moodChecks: (27, [5, 10, 15, 20])
            }
        }
    }

    /// Eight weeks.
    public static let days = 56

    public internal(set) var view: View = .moods
    public let moods: [ChartPoint]
    public let anxietyChecks: [ChartPoint]
    public let moodChecks: [ChartPoint]
    /// The weekday of the window's first day: the chart marks each week's start.
    public let firstWeekday: Weekday

    init(_ s: SelfCheckState, today: Int64, zone: LocalTimeZone) {
        let first = today - Int64(Self.days - 1)
        func day(_ d: Int64) -> Int? { d >= first && d <= today ? Int(d - first) : nil }
        moods = s.moods.compactMap { e in day(e.day).map { ChartPoint(day: $0, value: e.mood) } }
        func totals(_ i: Instrument) -> [ChartPoint] {
            s.results.filter { $0.instrument == i }.compactMap { r in
                day(CivilDate.local(r.taken.secondsSinceEpoch, in: zone).day).map { ChartPoint(day: $0, value: r.total) }
            }.sorted { $0.day < $1.day }
        }
        anxietyChecks = totals(.gad7)
        moodChecks = totals(.phq9)
        firstWeekday = Weekday.of(localDay: first)
    }

    public var points: [ChartPoint] {
        switch view {
        case .moods: moods
        case .anxietyChecks: anxietyChecks
        case .moodChecks: moodChecks
        }
    }

    mutating func turn(by d: Int) {
        let n = View.allCases.count
        view = View(rawValue: ((view.rawValue + d) % n + n) % n)!
    }
}
