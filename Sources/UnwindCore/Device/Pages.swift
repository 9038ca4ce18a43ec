/// The feature pages, in the order PAGE cycles them: the app's four, then "How am I doing?"
/// (the self-checks, the mood diary, progress and the coping cards). Breathing is shown at
/// start-up.
public enum Page: Int, CaseIterable, Sendable {
    case breathing, grounding, affirmations, panic, howAmIDoing

    /// The tab's word in the menu bar.
    public var menuLabel: String {
        switch self {
        case .breathing: "BREATH"
        case .grounding: "GROUND"
        case .affirmations: "MANTRA"
        case .panic: "ALERT"
        case .howAmIDoing: "CHECK"
        }
    }

    public var title: String {
        switch self {
        case .breathing: "Square breathing"
        case .grounding: "5-4-3-2-1 grounding"
        case .affirmations: "Positive affirmations"
        case .panic: "Panic alert"
        case .howAmIDoing: "How am I doing?"
        }
    }

    /// The page's file in `helpFiles/` (spec, section 3).
    public var helpFileName: String {
        switch self {
        case .breathing: "squareBreathing.txt"
        case .grounding: "grounding.txt"
        case .affirmations: "positiveAffirmations.txt"
        case .panic: "panicAlerts.txt"
        case .howAmIDoing: "howAmIDoing.txt"
        }
    }

    public var next: Page {
        switch self {
        case .breathing: .grounding
        case .grounding: .affirmations
        case .affirmations: .panic
        case .panic: .howAmIDoing
        case .howAmIDoing: .breathing
        }
    }
}

/// The help texts, already wrapped to the overlay's width by whoever loaded them.
public struct HelpLibrary: Equatable, Sendable {
    public var lines: [Page: [String]]
    public init(lines: [Page: [String]] = [:]) { self.lines = lines }

    public func lines(for page: Page) -> [String] {
        lines[page] ?? ["Help for this page", "is not installed."]
    }

    /// Word-wraps `text` to `columns` characters a line, keeping the file's own line breaks
    /// (help files are "displayed without modification"; only overlong lines are folded).
    public static func wrap(_ text: String, columns: Int) -> [String] {
        var out = [String]()
        for raw in text.split(separator: "\n", omittingEmptySubsequences: false) {
            var line = ""
            for word in raw.split(separator: " ", omittingEmptySubsequences: true) {
                var w = Substring(word)
                while w.count > columns {
                    if !line.isEmpty { out.append(line); line = "" }
                    out.append(String(w.prefix(columns)))
                    w = w.dropFirst(columns)
                }
                if line.isEmpty { line = String(w) }
                else if line.count + 1 + w.count <= columns { line += " " + w }
                else { out.append(line); line = String(w) }
            }
            out.append(line)
        }
        while out.last?.isEmpty == true { out.removeLast() }
        return out
    }
}
