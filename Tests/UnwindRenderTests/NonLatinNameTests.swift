import Foundation
import Testing
@testable import UnwindCore
@testable import UnwindRender

/// Names in other scripts are drawn, and a name that cannot be drawn is
/// replaced by something that still says whose it is.
@Suite struct NonLatinNameTests {
    static let fonts: [BitmapFont] = [.small, .regular, .large]

    func alert(_ name: String, _ number: String) throws -> AlertSlot {
        try AlertSlot(name: name, number: number, message: "Please call me")
    }

    /// The panic page's slot list with `alerts` in slots 1, 2, …
    func panicPage(_ alerts: [AlertSlot]) -> Framebuffer {
        var state = DeviceCore().state
        state.page = .panic
        var slots = alerts.map { AlertSlotState.ready($0) }
        while slots.count < PanicState.slotCount { slots.append(.empty) }
        state.panic.slots = slots
        state.panic.selection = PanicState.slotCount   // no slot row inverted
        var fb = Framebuffer()
        Screen.render(state, at: .seconds(1), into: &fb)
        return fb
    }

    /// The alert status screen after sending `alerts` from slots 1, 2, …
    func statusScreen(_ alerts: [AlertSlot], delivery: AlertDelivery = .failed("no service")) -> Framebuffer {
        var state = DeviceCore().state
        state.overlay = .alertStatus
        state.panic.progress = alerts.enumerated().map {
            AlertProgress(slot: $0.offset, name: $0.element.name, number: $0.element.number, delivery: delivery)
        }
        var fb = Framebuffer()
        Screen.render(state, at: .seconds(1), into: &fb)
        return fb
    }

    /// Status screen row `row`: where the name goes, left of the delivery word.
    func statusName(_ fb: Framebuffer, row: Int) -> [Bool] {
        region(fb, x: 0, y: 20 + row * 7, width: PanicScreen.statusX, height: 6)
    }

    func region(_ fb: Framebuffer, x: Int, y: Int, width: Int, height: Int) -> [Bool] {
        var out: [Bool] = []
        for yy in y..<(y + height) { for xx in x..<(x + width) { out.append(fb[xx, yy]) } }
        return out
    }

    /// What `text` looks like at the status screen's name position of row `row`.
    func expectedStatusName(_ text: String, row: Int) -> [Bool] {
        var fb = Framebuffer()
        fb.text(text, font: .small, x: 1, y: 20 + row * 7, maxCharacters: 21)
        return statusName(fb, row: row)
    }

    func rows(_ font: BitmapFont, glyph: Int) -> [UInt16] { (0..<font.height).map { font.row(glyph, $0) } }

    // MARK: Names in other scripts are drawn

    @Test(arguments: ["Мама", "Γιάννης", "Łukasz", "Đorđe", "Ștefan", "Ольга Іванівна", "Ґанна", "Nguyễn Thị Hương"])
    func aNameInLatinGreekOrCyrillicIsDrawnWithRealGlyphs(_ name: String) throws {
        for font in Self.fonts {
            #expect(ContactName.isDrawable(name, font: font), "\(name) in \(font.name)")
            let question = rows(font, glyph: font.glyph(0x3F)!)
            for cell in font.cells(name) {
                let g = try #require(cell.glyph, "U+\(String(cell.scalar, radix: 16)) in \(font.name)")
                #expect(rows(font, glyph: g) != question, "U+\(String(cell.scalar, radix: 16)) drawn as '?' in \(font.name)")
            }
        }
        // On the screens: the name itself, exactly as the text renderer draws it.
        let a = try alert(name, "+447700900123")
        #expect(statusName(statusScreen([a]), row: 0) == expectedStatusName(name, row: 0))
        var expected = Framebuffer()
        expected.text(name, font: .small, x: 8, y: 11, maxCharacters: 21)
        #expect(region(panicPage([a]), x: 8, y: 11, width: 84, height: 6) == region(expected, x: 8, y: 11, width: 84, height: 6))
    }

    @Test func aNameSavedDecomposedIsDrawnNotReplaced() throws {
        let nfd = "Марийка".decomposedStringWithCanonicalMapping
        #expect(ContactName.isDrawable(nfd, font: .small))
        let fb = statusScreen([try alert(nfd, "+79161234567")])
        #expect(statusName(fb, row: 0) == expectedStatusName("Марийка".precomposedStringWithCanonicalMapping, row: 0))
    }

