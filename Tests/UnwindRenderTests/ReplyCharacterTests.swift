import Foundation
import Testing
@testable import UnwindCore
@testable import UnwindRender

/// Debian's Unifont, as the device reads it (deploy/dev-deps.sh installs the package).
let debianUnifont: Unifont? = {
    guard let data = FileManager.default.contents(atPath: Unifont.debianPath) else { return nil }
    return try? Unifont(hex: [UInt8](data))
}()

/// A contact's reply is the person's reassurance: every character of it reaches the screen, in
/// whatever script or emoji it was written, as `unwind status` holds it. Never a '?'.
@Suite struct ReplyCharacterTests {
    static let unifont = Fonts(unifont: debianUnifont)

    /// The alert status screen with `text` as Mum's reply, shown since 6 s.
    func statusScreen(_ text: String, fonts: Fonts, at seconds: Double = 7) throws -> Framebuffer {
        var settings = DeviceSettings()
        settings.screen.pixelShiftPeriod = nil
        var core = DeviceCore(settings: settings)
        core.alertSlotsChanged([.ready(try AlertSlot(name: "Mum", number: "+17785551234", message: "Please call"))])
        var effects: [Effect] = []
        core.apply(.button(.down(.panic)), at: Moment(.zero), effects: &effects)
        core.apply(.tick, at: Moment(.seconds(1.5)), effects: &effects)
        core.apply(.replyReceived(IncomingReply(id: "a", from: "+17785551234", text: text)), at: Moment(.seconds(6)), effects: &effects)
        var fb = Framebuffer()
        Screen.render(core.state, at: .seconds(seconds), fonts: fonts, into: &fb)
        return fb
    }

    /// Where the reply's text goes.
    func replyBox(_ fb: Framebuffer) -> [String] {
        fb.ascii(x: 0, y: PanicScreen.replyTop, width: fb.width, height: PanicScreen.replyBottom - PanicScreen.replyTop)
    }

    /// `glyph`'s 16 rows as drawn at (x, y).
    func unifontGlyph(_ scalar: UInt32, in fb: Framebuffer, x: Int, y: Int) throws -> [UInt16] {
        let u = try #require(debianUnifont)
        let g = try #require(u.glyph(scalar))
        let w = u.width(g)
        return (0..<16).map { (r: Int) -> UInt16 in
            var bits: UInt16 = 0
            for c in 0..<w where fb[x + c, y + r] { bits |= UInt16(0x8000) >> UInt16(c) }
            return bits
        }
    }

    func rows(_ scalar: UInt32) throws -> [UInt16] {
        let u = try #require(debianUnifont)
        let g = try #require(u.glyph(scalar))
        return (0..<16).map { u.row(g, $0) }
    }

    @Test func theEuroSignAndEveryGSM7CharacterAreDrawnInTheReplysOwnFont() throws {
        let text = "Sent 20€ [taxi] {ok} ~5 min ^^ a|b \\o/ ΔΦΓΛΩΠΨΣΘΞ"
        let fb = try statusScreen(text, fonts: .builtIn)
        var expected = Framebuffer()
        for (i, line) in HelpLibrary.wrap(text, columns: ContactReply.columns).enumerated() {
            expected.text(line, font: .small, x: 1, y: PanicScreen.replyTop + i * 7)
        }
        #expect(replyBox(fb) == replyBox(expected))
        // The cell after "Sent 20" is the euro sign's glyph, not a box.
        let euro = try #require(BitmapFont.small.glyph(0x20AC))
        for r in 0..<6 {
            var bits: UInt16 = 0
            for c in 0..<4 where fb[1 + 7 * 4 + c, PanicScreen.replyTop + r] { bits |= UInt16(0x8000) >> UInt16(c) }
            #expect(bits == BitmapFont.small.row(euro, r))
        }
    }

