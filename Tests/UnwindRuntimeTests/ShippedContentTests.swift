import Foundation
import Logging
import Testing
import UnwindTestSupport
import UnwindCore
import UnwindRuntime
import UnwindLinuxHardware

/// An install without its shipped content (a content directory configured that is missing)
/// must not decide the person's mantras for good: nothing is written until a start finds the
/// shipped list. The texts built into the executable are the files in Content/.
@Suite struct ShippedContentTests {
    @Test func noShippedMantrasWritesNoFile() throws {
        let dir = ScratchDirectory()
        let persistence = StatePersistence(store: try DirectoryStore(directory: dir.path), logger: quietLogger(),
                                           writeInBackground: false)
        #expect(persistence.loadMantras(now: WallTime(secondsSinceEpoch: 0), seed: { [] }).isEmpty)
        #expect(!FileManager.default.fileExists(atPath: dir.path + "/mantras.txt"))
        // The next start that finds them seeds the file, as a first start does.
        #expect(persistence.loadMantras(now: WallTime(secondsSinceEpoch: 0), seed: { ["I am safe."] }) == ["I am safe."])
        #expect(readText(dir.path + "/mantras.txt") == "I am safe.\n")
    }

    @Test func aMissingContentDirectoryIsAnEmptyListNotACrash() {
        let nowhere = ScratchDirectory().path + "/absent"
        #expect(DeviceContent.shippedMantras(in: nowhere).isEmpty)
        #expect(DeviceContent.helpLibrary(in: nowhere).lines(for: .breathing) == ["Help for this page", "is not installed."])
    }

    /// ShippedContent.swift is generated from Content/ (Content/generate-content.py): the two
    /// agree, text for text, and a content directory laid out as Content/ reads the same.
    @Test(arguments: Page.allCases.map { "helpFiles/" + $0.helpFileName } + ["positiveAffirmations/mantras.txt"])
    func theBuiltInTextsAreTheFiles(_ path: String) throws {
        let content = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../Sources/UnwindRuntime/Content").standardized.path
        let file = try #require(readText(content + "/" + path), "no \(path) in \(content)")
        #expect(DeviceContent.text(path) == file, "ShippedContent.swift is out of date: run Sources/UnwindRuntime/Content/generate-content.py")
        #expect(DeviceContent.text(path, in: content) == file)
    }
}
