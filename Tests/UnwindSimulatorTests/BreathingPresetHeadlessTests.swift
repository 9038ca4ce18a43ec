import Foundation
import Testing
import UnwindCore
@testable import UnwindSimulator

/// What crosses to the motor for every preset: the headless device, the preset chosen with
/// RIGHT as a person would, five minutes breathed, and every phase's pulses in `motor.log` at
/// the instants the pattern says (worked out here independently of the device's clock), ±1 ms.
@Suite struct BreathingPresetHeadlessTests {
    /// Phase kinds with their lengths in seconds, and the ramp (from, over), as the issue gives them.
    struct Spec: Sendable, CustomTestStringConvertible {
        var name: String
        var rightPresses: Int
        var phases: [(BreathingPhase, Double)]
        var ramp: (from: Double, over: Double)?
        var testDescription: String { name }
    }

    static let specs: [Spec] = [
        Spec(name: "box", rightPresses: 0, phases: [(.inhale, 4), (.holdAfterInhale, 4), (.exhale, 4), (.holdAfterExhale, 4)]),
        Spec(name: "calm", rightPresses: 1, phases: [(.inhale, 4), (.exhale, 6)], ramp: (11, 180)),
        Spec(name: "478", rightPresses: 2, phases: [(.inhale, 4), (.holdAfterInhale, 7), (.exhale, 8)]),
        Spec(name: "sigh", rightPresses: 3, phases: [(.inhale, 2), (.topUp, 1), (.exhale, 6)]),
        Spec(name: "resonance", rightPresses: 4, phases: [(.inhale, 4.4), (.exhale, 6.5)]),
    ]

    /// The default pulses: breathe in one 120 ms tap, out one 400 ms buzz, hold two taps, the
    /// top-up three 60 ms flicks; 100 ms between pulses.
    static func pulses(_ kind: BreathingPhase) -> [Double] {
        switch kind {
        case .inhale: [0.12]
        case .exhale: [0.4]
        case .holdAfterInhale, .holdAfterExhale: [0.12, 0.12]
        case .topUp: [0.06, 0.06, 0.06]
        }
    }

    /// Phase starts from `start` until `end`: the lengths added up; with a ramp, each breath
    /// 60 / rate long, the rate at its start falling evenly from `from` to the pattern's own.
    static func corners(_ spec: Spec, start: Double, end: Double) -> [(at: Double, kind: BreathingPhase)] {
        let cycle = spec.phases.reduce(0) { $0 + $1.1 }
        var out: [(Double, BreathingPhase)] = []
        var s = 0.0
        while start + s < end {
            var length = cycle
            if let r = spec.ramp, s < r.over {
                let rate = r.from + (60 / cycle - r.from) * s / r.over
                length = 60 / rate
            }
            var t = s
            for (kind, l) in spec.phases {
                out.append((start + t, kind))
                t += l * length / cycle
            }
            s += length
        }
        return out
    }

    static func motorLog(_ path: String) -> [(at: Double, on: Bool)] {
        (readText(path) ?? "").split(separator: "\n").compactMap { line in
            let f = line.split(separator: " ")
            guard f.count == 2, let t = Double(f[0]) else { return nil }
            return (t, f[1] == "1")
        }
    }

    func script(_ spec: Spec, extra: String = "", start: Double = 10, end: Double) -> String {
        var s = ""
        for i in 0..<spec.rightPresses { s += "\(1 + Double(i)) RIGHT\n" }
        return s + extra + "\(start) SELECT\n\(end) end\n"
    }