    @Test func aChineseReplyIsDrawnWithUnifontsGlyphs() throws {
        let fb = try statusScreen("你好，我马上到", fonts: Self.unifont)
        // A tall row: seven 16-pixel characters from x = 1; the next would pass the edge.
        let scalars: [UInt32] = [0x4F60, 0x597D, 0xFF0C, 0x6211, 0x9A6C, 0x4E0A, 0x5230]
        for (k, scalar) in scalars.enumerated() {
            #expect(try unifontGlyph(scalar, in: fb, x: 1 + 16 * k, y: PanicScreen.replyTop) == rows(scalar))
        }
        // Nothing else is drawn in the box: its pixels are the seven glyphs' own.
        var glyphPixels = 0
        for scalar in scalars { glyphPixels += try rows(scalar).map(\.nonzeroBitCount).reduce(0, +) }
        #expect(replyBox(fb).joined().filter { $0 == "#" }.count == glyphPixels)
        // The picture is Unifont 15.0's (Debian 12); a newer Unifont redraws some glyphs (16.0 the
        // fullwidth comma), and then the checks above are the whole test.
        if try scalars.enumerated().allSatisfy({ k, scalar in try Self.pictureRows(Self.chineseReply, x: 1 + 16 * k) == rows(scalar) }) {
            #expect(replyBox(fb) == Self.chineseReply, "\(replyBox(fb).joined(separator: "\n"))")
        }
    }

    /// A 16-pixel glyph's rows as a pinned picture holds them at `x`.
    static func pictureRows(_ picture: [String], x: Int) -> [UInt16] {
        picture.prefix(16).map { (line: String) -> UInt16 in
            var bits: UInt16 = 0
            for (c, ch) in line.dropFirst(x).prefix(16).enumerated() where ch == "#" { bits |= UInt16(0x8000) >> UInt16(c) }
            return bits
        }
    }

    @Test func aReplyTooLongForTheBoxScrollsDownAndBack() throws {
        // 29 characters: five rows of at most seven (a row is 127 pixels), 17 pixels apart, in a
        // box of 28: 57 pixels to travel, at 6 a second, after 3 s at the top.
        let text = "别担心，我已经在路上了，十分钟就到。先慢慢呼吸，我们一起。"
        let overflow = 5 * 17 - (PanicScreen.replyBottom - PanicScreen.replyTop)
        let first = try statusScreen(text, fonts: Self.unifont, at: 7)
        #expect(try unifontGlyph(0x522B, in: first, x: 1, y: PanicScreen.replyTop) == rows(0x522B))   // 别
        let end = try statusScreen(text, fonts: Self.unifont, at: 6 + 3 + Double(overflow) / 6 + 1)
        #expect(try unifontGlyph(0x3002, in: end, x: 1, y: PanicScreen.replyTop - overflow + 4 * 17) == rows(0x3002))   // 。
        // And back at the start once it has scrolled back.
        let back = try statusScreen(text, fonts: Self.unifont, at: 6 + 2 * 3 + 2 * Double(overflow) / 6 + 1)
        #expect(replyBox(back) == replyBox(first))
        #expect(replyBox(end) != replyBox(first))
    }

    @Test func emojiAreDrawnAsPicturesAndTheirSelectorsAndJoinersAsNothing() throws {
        let plain = try statusScreen("On my way 👍", fonts: .builtIn)
        // Variation selectors, skin tones and a family joined by ZWJs draw as their first emoji alone.
        #expect(replyBox(try statusScreen("On my way 👍🏽\u{FE0F}", fonts: .builtIn)) == replyBox(plain))
        #expect(replyBox(try statusScreen("On my way 👍\u{200D}👍\u{200D}👍", fonts: .builtIn)) == replyBox(plain))
        #expect(replyBox(plain) == Self.thumbsUpReply, "\(replyBox(plain).joined(separator: "\n"))")
        // Without Unifont ❤️ is the heart picture; with it, Unifont's heart.
        let heart = try statusScreen("❤️", fonts: .builtIn)
        #expect(heart.ascii(x: 1, y: PanicScreen.replyTop, width: 16, height: 16) == EmojiPictures.art[EmojiPictures.heart])
        let unifontHeart = try statusScreen("❤️", fonts: Self.unifont)
        #expect(try unifontGlyph(0x2764, in: unifontHeart, x: 1, y: PanicScreen.replyTop) == rows(0x2764))
    }

