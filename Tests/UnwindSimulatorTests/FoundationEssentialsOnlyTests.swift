import Foundation
import Testing

/// The executable links `FoundationEssentials` only, never the whole of Foundation: on Linux
/// that brings FoundationInternationalization and ICU, whose data alone was 32.6 MB of a 59 MB
/// executable (Sources/README.md, "Foundation: only FoundationEssentials"). One
/// `import Foundation` in any module of `unwind` (or a SwiftPM resource bundle, whose accessor
/// imports it) brings them back; the test and the benchmark may import it.
@Suite struct FoundationEssentialsOnlyTests {
    /// The library names a dynamic build needs and the ICU data a static one would carry.
    static let forbidden = ["libFoundation.so", "libFoundationInternationalization.so", "lib_FoundationICU.so", "icudt7"]

    @Test func theExecutableLinksNeitherFoundationNorICU() throws {
        let bytes = try #require(FileManager.default.contents(atPath: UnwindRun.executable), "no \(UnwindRun.executable)")
        for name in Self.forbidden {
            #expect(bytes.range(of: Data(name.utf8)) == nil, "\(UnwindRun.executable) holds \(name)")
        }
        #expect(bytes.range(of: Data("FoundationEssentials".utf8)) != nil)
    }

    /// Where it comes from, said at the line: a module's `import Foundation` must be the
    /// fallback of `#if canImport(FoundationEssentials)`.
    @Test func noModuleOfTheExecutableImportsFoundation() throws {
        let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../Sources").standardized.path
        let files = try FileManager.default.subpathsOfDirectory(atPath: sources)
            .filter { $0.hasSuffix(".swift") && !$0.hasPrefix("unwind-bench/") }
        #expect(files.count > 100)
        for file in files {
            let lines = try String(contentsOfFile: sources + "/" + file, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
            for (i, line) in lines.enumerated() where line == "import Foundation" || line == "@preconcurrency import Foundation" {
                #expect(i > 0 && lines[i - 1] == "#else",
                        "Sources/\(file):\(i + 1): import FoundationEssentials (#if canImport(FoundationEssentials)), not Foundation")
            }
        }
    }
}
