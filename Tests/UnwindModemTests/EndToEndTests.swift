import Foundation
import Testing
import UnwindSimulatedHardware
import UnwindCore
import UnwindLinuxHardware
import UnwindModem

/// The panic path end to end over a real pseudo-terminal: the real `SerialPort` (termios, raw
/// mode, non-blocking reads, the kernel's buffers) against the same scripted modem the
/// in-memory scenarios use, on the real clock. Only what the in-memory line cannot show runs
/// here: real bytes through a tty, a slow and a garbled line, a tty that vanishes and comes
/// back. (The outbox kill test, with its child process, is `OutboxKillTests`.)
@Suite("Modem end to end on a pseudo-terminal", .serialized)
struct EndToEndTests {
    /// PANIC with five contacts, two of them multipart (one UCS-2, one with the GSM-7 extension table): every alert out, in slot
    /// order, exactly as the network reads the bytes.
    @Test func fiveAlerts() throws {
        let rig = try ModemRig(over: .pty)
        #expect(rig.ready())
        #expect(rig.transcript == startupTranscript)
        let alerts: [(slot: Int, alert: AlertSlot)] = [
            (1, alert("Mum", "+15550100001", "Panic attack. Please call me.")),
            (2, alert("Dad", "7787824615", "Ça va pas — appelle-moi 🙏 " + String(repeating: "vite ", count: 20))),
            (3, alert("Sam", "+15550100003", String(repeating: "Come now. ", count: 13) + String(repeating: "€", count: 20))),
            (4, alert("Ana", "+15550100004", "Please call me.")),
            (5, alert("Kit", "+15550100005", "I need you, call me.")),
        ]
        let ids = rig.modem.sendAll(alerts, at: rig.now)
        #expect(rig.settle(within: .seconds(10)))
        #expect(rig.sim.delivered.map(\.text) == alerts.map(\.alert.message))
        #expect(rig.sim.delivered.map(\.number) == ["+15550100001", "7787824615", "+15550100003", "+15550100004", "+15550100005"])
        #expect(rig.sim.delivered.map(\.parts) == [1, 2, 2, 1, 1])
        // Sent, or already delivered: on a slow machine (or under qemu-user) the simulator's status
        // reports can arrive before this line runs.
        #expect(ids.allSatisfy {
            switch rig.modem.message($0)?.state {
            case .sent, .delivered: true
            default: false
            }
        })
        #expect(rig.settleReports(within: .seconds(10)))
        #expect(ids.allSatisfy { if case .delivered = rig.modem.message($0)?.state { true } else { false } })
        #expect(rig.outbox.entries.isEmpty)
        expectClean(rig.sim, texts: alerts.map(\.alert.message))
    }

    /// Help is coming over a real tty: a status report turns "sent" into "delivered", and a reply
    /// (UCS-2, so its PDU is long) goes from the SIM to the card and off the SIM.
    @Test func aReportAndAReply() throws {
        var script = ModemScript()
        script.defaultReports = .delivered(after: .milliseconds(300))
        let rig = try ModemRig(script: script, over: .pty)
        #expect(rig.ready())
        let id = rig.modem.send(alert(), slot: 1, at: rig.now)
        #expect(rig.run(until: { if case .delivered = rig.modem.message(id)?.state { true } else { false } }, within: .seconds(10)))
        #expect(rig.outbox.entries.isEmpty)
        rig.sim.receiveSMS(from: "+15550100001", text: "On my way 🙏 — 10 min")
        var got: [IncomingReply] = []
        #expect(rig.run(until: {
            got += rig.modem.takeEvents().compactMap { if case .replyReceived(let r) = $0 { r } else { nil } }
            return !got.isEmpty && rig.sim.store.isEmpty
        }, within: .seconds(10)))
        #expect(got.map(\.text) == ["On my way 🙏 — 10 min"] && got.map(\.from) == ["+15550100001"])
        #expect(rig.inbox.replies.count == 1)
        expectClean(rig.sim)
    }

    /// The ladder over a real tty: a call that nobody answers ends by itself, the next one is
    /// hung up and a third dialled at once.
    @Test func theLaddersCalls() throws {
        var script = ModemScript()
        script.dials["+15550100001"] = .endsAfter(.milliseconds(300), "NO ANSWER")
        let rig = try ModemRig(script: script, over: .pty)
        #expect(rig.ready())
        let mum = try PhoneNumber("+15550100001"), dad = try PhoneNumber("+15550100002"), sam = try PhoneNumber("+15550100003")
        rig.modem.dial(mum, at: rig.now.instant)
        #expect(rig.run(until: { rig.modem.call == .ended("NO ANSWER") }))
        rig.modem.dial(dad, at: rig.now.instant)
        #expect(rig.run(until: { rig.modem.call == .active(dad) }))
        rig.modem.hangUp()
        rig.modem.dial(sam, at: rig.now.instant)
        #expect(rig.run(until: { rig.modem.call == .active(sam) }))
        #expect(rig.sim.calls == ["ATD+15550100001;", "ATD+15550100002;", "ATH", "ATD+15550100003;"])
        expectClean(rig.sim)
    }

    /// STATUS by SMS over a real tty: a contact texts "status" from their number without the "+",
    /// the core decides, and the answer goes to the number the slot stores. Nothing of the
    /// request is ever on a command line: the modem heard AT+CMGR/AT+CMGD and PDUs in hex.
    @Test func aStatusRequestAndItsAnswer() throws {
        let rig = try ModemRig(over: .pty)
        #expect(rig.ready())
        var core = DeviceCore(alertSlots: [.ready(alert("Mum", "+15550100001", "Panic attack. Please call me."))])
        var effects: [Effect] = []
        rig.sim.receiveSMS(from: "15550100001", text: "status")
        #expect(rig.run(until: {
            for event in rig.modem.takeEvents() {
                switch event {
                case .replyReceived(let r): core.apply(.replyReceived(r), at: rig.now, effects: &effects)
                case .readiness(let r, _): core.apply(.alertReadiness(r), at: rig.now, effects: &effects)
                default: break
                }
            }
            for case .sendText(let t) in effects { rig.modem.sendNotice(t.message, at: rig.now) }
            effects.removeAll()
            return !rig.sim.delivered.isEmpty && rig.sim.store.isEmpty
        }, within: .seconds(10)))
        #expect(rig.sim.delivered.map(\.number) == ["+15550100001"])
        #expect(rig.sim.delivered.first?.text.hasPrefix("Unwind: a PANIC would go out now. Signal: ") == true)
        #expect(!rig.transcript.lowercased().contains("status"), "the request's words never on the line")
        #expect(rig.sim.commands.filter { $0.hasPrefix("AT+CMGS=") }.count == 1)
        expectClean(rig.sim)
    }

    /// A contact picks up over a real tty: `AT+CLCC` says so (stat 0), the call is left up, and
    /// when they hang up (NO CARRIER) it is over. The network saw one dial and one answer.
    @Test func aCallAnsweredThenHungUp() throws {
        var script = ModemScript()
        script.dials["+15550100001"] = .answers(after: .milliseconds(1500), hangsUpAfter: .seconds(2))
        let rig = try ModemRig(script: script, over: .pty)
        #expect(rig.ready())
        let mum = try PhoneNumber("+15550100001")
        rig.modem.dial(mum, at: rig.now.instant)
        #expect(rig.run(until: { rig.modem.call == .active(mum) }))
        #expect(rig.run(until: { rig.modem.call == .answered(mum) }, within: .seconds(10)))
        #expect(rig.run(until: { if case .ended = rig.modem.call { true } else { false } }, within: .seconds(10)))
        #expect(rig.sim.calls == ["ATD+15550100001;"] && rig.sim.answeredCalls == ["+15550100001"])
        #expect(rig.sim.commands.contains("AT+CLCC"))
        expectClean(rig.sim)
    }

    @Test func slowBaudRate() throws { try ModemScenarioTests.slowBaudRate(over: .pty) }

    @Test func garbageFromTheModemIsIgnored() throws { try ModemScenarioTests.garbageFromTheModemIsIgnored(over: .pty) }

    @Test func ttyClosedAndReopened() throws { try ModemScenarioTests.ttyClosedAndReopened(over: .pty) }
}
