import Foundation
import Testing
import UnwindAssembly
import UnwindCore

/// Hostile configuration of help is coming and breathing patterns through the real
/// `DeviceConfiguration.parse`, and hostile state files through the real `unwind` CLI. A
/// `// Regression:` line names the defect its test keeps out.
@Suite struct ConfigurationAndStateFileHostileInputTests {
    func problems(_ yaml: String) -> [String] {
        do {
            _ = try DeviceConfiguration.parse(yaml, path: "unwind.conf")
            return []
        } catch {
            return error.problems.map(\.description)
        }
    }

    @Test(arguments: [
        "checkin:\n  time: \"24:00\"\n", "checkin:\n  time: \"9:60\"\n", "checkin:\n  time: \"-1:00\"\n", "checkin:\n  time: \"09:00:00\"\n",
        "checkin:\n  time: 900\n", "checkin:\n  grace_min: 0\n", "checkin:\n  grace_min: 99999999999999999999999\n",
        "checkin:\n  grace_min: -5\n", "checkin:\n  message: \"   \"\n",
        "checkin:\n  message: \"" + String(repeating: "x", count: 161) + "\"\n", "panic:\n  escalate_after_s: 29\n",
        "panic:\n  escalate_after_s: -1\n", "panic:\n  ring_s: 0\n", "panic:\n  ring_s: 9223372036854775807\n",
        "panic:\n  call_rounds: 6\n", "panic:\n  call_rounds: 1.5\n", "panic:\n  monthly_test: maybe\n",
        "panic:\n  signal_floor: 32\n",
        "breathing:\n  pattern: 4,0,6,0 from 11 over 100000\n", "breathing:\n  pattern: 4,0,6,0 from 999 over 180\n",
        "breathing:\n  pattern: 0,0,0,0\n", "breathing:\n  pattern: box\n  inhale: 5\n", "breathing:\n  session_minutes: 3\n",
        "breathing:\n  session_minutes: -5\n", "breathing:\n  top_up: 0.4\n", "breathing:\n  check_in: 2\n",
        "haptics:\n  inhale: 120,120,120,120,120\n", "haptics:\n  inhale: 19\n", "haptics:\n  gap_ms: 0\n",
        "haptics:\n  inhale: 120\n  pulse_ms: 100\n", "haptics:\n  inhale: \",\"\n",
    ])
    func everyWrongKeyIsNamed(_ yaml: String) {
        let p = problems(yaml)
        #expect(!p.isEmpty, "accepted: \(yaml)")
    }

    /// The device moves aside, replaces and chowns what it finds in its state directory: a
    /// system directory there would be damaged.
    @Test(arguments: ["/etc", "/etc/", "/", "/usr/lib/unwind", "/var/lib", "/var/lib/../../etc", "/tmp", "/proc/self", "/dev/shm",
                      "/home", "/root", "/sys/class"])
    func aSystemDirectoryIsNoStateDirectory(_ path: String) {
        let p = problems("state_directory: \(path)\n")
        #expect(p.contains { $0.contains("state_directory") && $0.contains("system directory") }, "accepted: \(path): \(p)")
    }

    @Test(arguments: ["/var/lib/unwind", "/srv/unwind/state", "/home/pi/unwind", "/tmp/unwind-test", "/var/lib/./unwind"])
    func aDirectoryOfItsOwnIsAStateDirectory(_ path: String) {
        #expect(problems("state_directory: \(path)\n").isEmpty)
    }

    /// A maintainer turning the check-in on the short way: `checkin: on`. The device must say
    /// the check-in is not on, not leave the person believing help comes if they do not check in.
    @Test(arguments: ["checkin: on\n", "checkin: \"09:00\"\n", "panic: 5\n"])
    func aValueInsteadOfTheHelpSectionsIsNamed(_ yaml: String) {
        // Regression: `checkin:` and `panic:` accepting a value where `breathing:`/`haptics:` name it ("checkin: on" accepted, the check-in silently off).
        #expect(!problems(yaml).isEmpty, "accepted: \(yaml)")
    }

    /// An empty value means the key is unset, for every key of the file (the shipped
    /// unwind.conf relies on it: `service_centre: ""  # empty: the SIM's own`): the default.
    @Test(arguments: ["checkin:\n  message: \"\"\n", "panic:\n  ok_message: \"\"\n", "haptics:\n  inhale: \"\"\n"])
    func anEmptyValueMeansTheDefault(_ yaml: String) throws {
        #expect(problems(yaml).isEmpty, "refused: \(yaml)")
        let empty = try DeviceConfiguration.parse(yaml, path: "unwind.conf")
        let absent = try DeviceConfiguration.parse("", path: "unwind.conf")
        #expect(empty.settings == absent.settings, "not the default: \(yaml)")
    }