    @Test(arguments: [("🙏", EmojiPictures.foldedHands), ("😊", EmojiPictures.smile), ("🙂", EmojiPictures.smile),
                      ("😘", EmojiPictures.kiss), ("😢", EmojiPictures.tears), ("🤗", EmojiPictures.hug),
                      ("💪", EmojiPictures.muscle), ("💕", EmojiPictures.twoHearts), ("💙", EmojiPictures.heart)])
    func theCommonestEmojiHaveTheirPicture(_ emoji: String, _ picture: Int) throws {
        let fb = try statusScreen(emoji, fonts: Self.unifont)
        #expect(fb.ascii(x: 1, y: PanicScreen.replyTop, width: 16, height: 16) == EmojiPictures.art[picture])
    }

    @Test func whatNothingCanDrawIsABoxNeverAQuestionMark() throws {
        // No Unifont: Chinese is two boxes; a flag (two regional indicators) is one.
        let fb = try statusScreen("你好 🇬🇧 🦄", fonts: .builtIn)
        var expected = Framebuffer()
        for x in [1, 5, 13, 21] { expected.standInBox(font: .small, x: x, y: PanicScreen.replyTop) }
        #expect(replyBox(fb) == replyBox(expected))
        var question = Framebuffer()
        question.text("?", font: .small, x: 1, y: PanicScreen.replyTop)
        #expect(fb.ascii(x: 1, y: PanicScreen.replyTop, width: 4, height: 6) != question.ascii(x: 1, y: PanicScreen.replyTop, width: 4, height: 6))
        // The device's own text too: a character its font lacks is a box.
        var own = Framebuffer()
        own.text("\u{4E00}", font: .regular, x: 0, y: 0)
        var box = Framebuffer()
        box.standInBox(font: .regular, x: 0, y: 0)
        #expect(own == box)
    }

    @Test func aMixedReplyLaysOutTallAndShortRows() throws {
        let fb = try statusScreen("OK 你好 € 👍 I'll be there soon, breathe with me", fonts: Self.unifont)
        #expect(replyBox(fb) == Self.mixedReply, "\(replyBox(fb).joined(separator: "\n"))")
    }

    @Test func aChineseMantraIsDrawnCentredInTallRows() throws {
        var state = DeviceCore().state
        state.page = .affirmations
        state.mantras = MantraList(["我很安全。一切都会好起来。"])
        var fb = Framebuffer()
        Screen.render(state, at: .seconds(1), fonts: Self.unifont, into: &fb)
        // 13 characters: 8 on the first row (128 pixels), 5 centred on the second; two rows of 18
        // pixels fill the box's 36.
        let top = MantraView.top + 1
        #expect(try unifontGlyph(0x6211, in: fb, x: 0, y: top) == rows(0x6211))                     // 我
        #expect(try unifontGlyph(0x4F1A, in: fb, x: (128 - 5 * 16) / 2, y: top + 18) == rows(0x4F1A))  // 会
    }
}

/// The reply boxes pinned: rows of `#` (lit) and `.` (dark), 128 wide, 28 high.
extension ReplyCharacterTests {
    static let chineseReply: [String] = [
        ".....#...#..........#.................................#...#............................#......................#.................",
        ".....#...#..........#....######......................###..#.#.....##########...........#.........#########....#.................",
        ".....#...#..........#.........#...................####....#..#.............#...........#.............#........#.................",
        "....#...########....#........#.......................#....#..#.............#...........#............#......#..#.................",
        "....#...#......#.######.....#........................#....#.........#......#...........#...........#...#...#..#.................",
        "...##..#......#....#..#....#.....................###############....#......#...........#..........#.....#..#..#.................",
        "...##.#....#.......#..#....#.........................#....#.........#......#...........#######...#########.#..#.................",
        "..#.#......#.......#..#.########.....................#....#...#.....###########........#.............#...#.#..#.................",
        ".#..#...#..#.#.....#..#....#.........................#.#..#...#...............#........#.............#.....#..#.................",
        "....#...#..#..#...#..#.....#.........................##...#..#................#........#.............#.....#..#.................",
        "....#..#...#..#....#.#.....#........................##.....##.................#........#..........#######..#..#.................",
        "....#..#...#...#....#......#......................##.#.....#...#.###########..#........#.............#.....#..#.................",
        "....#.#....#...#...#.#.....#...........####..........#....#.#..#..............#........#.............#........#.................",
        "....#......#......#...#....#.............##..........#...#...#.#..............#........#.............#####....#.................",
        "....#....#.#.....#....#..#.#.............##........#.#.##.....##...........#.#...###############.#####......#.#.................",
        "....#.....#...............#............##...........#..........#............#.....................#..........#..................",
        "................................................................................................................................",
        "................................................................................................................................",
        "................................................................................................................................",
        "................................................................................................................................",
        "................................................................................................................................",
        "................................................................................................................................",
        "................................................................................................................................",
        "................................................................................................................................",
        "................................................................................................................................",
        "................................................................................................................................",
        "................................................................................................................................",
        "................................................................................................................................",
    ]

