import Foundation
import Testing
import UnwindMaintenance
@testable import UnwindCore
import UnwindRuntime
import UnwindLinuxHardware
import UnwindModem

/// Backups carry the replies too: `replies/<id>.reply` in the archive, taken into
/// the inbox by one rule whether the device runs or not — union by id, seen if either says
/// seen, a reply only the backup has comes back seen (old news), nothing the inbox holds is
/// lost. A hostile reply member refuses the whole archive and nothing changes.
@Suite("Backups of the replies", .serialized)
struct ReplyBackupTests {
    // Ids as the inbox names them: "r" and 16 lowercase hex digits.
    static let dismissedHere = "r00000000000000a1"  // new in the backup, dismissed on the device since
    static let newBoth = "r00000000000000a2"        // new in both
    static let seenInBackup = "r00000000000000a3"   // only in the backup, seen there
    static let newInBackup = "r00000000000000a4"    // only in the backup, new there
    static let afterBackup = "r00000000000000b1"    // received after the backup

    static func reply(_ text: String, sequence: Int, seen: Bool, from: String = "+15550000001") -> String {
        "unwind-reply 1\nfrom \(from)\nreceived \(1_795_000_000 + sequence)\nsent -\nsequence \(sequence)\n"
            + "seen \(seen ? "yes" : "no")\nparts 1\ntext \(text)\n"
    }

    static func writeReplies(_ state: String, _ replies: [String: String]) throws {
        let dir = state + "/" + Inbox.directoryName
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        // The sender is slot 1's contact, so the device shows their new replies.
        try Data("Mum\n+15550000001\nPlease call me.\n".utf8).write(to: URL(fileURLWithPath: state + "/" + AlertSlotFile.name(slot: 1)))
        for (id, text) in replies { try Data(text.utf8).write(to: URL(fileURLWithPath: dir + "/" + id + Inbox.replyExtension)) }
    }

    /// The state a backup is made from: four replies, two of them new.
    static func backupSource(_ dir: String) throws -> String {
        let state = dir + "/source"
        try writeReplies(state, [
            dismissedHere: reply("On my way", sequence: 1, seen: false),
            newBoth: reply("Call me", sequence: 2, seen: false),
            seenInBackup: reply("Old news", sequence: 3, seen: true),
            newInBackup: reply("Are you ok?", sequence: 4, seen: false),
        ])
        // A part of a long reply still waiting: not kept (it waits minutes, a backup is for later).
        try Data("unwind-reply-part 1\n".utf8).write(to: URL(fileURLWithPath: state + "/replies/g0000000000000001-1.part"))
        return state
    }

    /// The target device's own inbox: the first reply dismissed since the backup, one received after it.
    static func targetInbox(_ state: String) throws {
        try writeReplies(state, [
            dismissedHere: reply("On my way", sequence: 1, seen: true),
            newBoth: reply("Call me", sequence: 2, seen: false),
            afterBackup: reply("I'm here", sequence: 5, seen: false),
        ])
    }

    static func inbox(_ state: String) throws -> [String: StoredReply] {
        let i = Inbox(storage: try DirectoryStore(directory: state + "/" + Inbox.directoryName), setAside: false)
        #expect(i.problems.isEmpty, "\(i.problems)")
        return Dictionary(uniqueKeysWithValues: i.replies.map { ($0.id, $0) })
    }

    /// What the merge must leave, whatever the way in.
    static func expectMerged(_ r: [String: StoredReply]) {
        #expect(Set(r.keys) == [dismissedHere, newBoth, seenInBackup, newInBackup, afterBackup], "\(r.keys.sorted())")
        #expect(r[dismissedHere]?.seen == true, "a reply the person dismissed is never new again")
        #expect(r[newBoth]?.seen == false)
        #expect(r[afterBackup]?.seen == false && r[afterBackup]?.text == "I'm here", "a reply received after the backup stays")
        #expect(r[seenInBackup]?.seen == true && r[seenInBackup]?.text == "Old news")
        #expect(r[newInBackup]?.seen == true && r[newInBackup]?.text == "Are you ok?", "a restored reply is old news, never shown")
    }

