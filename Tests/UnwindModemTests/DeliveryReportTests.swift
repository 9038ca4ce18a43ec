import Foundation
import Testing
import UnwindSimulatedHardware
import UnwindCore
import UnwindLinuxHardware
import UnwindModem

/// Status reports, in memory on simulated time: "delivered" only when the network says the
/// phone has every part, "failed" with the reason it gave, and "sent" for everything else.
@Suite("Status reports (in memory, simulated time)")
struct DeliveryReportTests {
    static func state(_ rig: ModemRig, _ id: MessageID) -> MessageState? { rig.modem.message(id)?.state }

    static func isDelivered(_ s: MessageState?) -> Bool { if case .delivered = s { true } else { false } }
    static func isSent(_ s: MessageState?) -> Bool { if case .sent = s { true } else { false } }

    @Test func deliveredReportSettlesTheMessage() throws {
        var script = ModemScript()
        script.defaultReports = .delivered(after: .seconds(3))
        let rig = try ModemRig(script: script)
        let a = alert()
        let id = rig.modem.send(a, slot: 1, at: rig.now)
        #expect(rig.settle())
        #expect(Self.isSent(Self.state(rig, id)) && rig.modem.message(id)?.awaitingReports == true)
        let journaled = try #require(rig.outbox.entries.first)
        #expect(journaled.sentAt != nil && journaled.references == [1] && journaled.reports == [nil], "waits on the card")
        #expect(rig.run(until: { Self.isDelivered(Self.state(rig, id)) }))
        #expect(rig.modem.message(id)?.awaitingReports == false)
        #expect(rig.modem.message(id)?.partsDelivered == 1)
        #expect(rig.outbox.entries.isEmpty)
        #expect(rig.modem.takeEvents().contains(.messageDelivered(id)))
        #expect(rig.sim.reportsSent.map(\.route) == [.inline])
        // Every submit asked for its report.
        #expect(rig.sim.parts.allSatisfy { $0.submit.firstOctet & 0x20 != 0 })
        expectClean(rig.sim, texts: [a.message])
    }

    @Test func temporaryErrorStaysSentThenDelivered() throws {
        var script = ModemScript()
        script.defaultReports = .temporaryThenDelivered(after: .milliseconds(500), then: .seconds(4))
        let rig = try ModemRig(script: script)
        let id = rig.modem.send(alert(), slot: 1, at: rig.now)
        #expect(rig.run(until: { rig.sim.reportsSent.count == 1 }))
        rig.run(for: .milliseconds(50))
        #expect(Self.isSent(Self.state(rig, id)), "the phone is busy: still only sent")
        #expect(rig.outbox.entries.first?.reports == [0x21], "the temporary status is journaled")
        #expect(rig.run(until: { Self.isDelivered(Self.state(rig, id)) }, within: .seconds(6)))
        #expect(rig.outbox.entries.isEmpty)
        expectClean(rig.sim)
    }

    @Test(arguments: [(UInt8(0x41), "not delivered: incompatible destination"), (0x46, "expired"), (0x62, "not delivered: no response"),
                      (0x9A, "service rejected")])
    func permanentErrorFailsWithTheReason(_ status: UInt8, _ words: String) throws {
        var script = ModemScript()
        script.defaultReports = .permanent(after: .seconds(1), status: status)
        let rig = try ModemRig(script: script)
        let id = rig.modem.send(alert(), slot: 1, at: rig.now)
        #expect(rig.run(until: { if case .failed = Self.state(rig, id) { true } else { false } }))
        guard case .failed(let p) = Self.state(rig, id) else { return }
        #expect(p == .notDelivered(status: Int(status)))
        #expect(p.description.contains(words), "\(p)")
        #expect(rig.outbox.entries.isEmpty)
        #expect(rig.modem.takeEvents().contains(.messageFailed(id, p)))
    }

    /// 0x01 "forwarded, delivery not confirmed": nothing more will come, and nothing says the
    /// phone has it — "sent" stands.
    @Test func unconfirmedCompletionStaysSent() throws {
        var script = ModemScript()
        script.defaultReports = ReportPlan([(.seconds(1), 0x01)])
        let rig = try ModemRig(script: script)
        let id = rig.modem.send(alert(), slot: 1, at: rig.now)
        #expect(rig.settle())
        #expect(rig.run(until: { rig.modem.message(id)?.awaitingReports == false }))
        #expect(rig.sim.reportsSent.count == 1)
        #expect(Self.isSent(Self.state(rig, id)))
        #expect(rig.outbox.entries.isEmpty)
    }

    /// No report ever: "sent" for good, and the outbox lets it go after the patience.
    @Test func neverAReportLeavesSent() throws {
        var script = ModemScript()
        script.defaultReports = .never
        let rig = try ModemRig(script: script, configure: { $0.timeouts.reports = .seconds(30) })
        let id = rig.modem.send(alert(), slot: 1, at: rig.now)
        #expect(rig.settle())
        rig.run(for: .seconds(20))
        #expect(Self.isSent(Self.state(rig, id)) && rig.modem.message(id)?.awaitingReports == true)
        #expect(rig.outbox.entries.count == 1)
        #expect(rig.run(until: { rig.outbox.entries.isEmpty }, within: .seconds(15)))
        #expect(Self.isSent(Self.state(rig, id)) && rig.modem.message(id)?.awaitingReports == false)
    }

