#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import UnwindTestSupport
import UnwindMaintenance

/// `unwind status` tells the maintainer what the last system update did, from the record an
/// imaged card's slot keeper writes: in the text, running or not, and as "update" in the JSON.
/// A plain install has no record and no such line; a record that is not one is said to be so.
@Suite(.serialized) struct UpdateRecordStatusTests {
    static let fellBack = "the update to 1.2.0 did not come up; back on 1.1.0 (slot A): not PANIC-ready within 300 s of its start"

    @Test func aStoppedDeviceSaysTheUpdateFellBack() throws {
        let dir = temporaryDirectory("update-record")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let record = dir + "/update.txt"
        try (Self.fellBack + "\n").write(toFile: record, atomically: true, encoding: .utf8)
        let status = UnwindRun.run(["status", "--state", dir, "--update-record", record])
        expectFailure(status, 1, "the device is not running")
        #expect(status.stdout.contains("Update:    " + Self.fellBack), "\(status.stdout)")
        // No record: nothing said about updates.
        let none = UnwindRun.run(["status", "--state", dir, "--update-record", dir + "/none.txt"])
        #expect(!none.stdout.contains("Update:"), "\(none.stdout)")
    }

    @Test func aRecordThatIsNotOneIsSaidSoAndNeverBlocks() throws {
        let dir = temporaryDirectory("update-record-bad")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let fifo = dir + "/fifo"
        #expect(mkfifo(fifo, 0o600) == 0)
        let huge = dir + "/huge"
        try String(repeating: "x", count: 10_000).write(toFile: huge, atomically: true, encoding: .utf8)
        let controls = dir + "/controls"
        try "updated to 1.2.0\u{1B}[2J\u{7}\n\n  \n".write(toFile: controls, atomically: true, encoding: .utf8)
        #expect(symlink(dir + "/nowhere", dir + "/dangling") == 0)
        let directory = dir + "/directory"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
        for (file, words) in [(fifo, "is a FIFO"), (huge, "10000 bytes, not a record"), (dir + "/dangling", "a link to nothing"),
                              (directory, "is a directory, not a record")] {
            let status = UnwindRun.run(["status", "--state", dir, "--update-record", file])
            #expect(status.status == 1)
            #expect(status.stdout.contains("Update:    the update record \(file)") && status.stdout.contains(words), "\(status.stdout)")
        }
        let escaped = UnwindRun.run(["status", "--state", dir, "--update-record", controls])
        #expect(escaped.stdout.contains("Update:    updated to 1.2.0"), "\(escaped.stdout)")
        #expect(!escaped.stdout.contains("\u{1B}") && !escaped.stdout.contains("\u{7}"), "a control character reached the terminal")
        // Bytes that are not UTF-8, a NUL among them: shown escaped, nothing raw on the terminal.
        let binary = dir + "/binary"
        #expect(FileManager.default.createFile(atPath: binary, contents: Data([0x75, 0xFF, 0xFE, 0x00, 0x41, 0x0A])))
        let shown = UnwindRun.run(["status", "--state", dir, "--update-record", binary])
        #expect(shown.status == 1 && shown.stdout.contains("Update:    u"), "\(shown.stdout)")
        #expect(!shown.stdout.contains("\u{0}"), "a NUL reached the terminal")
        // The same record written again and again: its first four lines, one line on the screen.
        let repeated = dir + "/repeated"
        try String(repeating: "updated to 1.2.0\n", count: 50).write(toFile: repeated, atomically: true, encoding: .utf8)
        let once = UnwindRun.run(["status", "--state", dir, "--update-record", repeated])
        let lines = once.stdout.split(separator: "\n").filter { $0.hasPrefix("Update:") }.map(String.init)
        #expect(lines == ["Update:    " + Array(repeating: "updated to 1.2.0", count: 4).joined(separator: "; ")], "\(once.stdout)")
    }

    @Test func aRunningDeviceSaysItInTheTextAndTheJSON() throws {
        let rig = try MaintenanceRig()
        defer { rig.shutdown() }
        let record = rig.directory + "-update.txt"
        defer { unlink(record) }
        try (Self.fellBack + "\n").write(toFile: record, atomically: true, encoding: .utf8)
        #expect(rig.wait { rig.status() != nil })
        let text = rig.unwind(["status", "--update-record", record])
        #expect(text.status == 0 && text.stdout.contains("Update:    " + Self.fellBack), "\(text)")
        let json = rig.unwind(["status", "--json", "--update-record", record])
        #expect(json.status == 0, "\(json)")
        let object = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
        #expect(object?["update"] as? String == Self.fellBack)
        // Still the device's report, with every key it had.
        #expect((try? JSONDecoder().decode(StatusReport.self, from: Data(json.stdout.utf8))) != nil)
        let plain = rig.unwind(["status", "--json", "--update-record", record + ".none"])
        let plainObject = try JSONSerialization.jsonObject(with: Data(plain.stdout.utf8)) as? [String: Any]
        #expect(plainObject != nil && plainObject?["update"] == nil)
        #expect(plainObject?["setAside"] == nil, "nothing set aside, no list")
    }
}