    static let mixedReply: [String] = [
        ".................#...#..........#...............................................................................................",
        ".................#...#..........#....######.....................##..............................................................",
        ".................#...#..........#.........#....................#..#.............................................................",
        "................#...########....#........#.....................#..#.............................................................",
        "................#...#......#.######.....#.....................#...#.............................................................",
        "...............##..#......#....#..#....#.....................#....#####.........................................................",
        "...............##.#....#.......#..#....#.................###.#.........#........................................................",
        "..............#.#......#.......#..#.########.............#.#.#.....####.........................................................",
        ".............#..#...#..#.#.....#..#....#.................#.#.#.........#........................................................",
        "..#..#.#........#...#..#..#...#..#.....#...........#.....#.#.#.....####......###..#..##..##......#..............................",
        ".#.#.#.#........#..#...#..#....#.#.....#..........#......#.#.#.........#......#...#...#...#......##...#.........................",
        ".#.#.##.........#..#...#...#....#......#.........###.....#.#.#.....####.......#.......#...#......#.#.#.#........................",
        ".#.#.#.#........#.#....#...#...#.#.....#..........#......###..#.......#.......#.......#...#......#.#.##.........................",
        "..#..#.#........#......#......#...#....#...........#...........#######.......###.....###.###.....##...##........................",
        "................#....#.#.....#....#..#.#........................................................................................",
        "................#.....#...............#.........................................................................................",
        "................................................................................................................................",
        "..#..#..........................................................................................................................",
        ".###.##...#..#.#..#.......##..#...#..##.........................................................................................",
        "..#..#.#.#.#.##..#.#.....##..#.#.#.#.#.#........................................................................................",
        "..#..#.#.##..#...##........#.#.#.#.#.#.#........................................................................................",
        "...#.#.#..##.#....##.....##...#...#..#.#..#.....................................................................................",
        ".........................................#......................................................................................",
        "................................................................................................................................",
        ".#................#..#................#...#..#..................................................................................",
        ".##..#.#..#...##.###.##...#......#.#.....###.##......#.#..#.....................................................................",
        ".#.#.##..#.#.#.#..#..#.#.#.#.....#.#.##...#..#.#.....###.#.#....................................................................",
        ".#.#.#...##..#.#..#..#.#.##......###..#...#..#.#.....#.#.##.....................................................................",
    ]

    static let thumbsUpReply: [String] = [
        "................................................................................................................................",
        "................................................##..............................................................................",
        "...............................................#..#.............................................................................",
        "...............................................#..#.............................................................................",
        "..............................................#...#.............................................................................",
        ".............................................#....#####.........................................................................",
        ".........................................###.#.........#........................................................................",
        ".........................................#.#.#.....####.........................................................................",
        ".........................................#.#.#.........#........................................................................",
        "..#......................................#.#.#.....####.........................................................................",
        ".#.#.##......#.#.#.#.....#.#..##.#.#.....#.#.#.........#........................................................................",
        ".#.#.#.#.....###.#.#.....#.#.#.#.#.#.....#.#.#.....####.........................................................................",
        ".#.#.#.#.....#.#..##.....###.#.#..##.....###..#.......#.........................................................................",
        "..#..#.#.....#.#...#.....#.#..##...#...........#######..........................................................................",
        ".................##..............##.............................................................................................",
        "................................................................................................................................",
        "................................................................................................................................",
        "................................................................................................................................",
        "................................................................................................................................",
        "................................................................................................................................",
        "................................................................................................................................",
        "................................................................................................................................",
        "................................................................................................................................",
        "................................................................................................................................",
        "................................................................................................................................",
        "................................................................................................................................",
        "................................................................................................................................",
        "................................................................................................................................",
    ]
}
