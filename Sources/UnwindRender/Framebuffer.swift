/// A 1-bit image in the SSD1306's own memory layout: `pages` rows of 8 pixels, each byte a
/// column of 8 pixels with bit 0 at the top. Keeping the display's layout means a frame goes
/// to the bus without conversion.
public struct Framebuffer: Equatable, Sendable {
    public let width: Int
    public let height: Int
    public var bytes: [UInt8]

    public init(width: Int = 128, height: Int = 64) {
        precondition(height % 8 == 0 && width > 0)
        self.width = width
        self.height = height
        self.bytes = [UInt8](repeating: 0, count: width * height / 8)
    }

    public var pages: Int { height / 8 }

    @inlinable
    public subscript(x: Int, y: Int) -> Bool {
        get {
            guard x >= 0, y >= 0, x < width, y < height else { return false }
            return bytes[(y >> 3) * width + x] & (1 << UInt8(y & 7)) != 0
        }
        set {
            guard x >= 0, y >= 0, x < width, y < height else { return }
            let i = (y >> 3) * width + x
            if newValue { bytes[i] |= 1 << UInt8(y & 7) } else { bytes[i] &= ~(1 << UInt8(y & 7)) }
        }
    }

    public mutating func clear() {
        bytes.withUnsafeMutableBufferPointer { $0.update(repeating: 0) }
    }

    /// Number of lit pixels, for tests and wear statistics.
    public var litPixels: Int { bytes.reduce(0) { $0 + $1.nonzeroBitCount } }
}

/// How a drawing operation treats the pixels it touches.
public enum Ink: Sendable {
    case on, off, invert
}

extension Framebuffer {
    @inlinable
    public mutating func plot(_ x: Int, _ y: Int, _ ink: Ink = .on) {
        guard x >= 0, y >= 0, x < width, y < height else { return }
        let i = (y >> 3) * width + x
        let bit: UInt8 = 1 << UInt8(y & 7)
        switch ink {
        case .on: bytes[i] |= bit
        case .off: bytes[i] &= ~bit
        case .invert: bytes[i] ^= bit
        }
    }

    public mutating func horizontalLine(x0: Int, x1: Int, y: Int, _ ink: Ink = .on) {
        var x = max(0, min(x0, x1))
        let end = min(width - 1, max(x0, x1))
        while x <= end { plot(x, y, ink); x += 1 }
    }

    public mutating func verticalLine(x: Int, y0: Int, y1: Int, _ ink: Ink = .on) {
        var y = max(0, min(y0, y1))
        let end = min(height - 1, max(y0, y1))
        while y <= end { plot(x, y, ink); y += 1 }
    }

    public mutating func rectangle(x: Int, y: Int, width w: Int, height h: Int, _ ink: Ink = .on) {
        guard w > 0, h > 0 else { return }
        horizontalLine(x0: x, x1: x + w - 1, y: y, ink)
        if h > 1 { horizontalLine(x0: x, x1: x + w - 1, y: y + h - 1, ink) }
        if h > 2 {
            verticalLine(x: x, y0: y + 1, y1: y + h - 2, ink)
            if w > 1 { verticalLine(x: x + w - 1, y0: y + 1, y1: y + h - 2, ink) }
        }
    }

    public mutating func fill(x: Int, y: Int, width w: Int, height h: Int, _ ink: Ink = .on) {
        guard w > 0, h > 0 else { return }
        var yy = y
        while yy < y + h { horizontalLine(x0: x, x1: x + w - 1, y: yy, ink); yy += 1 }
    }

    /// Draws one glyph cell with its top-left at (x, y).
    @inlinable
    public mutating func glyph(_ scalar: UInt32, font: BitmapFont, x: Int, y: Int, _ ink: Ink = .on) {
        glyph(rows: font.glyphIndex(scalar), font: font, x: x, y: y, ink)
    }

    /// Draws one glyph cell, given by its first row in `font`, with its top-left at (x, y).
    @inlinable
    public mutating func glyph(rows g: Int, font: BitmapFont, x: Int, y: Int, _ ink: Ink = .on) {
        var row = 0
        while row < font.height {
            let bits = font.row(g, row)
            if bits != 0 {
                var col = 0
                while col < font.width {
                    if bits & (0x8000 >> UInt16(col)) != 0 { plot(x + col, y + row, ink) }
                    col += 1
                }
            }
            row += 1
        }
    }

    /// Draws `text` with its top-left at (x, y), at most `maxCharacters` cells of it, '?' for
    /// what the font cannot draw; returns the x after the last glyph.
    /// Iterates the string's scalars in place: no allocation.
    @discardableResult
    public mutating func text(_ text: String, font: BitmapFont, x: Int, y: Int, _ ink: Ink = .on,
                              maxCharacters: Int = .max) -> Int {
        var cx = x
        var n = 0
        for cell in font.cells(text) {
            if n == maxCharacters { break }
            glyph(rows: cell.glyph ?? font.replacement, font: font, x: cx, y: y, ink)
            cx += font.width
            n += 1
        }
        return cx
    }

    /// Greys out a region the 1-bit way: every other pixel, in a checkerboard, is cleared.
    public mutating func dither(x: Int, y: Int, width w: Int, height h: Int) {
        var yy = max(0, y)
        while yy < min(height, y + h) {
            var xx = max(0, x) + ((max(0, x) + yy) & 1)
            while xx < min(width, x + w) { plot(xx, yy, .off); xx += 2 }
            yy += 1
        }
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
