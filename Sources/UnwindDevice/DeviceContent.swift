import Foundation
import UnwindControl
import UnwindCore
import UnwindRender

/// The read-only files shipped with the device (spec: `helpFiles/`), found next to the
/// executable in the build or under /usr/share/unwind when installed.
public enum DeviceContent {
    /// The shipped content directory: the one given, else the bundle the build produced.
    public static func directory(override: String? = nil) -> String {
        if let override { return override }
        return Bundle.module.resourceURL!.appendingPathComponent("Content").path
    }

    /// Every page's help, wrapped for the overlay. A missing file shows a one-line notice
    /// instead of failing the device.
    public static func helpLibrary(in directory: String) -> HelpLibrary {
        var lines: [Page: [String]] = [:]
        for page in Page.allCases {
            let path = directory + "/helpFiles/" + page.helpFileName
            if let text = try? String(contentsOfFile: path, encoding: .utf8) {
                lines[page] = HelpLibrary.wrap(text, columns: Screen.helpColumns)
            }
        }
        return HelpLibrary(lines: lines)
    }

    /// The shipped mantras, `positiveAffirmations/mantras.txt`, that seed the person's list on
    /// first start. Lines that do not make valid mantras are left out; a missing file is an
    /// empty list.
    public static func shippedMantras(in directory: String) -> [String] {
        let path = directory + "/positiveAffirmations/" + MantrasFile.name
        guard let data = FileManager.default.contents(atPath: path) else { return [] }
        let bytes = [UInt8](data)
        return (try? MantrasFile.parse(bytes)) ?? MantrasFile.salvage(bytes)
    }
}
