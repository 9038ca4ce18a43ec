import UnwindCore

/// The fonts the screens draw with: the built-in misc-fixed sizes, and GNU Unifont when the
/// system has it (read at start-up by the device's edge; see `Unifont`).
public struct Fonts: Sendable {
    public let unifont: Unifont?

    public init(unifont: Unifont?) { self.unifont = unifont }

    /// Without Unifont: what a misc-fixed font lacks is drawn as emoji pictures or stand-in boxes.
    public static let builtIn = Fonts(unifont: nil)

    /// A person's text (a reply, a mantra) in `font`, falling back to Unifont.
    func lettering(_ font: BitmapFont) -> Lettering { Lettering(font: font, unifont: unifont) }
}

/// One text size with everything it falls back to, in order: the misc-fixed font (with its
/// composed letters), Unifont's glyph, an emoji picture, and a stand-in box.
struct Lettering {
    let font: BitmapFont
    let unifont: Unifont?

    /// How one cell of text is drawn.
    enum Shape: Equatable {
        /// First row of the glyph in `font`.
        case font(Int)
        /// A Unifont glyph number.
        case unifont(Int)
        /// An `EmojiPictures` number.
        case picture(Int)
        /// A Unifont combining mark, drawn over the cell before it.
        case mark(Int)
        /// The stand-in box: nothing here can draw it.
        case box
        /// Drawn as nothing: a joiner, a variation selector, a skin tone, the second half of a flag.
        case nothing
    }

    /// Pixels the pen moves on.
    func advance(_ shape: Shape) -> Int {
        switch shape {
        case .font, .box: font.width
        case .unifont(let g): unifont?.width(g) ?? 0
        case .picture: EmojiPictures.size
        case .mark, .nothing: 0
        }
    }

    /// Needs a row of Unifont's height.
    static func isTall(_ shape: Shape) -> Bool {
        switch shape {
        case .unifont, .picture, .mark: true
        case .font, .box, .nothing: false
        }
    }

    func shapes(_ text: String) -> Shapes { Shapes(lettering: self, cells: font.cells(text)) }

    /// The shapes of a text's cells, in order; without allocating.
    struct Shapes: Sequence, IteratorProtocol {
        let lettering: Lettering
        var cells: BitmapFont.Cells
        /// The last cell drawn was an emoji: a joiner after it starts a sequence (👨‍👩‍👧) shown
        /// by its first emoji alone.
        var afterEmoji = false
        var joining = false
        /// A regional indicator began a flag: the next one completes it.
        var flagOpen = false

        mutating func next() -> (scalar: UInt32, shape: Shape)? {
            guard let cell = cells.next() else { return nil }
            let shape = classify(cell)
            return (cell.scalar, shape)
        }

        private mutating func classify(_ cell: BitmapFont.Cell) -> Shape {
            let v = cell.scalar
            let wasJoining = joining
            joining = false
            if let g = cell.glyph { afterEmoji = false; flagOpen = false; return .font(g) }
            guard let scalar = Unicode.Scalar(v) else { return .box }
            if Self.isInvisible(scalar) {
                if v == 0x200D && afterEmoji { joining = true }
                return .nothing
            }
            if wasJoining && Self.isPictographic(scalar) { return .nothing }
            if (0x1F1E6...0x1F1FF).contains(v) {
                if flagOpen { flagOpen = false; return .nothing }
                flagOpen = true
            } else {
                flagOpen = false
            }
            afterEmoji = Self.isPictographic(scalar)
            if let unifont = lettering.unifont, let g = unifont.glyph(v) {
                switch scalar.properties.generalCategory {
                case .nonspacingMark, .enclosingMark: return .mark(g)
                default: return .unifont(g)
                }
            }
            if let p = EmojiPictures.picture(v) { return .picture(p) }
            switch scalar.properties.generalCategory {
            // The letter it belongs to is drawn; a box per accent would bury it.
            case .nonspacingMark, .enclosingMark: return .nothing
            default: return .box
            }
        }

        /// Scalars that only steer how others look: zero-width joiners and spaces, direction
        /// marks, variation selectors (U+FE0F after ❤), skin tones (U+1F3FB…), tag characters.
        static func isInvisible(_ s: Unicode.Scalar) -> Bool {
            switch s.value {
            case 0xFE00...0xFE0F, 0xE0100...0xE01EF, 0x1F3FB...0x1F3FF, 0xE0000...0xE007F: return true
            default: return s.properties.generalCategory == .format
            }
        }

        /// An emoji a joiner may join to another (not the digits and signs that are emoji too).
        static func isPictographic(_ s: Unicode.Scalar) -> Bool { s.value >= 0x203C && s.properties.isEmoji }
    }
}

extension Framebuffer {
    /// Draws cells `first ..< first + count` of `text` in one row with its top at `y`: at
    /// Unifont's height when `tall` (glyphs of `lettering.font` then sit on Unifont's baseline),
    /// else at the font's. Returns the x after the last cell.
    @discardableResult
    mutating func row(_ text: String, _ lettering: Lettering, first: Int = 0, count: Int = .max, tall: Bool,
                      x: Int, y: Int, _ ink: Ink = .on) -> Int {
        let font = lettering.font
        let fontY = tall ? y + Unifont.ascent - font.ascent : y
        var pen = x, previousX = x, previousWidth = 0
        var k = 0
        for (_, shape) in lettering.shapes(text) {
            defer { k += 1 }
            if k < first { continue }
            if k - first >= count { break }
            let w = lettering.advance(shape)
            switch shape {
            case .font(let g): glyph(rows: g, font: font, x: pen, y: fontY, ink)
            case .box: standInBox(font: font, x: pen, y: fontY, ink)
            case .unifont(let g): if let u = lettering.unifont { unifontGlyph(g, of: u, x: pen, y: y, ink) }
            case .picture(let p): bits(width: EmojiPictures.size, height: EmojiPictures.size, x: pen, y: y, ink) { EmojiPictures.row(p, $0) }
            case .mark(let g):
                if let u = lettering.unifont { unifontGlyph(g, of: u, x: previousX + (previousWidth - u.width(g)) / 2, y: y, ink) }
            case .nothing: break
            }
            if w > 0 { previousX = pen; previousWidth = w }
            pen += w
        }
        return pen
    }

    mutating func unifontGlyph(_ g: Int, of unifont: Unifont, x: Int, y: Int, _ ink: Ink) {
        bits(width: unifont.width(g), height: Unifont.height, x: x, y: y, ink) { unifont.row(g, $0) }
    }
}
