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
    /// Greys out a region the 1-bit way: every other pixel, in a checkerboard, is cleared.
    public mutating func dither(x: Int, y: Int, width w: Int, height h: Int) {
        var yy = max(0, y)
        while yy < min(height, y + h) {
            var xx = max(0, x) + ((max(0, x) + yy) & 1)
            while xx < min(width, x + w) { plot(xx, yy, .off); xx += 2 }
            yy += 1
        }
    }
}
