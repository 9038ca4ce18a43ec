import UnwindCore

/// A person's text on the screen (a contact's reply, a mantra): the lines the core wrapped,
/// each broken again where it is wider in pixels than the room — the core counts characters,
/// and a Chinese character drawn from Unifont is four times as wide as a 4x6 letter. A row that
/// holds a Unifont glyph or an emoji is laid out at Unifont's 16-pixel height, the font's
/// letters on the same baseline. Not scaled down instead: at 6 or 10 pixels a Chinese
/// character's strokes run together and it cannot be read. Text of the built-in fonts alone
/// comes out exactly as the core wrapped it. Nothing here allocates: drawing a frame may lay
/// the rows out again.
struct Paragraph {
    let lines: [String]
    let lettering: Lettering
    /// The widest a row may be, in pixels.
    let width: Int
    /// Pixels between two rows.
    let gap: Int

    /// One row as drawn: cells `first ..< first + count` of `lines[line]`.
    struct Row {
        let line: Int
        let first: Int
        let count: Int
        /// In pixels.
        let width: Int
        /// At Unifont's height.
        let tall: Bool
    }

    var rows: Rows { Rows(paragraph: self) }

    func height(_ row: Row) -> Int { row.tall ? Unifont.height : lettering.font.height }
    /// From a row's top to the next one's.
    func pitch(_ row: Row) -> Int { height(row) + gap }

    /// Every row's pitch added up.
    var height: Int {
        var total = 0
        for r in rows { total += pitch(r) }
        return total
    }

    struct Rows: Sequence, IteratorProtocol {
        let paragraph: Paragraph
        var line = 0
        var cell = 0

        mutating func next() -> Row? {
            let p = paragraph
            guard line < p.lines.count else { return nil }
            let (row, rest) = p.row(line, from: cell)
            if let rest { cell = rest } else { line += 1; cell = 0 }
            return row
        }
    }

    /// The row of `lines[line]` that starts at cell `first`, and where the next one starts in
    /// the same line (nil: the line ends in this row). A row ends at its last space that fits,
    /// that space not drawn; a word wider than a row (Chinese has no spaces) is broken between
    /// two characters.
    func row(_ line: Int, from first: Int) -> (Row, next: Int?) {
        var k = 0, x = 0, tall = false
        var lastSpace: (k: Int, x: Int, tall: Bool)?
        for (scalar, shape) in lettering.shapes(lines[line]) {
            defer { k += 1 }
            if k < first { continue }
            let w = lettering.advance(shape)
            if w > 0 && x > 0 && x + w > width {
                if scalar == 0x20 { return (Row(line: line, first: first, count: k - first, width: x, tall: tall), k + 1) }
                if let s = lastSpace {
                    return (Row(line: line, first: first, count: s.k - first, width: s.x, tall: s.tall), s.k + 1)
                }
                return (Row(line: line, first: first, count: k - first, width: x, tall: tall), k)
            }
            if scalar == 0x20 && k > first { lastSpace = (k, x, tall) }
            x += w
            tall = tall || Lettering.isTall(shape)
        }
        return (Row(line: line, first: first, count: k - first, width: x, tall: tall), nil)
    }

    /// Draws the rows from `top` down, each at `left` or centred in `width` from it; only those
    /// with a pixel between `clipTop` and `clipBottom` (exclusive), the rest cost nothing but
    /// their layout.
    func draw(left: Int, top: Int, centred: Bool = false, clipTop: Int = .min, clipBottom: Int = .max,
              into fb: inout Framebuffer) {
        var y = top
        for r in rows {
            if y >= clipBottom { break }
            if y + height(r) > clipTop {
                let x = centred ? left + (width - r.width) / 2 : left
                fb.row(lines[r.line], lettering, first: r.first, count: r.count, tall: r.tall, x: x, y: y)
            }
            y += pitch(r)
        }
    }
}