    @Test func acceptedHelpKeysAreWhatTheySay() throws {
        let c = try DeviceConfiguration.parse("""
            panic:
              escalate_after_s: 0
              ring_s: 90
              call_rounds: 5
              ok_message: "Fine now, sorry!"
              monthly_test: true
            checkin:
              time: "23:59"
              grace_min: 240
            """, path: "unwind.conf")
        #expect(c.settings.panic.escalateAfter == .zero)
        #expect(c.settings.panic.callRounds == 5)
        #expect(c.settings.checkIn.deadline == 23 * 60 + 59)
        #expect(c.settings.checkIn.grace == .seconds(240 * 60))
        #expect(c.settings.panic.okMessage == "Fine now, sorry!")
    }

    /// The older key `haptics.breath_pulses` still read with its own meaning (a configuration
    /// written without the per-phase keys must still start, and feel as it always did;
    /// Sources/UnwindCore/README.md: "then breathing in and out feel alike"): two
    /// breath pulses give "breathe in" two 120 ms taps, as "hold" has. Only the new per-phase keys are checked for
    /// twins (identicalPhasePulsesAreAtLeastReported).
    @Test func anOlderHapticsKeyKeepsItsOldMeaning() throws {
        #expect(problems("haptics:\n  breath_pulses: 2\n").isEmpty)
        let c = try DeviceConfiguration.parse("haptics:\n  breath_pulses: 2\n", path: "unwind.conf")
        let h = c.settings.haptics
        #expect(h.inhale.count == 2 && h.inhale.allSatisfy { $0 == .milliseconds(120) }, "\(h.inhale)")
        #expect(h.inhale == h.hold)
    }

    /// A configuration that gives every phase the same pulses is reported: each phase has its
    /// own pulse pattern so that it can be told apart with eyes closed.
    @Test func identicalPhasePulsesAreAtLeastReported() {
        let p = problems("haptics:\n  inhale: 120\n  exhale: 120\n  hold: 120\n  top_up: 120\n")
        // Regression: every phase set to one 120 ms tap accepted silently.
        #expect(!p.isEmpty)
    }

    // MARK: The CLI on hostile state files

    @Test func statsOnAHostileHistoryNeverTraps() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try Data("""
            999999999999 999999999999 box 10 0
            0 1 - 0 10
            1767229200 300 calm 7 3
            1767229200 300 calm 11 3
            x y

            """.utf8).write(to: URL(fileURLWithPath: dir + "/sessionHistory.txt"))
        try Data("0\n0\n999999999999\n1\n999999999999\n999999999999\n".utf8).write(to: URL(fileURLWithPath: dir + "/totalTime.txt"))
        let stats = UnwindRun.run(["stats", "--state", dir])
        #expect(stats.status == 0 || stats.stderr.contains("sessionHistory.txt"), "\(stats)")
        let csv = UnwindRun.run(["stats", "--csv", "--state", dir])
        // A history with a bad line is refused by name (not a trap, not a silent half-export).
        #expect(csv.status != 0 && csv.status < 128, "\(csv)")
        #expect(csv.stderr.contains("sessionHistory.txt"), "\(csv)")
    }

    @Test func patternsAddRefusesHostileInput() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let state = dir + "/state"
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true)
        for args in [["x", "4,0,6,0", "from", "11", "over", "99999999999999999999"], ["x", "4,0,6,0", "from", "301", "over", "180"],
                     ["-x", "4,4,4,4"], ["x\ny", "4,4,4,4"], ["\u{1B}[2J", "4,4,4,4"], ["aaaaaaaaaaa", "4,4,4,4"], ["x", "99999,4,4,4"],
                     ["x", "4,4,4,4\nevil 1,1,1,1"], ["x"], ["x", ""]] {
            let r = UnwindRun.run(["patterns", "add"] + args + ["--state", state])
            #expect(r.status != 0 && r.status < 128, "\(args): \(r)")
            #expect(!r.stderr.contains("\u{1B}"), "\(args)")
        }
        #expect(readText(state + "/patterns.txt") == nil || readText(state + "/patterns.txt") == "")
    }
}
