import UnwindCore

/// Text on the 1-bit framebuffer: glyphs of the misc-fixed fonts, numbers and clocks drawn
/// without building Strings (the loop renders without allocating).
extension Framebuffer {
    /// Draws the glyph of `scalar`, or the stand-in box when the font has none.
    public mutating func glyph(_ scalar: UInt32, font: BitmapFont, x: Int, y: Int, _ ink: Ink = .on) {
        if let g = font.glyph(scalar) {
            glyph(rows: g, font: font, x: x, y: y, ink)
        } else {
            standInBox(font: font, x: x, y: y, ink)
        }
    }

    /// What a cell shows for a character no font here can draw: an empty box, one cell wide and
    /// as tall as a capital letter. A '?' would read as part of the text ("OK?"); a box is
    /// plainly not a letter, and says that something is there.
    public mutating func standInBox(font: BitmapFont, x: Int, y: Int, _ ink: Ink = .on) {
        rectangle(x: x, y: y + font.capitalTop, width: max(2, font.width - 1), height: font.ascent - font.capitalTop, ink)
    }

    /// Draws one glyph cell, given by its first row in `font`, with its top-left at (x, y).
    @inlinable
    public mutating func glyph(rows g: Int, font: BitmapFont, x: Int, y: Int, _ ink: Ink = .on) {
        bits(width: font.width, height: font.height, x: x, y: y, ink) { font.row(g, $0) }
    }

    /// Plots the set bits of `height` rows, bit 15 the leftmost pixel: every glyph and picture.
    @inlinable
    public mutating func bits(width: Int, height: Int, x: Int, y: Int, _ ink: Ink, row: (Int) -> UInt16) {
        var r = 0
        while r < height {
            let bits = row(r)
            if bits != 0 {
                var c = 0
                while c < width {
                    if bits & (0x8000 >> UInt16(c)) != 0 { plot(x + c, y + r, ink) }
                    c += 1
                }
            }
            r += 1
        }
    }

    /// Draws `text` with its top-left at (x, y), at most `maxCharacters` cells of it, the stand-in
    /// box for what the font cannot draw; returns the x after the last glyph.
    /// Iterates the string's scalars in place: no allocation.
    @discardableResult
    public mutating func text(_ text: String, font: BitmapFont, x: Int, y: Int, _ ink: Ink = .on,
                              maxCharacters: Int = .max) -> Int {
        var cx = x
        var n = 0
        for cell in font.cells(text) {
            if n == maxCharacters { break }
            if let g = cell.glyph {
                glyph(rows: g, font: font, x: cx, y: y, ink)
            } else {
                standInBox(font: font, x: cx, y: y, ink)
            }
            cx += font.width
            n += 1
        }
        return cx
    }


    /// Draws a non-negative number, zero-padded to `digits`, without building a String.
    @discardableResult
    public mutating func number(_ value: Int64, digits: Int = 1, font: BitmapFont, x: Int, y: Int, _ ink: Ink = .on) -> Int {
        var v = max(0, value)
        var n = 1
        var t = v / 10
        while t > 0 { n += 1; t /= 10 }
        n = max(n, digits)
        var cx = x + (n - 1) * font.width
        for _ in 0..<n {
            glyph(UInt32(0x30 + v % 10), font: font, x: cx, y: y, ink)
            v /= 10
            cx -= font.width
        }
        return x + n * font.width
    }

    /// Draws seconds as `mm:ss`, or `h:mm:ss` from one hour on.
    @discardableResult
    public mutating func clock(_ seconds: Int64, font: BitmapFont, x: Int, y: Int, alwaysHours: Bool = false, _ ink: Ink = .on) -> Int {
        let s = max(0, seconds)
        var cx = x
        if s >= 3600 || alwaysHours {
            cx = number(s / 3600, digits: alwaysHours ? 2 : 1, font: font, x: cx, y: y, ink)
            glyph(0x3A, font: font, x: cx, y: y, ink); cx += font.width
        }
        cx = number(s / 60 % 60, digits: 2, font: font, x: cx, y: y, ink)
        glyph(0x3A, font: font, x: cx, y: y, ink); cx += font.width
        return number(s % 60, digits: 2, font: font, x: cx, y: y, ink)
    }

    public static func clockWidth(_ seconds: Int64, font: BitmapFont, alwaysHours: Bool = false) -> Int {
        if seconds >= 3600 || alwaysHours {
            var n = 1
            var t = seconds / 3600 / 10
            while t > 0 { n += 1; t /= 10 }
            return (max(n, alwaysHours ? 2 : 1) + 6) * font.width
        }
        return 5 * font.width
    }
}
