/// Draws a framebuffer with Unicode half blocks, two pixel rows per text row, framed: how the
/// simulator and `unwind screen` show the OLED in a terminal.
public enum TextArt {
    public static func halfBlocks(_ fb: Framebuffer, into out: inout String) {
        out += "┌" + String(repeating: "─", count: fb.width) + "┐\n"
        var y = 0
        while y < fb.height {
            out += "│"
            for x in 0..<fb.width {
                switch (fb[x, y], fb[x, y + 1]) {
                case (true, true): out += "█"
                case (true, false): out += "▀"
                case (false, true): out += "▄"
                case (false, false): out += " "
                }
            }
            out += "│\n"
            y += 2
        }
        out += "└" + String(repeating: "─", count: fb.width) + "┘\n"
    }

    public static func halfBlocks(_ fb: Framebuffer) -> String {
        var s = ""
        halfBlocks(fb, into: &s)
        return s
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
