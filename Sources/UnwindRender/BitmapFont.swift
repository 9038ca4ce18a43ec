/// A monospaced bitmap font: one row of bits per scanline, bit 15 the leftmost pixel.
/// The glyph data comes from X11 misc-fixed (public domain); see NOTICE and Fonts/.
public struct BitmapFont: Sendable {
    public let name: String
    /// Horizontal advance and cell width, in pixels.
    public let width: Int
    /// Cell height, in pixels.
    public let height: Int
    /// First code point in `rows`; glyphs run contiguously from here.
    @usableFromInline let first: UInt32
    @usableFromInline let count: Int
    /// `count * height` rows.
    @usableFromInline let rows: [UInt16]

    public init(name: String, width: Int, height: Int, first: UInt32, rows: [UInt16]) {
        precondition(width <= 16 && rows.count % height == 0)
        self.name = name
        self.width = width
        self.height = height
        self.first = first
        self.count = rows.count / height
        self.rows = rows
    }

    /// Index of the first row of the glyph for `scalar`, or of '?' when the font lacks it.
    @inlinable
    public func glyphIndex(_ scalar: UInt32) -> Int {
        let i = Int(scalar) - Int(first)
        if i >= 0 && i < count { return i * height }
        return (Int(UInt8(ascii: "?")) - Int(first)) * height
    }

    @inlinable
    public func row(_ glyphIndex: Int, _ y: Int) -> UInt16 { rows[glyphIndex + y] }

    public func textWidth(_ s: String) -> Int { s.unicodeScalars.count * width }
}
