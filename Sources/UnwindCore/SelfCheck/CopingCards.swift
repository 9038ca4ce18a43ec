/// A coping card (the cue creator): a concern the person has, and their own answer to it, written
/// with the maintainer (`unwind cards add`) and read on the device, concern first.
public struct CopingCard: Equatable, Sendable {
    public var concern: String
    public var answer: String

    public init(concern: String, answer: String) {
        self.concern = concern
        self.answer = answer
    }
}

/// Why a card cannot be stored: one of its texts breaks the mantras' rules (1–160 characters the
/// display can draw, no control character, no space at either end).
public enum CopingCardProblem: Equatable, Sendable, CustomStringConvertible {
    case concern(MantraProblem)
    case answer(MantraProblem)

    public var description: String {
        switch self {
        case .concern(let p): p.describing("the concern")
        case .answer(let p): p.describing("the answer")
        }
    }
}

/// `copingCards.txt` (ours): one card a line, the concern and the answer separated by one tab
/// (neither may hold a control character, so neither holds a tab), each line ending in a newline:
///
///     I will panic at the dentist.<TAB>I have sat through it before, and I can breathe through it.
///
/// At most `maximumCount` cards. Missing or empty: no cards. A bad line is dropped and the others
/// kept (the file moved aside first).
public enum CopingCardsFile {
    public static let name = "copingCards.txt"
    public static let maximumCount = 100
    /// 100 cards of two texts of 160 two-byte characters, a tab and a newline.
    public static let maximumSize = maximumCount * (2 * MantraList.maximumLength * 2 + 2)

    public enum Problem: Error, Equatable, CustomStringConvertible {
        case tooLarge(Int)
        case tooMany(Int)
        case notUTF8(line: Int)
        case noTab(line: Int)
        case invalid(line: Int, CopingCardProblem)

        public var description: String {
            switch self {
            case .tooLarge(let n): "\(CopingCardsFile.name) is \(n) bytes; at most \(CopingCardsFile.maximumSize) expected"
            case .tooMany(let n): "\(CopingCardsFile.name) would have \(n) cards; at most \(CopingCardsFile.maximumCount)"
            case .notUTF8(let l): "\(CopingCardsFile.name) line \(l) is not UTF-8 text"
            case .noTab(let l): "\(CopingCardsFile.name) line \(l) is not '<concern><TAB><answer>'"
            case .invalid(let l, let p): "\(CopingCardsFile.name) line \(l): \(p)"
            }
        }
    }

    /// Why `card` cannot be stored, or nil: the same checks as a mantra's, for each text.
    public static func problem(with card: CopingCard) -> CopingCardProblem? {
        if let p = MantrasFile.problem(with: card.concern) { return .concern(p) }
        if let p = MantrasFile.problem(with: card.answer) { return .answer(p) }
        return nil
    }

    public static func format(_ cards: [CopingCard]) -> String {
        var s = ""
        for c in cards { s += c.concern + "\t" + c.answer + "\n" }
        return s
    }

    public static func parse(_ bytes: [UInt8]) throws(Problem) -> [CopingCard] {
        if bytes.count > maximumSize { throw .tooLarge(bytes.count) }
        let lines = FileLines.lines(bytes)
        if lines.count > maximumCount { throw .tooMany(lines.count) }
        var out: [CopingCard] = []
        for (i, line) in lines.enumerated() {
            guard String(validating: line, as: UTF8.self) != nil else { throw .notUTF8(line: i + 1) }
            let parts = line.split(separator: UInt8(ascii: "\t"), omittingEmptySubsequences: false)
            guard parts.count == 2 else { throw .noTab(line: i + 1) }
            let card = CopingCard(concern: String(decoding: parts[0], as: UTF8.self), answer: String(decoding: parts[1], as: UTF8.self))
            if let p = problem(with: card) { throw .invalid(line: i + 1, p) }
            out.append(card)
        }
        return out
    }

    /// The good lines of a file that does not parse, up to the limit.
    public static func salvage(_ bytes: [UInt8]) -> [CopingCard] {
        var out: [CopingCard] = []
        for line in bytes.prefix(maximumSize).split(separator: UInt8(ascii: "\n")) where out.count < maximumCount {
            let parts = line.split(separator: UInt8(ascii: "\t"), omittingEmptySubsequences: false)
            guard parts.count == 2, let concern = String(validating: parts[0], as: UTF8.self),
                  let answer = String(validating: parts[1], as: UTF8.self) else { continue }
            let card = CopingCard(concern: concern, answer: answer)
            if problem(with: card) == nil { out.append(card) }
        }
        return out
    }
}