    // MARK: Names that cannot be drawn

    @Test(arguments: ["👩", "王芳", "Anna ❤️", "محمد"])
    func aNameThatCannotBeDrawnShowsTheSlotAndTheLastDigits(_ name: String) throws {
        #expect(!ContactName.isDrawable(name, font: .small))
        let fb = statusScreen([try alert("Dad", "+16045550001"), try alert(name, "+16045554567")])
        #expect(statusName(fb, row: 1) == expectedStatusName("Slot 2 ..4567", row: 1))
        #expect(statusName(fb, row: 0) == expectedStatusName("Dad", row: 0))

        var expected = Framebuffer()
        expected.text("Slot 2 ..4567", font: .small, x: 8, y: 19)
        #expect(region(panicPage([try alert("Dad", "+16045550001"), try alert(name, "+16045554567")]),
                       x: 8, y: 19, width: 84, height: 6) == region(expected, x: 8, y: 19, width: 84, height: 6))
    }

    @Test func twoContactsWithUndrawableNamesRemainDistinguishable() throws {
        // Same name, and even the same number in two slots: the slot still tells them apart.
        let a = try alert("👩", "+16045554567"), b = try alert("王芳", "+8613800004567"), c = try alert("👩", "+16045554567")
        let fb = statusScreen([a, b, c])
        let rows = (0..<3).map { statusName(fb, row: $0) }
        #expect(rows[0] != rows[1] && rows[1] != rows[2] && rows[0] != rows[2])
        #expect(rows[2] == expectedStatusName("Slot 3 ..4567", row: 2))
        // Different numbers in the same slot across two sends read differently too.
        let d = statusScreen([try alert("👩", "+16045559876")])
        #expect(statusName(d, row: 0) != rows[0])
    }

    @Test func aShortNumberIsShownWhole() throws {
        let fb = statusScreen([try alert("🚑", "911")])
        #expect(statusName(fb, row: 0) == expectedStatusName("Slot 1 911", row: 0))
        #expect(ContactName.width("🚑", of: .slot(0, try PhoneNumber("911")), font: .small) == 10 * 4)
    }

    @Test func onlyWhatFitsDecides() throws {
        // The emoji falls past the 21 cells shown: the name's start is still the best label.
        let long = "Anna Kowalska sister 👩"
        #expect(ContactName.isDrawable(long, font: .small, maxCharacters: 21))
        #expect(!ContactName.isDrawable(long, font: .small))
        let fb = statusScreen([try alert(long, "+48600100200")])
        #expect(statusName(fb, row: 0) == expectedStatusName(long, row: 0))
    }

    @Test func theCounsellingLineFallsBackToItsOwnLabel() throws {
        var state = DeviceCore().state
        state.page = .panic
        state.panic.counselling = try CounsellingLine(name: "心理咨询", displayNumber: "(778) 782-4615",
                                                      dialNumber: PhoneNumber("+17787824615"))
        var fb = Framebuffer()
        Screen.render(state, at: .seconds(1), into: &fb)
        var expected = Framebuffer()
        let x = expected.text("Counselling", font: .small, x: 1, y: 52)
        expected.text("(778) 782-4615", font: .small, x: x + 4, y: 52)
        #expect(region(fb, x: 0, y: 52, width: 128, height: 6) == region(expected, x: 0, y: 52, width: 128, height: 6))

        state.overlay = .counsellingCode
        var big = Framebuffer()
        Screen.render(state, at: .seconds(1), into: &big)
        var title = Framebuffer()
        title.text("Counselling", font: .regular, x: (128 - 11 * 6) / 2, y: 16)
        #expect(region(big, x: 0, y: 16, width: 128, height: 10) == region(title, x: 0, y: 16, width: 128, height: 10))
    }

    @Test func theStandInFitsWhereverANameIsDrawn() throws {
        let widest = try PhoneNumber("+12345678901234567890")
        let cells = ContactName.width("👩", of: .slot(PanicState.slotCount - 1, widest), font: .small) / 4
        #expect(cells == ContactName.standInCells)
        // Slots are named on the slot list and the status screen: 21 cells before the status word.
        #expect(cells <= 21)
        // The counselling line's name also goes beside the QR code: 15 cells there.
        #expect(ContactName.counsellingStandIn.unicodeScalars.count <= 15)
    }
}
