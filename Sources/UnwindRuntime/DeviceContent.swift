#if canImport(FoundationEssentials)
import FoundationEssentials
#else
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#endif
import UnwindMaintenance
import UnwindCore
import UnwindRender

/// The read-only texts shipped with the device (spec: `helpFiles/`, the shipped mantras):
/// compiled into the executable (ShippedContent.swift, generated from the files in Content/),
/// or read from a directory laid out as Content/ is when the configuration names one
/// (`content_directory`), so a clinic may give its own.
public enum DeviceContent {
    /// A shipped text by its path under Content/ (`helpFiles/grounding.txt`,
    /// `positiveAffirmations/mantras.txt`): from `directory` when one is given, else the one
    /// built in; nil when there is no such text.
    public static func text(_ path: String, in directory: String? = nil) -> String? {
        if let directory { return try? String(contentsOfFile: directory + "/" + path, encoding: .utf8) }
        if path == "positiveAffirmations/" + MantrasFile.name { return shippedMantrasText }
        guard path.hasPrefix("helpFiles/") else { return nil }
        return shippedHelp[String(path.dropFirst("helpFiles/".count))]
    }

    /// Every page's help, wrapped for the overlay. A missing file (in a directory given) shows
    /// a one-line notice instead of failing the device.
    public static func helpLibrary(in directory: String? = nil) -> HelpLibrary {
        var lines: [Page: [String]] = [:]
        for page in Page.allCases {
            if let text = text("helpFiles/" + page.helpFileName, in: directory) {
                lines[page] = HelpLibrary.wrap(text, columns: Screen.helpColumns)
            }
        }
        return HelpLibrary(lines: lines)
    }

    /// The shipped mantras, `positiveAffirmations/mantras.txt`, that seed the person's list on
    /// first start. Lines that do not make valid mantras are left out; a missing file (in a
    /// directory given) is an empty list.
    public static func shippedMantras(in directory: String? = nil) -> [String] {
        guard let text = text("positiveAffirmations/" + MantrasFile.name, in: directory) else { return [] }
        let bytes = Array(text.utf8)
        return (try? MantrasFile.parse(bytes)) ?? MantrasFile.salvage(bytes)
    }
}
