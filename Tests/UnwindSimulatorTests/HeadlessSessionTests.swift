import Foundation
import Testing
@testable import UnwindSimulatedHardware
import UnwindCore
import UnwindRender
@testable import UnwindSimulator

@Suite struct HeadlessSessionTests {
    /// The acceptance run: a ten-minute session on simulated time.
    @Test func tenMinuteSession() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let script = try ButtonScript.parse("0.5 SELECT\n600.5 SELECT\n601 end\n")
        let r = try HeadlessSimulation(script: script, stateDirectory: dir + "/state", outputDirectory: dir + "/out",
                                       recordFrames: false).run()

        // About 18,000 frames for ten minutes at 30 fps, none missed.
        #expect(r.statistics.framesRendered == 18_030)
        #expect(r.statistics.framesMissed == 0)
        #expect(r.framesShown == r.statistics.framesRendered)

        // Corner k at 0.5 + 4k s: breathe in (k % 4 == 0) one 120 ms pulse, breathe out one of
        // 400 ms, holds two of 120 ms.
        var expected: [SimulatedMotor.Change] = []
        for k in 0..<150 {
            let t = Instant.seconds(0.5 + 4 * Double(k))
            expected.append(.init(at: t, on: true))
            expected.append(.init(at: t + .milliseconds(k % 4 == 2 ? 400 : 120), on: false))
            if k % 2 == 1 {
                expected.append(.init(at: t + .milliseconds(220), on: true)); expected.append(.init(at: t + .milliseconds(340), on: false))
            }
        }
        #expect(r.motor.count == expected.count)
        for (got, want) in zip(r.motor, expected) {
            #expect(got.on == want.on)
            #expect(abs((got.at - want.at).nanoseconds) <= 1_000_000, "edge at \(got.at), expected \(want.at)")
        }
        #expect(r.statistics.worstMotorLateness <= .milliseconds(1))

        // totalTime.txt: one ten-minute session.
        #expect(readText(dir + "/state/totalTime.txt") == "0\n10\n0\n600\n600\n1\n")
        #expect(readText(dir + "/state/sessionHistory.txt")?.hasSuffix(" 600 box\n") == true)
        // The logs Sources/UnwindSimulator/README.md documents.
        let motorLog = readText(dir + "/out/motor.log") ?? ""
        #expect(motorLog.hasPrefix("0.500000000 1\n0.620000000 0\n4.500000000 1\n"))
        #expect(FileManager.default.fileExists(atPath: dir + "/out/screen.png"))
        #expect(readText(dir + "/out/summary.txt")?.contains("frames_missed=0") == true)
    }

    /// A display that takes 90 ms a frame (a full frame at 100 kHz): frames are dropped at the
    /// display, the loop still draws every frame, and every pulse is still on its corner.
    @Test func slowDisplayNeverDelaysAPulse() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var sim = HeadlessSimulation(script: try ButtonScript.parse("0 SELECT\n60 end\n"), stateDirectory: dir, recordFrames: false)
        sim.displayBusy = .milliseconds(90)
        let r = try sim.run()
        #expect(r.displayDropped > 1000)
        #expect(r.statistics.framesMissed == 0)
        #expect(r.statistics.worstMotorLateness == .zero)
        #expect(r.motor.filter(\.on).count == 8 * 1 + 7 * 2) // corners 0…14: 8 breaths in or out (one pulse), 7 holds (two)
    }

    @Test func corruptTotalsAreMovedAsideAndZeroed() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try "7\n25\n".write(toFile: dir + "/totalTime.txt", atomically: false, encoding: .utf8)
        let r = try HeadlessSimulation(script: try ButtonScript.parse("1 end\n"), stateDirectory: dir, recordFrames: false).run()
        #expect(r.finalState.breathing.totals == .zero)
        let names = try FileManager.default.contentsOfDirectory(atPath: dir)
        let aside = names.filter { $0.hasPrefix("totalTime.txt.corrupt-") }
        #expect(aside.count == 1)
        #expect(readText(dir + "/" + aside[0]) == "7\n25\n")     // the bad data is kept, not lost
        #expect(readText(dir + "/totalTime.txt") == "0\n0\n0\n0\n0\n0\n")
    }

    @Test func totalsSurviveARestart() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        _ = try HeadlessSimulation(script: try ButtonScript.parse("0 SELECT\n30 SELECT\n31 end\n"), stateDirectory: dir, recordFrames: false).run()
        let r = try HeadlessSimulation(script: try ButtonScript.parse("0 SELECT\n90 SELECT\n91 end\n"), stateDirectory: dir, recordFrames: false).run()
        #expect(r.finalState.breathing.totals == BreathingTotals(totalSeconds: 120, shortestSeconds: 30, longestSeconds: 90, count: 2))
        #expect(readText(dir + "/totalTime.txt") == "0\n2\n0\n30\n90\n2\n")
        #expect(r.finalState.breathing.history.map(\.seconds) == [30, 90])
    }

    /// The script ends mid-session (as SIGTERM would): the session up to then is saved.
    @Test func endingMidSessionSavesIt() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        _ = try HeadlessSimulation(script: try ButtonScript.parse("0 SELECT\n95.5 end\n"), stateDirectory: dir, recordFrames: false).run()
        #expect(readText(dir + "/totalTime.txt") == "35\n1\n0\n95\n95\n1\n")
    }

    @Test func framesLogHasEveryFrame() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let r = try HeadlessSimulation(script: try ButtonScript.parse("0 SELECT\n2 end\n"), stateDirectory: dir + "/s",
                                       outputDirectory: dir).run()
        let lines = (readText(dir + "/frames.log") ?? "").split(separator: "\n")
        #expect(lines.count == r.framesShown)
        #expect(lines.first?.hasPrefix("0.000000000 ") == true)
        #expect(lines.allSatisfy { $0.split(separator: " ")[1].count == 2048 })
        // The last logged frame is the final screen.
        #expect(String(lines.last!.split(separator: " ")[1]) == TextArt.hex(r.finalScreen))
    }

    @Test func scriptErrorsNameTheLine() {
        #expect(throws: ButtonScript.ParseError(line: 2, reason: "expected a button (PAGE, LEFT, RIGHT, SELECT, PANIC) or 'end'")) {
            try ButtonScript.parse("0 SELECT\n1 JUMP\n2 end\n")
        }
        #expect(throws: ButtonScript.ParseError.self) { try ButtonScript.parse("0 SELECT\n") }
        #expect(throws: ButtonScript.ParseError.self) { try ButtonScript.parse("x SELECT\n1 end") }
        #expect(throws: ButtonScript.ParseError.self) { try ButtonScript.parse("0 SELECT hold -1\n1 end") }
    }
}
