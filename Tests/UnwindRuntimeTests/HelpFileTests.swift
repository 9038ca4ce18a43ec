import Foundation
import Testing
import UnwindMaintenance
import UnwindCore
import UnwindRuntime
import UnwindRender

@Suite struct HelpFileTests {
    @Test func breathingHelpShipsAndFitsTheOverlay() throws {
        let text = try #require(DeviceContent.text("helpFiles/squareBreathing.txt"))
        #expect(!text.isEmpty)
        // Every control of the page is explained.
        for word in ["SELECT", "LEFT", "RIGHT", "PAGE", "Hold PAGE"] { #expect(text.contains(word)) }
        let lines = DeviceContent.helpLibrary().lines(for: .breathing)
        #expect(lines.count > 5)
        #expect(lines.allSatisfy { BitmapFont.small.textWidth($0) <= 128 - 4 })
        // Plain ASCII: the files are "flat ASCII files" (spec, section 3).
        #expect(text.utf8.allSatisfy { $0 == 0x0A || (0x20...0x7E).contains($0) })
    }

    /// Non-functional 3.1: every control of every page is explained, and every line fits.
    @Test(arguments: [
        (Page.grounding, ["SELECT", "LEFT", "RIGHT", "PAGE", "Hold PAGE", "[SEE]", "[TOUCH]", "[HEAR]", "45", "camera"]),
        (.affirmations, ["LEFT", "RIGHT", "Hold SELECT", "SELECT", "PAGE", "Hold PAGE", "Never", "Weekly", "Daily", "Hourly", "reminder"]),
        (.panic, ["LEFT", "RIGHT", "SELECT", "PANIC", "1.5 seconds", "counselling", "hang up", "empty slot", "breathing", "PAGE", "Hold PAGE"]),
        (.breathing, ["SELECT", "LEFT", "RIGHT", "PAGE", "Hold PAGE"]),
    ])
    func everyPagesHelpShipsAndFits(_ page: Page, _ words: [String]) throws {
        let text = try #require(DeviceContent.text("helpFiles/" + page.helpFileName))
        #expect(!text.isEmpty)
        for word in words { #expect(text.contains(word), "\(page.helpFileName) does not mention \(word)") }
        let lines = DeviceContent.helpLibrary().lines(for: page)
        #expect(lines.count > 5)
        #expect(lines.allSatisfy { BitmapFont.small.textWidth($0) <= 128 - 4 })
        #expect(text.utf8.allSatisfy { $0 == 0x0A || (0x20...0x7E).contains($0) })
        #expect(text.hasSuffix("\n") && !text.hasSuffix("\n\n"))
    }
}