    func makeBackup(_ dir: String) throws -> String {
        let source = try Self.backupSource(dir)
        let b = UnwindRun.run(["backup", dir + "/b.tar", "--state", source])
        #expect(b.status == 0 && b.stdout.contains("4 replies"), "\(b)")
        let files = try StateArchive.open([UInt8](FileManager.default.contents(atPath: dir + "/b.tar") ?? Data())).files
        #expect(files.keys.filter { $0.hasPrefix(StateArchive.repliesPrefix) }.sorted()
                == [Self.dismissedHere, Self.newBoth, Self.seenInBackup, Self.newInBackup].map { "replies/\($0).reply" })
        return dir + "/b.tar"
    }

    @Test func aRestoreIntoARunningDeviceMergesTheRepliesThroughItsInbox() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let archive = try makeBackup(dir)
        let rig = try MaintenanceRig(withInbox: true, prepare: { try Self.targetInbox($0) })
        // The device announced its own two new replies at its first step.
        #expect(rig.wait { rig.loop.core.state.panic.aftercare.replies.count == 2 })
        let r = rig.unwind(["restore", archive, "--yes"])
        #expect(r.status == 0 && r.stdout.contains("replies: 2 replies added, 2 already here"), "\(r)")
        Self.expectMerged(try Self.inbox(rig.directory))
        #expect(!rig.loop.core.state.panic.aftercare.replies.contains { [Self.seenInBackup, Self.newInBackup].contains($0.id) },
                "nothing restored is put in front of the person")
        // Again: a union, so nothing changes.
        let again = rig.unwind(["restore", archive, "--yes"])
        #expect(again.status == 0 && again.stdout.contains("replies: 0 replies added, 4 already here"), "\(again)")
        rig.shutdown()
        Self.expectMerged(try Self.inbox(rig.directory))
    }

    @Test func aRestoreWithTheDeviceStoppedWritesTheRepliesItself() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let archive = try makeBackup(dir)
        let target = dir + "/target"
        try Self.targetInbox(target)
        let r = UnwindRun.run(["restore", archive, "--yes", "--state", target])
        #expect(r.status == 0 && r.stdout.contains("replies: 2 replies added"), "\(r)")
        Self.expectMerged(try Self.inbox(target))
        #expect(!FileManager.default.fileExists(atPath: target + "/replies/g0000000000000001-1.part"))

        // A state directory with no inbox yet gets one, holding the backup's replies (all seen).
        let fresh = dir + "/fresh"
        try FileManager.default.createDirectory(atPath: fresh, withIntermediateDirectories: true)
        #expect(UnwindRun.run(["restore", archive, "--yes", "--state", fresh]).status == 0)
        let got = try Self.inbox(fresh)
        #expect(got.count == 4 && got.values.allSatisfy(\.seen))

        // A link where the inbox should be is set aside, never written through.
        let linked = dir + "/linked"
        let elsewhere = dir + "/elsewhere"
        try FileManager.default.createDirectory(atPath: linked, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: elsewhere, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: linked + "/replies", withDestinationPath: elsewhere)
        let l = UnwindRun.run(["restore", archive, "--yes", "--state", linked])
        #expect(l.status == 0 && l.stdout.contains("moved aside"), "\(l)")
        #expect((try? FileManager.default.contentsOfDirectory(atPath: elsewhere)) == [], "nothing written through the link")
        #expect(try Self.inbox(linked).count == 4)
    }

    // MARK: Hostile members

    /// An archive of the good backup's files plus `extra` members (after the good ones), with a
    /// manifest that lists every member, so only the member itself can be what is refused.
    static func archive(_ good: [String: [UInt8]], extra: [(String, [UInt8])]) -> [UInt8] {
        let members = good.keys.sorted().map { ($0, good[$0]!) } + extra
        var manifest = "unwind-state-archive 1\ncreated 1\n"
        for (n, b) in members { manifest += "file \(n) \(b.count) \(StateArchive.hex8(CRC32.of(b)))\n" }
        return Tar.write([(StateArchive.manifestName, Array(manifest.utf8))] + members, mtime: 1)
    }

    static let hostile: [(String, String, [UInt8])] = [
        ("path traversal", "replies/../alert01.txt", Array(reply("x", sequence: 9, seen: false).utf8)),
        ("traversal out of the directory", "replies/../../etc/r00000000000000c1.reply", Array(reply("x", sequence: 9, seen: false).utf8)),
        ("upper-case id", "replies/R00000000000000C1.reply", Array(reply("x", sequence: 9, seen: false).utf8)),
        ("short id", "replies/r1.reply", Array(reply("x", sequence: 9, seen: false).utf8)),
        ("a part file", "replies/g0000000000000001-1.part", Array("unwind-reply-part 1\n".utf8)),
        ("a subdirectory", "replies/sub/r00000000000000c1.reply", Array(reply("x", sequence: 9, seen: false).utf8)),
        ("a hidden name", "replies/.r00000000000000c1.reply", Array(reply("x", sequence: 9, seen: false).utf8)),
        ("a set-aside name", "replies/r00000000000000c1.reply.corrupt-1", Array(reply("x", sequence: 9, seen: false).utf8)),
        ("huge", "replies/r00000000000000c1.reply", Array(reply(String(repeating: "x", count: 60_000), sequence: 9, seen: false).utf8)),
        ("malformed", "replies/r00000000000000c1.reply", Array("unwind-reply 1\nfrom +1555\ngarbage\n".utf8)),
        ("seen neither yes nor no", "replies/r00000000000000c1.reply", Array(reply("x", sequence: 9, seen: false).replacingOccurrences(of: "seen no", with: "seen maybe").utf8)),
        ("not UTF-8", "replies/r00000000000000c1.reply", [0x75, 0xFF, 0xFE, 0x0A]),
        ("empty", "replies/r00000000000000c1.reply", []),
        ("a duplicate id", "replies/\(newBoth).reply", Array(reply("Call me", sequence: 2, seen: true).utf8)),
    ]

    /// Every file under `dir` with its bytes (links as their target).
    static func tree(_ dir: String) -> [String: String] {
        var out: [String: String] = [:]
        for p in (FileManager.default.enumerator(atPath: dir)?.allObjects as? [String]) ?? [] {
            let full = dir + "/" + p
            if let dest = try? FileManager.default.destinationOfSymbolicLink(atPath: full) { out[p] = "-> " + dest; continue }
            out[p] = FileManager.default.contents(atPath: full).map { String(decoding: $0, as: UTF8.self) } ?? "(directory)"
        }
        return out
    }

    @Test func hostileReplyMembersAreRefusedWithNothingChanged() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let good = try StateArchive.open([UInt8](FileManager.default.contents(atPath: try makeBackup(dir)) ?? Data())).files
        let target = dir + "/target"
        try Self.targetInbox(target)
        try Data("1\n2\n0\n10\n10\n1\n".utf8).write(to: URL(fileURLWithPath: target + "/" + TotalTimeFile.name))
        let before = Self.tree(target)
        var refused = 0
        for (what, name, bytes) in Self.hostile {
            try Data(Self.archive(good, extra: [(name, bytes)])).write(to: URL(fileURLWithPath: dir + "/bad.tar"))
            let r = UnwindRun.run(["restore", dir + "/bad.tar", "--yes", "--state", target])
            #expect(r.status == 2 && r.stderr.contains("nothing changed"), "\(what): \(r)")
            #expect(Self.tree(target) == before, "\(what): the state directory changed")
            if r.status == 2 { refused += 1 }
        }
        // 501 replies: more than the inbox keeps.
        let many = (0..<501).map { n in ("replies/r" + String(format: "%016x", 0x1000 + n) + ".reply", Array(Self.reply("x", sequence: n, seen: true).utf8)) }
        try Data(Self.archive(good, extra: many)).write(to: URL(fileURLWithPath: dir + "/bad.tar"))
        let r = UnwindRun.run(["restore", dir + "/bad.tar", "--yes", "--state", target])
        #expect(r.status == 2 && r.stderr.contains("at most 500"), "\(r)")
        #expect(Self.tree(target) == before)
        print("hostile reply members: \(Self.hostile.count + 1) tried, \(refused + (r.status == 2 ? 1 : 0)) refused with nothing changed")
    }

    /// The running device checks a restore request itself (a client need not be `unwind`).
    @Test func aRunningDeviceRefusesHostileRepliesSentStraightToItsSocket() throws {
        let rig = try MaintenanceRig(withInbox: true, prepare: { try Self.targetInbox($0) })
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let good = try StateArchive.open([UInt8](FileManager.default.contents(atPath: try makeBackup(dir)) ?? Data())).files
        #expect(rig.wait { rig.loop.core.state.panic.aftercare.replies.count == 2 })
        let before = Self.tree(rig.directory + "/replies")
        let socket = ControlSocket.simulator(stateDirectory: rig.directory)
        for (what, name, bytes) in Self.hostile where what != "a duplicate id" {
            var files = good.mapValues { Data($0) }
            files[name] = Data(bytes)
            let answer = try ControlClient.request(.restore(files: files), path: socket, timeout: .seconds(20))
            #expect(answer.code == 2, "\(what): \(answer)")
            #expect(Self.tree(rig.directory + "/replies") == before, "\(what)")
        }
        rig.shutdown()
    }
}
