import Foundation
import Testing
@testable import UnwindRender
import UnwindCore

/// The generated glyph tables: what they claim is drawable, and how letters outside them fall back.
@Suite struct FontCoverageTests {
    static let fonts: [BitmapFont] = [.small, .regular, .large]

    func rows(_ font: BitmapFont, glyph: Int) -> [UInt16] { (0..<font.height).map { font.row(glyph, $0) } }

    @Test func cyrillicLettersWithoutALatinTwinHaveTheirOwnGlyphs() {
        // Л, Ж, Ю have no Latin twin: their glyphs must be their own.
        for font in Self.fonts {
            for (cyrillic, latin) in [(0x041B, 0x4C), (0x0416, 0x58), (0x042E, 0x49)] as [(UInt32, UInt32)] {
                #expect(rows(font, glyph: font.glyph(cyrillic)!) != rows(font, glyph: font.glyph(latin)!))
            }
        }
    }

    @Test func aLetterTheSmallFontLacksIsDrawnAsItsBaseLetter() throws {
        // 4x6 has no 'ễ' (U+1EC5); its decomposition leads to 'ê', which it has. 10x20 has its own.
        let small = BitmapFont.small
        #expect(small.glyph(0x1EC5) == small.glyph(0xEA))
        #expect(BitmapFont.large.glyph(0x1EC5) != BitmapFont.large.glyph(0xEA))
        let large = BitmapFont.large, own = try #require(large.glyph(0x1EC5))
        #expect(own >= 0 && own + large.height <= large.rows.count, "10x20's 'ễ' lies inside its glyph table")
    }

    @Test func aNameSavedDecomposedLooksLikeOneSavedComposed() {
        for font in Self.fonts {
            for name in ["Zoë", "Марийка", "Γιάννης", "Nguyễn", "López", "Łukasz"] {
                let nfd = name.decomposedStringWithCanonicalMapping, nfc = name.precomposedStringWithCanonicalMapping
                #expect(nfd.unicodeScalars.count > nfc.unicodeScalars.count || name == "Łukasz")
                var a = Framebuffer(), b = Framebuffer()
                a.text(nfd, font: font, x: 0, y: 0)
                b.text(nfc, font: font, x: 0, y: 0)
                #expect(a == b, "\(nfc) in \(font.name)")
                #expect(font.textWidth(nfd) == font.textWidth(nfc))
            }
        }
    }

    @Test func everyCodePointTheTablesHoldIsDrawable() {
        for font in Self.fonts {
            let question = rows(font, glyph: font.glyph(0x3F)!)
            #expect(font.runs[0].first == 0x20 && font.runs[0].count == 95)
            var previousEnd: UInt32 = 0
            for run in font.runs {
                #expect(run.first >= previousEnd, "runs overlap or are out of order in \(font.name)")
                previousEnd = run.first + run.count
                #expect(Int(run.glyph + run.count) * font.height <= font.rows.count)
                for cp in run.first..<(run.first + run.count) {
                    let g = font.glyph(cp)
                    #expect(g == Int(run.glyph + cp - run.first) * font.height)
                    guard let g, let scalar = Unicode.Scalar(cp) else { continue }
                    if scalar.properties.isWhitespace { continue }
                    #expect(rows(font, glyph: g).contains { $0 != 0 }, "U+\(String(cp, radix: 16)) is blank in \(font.name)")
                    if cp != 0x3F {
                        #expect(rows(font, glyph: g) != question, "U+\(String(cp, radix: 16)) is '?' in \(font.name)")
                    }
                    // Ink stays inside the cell.
                    #expect(rows(font, glyph: g).allSatisfy { $0 & ~(UInt16.max << UInt16(16 - font.width)) == 0 })
                }
            }
        }
    }

    @Test func theCodePointsEachFileHeaderClaimsHaveGlyphs() throws {
        let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../Sources/UnwindRender/Fonts").standardized
        for (file, font) in [("Font4x6.swift", BitmapFont.small), ("Font6x10.swift", .regular), ("Font10x20.swift", .large)] {
            let text = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
            let line = try #require(text.split(separator: "\n").first { $0.hasPrefix("// Glyphs for: ") })
            var claimed = 0
            for span in line.dropFirst("// Glyphs for: ".count).dropLast().split(separator: ", ") {
                let ends = span.split(separator: "...").map { UInt32($0.dropFirst(2), radix: 16) }
                let first = try #require(ends.first ?? nil), last = try #require(ends.last ?? nil)
                for cp in first...last {
                    #expect(font.contains(cp), "\(file) claims U+\(String(cp, radix: 16))")
                    claimed += 1
                }
            }
            #expect(claimed * font.height == font.rows.count, "\(file): every glyph stored is claimed")
        }
    }

    @Test func everySizeDrawsEveryCharacterAnSMSInGSM7Carries() throws {
        // The default alphabet and the extension table (€ [ ] { } \ ~ ^ |), less line breaks,
        // the form feed and the escape: what a contact's plain SMS reply can hold.
        let printable = (GSM7.defaultAlphabet + GSM7.extensionTable.map(\.scalar)).filter { $0 >= 0x20 && $0 != 0xFFFF }
        #expect(printable.count == 134)
        for font in Self.fonts {
            let question = rows(font, glyph: font.glyph(0x3F)!)
            for cp in printable {
                let g = try #require(font.glyph(cp), "U+\(String(cp, radix: 16)) in \(font.name)")
                if cp != 0x3F { #expect(rows(font, glyph: g) != question, "U+\(String(cp, radix: 16)) in \(font.name)") }
                if cp != 0x20 { #expect(rows(font, glyph: g).contains { $0 != 0 }, "U+\(String(cp, radix: 16)) in \(font.name)") }
            }
        }
    }

    @Test func everySizeCoversTheScriptsNamesAreWrittenIn() {
        let required: [ClosedRange<UInt32>] = [
            0x0020...0x007E, 0x00A0...0x017F,             // Latin-1, Latin Extended-A
            0x0218...0x021B,                              // Romanian ș ț
            0x0386...0x0386, 0x0388...0x038A, 0x038C...0x038C, 0x038E...0x03A1, 0x03A3...0x03CE, // Greek
            0x0400...0x045F, 0x0490...0x0491,             // Cyrillic, Ukrainian Ґ
            0x2019...0x2019, 0x201C...0x201D,             // ’ “ ”
        ]
        for font in Self.fonts {
            for range in required {
                for cp in range { #expect(font.contains(cp), "U+\(String(cp, radix: 16)) in \(font.name)") }
            }
            // Controls and what no font here has.
            for cp: UInt32 in [0x00, 0x7F, 0x85, 0x9F, 0x0301, 0x4E00, 0x1F469, 0x10FFFF] {
                #expect(!font.contains(cp))
            }
        }
    }
}
