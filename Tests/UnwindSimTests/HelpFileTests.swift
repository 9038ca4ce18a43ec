import Foundation
import Testing
import UnwindCore
import UnwindDevice
import UnwindRender

@Suite struct HelpFileTests {
    @Test func breathingHelpShipsAndFitsTheOverlay() throws {
        let dir = DeviceContent.directory()
        let text = try String(contentsOfFile: dir + "/helpFiles/squareBreathing.txt", encoding: .utf8)
        #expect(!text.isEmpty)
        // Every control of the page is explained.
        for word in ["SELECT", "LEFT", "RIGHT", "PAGE", "Hold PAGE"] { #expect(text.contains(word)) }
        let lines = DeviceContent.helpLibrary(in: dir).lines(for: .breathing)
        #expect(lines.count > 5)
        #expect(lines.allSatisfy { BitmapFont.small.textWidth($0) <= 128 - 4 })
        // Plain ASCII: the files are "flat ASCII files" (spec, section 3).
        #expect(text.utf8.allSatisfy { $0 == 0x0A || (0x20...0x7E).contains($0) })
    }
}
