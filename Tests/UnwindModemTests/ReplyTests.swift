import Foundation
import Testing
import UnwindSimulatedHardware
import UnwindCore
import UnwindSeams
import UnwindLinuxHardware
import UnwindModem

/// Replies, in memory on simulated time: from the network into the SIM's store, onto the SD
/// card, and only then off the SIM.
@Suite("Replies (in memory, simulated time)")
struct ReplyTests {
    static func replies(_ events: [ModemEvent]) -> [IncomingReply] {
        events.compactMap { if case .replyReceived(let r) = $0 { r } else { nil } }
    }

    /// Runs until `count` replies were reported; returns them.
    static func collect(_ rig: ModemRig, _ count: Int, within limit: Duration = .seconds(5)) -> [IncomingReply] {
        var got: [IncomingReply] = []
        rig.run(until: { got += replies(rig.modem.takeEvents()); return got.count >= count }, within: limit)
        return got
    }

    @Test(arguments: [("+15550100001", "+15550100001"), ("7787824615", "7787824615"), ("Operator X", "Operator X")])
    func aReplyInEachNumberForm(_ sender: String, _ shown: String) throws {
        let rig = try ModemRig()
        #expect(rig.ready())
        rig.sim.receiveSMS(from: sender, text: "On my way")
        let got = Self.collect(rig, 1)
        #expect(got.map(\.from) == [shown])
        #expect(got.map(\.text) == ["On my way"])
        #expect(got.first?.sent != nil, "the service centre's time stamp")
        #expect(rig.run(until: { rig.sim.store.isEmpty }), "deleted from the SIM once on the card")
        #expect(rig.inbox.replies.map(\.text) == ["On my way"])
        #expect(rig.sim.commands.suffix(2) == ["AT+CMGR=1", "AT+CMGD=1"])
        expectClean(rig.sim)
    }

    /// Long replies: GSM-7 with the extension table and an 8-bit reference; UCS-2 with emoji
    /// whose surrogate pairs straddle the parts, with a 16-bit reference.
    @Test func multipartRepliesAreJoined() throws {
        let rig = try ModemRig()
        #expect(rig.ready())
        let long = String(repeating: "On my way [10 min] {ok} ~ € ", count: 8)
        let emoji = "Je viens 🙏🚗 " + String(repeating: "bientôt 💙 ", count: 8)
        rig.sim.receiveSMS(from: "+15550100001", text: long)
        rig.sim.receiveSMS(from: "+15550100002", text: emoji, wide: true)
        let got = Self.collect(rig, 2)
        #expect(Set(got.map(\.text)) == [long, emoji])
        #expect(rig.run(until: { rig.sim.store.isEmpty }))
        #expect(rig.inbox.waitingParts == 0)
        #expect(try rig.repliesDirectory.entries().filter { $0.hasSuffix(".part") }.isEmpty, "parts go once the reply is whole")
        expectClean(rig.sim)
    }

    /// A stranger's reply is stored like any other: who sees it is the core's decision.
    @Test func aStrangersReplyIsKept() throws {
        let rig = try ModemRig()
        #expect(rig.ready())
        rig.sim.receiveSMS(from: "+19995550000", text: "Who is this?")
        #expect(Self.collect(rig, 1).map(\.from) == ["+19995550000"])
        #expect(rig.inbox.replies.count == 1)
    }

    /// A part that never comes: after the patience the reply is shown as far as it came.
    @Test func aMissingPartIsShownWithAnEllipsis() throws {
        let rig = try ModemRig(configure: { $0.timeouts.replyParts = .seconds(10) })
        #expect(rig.ready())
        let parts = DeliverEncoder.encode(from: "+15550100001", text: String(repeating: "a", count: 153) + String(repeating: "b", count: 153)
                                          + "c", reference: 7, time: 1_767_225_600)
        #expect(parts.count == 3)
        rig.sim.receivePDU(parts[0])
        rig.sim.receivePDU(parts[2])
        rig.run(for: .seconds(5))
        #expect(Self.replies(rig.modem.takeEvents()).isEmpty, "waiting for part 2")
        #expect(rig.sim.store.isEmpty, "the parts wait on the card, not on the SIM")
        let got = Self.collect(rig, 1, within: .seconds(10))
        #expect(got.map(\.text) == [String(repeating: "a", count: 153) + "…c"])
        #expect(rig.inbox.replies.first?.missingParts == 1)
    }

