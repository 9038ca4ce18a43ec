import Foundation
import Testing
import UnwindSimulatedHardware
import UnwindCore
import UnwindLinuxHardware
import UnwindModem
import UnwindSeams

@Suite("Outbox: journaled, restart-safe")
struct OutboxTests {
    @Test func formatRoundTrip() throws {
        let e = OutboxEntry(id: MessageID("alert-1767225600-3-00ff"), created: WallTime(secondsSinceEpoch: 1_767_225_600),
                            sequence: 3, slot: 2, alert: alert("Mum", "+15550100001", "Call me, 'now' — 🙏"),
                            reference: 4711, partsSent: 1, attempts: 2, failure: nil,
                            history: [OutboxAttempt(at: WallTime(secondsSinceEpoch: 1_767_225_601), problem: "network error 38 (network out of order)")])
        let text = Outbox.format(e)
        #expect(text == """
            unwind-outbox 1
            created 1767225600
            sequence 3
            slot 2
            name Mum
            number +15550100001
            reference 4711
            parts-sent 1
            attempts 2
            purpose panic
            message Call me, 'now' — 🙏
            attempt 1767225601 network error 38 (network out of order)

            """)
        #expect(try Outbox.parse(Array(text.utf8), id: e.id) == e)
        var failed = e
        failed.failure = "+15550100001 is not in service"
        failed.slot = nil
        #expect(try Outbox.parse(Array(Outbox.format(failed).utf8), id: e.id) == failed)
    }

    @Test func entriesSurviveAReloadInOrder() throws {
        let dir = ScratchDirectory()
        let outbox = Outbox(storage: try DirectoryStore.outbox(at: dir.path))
        for k in 1...5 {
            let (_, error) = outbox.add(alert("C\(k)", "+1555010000\(k)", "Help \(k)"), slot: k,
                                        at: WallTime(secondsSinceEpoch: 100), reference: UInt16(k), nonce: UInt16(k * 7))
            #expect(error == nil)
        }
        let again = Outbox(storage: try DirectoryStore.outbox(at: dir.path))
        #expect(again.entries.map(\.alert.name) == ["C1", "C2", "C3", "C4", "C5"])
        #expect(again.entries == outbox.entries)
        try again.remove(again.entries[0].id)
        #expect(Outbox(storage: try DirectoryStore.outbox(at: dir.path)).entries.count == 4)
        let more = Outbox(storage: try DirectoryStore.outbox(at: dir.path))
        let (next, _) = more.add(alert(), slot: nil, at: WallTime(secondsSinceEpoch: 200), reference: 1, nonce: 1)
        #expect(next.sequence == 6, "sequence continues after a restart")
    }

    /// An outbox file edited by hand with a control character in the message, or a malformed
    /// one, is moved aside and reported — never sent.
    @Test func craftedOutboxFilesAreQuarantinedNotSent() throws {
        let dir = ScratchDirectory()
        let good = Outbox.format(OutboxEntry(id: MessageID("a"), created: WallTime(secondsSinceEpoch: 1), sequence: 1, slot: 1,
                                             alert: alert(), reference: 1))
        let evil = good.replacingOccurrences(of: "message I'm", with: "message \u{1A}AT+CMGS=9\r\u{1B}I'm")
        let evilNumber = good.replacingOccurrences(of: "number +15550100001", with: "number +1555\";ATD911;")
        try evil.write(toFile: dir.path + "/alert-1-1-0001.msg", atomically: true, encoding: .utf8)
        try evilNumber.write(toFile: dir.path + "/alert-1-2-0002.msg", atomically: true, encoding: .utf8)
        try "garbage".write(toFile: dir.path + "/alert-1-3-0003.msg", atomically: true, encoding: .utf8)
        let outbox = Outbox(storage: try DirectoryStore.outbox(at: dir.path), now: WallTime(secondsSinceEpoch: 42))
        #expect(outbox.entries.isEmpty)
        #expect(outbox.problems.count == 3)
        #expect(outbox.problems[0].contains("message: character 1 is Ctrl-Z"))
        #expect(outbox.problems[1].contains("number: character 6 is \"\"\" (U+0022)"))
        let files = try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted()
        #expect(files == ["alert-1-1-0001.msg.corrupt-42", "alert-1-2-0002.msg.corrupt-42", "alert-1-3-0003.msg.corrupt-42"])

        let line = SimulatedModemLine(clock: SimulatedTime())
        let modem = GSMModem(port: line, outbox: outbox, configuration: testConfiguration(), logger: quietLogger())
        #expect(modem.isIdle, "nothing to send")
    }

    /// The daemon is killed after the outbox write and before +CMGS (the modem swallowed the
    /// PDU); the restarted daemon sends the alert. Once or twice — never zero times.
    @Test func killedBetweenOutboxWriteAndCMGS() throws {
        var script = ModemScript()
        script.submits[1] = SubmitPlan(result: .silence)
        let rig = try ModemRig(script: script, configure: { $0.timeouts.submit = .seconds(5) })
        #expect(rig.ready())
        let a = alert()
        let id = rig.modem.send(a, slot: 3, at: rig.now)
        #expect(try DirectoryStore.outbox(at: rig.directory.path).names() == [id.rawValue + ".msg"], "on disk before any AT traffic")
        #expect(rig.run(until: { rig.sim.prompts.count == 1 }))
        try rig.restartDaemon()  // SIGKILL: no goodbye, no +CMGS
        #expect(rig.modem.messages.map(\.id) == [id], "picked up from the outbox")
        #expect(rig.settle())
        #expect(rig.sim.delivered.map(\.text) == [a.message])
        #expect(rig.sim.possiblyDelivered.count == 2, "duplicated, not lost")
        #expect(rig.settleReports())
        #expect(try DirectoryStore.outbox(at: rig.directory.path).names().isEmpty)
        expectClean(rig.sim)
    }

    /// Killed right after the write, before the modem saw a single byte.
    @Test func killedBeforeAnyATTraffic() throws {
        let rig = try ModemRig()
        let a = alert()
        rig.modem.send(a, slot: 1, at: rig.now)
        #expect(rig.sim.received.isEmpty)
        try rig.restartDaemon()
        #expect(rig.settle())
        #expect(rig.sim.delivered.map(\.text) == [a.message])
        #expect(rig.sim.submitCount == 1)
    }

    /// Killed after part 1 of 2 was confirmed: the restarted daemon sends part 2 only, with the
    /// same concatenation reference, so the phone joins them.
    @Test func multipartResumesAfterRestart() throws {
        var script = ModemScript()
        script.submits[2] = SubmitPlan(result: .silence)
        let rig = try ModemRig(script: script, configure: { $0.timeouts.submit = .seconds(5) })
        #expect(rig.ready())
        let a = alert("Mum", "+15550100001", String(repeating: "ж", count: 100))
        let id = rig.modem.send(a, slot: 1, at: rig.now)
        #expect(rig.run(until: { rig.sim.prompts.count == 2 }))
        #expect(rig.outbox.entry(id)?.partsSent == 1)
        try rig.restartDaemon()
        #expect(rig.settle())
        #expect(rig.sim.submitCount == 3)
        #expect(rig.sim.delivered == [SimulatedSMS(number: "+15550100001", text: a.message, parts: 2)])
        let refs = Set(rig.sim.parts.compactMap { $0.submit.concatenation?.reference })
        #expect(refs.count == 1)
    }

    /// The SD card refuses the write: the alert is still sent, and says it was not journaled.
    @Test func unwritableOutboxStillSends() throws {
        let clock = SimulatedTime()
        let sim = SimulatedModemLine(clock: clock)
        let storage = FailingStorage()
        let modem = GSMModem(port: sim, outbox: Outbox(storage: storage), configuration: testConfiguration(), logger: quietLogger())
        let id = modem.send(alert(), slot: 1, at: clock.now())
        #expect(modem.message(id)?.journaled == false)
        if case .notJournaled(let why)? = modem.message(id)?.lastProblem { #expect(why.contains("No space left")) } else {
            Issue.record("the person must learn the alert was not saved")
        }
        let end = clock.now().instant + .seconds(5)
        while !modem.isIdle && clock.now().instant < end {
            modem.step(at: clock.now())
            clock.advance(by: .milliseconds(1))
        }
        #expect(sim.delivered.count == 1)
    }
}

final class FailingStorage: ListableStore {
    func names() throws(StoreError) -> [String] { [] }
    func read(_ name: String) throws(StoreError) -> [UInt8]? { nil }
    func replace(_ name: String, with bytes: [UInt8]) throws(StoreError) {
        throw StoreError(operation: "write", path: name, errno: ENOSPC, message: "No space left on device")
    }
    func remove(_ name: String) throws(StoreError) {}
    func quarantine(_ name: String, suffix: String) throws(StoreError) -> String { name }
    func replaceAll(_ files: [(name: String, bytes: [UInt8])]) throws(StoreError) {
        throw StoreError(operation: "write", path: "restore", errno: ENOSPC, message: "No space left on device")
    }
    var recoveryProblems: [String] { [] }
}

@Suite("Alert slot files in the state directory")
struct AlertSlotStoreTests {
    @Test func loadSaveClear() throws {
        let dir = ScratchDirectory()
        let store = try DirectoryStore(directory: dir.path)
        #expect(AlertSlotStore.load(from: store) == Array(repeating: .empty, count: 5))
        try AlertSlotStore.save(alert("Mum"), slot: 1, to: store)
        try AlertSlotStore.save(alert("Dad", "7787824615"), slot: 4, to: store)
        try store.replace("alert02.txt", with: Array("Sam\n+1 555 0100\nHelp\n".utf8))  // edited by hand
        let slots = AlertSlotStore.load(from: store)
        #expect(slots[0].alert?.name == "Mum" && slots[3].alert?.name == "Dad")
        if case .needsAttention(let p) = slots[1] { #expect(p.description.hasPrefix("line 2, number: character 3 is a space")) } else {
            Issue.record("slot 2 must need attention")
        }
        #expect(slots[2] == .empty && slots[4] == .empty)
        #expect(AlertSlotStore.panicAlerts(slots).map(\.slot) == [1, 4], "the broken slot is skipped, the others work")
        try AlertSlotStore.clear(slot: 1, in: store)
        #expect(AlertSlotStore.load(from: store)[0] == .empty)
        #expect(try String(contentsOfFile: dir.path + "/alert04.txt", encoding: .utf8)
                == "Dad\n7787824615\nI'm having a panic attack. Please call me.\n")
    }
}

/// Outbox files are outside input (the service user can write them; a card can rot): no field
/// may crash the device at start or at the next PANIC.
@Suite("Outbox: hostile files")
struct OutboxHostileFileTests {
    static func file(sequence: String = "1", attempts: String = "0", created: String = "1700000000",
                     partsSent: String = "0", reference: String = "1") -> String {
        """
        unwind-outbox 1
        created \(created)
        sequence \(sequence)
        slot 1
        name Mum
        number +447700900123
        reference \(reference)
        parts-sent \(partsSent)
        attempts \(attempts)
        message hi

        """
    }

    static let cases: [(String, String)] = [
        ("sequence Int.max - 1", file(sequence: "9223372036854775806")),
        ("sequence Int.max", file(sequence: "9223372036854775807")),
        ("sequence past Int.max", file(sequence: "99999999999999999999999")),
        ("attempts Int.max", file(attempts: "9223372036854775807")),
        ("created Int.max", file(created: "9223372036854775807")),
        ("parts-sent Int.max", file(partsSent: "9223372036854775807")),
        ("reference 65536", file(reference: "65536")),
        ("negative sequence", file(sequence: "-1")),
    ]

    @Test(arguments: cases)
    func aHostileNumberIsSetAsideAndTheNextAlertIsJournaled(_ name: String, _ text: String) throws {
        let dir = ScratchDirectory("outbox-hostile")
        try Data(text.utf8).write(to: URL(fileURLWithPath: dir.path + "/a.msg"))
        let outbox = Outbox(storage: try DirectoryStore.outbox(at: dir.path))
        #expect(outbox.entries.isEmpty, "\(name) was taken as a message")
        #expect(outbox.problems.count == 1, "\(name): \(outbox.problems)")
        let names = try DirectoryStore.outbox(at: dir.path).names()
        #expect(names.contains { $0.hasPrefix("a.msg.corrupt-") }, "\(name): kept aside, not deleted: \(names)")
        let (entry, error) = outbox.add(alert(), slot: 1, at: WallTime(secondsSinceEpoch: 1_800_000_000), reference: 7, nonce: 1)
        #expect(error == nil)
        #expect(Outbox(storage: try DirectoryStore.outbox(at: dir.path)).entries.map(\.id) == [entry.id])
    }

    /// A restore journal planted in the outbox directory (a dead writer's pid, committed, holding
    /// a directory where a message file should be) cannot be finished: it is set aside, the
    /// outbox says so, and a real message beside it still loads.
    @Test func anUnfinishableJournalIsSetAsideAndSaid() throws {
        let dir = ScratchDirectory("outbox-journal")
        let journal = dir.path + "/.txn-2147483646-1"
        try FileManager.default.createDirectory(atPath: journal + "/b.msg", withIntermediateDirectories: true)
        #expect(FileManager.default.createFile(atPath: journal + "/.commit", contents: nil))
        try Data(Self.file().utf8).write(to: URL(fileURLWithPath: dir.path + "/a.msg"))
        let outbox = Outbox(storage: try DirectoryStore.outbox(at: dir.path))
        #expect(outbox.entries.map(\.id.rawValue) == ["a"])
        #expect(outbox.problems.contains { $0.contains("could not be finished") }, "\(outbox.problems)")
        #expect(FileManager.default.fileExists(atPath: journal + ".unfinished"))
    }
}
