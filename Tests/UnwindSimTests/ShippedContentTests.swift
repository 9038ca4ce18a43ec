import Foundation
import Logging
import Testing
import UnwindCore
import UnwindDevice
import UnwindHardware

/// An install without its shipped content (the resource bundle missing) must not decide the
/// person's mantras for good: nothing is written until a start finds the shipped list.
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
}