    /// A modem that routes no reports at all: "sent" is the end of it at once, and the status says so.
    @Test func noRoutingMeansSentIsTheLastWord() throws {
        var script = ModemScript()
        script.refusedIndications = ["2,1,0,1,0", "2,1,0,2,0", "2,1,0,0,0", "1,1,0,0,0"]
        let rig = try ModemRig(script: script)
        let id = rig.modem.send(alert(), slot: 1, at: rig.now)
        #expect(rig.settle())
        #expect(rig.sim.commands.filter { $0.hasPrefix("AT+CNMI=") } == ["AT+CNMI=2,1,0,1,0", "AT+CNMI=2,1,0,2,0", "AT+CNMI=2,1,0,0,0", "AT+CNMI=1,1,0,0,0"])
        if case .unavailable = rig.modem.statusReports {} else { Issue.record("\(rig.modem.statusReports)") }
        #expect(rig.modem.statusReports.description.contains("stay \"sent\""))
        #expect(Self.isSent(Self.state(rig, id)) && rig.modem.message(id)?.awaitingReports == false)
        #expect(rig.outbox.entries.isEmpty)
        rig.run(for: .seconds(2))
        #expect(Self.isSent(Self.state(rig, id)), "the report the network sent was routed nowhere: never guessed")
        #expect(rig.sim.reportsSent.map(\.route) == [.dropped])
    }

    /// No +CDS on this modem: reports are stored (+CDSI), read with AT+CMGR and deleted.
    @Test func storedReportsAreReadAndDeleted() throws {
        var script = ModemScript()
        script.refusedIndications = ["2,1,0,1,0"]
        let rig = try ModemRig(script: script)
        let id = rig.modem.send(alert(), slot: 1, at: rig.now)
        #expect(rig.run(until: { Self.isDelivered(Self.state(rig, id)) }))
        #expect(rig.modem.statusReports == .stored)
        #expect(rig.run(until: { rig.sim.store.isEmpty && rig.sim.deletions == [1] }))
        #expect(rig.sim.commands.suffix(2) == ["AT+CMGR=1", "AT+CMGD=1"])
        #expect(rig.sim.reportsSent.map(\.route) == [.stored])
        expectClean(rig.sim)
    }

    /// A long message is delivered when every part is; one part's report is not enough.
    @Test func multipartDeliveredOnlyWhenEveryPartIs() throws {
        var script = ModemScript()
        script.reports[1] = .delivered(after: .milliseconds(200))
        script.reports[2] = .delivered(after: .seconds(3))
        let rig = try ModemRig(script: script)
        let a = alert("Sam", "+15550100003", String(repeating: "Come now. ", count: 13) + String(repeating: "€", count: 20))
        let id = rig.modem.send(a, slot: 3, at: rig.now)
        #expect(rig.run(until: { rig.modem.message(id)?.partsDelivered == 1 }))
        #expect(Self.isSent(Self.state(rig, id)), "part 2 is not known to be there yet")
        #expect(rig.outbox.entries.first?.reports == [0, nil])
        #expect(rig.run(until: { Self.isDelivered(Self.state(rig, id)) }, within: .seconds(5)))
        #expect(rig.modem.message(id)?.partsDelivered == 2)
    }

    @Test func multipartFailsWhenOnePartFails() throws {
        var script = ModemScript()
        script.reports[1] = .delivered(after: .milliseconds(200))
        script.reports[2] = .permanent(after: .milliseconds(400), status: 0x43)
        let rig = try ModemRig(script: script)
        let a = alert("Sam", "+15550100003", String(repeating: "Come now. ", count: 13) + String(repeating: "€", count: 20))
        let id = rig.modem.send(a, slot: 3, at: rig.now)
        #expect(rig.run(until: { if case .failed = Self.state(rig, id) { true } else { false } }))
        #expect(rig.modem.message(id)?.lastProblem == .notDelivered(status: 0x43))
    }

    /// The daemon restarts between "sent" and the report: the report still finds its message.
    @Test func reportAfterARestartFindsItsMessage() throws {
        var script = ModemScript()
        script.defaultReports = .delivered(after: .seconds(3))
        let rig = try ModemRig(script: script)
        let id = rig.modem.send(alert(), slot: 2, at: rig.now)
        #expect(rig.settle())
        try rig.restartDaemon()
        let resumed = try #require(rig.modem.message(id))
        #expect(Self.isSent(resumed.state) && resumed.awaitingReports && resumed.slot == 2)
        #expect(rig.run(until: { Self.isDelivered(Self.state(rig, id)) }, within: .seconds(5)))
        #expect(rig.sim.submitCount == 1, "not sent again")
        #expect(rig.outbox.entries.isEmpty)
        expectClean(rig.sim)
    }

