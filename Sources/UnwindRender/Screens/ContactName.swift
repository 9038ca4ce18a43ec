import UnwindCore

/// How a name is shown, on every screen that shows one. A name the font can draw
/// is drawn. One it cannot (an emoji, Chinese, Arabic …) would come out as "????", and a
/// person reading "???? FAILED" cannot tell who was not reached; so it is replaced, as a
/// whole, by what does tell contacts apart: "Slot 3 ..4567", the slot as the panic page numbers
/// it and the last digits of the number the alert goes to. Two full stops, not '…': 4x6's
/// ellipsis crowds three dots into four pixels and runs into the first digit.
enum ContactName {
    /// Whose name it is: what the stand-in is made of.
    enum Owner {
        /// A 0-based alert slot and the number its alert goes to.
        case slot(Int, PhoneNumber)
        /// The counselling line, whose number is shown beside its name already.
        case counselling
    }

    /// Enough to tell five numbers apart in practice, short enough for every place a name goes.
    static let lastDigits = 4
    /// The widest stand-in, "Slot 5 ..4567", in cells: every place a name is drawn has room for it.
    static let standInCells = 13
    static let slotWord = "Slot "
    static let counsellingStandIn = "Counselling"

    /// True when every cell of `name` that fits in `maxCharacters` has a glyph in `font`. What is
    /// cut off anyway does not count: a long name with an emoji at its end still shows its start.
    static func isDrawable(_ name: String, font: BitmapFont, maxCharacters: Int = .max) -> Bool {
        var n = 0
        for cell in font.cells(name) {
            if n == maxCharacters { break }
            if cell.glyph == nil { return false }
            n += 1
        }
        return true
    }

    /// Draws `name`, or its owner's stand-in, with its top-left at (x, y), at most
    /// `maxCharacters` cells; returns the x after the last glyph. Allocates nothing.
    @discardableResult
    static func draw(_ name: String, of owner: Owner, font: BitmapFont, x: Int, y: Int, _ ink: Ink = .on,
                     maxCharacters: Int = .max, into fb: inout Framebuffer) -> Int {
        if isDrawable(name, font: font, maxCharacters: maxCharacters) {
            return fb.text(name, font: font, x: x, y: y, ink, maxCharacters: maxCharacters)
        }
        var pen = Pen(x: x, y: y, cellsLeft: maxCharacters, font: font, ink: ink)
        switch owner {
        case .slot(let slot, let number):
            pen.text(slotWord, into: &fb)
            pen.number(slot + 1, into: &fb)
            let digits = number.digits.utf8
            if digits.count > lastDigits {
                pen.text(" ..", into: &fb)
            } else {
                pen.text(" ", into: &fb)
            }
            for d in digits.suffix(lastDigits) { pen.scalar(UInt32(d), into: &fb) }
        case .counselling:
            pen.text(counsellingStandIn, into: &fb)
        }
        return pen.x
    }

    /// Width in pixels of what `draw` draws, for centring.
    static func width(_ name: String, of owner: Owner, font: BitmapFont, maxCharacters: Int = .max) -> Int {
        var cells: Int
        if isDrawable(name, font: font, maxCharacters: maxCharacters) {
            cells = 0
            for _ in font.cells(name) { cells += 1 }
        } else {
            switch owner {
            case .slot(let slot, let number):
                let digits = number.digits.utf8.count
                cells = slotWord.unicodeScalars.count + decimalDigits(slot + 1) + (digits > lastDigits ? 3 : 1) + min(digits, lastDigits)
            case .counselling:
                cells = counsellingStandIn.unicodeScalars.count
            }
        }
        return min(cells, maxCharacters) * font.width
    }

    static func decimalDigits(_ n: Int) -> Int {
        var count = 1
        var rest = n / 10
        while rest > 0 { count += 1; rest /= 10 }
        return count
    }

    /// Draws cell by cell until the room runs out, so the stand-in needs no String of its own.
    private struct Pen {
        var x: Int
        let y: Int
        var cellsLeft: Int
        let font: BitmapFont
        let ink: Ink

        mutating func scalar(_ s: UInt32, into fb: inout Framebuffer) {
            guard cellsLeft > 0 else { return }
            fb.glyph(s, font: font, x: x, y: y, ink)
            x += font.width
            cellsLeft -= 1
        }

        mutating func text(_ s: String, into fb: inout Framebuffer) {
            for u in s.unicodeScalars { scalar(u.value, into: &fb) }
        }

        mutating func number(_ n: Int, into fb: inout Framebuffer) {
            var divisor = 1
            while divisor <= n / 10 { divisor *= 10 }
            var rest = max(0, n)
            while divisor > 0 {
                scalar(UInt32(0x30 + rest / divisor), into: &fb)
                rest %= divisor
                divisor /= 10
            }
        }
    }
}
