import Testing
import UnwindCore
import UnwindModem
import UnwindSimulatedHardware

/// A modem that keeps stored status reports in its own "SR" memory (`+CDSI: "SR",<n>`, as a
/// Teltonika TRM240 does once it refuses `AT+CNMI=…,1,…`): the reports are read there and
/// deleted there, and the SIM's store is chosen again after — a delivered alert says DELIVERED,
/// an expired one says so.
@Suite("Status reports in the modem's report memory")
struct ReportMemoryTests {
    static func script(_ reports: ReportPlan) -> ModemScript {
        var script = ModemScript()
        script.refusedIndications = ["2,1,0,1,0"]
        script.reportMemory = "SR"
        script.defaultReports = reports
        return script
    }

    @Test func aDeliveredAlertSaysDelivered() throws {
        let rig = try ModemRig(script: Self.script(.delivered(after: .milliseconds(500))))
        let id = rig.modem.send(alert(), slot: 1, at: rig.now)
        #expect(rig.run(until: { DeliveryReportTests.isDelivered(DeliveryReportTests.state(rig, id)) }))
        #expect(rig.modem.statusReports == .stored)
        #expect(rig.run(until: { rig.sim.reportStore.isEmpty && !rig.sim.commands.isEmpty && rig.sim.commands.last == "AT+CPMS=\"SM\"" }))
        #expect(Array(rig.sim.commands.suffix(4)) == ["AT+CPMS=\"SR\"", "AT+CMGR=1", "AT+CMGD=1", "AT+CPMS=\"SM\""])
        #expect(rig.sim.withScriptedModem { $0.readMemory } == "SM", "the SIM's store is chosen again")
        expectClean(rig.sim)
    }

    /// TP-ST 0x46 ("validity period expired"): the alert says it did not reach the phone.
    @Test func anExpiredAlertSaysSo() throws {
        let rig = try ModemRig(script: Self.script(ReportPlan([(.milliseconds(500), 0x46)])))
        let id = rig.modem.send(alert(), slot: 1, at: rig.now)
        #expect(rig.run(until: { rig.modem.message(id)?.lastProblem == .notDelivered(status: 0x46) }, within: .seconds(10)),
                "\(String(describing: rig.modem.message(id)))")
        #expect(rig.run(until: { rig.sim.reportStore.isEmpty && rig.sim.withScriptedModem { $0.readMemory } == "SM" }))
    }

    /// A reply arriving while the report memory is read is read from the SIM's store after.
    @Test func aReplyMeanwhileIsReadFromTheSIMsStore() throws {
        let rig = try ModemRig(script: Self.script(.delivered(after: .milliseconds(500))))
        let id = rig.modem.send(alert(), slot: 1, at: rig.now)
        #expect(rig.run(until: { rig.sim.commands.last == "AT+CPMS=\"SR\"" }))
        rig.sim.receiveSMS(from: "+15550100001", text: "On my way")
        #expect(ReplyTests.collect(rig, 1).map(\.text) == ["On my way"])
        #expect(rig.run(until: { DeliveryReportTests.isDelivered(DeliveryReportTests.state(rig, id)) }))
        #expect(rig.run(until: { rig.sim.store.isEmpty && rig.sim.reportStore.isEmpty }))
        #expect(rig.sim.withScriptedModem { $0.readMemory } == "SM")
        expectClean(rig.sim)
    }

    /// What the modem says of its report memory is checked like any index: out of range or not a
    /// number it never reaches a command line, and one announced twice is read once.
    @Test func hostileReportIndicesNeverReachACommand() throws {
        let rig = try ModemRig(script: Self.script(ReportPlan([])))
        #expect(rig.ready())
        rig.sim.inject(["+CDSI: \"SR\",99999999", "+CDSI: \"SR\",-1", "+CDSI: \"SR\",1;AT+CMGD=2", "+CDSI: \"SR\",1e3"])
        rig.run(for: .seconds(2))
        #expect(rig.sim.commands.filter { $0.hasPrefix("AT+CMGR=") }.isEmpty)
        #expect(!rig.sim.commands.contains { $0.contains("99999999") || $0.contains("-1") || $0.contains(";") })
        rig.sim.inject(["+CDSI: \"SR\",3", "+CDSI: \"SR\",3"])
        rig.run(for: .seconds(2))
        #expect(rig.sim.commands.filter { $0 == "AT+CMGR=3" }.count == 1, "\(rig.sim.commands)")
        #expect(rig.sim.withScriptedModem { $0.readMemory } == "SM", "the SIM's store is chosen again")
        expectClean(rig.sim)
    }
}