    /// Parts held across a restart are joined with the part that comes after it.
    @Test func partsSurviveARestart() throws {
        let rig = try ModemRig()
        #expect(rig.ready())
        let text = String(repeating: "x", count: 200)
        let parts = DeliverEncoder.encode(from: "+15550100001", text: text, reference: 9, time: 1_767_225_600)
        rig.sim.receivePDU(parts[0])
        #expect(rig.run(until: { rig.sim.store.isEmpty && rig.inbox.waitingParts == 1 }))
        try rig.restartDaemon()
        rig.sim.receivePDU(parts[1])
        #expect(Self.collect(rig, 1).map(\.text) == [text])
    }

    /// A sender's reference comes round again (8 bits: every 256 long messages): a new long reply
    /// with the same reference and count, a day later, is a new reply, not a copy of the old one.
    @Test func aReusedReferenceIsANewReply() throws {
        let rig = try ModemRig()
        #expect(rig.ready())
        let first = String(repeating: "a", count: 200), second = String(repeating: "b", count: 200)
        for pdu in DeliverEncoder.encode(from: "+15550100001", text: first, reference: 42, time: 1_767_225_600) { rig.sim.receivePDU(pdu) }
        #expect(Self.collect(rig, 1).map(\.text) == [first])
        for pdu in DeliverEncoder.encode(from: "+15550100001", text: second, reference: 42, time: 1_767_312_000) { rig.sim.receivePDU(pdu) }
        #expect(Self.collect(rig, 1).map(\.text) == [second])
        #expect(rig.inbox.replies.map(\.text) == [first, second])
    }

    /// A full store: what it holds is collected at start-up, and the message the network held
    /// back meanwhile comes once there is room.
    @Test func aFullStoreIsEmptiedAndTheHeldMessageComes() throws {
        var script = ModemScript()
        script.storeCapacity = 3
        let rig = try ModemRig(script: script)
        for k in 1...3 {
            let pdu = DeliverEncoder.encode(from: "+1555010000\(k)", text: "old \(k)", reference: k, time: 1_767_225_000)[0]
            rig.sim.plant(StoredSMS(stat: 1, pdu: pdu))
        }
        rig.sim.receiveSMS(from: "+15550100001", text: "On my way")
        #expect(rig.sim.heldByNetwork == 1)
        let got = Self.collect(rig, 4)
        #expect(got.map(\.text) == ["old 1", "old 2", "old 3", "On my way"])
        #expect(rig.run(until: { rig.sim.store.isEmpty }))
        #expect(rig.modem.status.messageStore.map { [$0.used, $0.total] } == [3, 3])
        expectClean(rig.sim)
    }

    /// `+CMS ERROR: 322` (memory full) from the modem: the store is listed again at once.
    @Test func memoryFullIsRecoveredFrom() throws {
        var script = ModemScript()
        script.replies["AT+CMGL=4"] = [["+CMS ERROR: 322"]]
        let rig = try ModemRig(script: script)
        rig.sim.plant(StoredSMS(stat: 0, pdu: DeliverEncoder.encode(from: "+15550100001", text: "Here", reference: 1, time: 1_767_225_000)[0]))
        #expect(Self.collect(rig, 1).map(\.text) == ["Here"])
        #expect(rig.sim.commands.filter { $0 == "AT+CMGL=4" }.count == 2)
    }