    @Test(arguments: specs)
    func fiveMinutesOfEveryPresetPulseOnEveryPhase(_ spec: Spec) throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let start = 10.0, end = 310.0
        let r = try HeadlessSimulation(script: try ButtonScript.parse(script(spec, end: end)), stateDirectory: dir + "/state",
                                       outputDirectory: dir + "/out", recordFrames: false).run()
        #expect(r.statistics.framesMissed == 0)
        #expect(r.statistics.worstMotorLateness <= .milliseconds(1))
        // Every pulse of every phase that is over before the end.
        var expected: [(Double, Bool)] = []
        for c in Self.corners(spec, start: start, end: end) {
            var on = c.at
            for p in Self.pulses(c.kind) {
                if on < end - 0.5 { expected.append((on, true)) }
                if on + p < end - 0.5 { expected.append((on + p, false)) }
                on += p + 0.1
            }
        }
        let got = Self.motorLog(dir + "/out/motor.log").filter { $0.at < end - 0.5 }
        #expect(got.count == expected.count, "\(spec.name): \(got.count) edges, \(expected.count) expected")
        var worst = 0.0
        for (g, w) in zip(got, expected) {
            #expect(g.on == w.1)
            worst = max(worst, abs(g.at - w.0))
        }
        #expect(worst <= 0.001, "\(spec.name): an edge \(worst * 1000) ms from where the pattern puts it")
        print("\(spec.name): \(got.filter(\.on).count) pulses in 5 minutes, worst \(String(format: "%.6f", worst * 1000)) ms from the pattern")
        // The choice is remembered; the session is in the history under its pattern's name.
        #expect(readText(dir + "/state/breathing.txt") == (spec.rightPresses > 0 ? "pattern \(spec.name)\nlength open\n" : nil))
        #expect(readText(dir + "/state/sessionHistory.txt")?.hasSuffix(" 300 \(spec.name)\n") == true)
    }

    /// Two minutes of the sigh: the session ends by itself on the first breath start after two
    /// minutes, the last minute's pulses softer, the gentle end cue on the end, the display
    /// asleep 30 s later, and the session saved as a stopped one would be.
    @Test func aTimedSighEndsByItself() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let spec = Self.specs[3]
        let r = try HeadlessSimulation(script: try ButtonScript.parse(script(spec, extra: "5 RIGHT long\n", end: 200)),
                                       stateDirectory: dir + "/state", outputDirectory: dir + "/out", recordFrames: false).run()
        let log = Self.motorLog(dir + "/out/motor.log")
        // 10 + 14 breaths of 9 s: the end at 136 s; nothing after it but the cue.
        let cue = log.filter { $0.at >= 136 - 0.0005 }
        let want: [(Double, Bool)] = [(136, true), (136.4, false), (137, true), (137.25, false), (138.05, true), (138.2, false)]
        #expect(cue.count == want.count)
        for (g, w) in zip(cue, want) { #expect(g.on == w.1 && abs(g.at - w.0) <= 0.001, "\(g) vs \(w)") }
        // Before the last minute a breath's taps are 1 + 3 + 1; in it as many, shorter (the sigh has no holds to fall silent).
        func ons(_ a: Double, _ b: Double) -> [(at: Double, on: Bool)] { log.filter { $0.at >= a - 0.0005 && $0.at < b - 0.0005 } }
        #expect(ons(64, 73).filter(\.on).count == 5)
        let last = ons(127, 136)
        #expect(last.filter(\.on).count == 5)
        #expect(abs(last[1].at - last[0].at - 0.072) < 0.001)      // the inhale's tap, 60 % of 120 ms
        #expect(r.finalState.breathing.session == .finished(seconds: 126))
        #expect(readText(dir + "/state/totalTime.txt") == "6\n2\n0\n126\n126\n1\n")
        #expect(readText(dir + "/state/sessionHistory.txt")?.hasSuffix(" 126 sigh\n") == true)
        #expect(readText(dir + "/state/breathing.txt") == "pattern sigh\nlength 2\n")
        let display = (readText(dir + "/out/display.log") ?? "").split(separator: "\n")
        #expect(display.contains { $0.hasPrefix("166.") && $0.hasSuffix(" sleep") }, "\(display)")
    }

    /// `--pattern` through the real command line: names and lengths, and every wrong form
    /// refused (exit 2) with the reason, before anything runs.
    @Test func patternOnTheCommandLine() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try Data("0 SELECT\n20 end\n".utf8).write(to: URL(fileURLWithPath: dir + "/s.txt"))
        for (given, firstEdges) in [("4,7,8,0", [0.0, 0.12, 4, 4.12, 4.22, 4.34, 11, 11.4]),
                                    ("sigh", [0.0, 0.12, 2, 2.06, 2.16, 2.22, 2.32, 2.38, 3, 3.4])] {
            let r = UnwindRun.run(["sim", "--headless", dir + "/s.txt", "--out", dir + "/o", "--state", dir + "/st-\(given)",
                                   "--no-frames", "--pattern", given])
            #expect(r.status == 0, "\(r)")
            let log = Self.motorLog(dir + "/o/motor.log").prefix(firstEdges.count)
            #expect(log.map { ($0.at * 1000).rounded() / 1000 } == firstEdges, "\(given)")
        }
        for bad in ["4,7,8", "4,7,8,0,1", "0,4,4,4", "4,0.5,4,4", "4.45,4,4,4", "bo x", "sighs", "4,0,6,0 from 5 over 180", ""] {
            let r = UnwindRun.run(["sim", "--headless", dir + "/s.txt", "--out", dir + "/o", "--state", dir + "/bad", "--pattern", bad])
            #expect(r.status == 2, "--pattern \(bad): \(r)")
            #expect(r.stderr.hasPrefix("unwind: --pattern: ") && r.stderr.split(separator: "\n").count == 1, "\(r.stderr)")
        }
    }
}
