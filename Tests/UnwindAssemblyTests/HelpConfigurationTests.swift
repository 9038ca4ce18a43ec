import Testing
import UnwindAssembly
import UnwindCore

/// The `panic:` and `checkin:` keys: the defaults, good values, and a table of hostile
/// forms — each refused with the key's name and what is allowed, never a crash.
@Suite struct HelpConfigurationTests {
    @Test func defaults() throws {
        let c = try DeviceConfiguration.parse("")
        #expect(c.settings.panic.escalateAfter == .seconds(180))
        #expect(c.settings.panic.ringFor == .seconds(25))
        #expect(c.settings.panic.callRounds == 1)
        #expect(c.settings.panic.okMessage == "I'm OK now. Thank you.")
        #expect(c.settings.panic.monthlyTest == false)
        #expect(c.readinessSignalFloor == 5)
        #expect(c.settings.checkIn.deadline == nil)
        #expect(c.settings.checkIn.grace == .seconds(1800))
    }

    /// An empty value means "unset" for every key of the file: the default message is sent.
    @Test func anEmptyMessageIsTheDefault() throws {
        #expect(try DeviceConfiguration.parse("panic:\n  ok_message: \"\"\n").settings.panic.okMessage == PanicSettings.defaultOKMessage)
    }

    @Test func goodValues() throws {
        let c = try DeviceConfiguration.parse("""
            panic:
              escalate_after_s: 0
              ring_s: 40
              call_rounds: 3
              ok_message: "False alarm, all fine!"
              monthly_test: true
              signal_floor: 10
            checkin:
              time: "9:05"
              grace_min: 45
              message: "No check-in from me today"
            """)
        #expect(c.settings.panic.escalateAfter == .zero)
        #expect(c.settings.panic.ringFor == .seconds(40))
        #expect(c.settings.panic.callRounds == 3)
        #expect(c.settings.panic.okMessage == "False alarm, all fine!")
        #expect(c.settings.panic.monthlyTest)
        #expect(c.readinessSignalFloor == 10)
        #expect(c.settings.checkIn.deadline == 9 * 60 + 5)
        #expect(c.settings.checkIn.grace == .seconds(45 * 60))
        #expect(c.settings.checkIn.message == "No check-in from me today")
    }

    @Test(arguments: [
        ("panic:\n  escalate_after_s: 10\n", "panic.escalate_after_s"),
        ("panic:\n  escalate_after_s: -1\n", "panic.escalate_after_s"),
        ("panic:\n  escalate_after_s: 1e9\n", "panic.escalate_after_s"),
        ("panic:\n  ring_s: 5\n", "panic.ring_s"),
        ("panic:\n  ring_s: \"twenty\"\n", "panic.ring_s"),
        ("panic:\n  call_rounds: 99\n", "panic.call_rounds"),
        ("panic:\n  call_rounds: [1]\n", "panic.call_rounds"),
        ("panic:\n  ok_message: \"  \"\n", "panic.ok_message"),
        ("panic:\n  ok_message: \"\(String(repeating: "x", count: 161))\"\n", "panic.ok_message"),
        ("panic:\n  ok_message: \"call me\\u0007now\"\n", "panic.ok_message"),
        ("panic:\n  ok_message: \"OK\\u202Ewon\"\n", "panic.ok_message"),
        ("panic:\n  monthly_test: maybe\n", "panic.monthly_test"),
        ("panic:\n  signal_floor: 32\n", "panic.signal_floor"),
        ("checkin:\n  time: \"25:00\"\n", "checkin.time"),
        ("checkin:\n  time: \"09:5\"\n", "checkin.time"),
        ("checkin:\n  time: \"9\"\n", "checkin.time"),
        ("checkin:\n  time: \"09:00:00\"\n", "checkin.time"),
        ("checkin:\n  time: \"-1:00\"\n", "checkin.time"),
        ("checkin:\n  time: \"０９:００\"\n", "checkin.time"),
        ("checkin:\n  grace_min: 0\n", "checkin.grace_min"),
        ("checkin:\n  grace_min: 100000\n", "checkin.grace_min"),
        ("checkin:\n  message: \"\(String(repeating: "é", count: 160))😀\"\n", "checkin.message"),
        ("checkin:\n  message: \"   \"\n", "checkin.message"),
        ("checkin:\n  tme: \"09:00\"\n", "checkin.tme"),
    ])
    func hostileValuesAreRefusedByName(_ yaml: String, _ key: String) {
        do {
            _ = try DeviceConfiguration.parse(yaml, path: "unwind.conf")
            Issue.record("accepted: \(yaml)")
        } catch {
            #expect(error.description.contains(key), "\(error.description)")
        }
    }
}
