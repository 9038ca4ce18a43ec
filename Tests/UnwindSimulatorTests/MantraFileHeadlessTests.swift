import Foundation
import Testing
import UnwindMaintenance
@testable import UnwindCore
import UnwindRuntime
import UnwindRender
@testable import UnwindSimulator

@Suite struct MantraFileHeadlessTests {
    var shipped: String { DeviceContent.text("positiveAffirmations/mantras.txt") ?? "" }

    @Test func theShippedListIsAboutFiftyValidMantras() throws {
        let list = try MantrasFile.parse(Array(shipped.utf8))
        #expect((45...55).contains(list.count))
        #expect(MantrasFile.format(list) == shipped)                        // exactly the file's format
        #expect(list.allSatisfy { $0.count <= 160 })
        #expect(shipped.utf8.allSatisfy { $0 == 0x0A || (0x20...0x7E).contains($0) })   // plain ASCII
        #expect(Set(list).count == list.count)                              // no repeats
        #expect(DeviceContent.shippedMantras() == list)
    }

    @Test func seededOnFirstStartOnly() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let first = try HeadlessSimulation(script: try ButtonScript.parse("1 end\n"), stateDirectory: dir, recordFrames: false).run()
        #expect(readText(dir + "/mantras.txt") == shipped)
        let count = first.finalState.mantras.count
        // Delete the first mantra on the device: PAGE twice, hold SELECT, SELECT.
        let second = try HeadlessSimulation(script: try ButtonScript.parse("1 PAGE\n2 PAGE\n3 SELECT long\n5 SELECT\n6 end\n"),
                                            stateDirectory: dir, recordFrames: false).run()
        #expect(second.finalState.mantras.count == count - 1)
        let after = readText(dir + "/mantras.txt") ?? ""
        #expect(after == String(shipped.drop(while: { $0 != "\n" }).dropFirst()))
        // A restart reads the person's list; the shipped one does not come back.
        let third = try HeadlessSimulation(script: try ButtonScript.parse("1 end\n"), stateDirectory: dir, recordFrames: false).run()
        #expect(third.finalState.mantras.count == count - 1)
        #expect(readText(dir + "/mantras.txt") == after)
    }

    @Test func anEmptyListStaysEmpty() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try "".write(toFile: dir + "/mantras.txt", atomically: false, encoding: .utf8)
        let r = try HeadlessSimulation(script: try ButtonScript.parse("1 PAGE\n2 PAGE\n3 end\n"), stateDirectory: dir, recordFrames: false).run()
        #expect(r.finalState.mantras.isEmpty)
        #expect(readText(dir + "/mantras.txt") == "")
        // The screen says so (spec 4.3.1).
        var expected = Framebuffer()
        expected.text("No mantras found.", font: .regular, x: (128 - 17 * 6) / 2, y: 19)
        for x in 0..<128 { for y in 19..<29 { #expect(r.finalScreen[x, y] == expected[x, y]) } }
    }

    @Test func aCorruptListIsMovedAsideAndWhatCanBeKeptIsKept() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let bad = "I am safe.\n\nRest now. \n" + String(repeating: "x", count: 161) + "\n"
        try bad.write(toFile: dir + "/mantras.txt", atomically: false, encoding: .utf8)
        let r = try HeadlessSimulation(script: try ButtonScript.parse("1 end\n"), stateDirectory: dir, recordFrames: false).run()
        #expect(r.finalState.mantras.items == ["I am safe.", "Rest now."])
        #expect(readText(dir + "/mantras.txt") == "I am safe.\nRest now.\n")
        let aside = try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.hasPrefix("mantras.txt.corrupt-") }
        #expect(aside.count == 1)
        #expect(readText(dir + "/" + aside[0]) == bad)
    }

    @Test func fileRoundTripsThroughTheDeviceByteForByte() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let text = "Caf\u{E9} calme.\nOne breath.\nTwo breaths.\n"
        try text.write(toFile: dir + "/mantras.txt", atomically: false, encoding: .utf8)
        // Delete "Two breaths." (LEFT from the first wraps to the last), then check the file.
        _ = try HeadlessSimulation(script: try ButtonScript.parse("1 PAGE\n2 PAGE\n3 LEFT\n4 SELECT long\n6 SELECT\n7 end\n"),
                                   stateDirectory: dir, recordFrames: false).run()
        #expect(readText(dir + "/mantras.txt") == "Caf\u{E9} calme.\nOne breath.\n")
    }
}
