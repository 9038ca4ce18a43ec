import Testing
@testable import UnwindRender

/// Unifont's `.hex` format as the device reads it: every glyph the file holds, and a damaged
/// file refused with the line it is damaged on, never half-read.
@Suite struct UnifontHexTests {
    static let narrowA = "0041:0000000018242442427E424242420000"
    static let wideOne = "4E00:" + String(repeating: "0", count: 20) + "FFFE" + String(repeating: "0", count: 40)

    func parse(_ text: String) throws(Unifont.Problem) -> Unifont { try Unifont(hex: Array(text.utf8)) }

    @Test func narrowAndWideGlyphsAreRead() throws {
        for text in [Self.narrowA + "\n" + Self.wideOne + "\n", Self.narrowA + "\r\n" + Self.wideOne, Self.narrowA + "\n" + Self.wideOne] {
            let u = try parse(text)
            #expect(u.count == 2)
            let a = try #require(u.glyph(0x41)), one = try #require(u.glyph(0x4E00))
            #expect(u.width(a) == 8 && u.width(one) == 16)
            #expect((0..<16).map { u.row(a, $0) } == [0, 0, 0, 0, 0x1800, 0x2400, 0x2400, 0x4200, 0x4200, 0x7E00, 0x4200, 0x4200, 0x4200, 0x4200, 0, 0])
            #expect(u.row(one, 5) == 0xFFFE)
            #expect(u.glyph(0x42) == nil && u.glyph(0x10FFFF) == nil)
        }
    }

    @Test func aSixDigitCodePointAndLowerCaseHexAreRead() throws {
        let u = try parse("1F600:" + String(repeating: "ff", count: 16) + "\n")
        #expect(u.glyph(0x1F600) == 0 && u.row(0, 15) == 0xFF00)
    }

    @Test(arguments: [
        ("", "it holds no glyph"),
        ("\n", "line 1: an empty line"),
        ("0041:0000000018242442427E4242424200\n", "line 1: the bitmap has 30 hex digits; a glyph has 32 (8x16) or 64 (16x16)"),
        (narrowA + "\n" + "4E00:00000000000000000000FFFE00000000000000", "line 2: the bitmap has 38 hex digits; a glyph has 32 (8x16) or 64 (16x16)"),
        ("0041:0000000018242442427E42424242000G\n", "line 1: the bitmap holds a character that is not a hex digit"),
        ("041:0000000018242442427E424242420000\n", "line 1: the code point is not 4 to 6 hex digits before ':'"),
        ("0000041:0000000018242442427E424242420000\n", "line 1: the code point is not 4 to 6 hex digits before ':'"),
        ("0041 0000000018242442427E424242420000\n", "line 1: the code point is not 4 to 6 hex digits before ':'"),
        ("0041\n", "line 1: the code point is not 4 to 6 hex digits before ':'"),
        ("D800:0000000018242442427E424242420000\n", "line 1: U+D800 is not a Unicode scalar"),
        ("110000:0000000018242442427E424242420000\n", "line 1: U+110000 is not a Unicode scalar"),
        (wideOne + "\n" + narrowA + "\n", "line 2: U+41 comes after U+4E00: the glyphs are not in ascending order"),
        (narrowA + "\n" + narrowA + "\n", "line 2: U+41 comes after U+41: the glyphs are not in ascending order"),
    ])
    func aDamagedFileIsRefusedWithTheLineItIsDamagedOn(_ text: String, _ said: String) {
        #expect(throws: Unifont.Problem.self) { try parse(text) }
        do { _ = try parse(text) } catch { #expect(error.description == said) }
    }

    @Test func debiansFileIsReadWhole() throws {
        let u = try #require(debianUnifont, "deploy/dev-deps.sh installs Debian's unifont package")
        #expect(u.count > 50_000)
        for (scalar, width) in [(0x41, 8), (0x20AC, 8), (0x4F60, 16), (0x05D0, 8), (0x0627, 8), (0x0E01, 8), (0x0915, 16), (0xAC00, 16)] as [(UInt32, Int)] {
            let g = try #require(u.glyph(scalar), "U+\(String(scalar, radix: 16))")
            #expect(u.width(g) == width, "U+\(String(scalar, radix: 16))")
        }
        // Plane 0 only: the emoji of plane 1 are not in it (the pictures stand in for the commonest).
        #expect(u.glyph(0x1F44D) == nil)
    }
}
