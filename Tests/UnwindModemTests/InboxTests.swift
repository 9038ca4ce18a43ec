import Foundation
import Testing
import UnwindSimulatedHardware
import UnwindCore
import UnwindSeams
import UnwindLinuxHardware
import UnwindModem

/// The inbox's files: their format, what a damaged or planted one does, and the leftovers of a
/// kill.
@Suite("Inbox files")
struct InboxTests {
    static func message(_ text: String, from: String = "+15550100001", reference: Int = 1, time: Int64 = 1_767_225_600) throws -> [SMSDeliver] {
        try DeliverEncoder.encode(from: from, text: text, reference: reference, time: time).map { pdu in
            guard case .deliver(let d) = try IncomingPDU.decode(hex: pdu.hexString, announced: nil) else {
                throw IncomingPDUProblem.malformed("not a deliver")
            }
            return d
        }
    }

    @Test func aReplyFileRoundTrips() throws {
        let dir = ScratchDirectory()
        let inbox = Inbox(storage: try DirectoryStore(directory: dir.path))
        let stored = try inbox.accept(try Self.message("Line one\nback\\slash — ok")[0], at: WallTime(secondsSinceEpoch: 5), instant: .zero)
        #expect(stored.map(\.text) == ["Line one\nback\\slash — ok"])
        let id = try #require(stored.first?.id)
        let text = try #require(readText(dir.path + "/\(id).reply"))
        #expect(text == """
            unwind-reply 1
            from +15550100001
            received 5
            sent 1767225600
            sequence 1
            seen no
            parts 1
            text Line one\\nback\\\\slash — ok

            """)
        try inbox.markSeen([id])
        let again = Inbox(storage: try DirectoryStore(directory: dir.path))
        let r = try #require(again.replies.first)
        #expect(again.replies.count == 1 && r.id == id && r.from == "+15550100001" && r.text == "Line one\nback\\slash — ok")
        #expect(r.sent == WallTime(secondsSinceEpoch: 1_767_225_600) && r.received == WallTime(secondsSinceEpoch: 5))
        #expect(r.seen && r.parts == 1 && r.missingParts == 0 && r.group == nil && r.sequence == 1)
        #expect(try inbox.accept(try Self.message("Line one\nback\\slash — ok")[0], at: WallTime(secondsSinceEpoch: 9), instant: .zero).isEmpty,
                "the same message again is not stored twice")
    }

    static let damaged: [(String, String)] = [
        ("not the header", "unwind-reply 2\nfrom x\n"),
        ("a field missing", "unwind-reply 1\nfrom +1\nreceived 5\nsent -\nsequence 1\nseen no\ntext hi\n"),
        ("seen is neither", "unwind-reply 1\nfrom +1\nreceived 5\nsent -\nsequence 1\nseen maybe\nparts 1\ntext hi\n"),
        ("a huge time", "unwind-reply 1\nfrom +1\nreceived 99999999999999999999\nsent -\nsequence 1\nseen no\nparts 1\ntext hi\n"),
        ("parts 0", "unwind-reply 1\nfrom +1\nreceived 5\nsent -\nsequence 1\nseen no\nparts 0\ntext hi\n"),
        ("a bad group", "unwind-reply 1\nfrom +1\nreceived 5\nsent -\nsequence 1\nseen no\nparts 2\ngroup ../../etc\ntext hi\n"),
        ("trailing lines", "unwind-reply 1\nfrom +1\nreceived 5\nsent -\nsequence 1\nseen no\nparts 1\ntext hi\nmore\n"),
    ]

    /// A damaged or planted file is set aside (kept, renamed) and said; the rest still loads.
    @Test func damagedFilesAreSetAside() throws {
        let dir = ScratchDirectory()
        let store = try DirectoryStore(directory: dir.path)
        for (k, (_, text)) in Self.damaged.enumerated() {
            try store.replace("r\(String(repeating: "0", count: 15))\(k).reply", with: Array(text.utf8))
        }
        try store.replace("r0000000000000000.part", with: Array("unwind-reply-part 1\nfrom +1\nsent -\nalphabet klingon\n".utf8))
        try store.replace("r00000000000000ff.reply", with: [0xFF, 0xFE, 0x00])
        try store.replace("rffffffffffffffff.reply", with: Array("unwind-reply 1\nfrom +1\u{1B}[2J\nreceived 5\nsent -\nsequence 1\nseen no\nparts 1\ntext ok\u{07}\n".utf8))
        let inbox = Inbox(storage: store, now: WallTime(secondsSinceEpoch: 77))
        #expect(inbox.problems.count == Self.damaged.count + 2, "\(inbox.problems)")
        #expect(inbox.replies.map(\.text) == ["ok "], "a control character is never kept")
        #expect(inbox.replies.first?.from == "+1 [2J")
        #expect(try dir.entries().filter { $0.contains(".corrupt-77") }.count == Self.damaged.count + 2)
        // A reader that must change nothing only reports.
        let dir2 = ScratchDirectory()
        let store2 = try DirectoryStore(directory: dir2.path)
        try store2.replace("r0000000000000001.reply", with: Array("nonsense".utf8))
        #expect(Inbox(storage: store2, setAside: false).problems.count == 1)
        #expect(try dir2.entries() == ["r0000000000000001.reply"])
    }

    /// Killed after a long reply was written and before its parts were removed: the next start
    /// removes them, and the reply is not news again.
    @Test func partsOfAWholeReplyAreRemovedAtStart() throws {
        let dir = ScratchDirectory()
        let store = try DirectoryStore(directory: dir.path)
        let inbox = Inbox(storage: store)
        let parts = try Self.message(String(repeating: "z", count: 200))
        #expect(try inbox.accept(parts[0], at: WallTime(secondsSinceEpoch: 1), instant: .zero).isEmpty)
        let partFiles = try dir.entries().filter { $0.hasSuffix(".part") }
        let partBytes = try partFiles.map { ($0, try #require(try store.read($0))) }
        #expect(try inbox.accept(parts[1], at: WallTime(secondsSinceEpoch: 1), instant: .zero).count == 1)
        for (name, bytes) in partBytes { try store.replace(name, with: bytes) }  // as if the removal never happened
        let after = Inbox(storage: try DirectoryStore(directory: dir.path))
        #expect(after.waitingParts == 0)
        #expect(try dir.entries().filter { $0.hasSuffix(".part") }.isEmpty)
        #expect(after.flushStale(now: Instant(nanoseconds: 1 << 50), patience: .seconds(1), at: WallTime(secondsSinceEpoch: 2)).replies.isEmpty)
    }

    @Test func atMostSoManyRepliesAreKeptDismissedFirst() throws {
        let dir = ScratchDirectory()
        let inbox = Inbox(storage: try DirectoryStore(directory: dir.path))
        var first: [String] = []
        for k in 0..<(Inbox.maximumReplies + 3) {
            let r = try inbox.accept(try Self.message("n\(k)", time: 1_767_225_600 + Int64(k))[0], at: WallTime(secondsSinceEpoch: 1), instant: .zero)
            if k == 1 { first = r.map(\.id) }
        }
        #expect(inbox.replies.count == Inbox.maximumReplies)
        #expect(inbox.replies.first?.text == "n3")
        try inbox.markSeen(first)  // already gone: nothing to do
        _ = try inbox.accept(try Self.message("later")[0], at: WallTime(secondsSinceEpoch: 2), instant: .zero)
        #expect(try dir.entries().filter { $0.hasSuffix(".reply") }.count == Inbox.maximumReplies)
    }
}