    /// The card refuses the write: the message stays on the SIM (never deleted); the next
    /// daemon, with a card that works, collects it.
    @Test func aMessageTheCardRefusedStaysOnTheSIM() throws {
        let rig = try ModemRig()
        try rig.restartDaemon(inboxStorage: RefusingStore())
        #expect(rig.ready())
        rig.sim.receiveSMS(from: "+15550100001", text: "On my way")
        rig.run(for: .seconds(2))
        #expect(rig.sim.store.count == 1)
        #expect(!rig.sim.commands.contains { $0.hasPrefix("AT+CMGD") })
        try rig.restartDaemon()
        #expect(Self.collect(rig, 1).map(\.text) == ["On my way"])
        #expect(rig.run(until: { rig.sim.store.isEmpty }))
    }

    /// Killed after the write and before the deletion (the modem never answered AT+CMGD): the
    /// message is on the card *and* on the SIM; the next daemon deletes it without storing it twice.
    @Test func killedBetweenTheWriteAndTheDeletion() throws {
        var script = ModemScript()
        script.replies["AT+CMGD=1"] = [[]]
        let rig = try ModemRig(script: script)
        #expect(rig.ready())
        rig.sim.receiveSMS(from: "+15550100001", text: "On my way")
        #expect(rig.run(until: { rig.sim.commands.contains("AT+CMGD=1") }))
        #expect(rig.inbox.replies.count == 1 && rig.sim.store.count == 1, "on both")
        try rig.restartDaemon()
        #expect(rig.run(until: { rig.sim.store.isEmpty }))
        #expect(rig.inbox.replies.count == 1, "stored once")
        #expect(Self.replies(rig.modem.takeEvents()).isEmpty, "not news again (the link reports unseen ones at its start)")
        #expect(rig.modem.unseenReplies.map(\.text) == ["On my way"])
    }

    /// The person's "seen" is kept on the card.
    @Test func seenIsRemembered() throws {
        let rig = try ModemRig()
        rig.sim.receiveSMS(from: "+15550100001", text: "On my way")
        let got = Self.collect(rig, 1)
        rig.modem.markRepliesSeen(got.map(\.id))
        try rig.restartDaemon()
        #expect(rig.modem.unseenReplies.isEmpty)
        #expect(rig.inbox.replies.first?.seen == true)
    }

    /// +CMT (a modem routing messages directly): stored, then acknowledged in phase 2+.
    @Test func aDirectlyRoutedMessageIsStoredAndAcknowledged() throws {
        var script = ModemScript()
        script.messageService = 1
        let rig = try ModemRig(script: script)
        #expect(rig.ready())
        rig.sim.withScriptedModem { $0.expectAcknowledgement() }
        let pdu = DeliverEncoder.encode(from: "+15550100001", text: "Coming", reference: 1, time: 1_767_225_600)[0]
        rig.sim.inject(["+CMT: ,\(pdu.count - 8)", pdu.hexString])
        #expect(Self.collect(rig, 1).map(\.text) == ["Coming"])
        #expect(rig.run(until: { rig.sim.acknowledgementsDue == 0 }))
        #expect(rig.sim.commands.last == "AT+CNMA")
    }
}

/// A card that refuses every write.
final class RefusingStore: ListableStore, @unchecked Sendable {
    func read(_ name: String) throws(StoreError) -> [UInt8]? { nil }
    func replace(_ name: String, with bytes: [UInt8]) throws(StoreError) {
        throw StoreError(operation: "write", path: name, errno: 28, message: "No space left on device")
    }
    func replaceAll(_ files: [(name: String, bytes: [UInt8])]) throws(StoreError) {
        throw StoreError(operation: "write", path: "", errno: 28, message: "No space left on device")
    }
    func quarantine(_ name: String, suffix: String) throws(StoreError) -> String { name }
    var recoveryProblems: [String] { [] }
    func names() throws(StoreError) -> [String] { [] }
    func remove(_ name: String) throws(StoreError) {}
}
