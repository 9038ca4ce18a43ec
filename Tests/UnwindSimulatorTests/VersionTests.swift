import Foundation
import Testing
import UnwindMaintenance

/// `unwind status --json` names the release (the fleet role compares it with the package it
/// installed): it must be the Debian changelog's first entry, or an upgrade looks failed.
@Suite struct VersionTests {
    @Test func theStatusVersionIsTheChangelogs() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let changelog = try String(contentsOf: root.appendingPathComponent("deploy/debian/changelog"), encoding: .utf8)
        let first = changelog.split(separator: "\n").first.map(String.init) ?? ""
        #expect(first.hasPrefix("unwind (\(UnwindVersion.current)) "), "changelog: \(first)")
    }

    /// `unwind --version` and `unwind version` print that release, alone on a line, exit 0: what a
    /// maintainer compares with `dpkg -s unwind` and the fleet's health check with the package.
    @Test(arguments: [["--version"], ["version"]])
    func theCommandLineSaysTheRelease(_ arguments: [String]) {
        let r = UnwindRun.run(arguments)
        #expect(r.status == 0, "\(r)")
        #expect(r.stdout == UnwindVersion.current + "\n", "\(r)")
        #expect(r.stderr.isEmpty, "\(r)")
    }

    /// And the running device reports the same in `unwind status --json`.
    @Test func theRunningDeviceReportsTheSameRelease() throws {
        let rig = try MaintenanceRig()
        let printed = UnwindRun.run(["--version"]).stdout.trimmingCharacters(in: .newlines)
        #expect(rig.status()?.version == printed)
    }
}
