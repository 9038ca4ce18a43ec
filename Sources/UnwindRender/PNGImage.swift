import UnwindCore

/// Encodes a framebuffer as a PNG a person can open: lit pixels white on black, scaled up,
/// with a thin border like the panel's glass. Uncompressed deflate blocks keep the encoder
/// a page long; a 128x64 screenshot is still only ~140 KB at scale 4.
public enum PNGImage {
    public static func encode(_ fb: Framebuffer, scale: Int = 4, border: Int = 4) -> [UInt8] {
        let w = fb.width * scale + 2 * border
        let h = fb.height * scale + 2 * border
        var raw = [UInt8]()
        raw.reserveCapacity((w + 1) * h)
        for y in 0..<h {
            raw.append(0) // filter: none
            for x in 0..<w {
                let px = (x - border) / scale, py = (y - border) / scale
                let inside = x >= border && y >= border && px < fb.width && py < fb.height
                raw.append(inside ? (fb[px, py] ? 0xFF : 0x00) : 0x40)
            }
        }
        var out: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        var ihdr = [UInt8]()
        ihdr += be32(UInt32(w)) + be32(UInt32(h))
        ihdr += [8, 0, 0, 0, 0] // 8-bit greyscale, deflate, no filter, no interlace
        chunk("IHDR", ihdr, into: &out)
        chunk("IDAT", zlibStored(raw), into: &out)
        chunk("IEND", [], into: &out)
        return out
    }

    static func be32(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }

    static func chunk(_ type: String, _ data: [UInt8], into out: inout [UInt8]) {
        let t = Array(type.utf8)
        out += be32(UInt32(data.count))
        out += t
        out += data
        out += be32(crc32(t + data))
    }

    static func zlibStored(_ data: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [0x78, 0x01]
        var i = 0
        repeat {
            let n = min(65535, data.count - i)
            let final: UInt8 = i + n == data.count ? 1 : 0
            out.append(final)
            out += [UInt8(n & 0xFF), UInt8(n >> 8), UInt8(~n & 0xFF), UInt8((~n >> 8) & 0xFF)]
            out += data[i..<i + n]
            i += n
        } while i < data.count
        var a: UInt32 = 1, b: UInt32 = 0
        for byte in data {
            a = (a + UInt32(byte)) % 65521
            b = (b + a) % 65521
        }
        return out + be32(b << 16 | a)
    }

    static let crcTable: [UInt32] = (0..<256).map { n in
        var c = UInt32(n)
        for _ in 0..<8 { c = c & 1 != 0 ? 0xEDB88320 ^ (c >> 1) : c >> 1 }
        return c
    }

    static func crc32(_ data: [UInt8]) -> UInt32 {
        var c: UInt32 = 0xFFFF_FFFF
        for b in data { c = crcTable[Int((c ^ UInt32(b)) & 0xFF)] ^ (c >> 8) }
        return c ^ 0xFFFF_FFFF
    }
}
