import Foundation
import UnwindControl
import UnwindCore
import UnwindRender

/// The read-only files shipped with the device (spec: `helpFiles/`), in the resource bundle the
/// build puts next to the executable (installed: /usr/lib/unwind/), or under /usr/share/unwind.
public enum DeviceContent {
    static let bundleName = "unwind_UnwindDevice.resources"

    /// The shipped content directory: the one given, else the bundle beside the executable.
    ///
    /// Not `Bundle.module`: its accessor stops the process when the bundle is missing, and a
    /// device installed without it must still start (help then says it is not installed, and
    /// the person's mantras stay as they are).
    public static func directory(override: String? = nil) -> String {
        if let override { return override }
        var candidates: [String] = []
        // readlink(2) on /proc/self/exe: the real executable, through /usr/bin/unwind's link.
        var buffer = [CChar](repeating: 0, count: 4096)
        let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        if n > 0 {
            let exe = String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            candidates.append((exe as NSString).deletingLastPathComponent + "/" + bundleName + "/Content")
        }
        candidates.append("/usr/share/unwind")
        var isDirectory: ObjCBool = false
        for c in candidates where FileManager.default.fileExists(atPath: c, isDirectory: &isDirectory) && isDirectory.boolValue {
            return c
        }
        return candidates[0]
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
