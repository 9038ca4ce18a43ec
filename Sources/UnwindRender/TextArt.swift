import UnwindCore

/// Draws a framebuffer as text, framed: how the simulator and `unwind screen` show the OLED in a
/// terminal. Half blocks keep every pixel at two pixel rows a cell (130x34 with the frame);
/// braille packs 2x4 pixels a cell (66x18 with the frame), so the whole screen fits 80x24.
public enum TextArt {
    public enum Density: Sendable, Equatable {
        case halfBlocks
        case braille

        /// Text cells one frame takes, its border included.
        public func size(of fb: Framebuffer) -> (columns: Int, rows: Int) {
            switch self {
            case .halfBlocks: (fb.width + 2, (fb.height + 1) / 2 + 2)
            case .braille: ((fb.width + 1) / 2 + 2, (fb.height + 3) / 4 + 2)
            }
        }
    }

    public static func halfBlocks(_ fb: Framebuffer, into out: inout String) {
        draw(fb, .halfBlocks, into: &out)
    }

    public static func halfBlocks(_ fb: Framebuffer) -> String {
        var s = ""
        halfBlocks(fb, into: &s)
        return s
    }

    public static func braille(_ fb: Framebuffer) -> String {
        var s = ""
        draw(fb, .braille, into: &s)
        return s
    }

    /// One framed picture, each row ending in a line feed. `lineEnd` goes before every line
    /// feed (the simulator passes "erase to the end of the line").
    public static func draw(_ fb: Framebuffer, _ density: Density, lineEnd: String = "", into out: inout String) {
        let inner = density.size(of: fb).columns - 2
        border("┌", "┐", inner, lineEnd, into: &out)
        switch density {
        case .halfBlocks:
            var y = 0
            while y < fb.height {
                out += "│"
                for x in 0..<fb.width {
                    switch (pixel(fb, x, y), pixel(fb, x, y + 1)) {
                    case (true, true): out += "█"
                    case (true, false): out += "▀"
                    case (false, true): out += "▄"
                    case (false, false): out += " "
                    }
                }
                out += "│"
                out += lineEnd
                out += "\n"
                y += 2
            }
        case .braille:
            // Unicode's braille cell numbers its dots down the left column (1 2 3), down the
            // right (4 5 6), then the bottom row (7 8): hence the table, not a formula.
            let dot: [[UInt32]] = [[0x01, 0x08], [0x02, 0x10], [0x04, 0x20], [0x40, 0x80]]
            var y = 0
            while y < fb.height {
                out += "│"
                var x = 0
                while x < fb.width {
                    var bits: UInt32 = 0
                    for dy in 0..<4 {
                        for dx in 0..<2 where pixel(fb, x + dx, y + dy) { bits |= dot[dy][dx] }
                    }
                    out.unicodeScalars.append(Unicode.Scalar(0x2800 + bits)!)
                    x += 2
                }
                out += "│"
                out += lineEnd
                out += "\n"
                y += 4
            }
        }
        border("└", "┘", inner, lineEnd, into: &out)
    }

    static func pixel(_ fb: Framebuffer, _ x: Int, _ y: Int) -> Bool {
        x < fb.width && y < fb.height && fb[x, y]
    }

    static func border(_ left: String, _ right: String, _ inner: Int, _ lineEnd: String, into out: inout String) {
        out += left
        for _ in 0..<inner { out += "─" }
        out += right
        out += lineEnd
        out += "\n"
    }

    /// One frame as hex, page by page: the format of the simulator's `frames.log`.
    public static func hex(_ fb: Framebuffer) -> String { hex(fb.bytes) }

    /// Bytes as lower-case hex digits, two per byte (the simulator's logs).
    public static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        out.reserveCapacity(bytes.count * 2)
        for b in bytes {
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 0xF)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}

/// The OLED and the lines under it, fitted to a terminal of a given size: the densest picture
/// that leaves room for the lines that must be seen (the motor, the keys, where the state is),
/// then as many of the optional lines as fit. Pure: the caller measures the terminal.
public struct TerminalLayout: Sendable, Equatable {
    public var columns: Int
    public var rows: Int

