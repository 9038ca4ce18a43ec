/// GNU Unifont's glyphs, as Debian's `unifont` package installs them (`unifont.hex`): a 16-pixel
/// high bitmap, 8 or 16 pixels wide, for every visible character of Unicode's plane 0 — Chinese,
/// Japanese, Korean, Arabic, Hebrew, Thai, Devanagari and the rest. The built-in misc-fixed fonts
/// draw Latin, Greek and Cyrillic; what they lack is drawn from here. Read once at start-up by
/// the device's edge (the file is GPL software the device does not ship; see README.md), then an
/// immutable value the renderer only looks glyphs up in.
public struct Unifont: Sendable {
    public static let height = 16
    /// Rows above the baseline (Unifont's descent is 2).
    public static let ascent = 14
    /// Debian's path (package `unifont`).
    public static let debianPath = "/usr/share/unifont/unifont.hex"

    /// Code points with a glyph, ascending.
    @usableFromInline let codePoints: [UInt32]
    /// 16 rows per glyph, bit 15 the leftmost pixel; a narrow glyph uses the high byte.
    @usableFromInline let rows: [UInt16]
    /// One bit per glyph: 16 pixels wide.
    @usableFromInline let wide: [UInt64]

    public var count: Int { codePoints.count }

    /// Glyph number of `scalar`, nil when Unifont has none.
    @inlinable
    public func glyph(_ scalar: UInt32) -> Int? {
        var lo = 0, hi = codePoints.count
        while lo < hi {
            let mid = (lo + hi) / 2
            let c = codePoints[mid]
            if c == scalar { return mid }
            if c < scalar { lo = mid + 1 } else { hi = mid }
        }
        return nil
    }

    /// 8 or 16.
    @inlinable
    public func width(_ glyph: Int) -> Int { wide[glyph >> 6] & (1 << UInt64(glyph & 63)) != 0 ? 16 : 8 }

    @inlinable
    public func row(_ glyph: Int, _ y: Int) -> UInt16 { rows[glyph * Self.height + y] }

    /// Why a file is not Unifont's hex format.
    public enum Problem: Error, Equatable, Sendable, CustomStringConvertible {
        /// The file holds no glyph at all.
        case empty
        /// Line `line` (1-based) is not `CODEPOINT:BITMAP` as the format has it.
        case badLine(line: Int, reason: String)

        public var description: String {
            switch self {
            case .empty: "it holds no glyph"
            case .badLine(let line, let reason): "line \(line): \(reason)"
            }
        }
    }

    /// The most glyphs a file may hold: every code point of Unicode. What Debian ships has 57,086.
    public static let maximumGlyphs = 0x110000

    /// Reads the `.hex` format: one glyph a line, `4E00:` and 32 hex digits (8x16) or 64
    /// (16x16), the code point in 4 to 6 hex digits, the lines in ascending code point order (as
    /// every Unifont file is: the lookup is a binary search). A line feed or CR LF ends a line;
    /// the last may have none. Anything else is refused with the line it is on: a truncated or
    /// damaged file is said as such, never half-drawn.
    public init(hex bytes: [UInt8]) throws(Problem) {
        var codePoints: [UInt32] = []
        var rows: [UInt16] = []
        var wide: [UInt64] = []
        var line = 0
        var i = 0
        let n = bytes.count
        while i < n {
            line += 1
            var end = i
            while end < n && bytes[end] != 0x0A { end += 1 }
            let next = end + 1
            if end > i && bytes[end - 1] == 0x0D { end -= 1 }
            if end == i { throw .badLine(line: line, reason: "an empty line") }
            // The code point.
            var cp: UInt32 = 0
            var j = i
            while j < end && bytes[j] != UInt8(ascii: ":") {
                guard j - i < 6, let d = Self.hexDigit(bytes[j]) else {
                    throw .badLine(line: line, reason: "the code point is not 4 to 6 hex digits before ':'")
                }
                cp = cp << 4 | UInt32(d)
                j += 1
            }
            guard j < end, j - i >= 4 else {
                throw .badLine(line: line, reason: "the code point is not 4 to 6 hex digits before ':'")
            }
            guard cp <= 0x10FFFF, !(0xD800...0xDFFF).contains(cp) else {
                throw .badLine(line: line, reason: "U+\(String(cp, radix: 16, uppercase: true)) is not a Unicode scalar")
            }
            if let last = codePoints.last, cp <= last {
                throw .badLine(line: line, reason: "U+\(String(cp, radix: 16, uppercase: true)) comes after U+\(String(last, radix: 16, uppercase: true)): the glyphs are not in ascending order")
            }
            // The bitmap: 16 rows of 2 or 4 hex digits.
            j += 1
            let digits = end - j
            guard digits == 32 || digits == 64 else {
                throw .badLine(line: line, reason: "the bitmap has \(digits) hex digits; a glyph has 32 (8x16) or 64 (16x16)")
            }
            guard codePoints.count < Self.maximumGlyphs else {
                throw .badLine(line: line, reason: "more glyphs than Unicode has code points")
            }
            let perRow = digits / Self.height
            for _ in 0..<Self.height {
                var v: UInt16 = 0
                for _ in 0..<perRow {
                    guard let d = Self.hexDigit(bytes[j]) else {
                        throw .badLine(line: line, reason: "the bitmap holds a character that is not a hex digit")
                    }
                    v = v << 4 | UInt16(d)
                    j += 1
                }
                rows.append(perRow == 2 ? v << 8 : v)
            }
            let glyph = codePoints.count
            if glyph & 63 == 0 { wide.append(0) }
            if perRow == 4 { wide[glyph >> 6] |= 1 << UInt64(glyph & 63) }
            codePoints.append(cp)
            i = next
        }
        if codePoints.isEmpty { throw .empty }
        self.codePoints = codePoints
        self.rows = rows
        self.wide = wide
    }

    static func hexDigit(_ b: UInt8) -> UInt8? {
        switch b {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): b - UInt8(ascii: "0")
        case UInt8(ascii: "A")...UInt8(ascii: "F"): b - UInt8(ascii: "A") + 10
        case UInt8(ascii: "a")...UInt8(ascii: "f"): b - UInt8(ascii: "a") + 10
        default: nil
        }
    }
}
