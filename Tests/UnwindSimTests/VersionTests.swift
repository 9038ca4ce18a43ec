import Foundation
import Testing
import UnwindControl

/// `unwind status --json` names the release (the fleet role compares it with the package it
/// installed): it must be the Debian changelog's first entry, or an upgrade looks failed.
@Suite struct VersionTests {
    @Test func theStatusVersionIsTheChangelogs() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let changelog = try String(contentsOf: root.appendingPathComponent("deploy/debian/changelog"), encoding: .utf8)
        let first = changelog.split(separator: "\n").first.map(String.init) ?? ""
        #expect(first.hasPrefix("unwind (\(UnwindVersion.current)) "), "changelog: \(first)")
    }
}