    public init(columns: Int, rows: Int) {
        self.columns = columns
        self.rows = rows
    }

    public enum Choice: Sendable, Equatable {
        case picture(TextArt.Density)
        /// Too small for any picture: the size it must have at least.
        case tooSmall(columns: Int, rows: Int)
    }

    /// Half blocks when they fit beside `required` lines of at most `width`, else braille, else
    /// nothing. A 0x0 size (not a terminal, or one that does not say) gets half blocks.
    public func choose(for fb: Framebuffer, required: Int, width: Int) -> Choice {
        if columns <= 0 || rows <= 0 { return .picture(.halfBlocks) }
        for d in [TextArt.Density.halfBlocks, .braille] {
            let s = d.size(of: fb)
            if columns >= s.columns && rows >= s.rows + required { return .picture(d) }
        }
        let s = TextArt.Density.braille.size(of: fb)
        return .tooSmall(columns: max(s.columns, min(width, 80)), rows: s.rows + required)
    }

    /// The whole terminal's text, from the top left: the picture, then `required` lines, then
    /// `optional` lines while rows remain. Every line is cut to the terminal's width and ends
    /// with "erase to the end of the line"; the last one has no line feed, so the terminal never
    /// scrolls, and the rest of the screen is erased.
    public func compose(_ fb: Framebuffer, required: [String], optional: [String], into out: inout String) {
        out += "\u{1B}[H"
        let widest = required.reduce(0) { max($0, Self.visibleWidth($1)) }
        switch choose(for: fb, required: required.count, width: widest) {
        case .tooSmall(let c, let r):
            let message = "The terminal is \(columns)x\(rows); unwind needs at least \(c)x\(r) "
                + "(\(TextArt.Density.halfBlocks.size(of: fb).columns)x\(TextArt.Density.halfBlocks.size(of: fb).rows + required.count) "
                + "for the full-size picture). Enlarge the window or make the font smaller. q quits."
            var line = ""
            var used = 0
            // Words wrapped to the width, so the message is readable in any size.
            for word in message.split(separator: " ") {
                if used > 0 && used + 1 + word.count > max(1, columns) {
                    append(line, into: &out)
                    out += "\n"
                    line = ""
                    used = 0
                }
                if used > 0 { line += " "; used += 1 }
                line += word
                used += word.count
            }
            append(line, into: &out)
            out += "\u{1B}[J"
        case .picture(let d):
            TextArt.draw(fb, d, lineEnd: "\u{1B}[K", into: &out)
            let room = rows > 0 ? rows - d.size(of: fb).rows : Int.max
            let lines = required + optional.prefix(max(0, room - required.count))
            for (i, l) in lines.enumerated() {
                append(l, into: &out)
                if i < lines.count - 1 { out += "\n" }
            }
            out += "\u{1B}[J"
        }
    }

    func append(_ line: String, into out: inout String) {
        out += columns > 0 ? Self.cut(line, to: columns) : line
        out += "\u{1B}[K"
    }

    /// Characters a terminal shows for `s`: escape sequences (CSI … letter) take none.
    public static func visibleWidth(_ s: String) -> Int {
        var n = 0
        var inEscape = false
        for u in s.unicodeScalars {
            if inEscape {
                if (0x40...0x7E).contains(u.value) && u != "[" { inEscape = false }
            } else if u == "\u{1B}" {
                inEscape = true
            } else {
                n += 1
            }
        }
        return n
    }

    /// `s` cut to `width` visible characters, its escape sequences kept.
    public static func cut(_ s: String, to width: Int) -> String {
        if visibleWidth(s) <= width { return s }
        var out = String.UnicodeScalarView()
        var n = 0
        var inEscape = false
        for u in s.unicodeScalars {
            if inEscape {
                out.append(u)
                if (0x40...0x7E).contains(u.value) && u != "[" { inEscape = false }
            } else if u == "\u{1B}" {
                inEscape = true
                out.append(u)
            } else if n < width - 1 {
                out.append(u)
                n += 1
            } else if n == width - 1 {
                out.append("…")
                n += 1
            }
        }
        return String(out) + "\u{1B}[0m"
    }
}
