/// Why one mantra cannot be stored.
public enum MantraProblem: Equatable, Sendable, CustomStringConvertible {
    case blank
    case tooLong(Int)
    /// A character the device cannot store on one line or cannot draw (the fonts draw Latin-1).
    case character(UInt32)
    case surroundingSpace

    public var description: String { describing("a mantra") }

    /// The problem of `what` ("a mantra", "the concern"): the coping cards' texts keep the
    /// mantras' rules, said of themselves.
    public func describing(_ what: String) -> String {
        switch self {
        case .blank: "\(what) cannot be empty"
        case .tooLong(let n): "\(what) has at most \(MantraList.maximumLength) characters; this one has \(n)"
        case .character(let c) where c < 0x20 || c == 0x7F || (0x80..<0xA0).contains(c):
            "\(what) cannot contain control characters (found U+\(hex4(c)))"
        case .character(let c): "the display cannot show the character U+\(hex4(c))"
        case .surroundingSpace: "\(what) cannot start or end with a space"
        }
    }
}

func hex4(_ v: UInt32) -> String {
    let s = String(v, radix: 16, uppercase: true)
    return String(repeating: "0", count: max(0, 4 - s.count)) + s
}

/// `mantras.txt` (spec data table), both the shipped list `positiveAffirmations/mantras.txt`
/// and the person's list in the state directory: one mantra per line, each line ending in a
/// newline, no blank lines, each mantra 1 to 160 characters of printable Latin-1 text in UTF-8
/// (the shipped list is plain ASCII), no leading or trailing space. An empty file is an empty
/// list (every mantra deleted); a missing file means "not seeded yet".
public enum MantrasFile {
    public static let name = "mantras.txt"
    public static let maximumCount = 1000
    /// 1000 mantras of 160 two-byte characters and their newlines.
    public static let maximumSize = maximumCount * (MantraList.maximumLength * 2 + 1)

    public enum Problem: Error, Equatable, CustomStringConvertible {
        case tooLarge(Int)
        case tooMany(Int)
        case notUTF8(line: Int)
        case invalid(line: Int, MantraProblem)

        public var description: String {
            switch self {
            case .tooLarge(let n): "\(MantrasFile.name) is \(n) bytes; at most \(MantrasFile.maximumSize) expected"
            case .tooMany(let n): "\(MantrasFile.name) would have \(n) mantras; at most \(MantrasFile.maximumCount)"
            case .notUTF8(let l): "\(MantrasFile.name) line \(l) is not UTF-8 text"
            case .invalid(let l, let p): "\(MantrasFile.name) line \(l): \(p)"
            }
        }
    }

    /// Why `text` cannot be a mantra, or nil.
    public static func problem(with text: String) -> MantraProblem? {
        if text.isEmpty { return .blank }
        var n = 0
        for s in text.unicodeScalars {
            let v = s.value
            if v < 0x20 || (0x7F..<0xA0).contains(v) || v > 0xFF { return .character(v) }
            n += 1
        }
        if text.unicodeScalars.allSatisfy({ $0 == " " || $0 == "\u{A0}" }) { return .blank }
        if n > MantraList.maximumLength { return .tooLong(n) }
        if text.unicodeScalars.first == " " || text.unicodeScalars.last == " " { return .surroundingSpace }
        return nil
    }

    public static func format(_ items: [String]) -> String {
        var s = ""
        for m in items { s += m; s += "\n" }
        return s
    }

    /// The list in `bytes`, every line checked. A file that parses formats back to the same
    /// bytes (the final newline is optional on reading, always written).
    public static func parse(_ bytes: [UInt8]) throws(Problem) -> [String] {
        if bytes.count > maximumSize { throw .tooLarge(bytes.count) }
        if bytes.isEmpty { return [] }
        var lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        if bytes.last == UInt8(ascii: "\n") { lines.removeLast() }
        if lines.count > maximumCount { throw .tooMany(lines.count) }
        var out = [String]()
        out.reserveCapacity(lines.count)
        for (i, line) in lines.enumerated() {
            guard let text = String(validating: line, as: UTF8.self) else { throw .notUTF8(line: i + 1) }
            if let p = problem(with: text) { throw .invalid(line: i + 1, p) }
            out.append(text)
        }
        return out
    }

    /// What can be kept of a file that does not parse (the file itself is set aside by whoever
    /// loads it): lines are trimmed of spaces and a Windows carriage return, and blank, overlong,
    /// undecodable or undrawable lines are left out.
    public static func salvage(_ bytes: [UInt8]) -> [String] {
        var out = [String]()
        for line in bytes.prefix(maximumSize).split(separator: UInt8(ascii: "\n")) {
            guard let raw = String(validating: line, as: UTF8.self) else { continue }
            var scalars = Substring(raw).unicodeScalars[...]
            while let f = scalars.first, f == " " || f == "\t" || f == "\r" { scalars = scalars.dropFirst() }
            while let l = scalars.last, l == " " || l == "\t" || l == "\r" { scalars = scalars.dropLast() }
            let text = String(Substring(scalars))
            if problem(with: text) == nil && out.count < maximumCount { out.append(text) }
        }
        return out
    }
}
