import Testing
import UnwindSimulatedHardware
import UnwindCore
import UnwindModem

/// A SIM with a PIN (the configuration's `modem.sim_pin`): entered once per modem start, never
/// again after a refusal, never shown in a log line.
@Suite("SIM PIN")
struct SIMPinTests {
    @Test func theConfiguredPinUnlocksTheSimAndAlertsGoOut() throws {
        var script = ModemScript()
        script.simPIN = "4921"
        let rig = try ModemRig(script: script, configure: { $0.simPIN = SIMPin("4921") })
        #expect(rig.ready())
        #expect(rig.modem.status.sim == .ready)
        #expect(rig.sim.commands.filter { $0.hasPrefix("AT+CPIN=") } == ["AT+CPIN=\"4921\""])
        let a = alert()
        rig.modem.send(a, slot: 0, at: rig.now)
        #expect(rig.settle())
        #expect(rig.sim.delivered.map(\.text) == [a.message])
    }

    @Test func aWrongPinIsTriedOnceSoTheSimNeverLocks() throws {
        var script = ModemScript()
        script.simPIN = "4921"
        let rig = try ModemRig(script: script, configure: { $0.simPIN = SIMPin("1111") })
        rig.run(for: .seconds(2))
        #expect(rig.modem.status.link != .ready)
        #expect(rig.sim.commands.filter { $0.hasPrefix("AT+CPIN=") }.count == 1)
        if case .locked(let why) = rig.modem.status.sim { #expect(why.contains("refused")) } else {
            Issue.record("SIM state \(rig.modem.status.sim)")
        }
    }

    @Test func withoutAPinTheSimStaysLockedAndSaysSo() throws {
        var script = ModemScript()
        script.simPIN = "4921"
        let rig = try ModemRig(script: script)
        rig.run(for: .seconds(1))
        #expect(!rig.sim.commands.contains { $0.hasPrefix("AT+CPIN=") })
        #expect(rig.modem.status.sim == .locked("SIM PIN"))
    }

    @Test func onlyDigitsMakeAPin() {
        #expect(SIMPin("1234") != nil && SIMPin("12345678") != nil)
        for bad in ["123", "123456789", "12a4", "12\"4", "1234;", "", "١٢٣٤"] { #expect(SIMPin(bad) == nil) }
        #expect(ATCommand.enterPIN(SIMPin("1234")!).logged == "AT+CPIN=\"****\"")
    }
}