    /// A report is matched on the reference and the recipient: the right reference for another
    /// number credits nothing, nor does a reference nobody waits on.
    @Test func aReportMustMatchReferenceAndRecipient() throws {
        var script = ModemScript()
        script.defaultReports = .never
        let rig = try ModemRig(script: script)
        let id = rig.modem.send(alert("Mum", "+15550100001"), slot: 1, at: rig.now)
        #expect(rig.settle())
        let mr = try #require(rig.outbox.entries.first?.references.first ?? nil)
        rig.sim.inject(Self.report(reference: mr, to: "15550100009", status: 0))
        rig.sim.inject(Self.report(reference: (mr + 1) % 256, to: "15550100001", status: 0))
        rig.run(for: .milliseconds(200))
        #expect(Self.isSent(Self.state(rig, id)))
        // The same phone written nationally: that one counts.
        rig.sim.inject(Self.report(reference: mr, to: "5550100001", status: 0, international: false))
        #expect(rig.run(until: { Self.isDelivered(Self.state(rig, id)) }))
    }

    /// Phase 2+ (`+CSMS: 1`): every +CDS is acknowledged with AT+CNMA once it is applied.
    @Test func phase2PlusAcknowledgesEachReport() throws {
        var script = ModemScript()
        script.messageService = 1
        let rig = try ModemRig(script: script)
        let ids = rig.modem.sendAll([(1, alert("Mum", "+15550100001")), (2, alert("Dad", "+15550100002"))], at: rig.now)
        #expect(rig.run(until: { ids.allSatisfy { Self.isDelivered(Self.state(rig, $0)) } }))
        rig.run(for: .milliseconds(100))
        #expect(rig.sim.commands.filter { $0 == "AT+CNMA" }.count == 2)
        #expect(rig.sim.acknowledgementsDue == 0)
        expectClean(rig.sim)
    }

    /// Follow-ups keep their purpose, in the journal too; an old journal without one is an alert.
    @Test func purposeSurvivesARestart() throws {
        var script = ModemScript()
        script.defaultSubmit = SubmitPlan(result: .silence)
        let rig = try ModemRig(script: script)
        let id = rig.modem.send(alert(), slot: 1, purpose: .allClear, at: rig.now)
        #expect(rig.outbox.entries.first?.purpose == .allClear)
        try rig.restartDaemon()
        #expect(rig.modem.message(id)?.purpose == .allClear)
        var old = Outbox.format(try #require(rig.outbox.entries.first))
        old = old.replacingOccurrences(of: "purpose all-clear\n", with: "")
        #expect(try Outbox.parse(Array(old.utf8), id: id).purpose == .panic)
    }

    /// An SMS-STATUS-REPORT as a network sends it: no SMSC field (the modem's +CDS), MR, RA, two
    /// time stamps, ST.
    static func report(reference: Int, to digits: String, status: UInt8, international: Bool = true) -> [String] {
        var b: [UInt8] = [0x00, 0x06, UInt8(reference), UInt8(digits.count), international ? 0x91 : 0x81]
        let d = digits.compactMap { $0.wholeNumberValue.map(UInt8.init) }
        for i in stride(from: 0, to: d.count, by: 2) { b.append((i + 1 < d.count ? d[i + 1] : 0x0F) << 4 | d[i]) }
        let stamp: [UInt8] = [0x62, 0x10, 0x10, 0x21, 0x43, 0x65, 0x00]
        b += stamp + stamp + [status]
        return ["+CDS: \(b.count - 1)", b.hexString]
    }
}

/// Reports for the first parts of a long message that arrive while its last part is still being
/// sent: kept, and counted once the message is accepted whole.
@Suite("Status reports of a long message's first parts")
struct EarlyReportTests {
    @Test func reportsThatComeWhileLaterPartsAreSentCount() throws {
        var script = ModemScript()
        // Three parts (UCS-2, 160 characters): parts 1 and 2 are reported 100 ms after their
        // +CMGS, while the modem takes 150 ms to show part 3's prompt.
        script.submits[3] = SubmitPlan(prompt: .after(.milliseconds(150)))
        script.defaultReports = .delivered(after: .milliseconds(100))
        let rig = try ModemRig(script: script)
        #expect(rig.ready())
        let text = "Please call me \u{1F64F} " + String(repeating: "I need help now. ", count: 8) + "Come if you can."
        let message = String(text.prefix(160))
        let a = alert("Mum", "+15550100001", message)
        let id = rig.modem.send(a, slot: 1, at: rig.now)
        #expect(rig.run(until: { rig.sim.reportsSent.count >= 2 && rig.modem.message(id)?.partsSent == 2 }, within: .seconds(5)),
                "parts 1 and 2 reported while part 3 waits")
        #expect(rig.settleReports(within: .seconds(10)))
        let m = try #require(rig.modem.message(id))
        #expect(m.parts == 3)
        if case .delivered = m.state {} else { Issue.record("not delivered: \(m)") }
        #expect(m.partsDelivered == 3, "\(m)")
        #expect(rig.sim.parts.count == 3, "sent once")
        expectClean(rig.sim, texts: [message])
    }
}
