#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import UnwindMaintenance

/// A message in the outbox and a reply that the device could not read (as a release after this
/// one, fallen back from, could leave them) lie set aside inside their own directories, as the
/// outbox and the inbox leave them (`<name>.corrupt-<time>`, OutboxTests and InboxTests): `unwind
/// status` lists both where they lie, so that the maintainer learns of an alert left unsent.
@Suite("Messages and replies set aside, in the status")
struct SetAsideMessageStatusTests {
    @Test func aMessageAndAReplySetAsideAreListedWhereTheyLie() throws {
        let root = temporaryDirectory("set-aside-message")
        defer { try? FileManager.default.removeItem(atPath: root) }
        let state = root + "/state"
        for d in ["outbox", "replies"] {
            try FileManager.default.createDirectory(atPath: state + "/" + d, withIntermediateDirectories: true)
        }
        for (name, bytes) in HostileStateFileTests.baseline { try Data(bytes).write(to: URL(fileURLWithPath: state + "/" + name)) }
        try Data("unwind-outbox 2\nto +447700900123\n".utf8)
            .write(to: URL(fileURLWithPath: state + "/outbox/alert-1-1-0001.msg.corrupt-1796114866"))
        try Data("unwind-reply 2\n".utf8).write(to: URL(fileURLWithPath: state + "/replies/1-1.reply.corrupt-1796114866"))
        try Data("unwind-outbox 1\n".utf8).write(to: URL(fileURLWithPath: state + "/alert01.txt.corrupt-1796114866"))

        // A link in place of the replies directory, to one that holds a set-aside name: not followed.
        let elsewhere = root + "/elsewhere"
        try FileManager.default.createDirectory(atPath: elsewhere, withIntermediateDirectories: true)
        try Data("x".utf8).write(to: URL(fileURLWithPath: elsewhere + "/secret.reply.corrupt-1"))
        let linked = root + "/linked"
        try FileManager.default.createDirectory(atPath: linked + "/outbox", withIntermediateDirectories: true)
        for (name, bytes) in HostileStateFileTests.baseline { try Data(bytes).write(to: URL(fileURLWithPath: linked + "/" + name)) }
        try Data("x".utf8).write(to: URL(fileURLWithPath: linked + "/outbox/alert-1-1-0001.msg.corrupt-1"))
        #expect(symlink(elsewhere, linked + "/replies") == 0)
        let viaLink = UnwindRun.run(["status", "--state", linked])
        #expect(viaLink.stdout.contains("Set aside: 1 item ") && viaLink.stdout.contains("  outbox/alert-1-1-0001.msg.corrupt-1 (file, 1 bytes)"),
                "\(viaLink)")
        #expect(!viaLink.stdout.contains("secret"), "a link was followed: \(viaLink)")

        let status = UnwindRun.run(["status", "--state", state])
        #expect(status.stdout.contains("Set aside: 3 items"), "\(status)")
        // The outbox first: an alert left unsent is not the one cut from a long list.
        #expect(status.stdout.contains("\n  outbox/alert-1-1-0001.msg.corrupt-1796114866 (file, 33 bytes)\n  replies/"), "\(status)")
        #expect(status.stdout.contains("\n  alert01.txt.corrupt-1796114866 (file, 16 bytes)\n"), "\(status)")
        #expect(status.stdout.contains("\n  replies/1-1.reply.corrupt-1796114866 (file, 15 bytes)\n"), "\(status)")
    }

    @Test func aRunningDeviceListsThemInTheTextAndTheJSON() throws {
        let rig = try MaintenanceRig()
        defer { rig.shutdown() }
        #expect(rig.wait { rig.status() != nil })
        try FileManager.default.createDirectory(atPath: rig.directory + "/outbox", withIntermediateDirectories: true)
        try Data("unwind-outbox 2\n".utf8).write(to: URL(fileURLWithPath: rig.directory + "/outbox/alert-1-1-0001.msg.corrupt-42"))
        let text = rig.unwind(["status"])
        #expect(text.stdout.contains("Set aside: 1 item ") && text.stdout.contains("\n  outbox/alert-1-1-0001.msg.corrupt-42 (file, 16 bytes)\n"),
                "\(text)")
        let json = rig.unwind(["status", "--json"])
        let object = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
        #expect(object?["setAside"] as? [String] == ["outbox/alert-1-1-0001.msg.corrupt-42 (file, 16 bytes)"], "\(json)")
        #expect((try? JSONDecoder().decode(StatusReport.self, from: Data(json.stdout.utf8))) != nil)
    }
}
