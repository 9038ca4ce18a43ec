import UnwindCore

/// A monospaced bitmap font: one row of bits per scanline, bit 15 the leftmost pixel.
/// The glyph data comes from X11 misc-fixed (public domain); see NOTICE and Fonts/.
public struct BitmapFont: Sendable {
    public let name: String
    /// Horizontal advance and cell width, in pixels.
    public let width: Int
    /// Cell height, in pixels.
    public let height: Int
    /// Rows from the cell's top to the baseline: where glyphs of other heights line up with it.
    public let ascent: Int
    /// The first row a capital letter inks ('H''s): the top of the stand-in box.
    public let capitalTop: Int
    /// Which code points have which glyph, sorted by code point; the first run is printable
    /// ASCII, so most text is found without a search.
    @usableFromInline let runs: [GlyphRun]
    /// `height` rows per glyph, glyph after glyph.
    @usableFromInline let rows: [UInt16]

    public init(name: String, width: Int, height: Int, ascent: Int, runs: [GlyphRun], rows: [UInt16]) {
        precondition(width <= 16 && height > 0 && (0...height).contains(ascent) && rows.count % height == 0 && !runs.isEmpty)
        self.name = name
        self.width = width
        self.height = height
        self.ascent = ascent
        self.runs = runs
        self.rows = rows
        let h = (Self.find(UInt32(UInt8(ascii: "H")), in: runs) ?? 0) * height
        capitalTop = (0..<ascent).first { rows[h + $0] != 0 } ?? 0
    }

    /// First row of the glyph for `scalar`, or nil when the font cannot draw it (even through
    /// the base letter of its decomposition, which the tables already resolve).
    @inlinable
    public func glyph(_ scalar: UInt32) -> Int? {
        let ascii = runs[0]
        if scalar &- ascii.first < ascii.count { return (Int(ascii.glyph) + Int(scalar &- ascii.first)) * height }
        return Self.find(scalar, in: runs).map { $0 * height }
    }

    public func contains(_ scalar: UInt32) -> Bool { glyph(scalar) != nil }

    @inlinable
    public func row(_ glyphIndex: Int, _ y: Int) -> UInt16 { rows[glyphIndex + y] }

    /// Width of `s` in pixels: one cell per glyph drawn, a base letter and the combining marks
    /// that compose with it counting once, as `Framebuffer.text` draws them.
    public func textWidth(_ s: String) -> Int {
        var n = 0
        for _ in cells(s) { n += 1 }
        return n * width
    }

    /// The cells `text` takes in this font, in order.
    @inlinable
    public func cells(_ text: String) -> Cells { Cells(font: self, scalars: text.unicodeScalars.makeIterator()) }

    /// Glyph number (not row) of `scalar` among `runs`, by binary search.
    @usableFromInline
    static func find(_ scalar: UInt32, in runs: [GlyphRun]) -> Int? {
        var lo = 0, hi = runs.count
        while lo < hi {
            let mid = (lo + hi) / 2
            let r = runs[mid]
            if scalar < r.first {
                hi = mid
            } else if scalar - r.first >= r.count {
                lo = mid + 1
            } else {
                return Int(r.glyph) + Int(scalar - r.first)
            }
        }
        return nil
    }

    /// The letter NFC composes from `base` and `mark`, if it is one some font here can draw.
    @usableFromInline
    static func compose(_ base: UInt32, _ mark: UInt32) -> UInt32? {
        guard combiningMarks.contains(mark) else { return nil }
        let table = compositions
        var lo = 0, hi = table.count
        while lo < hi {
            let mid = (lo + hi) / 2
            let c = table[mid]
            if (c.base, c.mark) < (base, mark) {
                lo = mid + 1
            } else if (c.base, c.mark) > (base, mark) {
                hi = mid
            } else {
                return c.composed
            }
        }
        return nil
    }
}

/// Consecutive code points drawn with consecutive glyphs (a single code point when it borrows
/// another letter's glyph).
public struct GlyphRun: Sendable {
    public let first: UInt32
    public let count: UInt32
    /// Glyph number of `first`.
    public let glyph: UInt32

    public init(_ first: UInt32, _ count: UInt32, _ glyph: UInt32) {
        self.first = first
        self.count = count
        self.glyph = glyph
    }
}

/// `base` followed by the combining `mark` is the letter `composed`.
public struct Composition: Sendable {
    public let base: UInt32
    public let mark: UInt32
    public let composed: UInt32

    public init(_ base: UInt32, _ mark: UInt32, _ composed: UInt32) {
        self.base = base
        self.mark = mark
        self.composed = composed
    }
}

extension BitmapFont {
    /// One cell of text: the code point drawn there and the first row of its glyph, nil when
    /// the font cannot draw it.
    public struct Cell: Sendable {
        public let scalar: UInt32
        public let glyph: Int?

        @inlinable
        init(scalar: UInt32, glyph: Int?) {
            self.scalar = scalar
            self.glyph = glyph
        }
    }

    /// Walks a string's scalars in place (no allocation). A letter followed by combining marks
    /// becomes the precomposed letter while the font has one: a name saved decomposed (NFD, as
    /// some editors and file systems write it) looks the same as one saved composed, instead of
    /// each mark taking a cell of its own.
    public struct Cells: Sequence, IteratorProtocol {
        @usableFromInline let font: BitmapFont
        @usableFromInline var scalars: String.UnicodeScalarView.Iterator
        @usableFromInline var pending: Unicode.Scalar?

        @inlinable
        init(font: BitmapFont, scalars: String.UnicodeScalarView.Iterator) {
            self.font = font
            self.scalars = scalars
        }

        @inlinable
        public mutating func next() -> Cell? {
            guard let first = pending ?? scalars.next() else { return nil }
            pending = nil
            var scalar = first.value
            while let s = scalars.next() {
                // No combining mark lies below U+0300: plain text never pays for the search.
                if s.value >= 0x0300, let c = BitmapFont.compose(scalar, s.value), font.glyph(c) != nil {
                    scalar = c
                } else {
                    pending = s
                    break
                }
            }
            return Cell(scalar: scalar, glyph: font.glyph(scalar))
        }
    }
}
