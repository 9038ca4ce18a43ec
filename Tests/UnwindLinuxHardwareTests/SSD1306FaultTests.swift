import Foundation
import Logging
import Synchronization
import Testing
import UnwindTestSupport
import UnwindSimulatedHardware
import UnwindCore
@testable import UnwindLinuxHardware
import UnwindRender
import UnwindSimulator
import UnwindSeams

/// The SSD1306 driver when the bus fails: an error mid-frame, an unplugged display and its
/// return, an adapter that cannot carry the display: reported, backed off, recovered, never a
/// crash.
@Suite struct SSD1306FaultTests {
    @Test(arguments: [I2CErrno.remoteIO, I2CErrno.timedOut, 5 /* EIO */])
    func errorMidFrameRecovers(errno: Int32) throws {
        let rig = Rig()
        var frame = sampleFrame()
        try rig.driver.show(frame)
        // Three far-apart changes: three transactions.
        frame.plot(0, 0, .invert); frame.plot(64, 30, .invert); frame.plot(127, 63, .invert)
        rig.bus.failNext(1, errno: errno, after: 2)
        let before = rig.bus.transactionCount
        let error = #expect(throws: DeviceError.self) { try rig.driver.show(frame) }
        #expect(error?.errno == errno)
        #expect(rig.bus.transactionCount == before + 3)
        #expect(rig.driver.isLost)
        #expect(rig.log.count(.error, containing: "display lost") == 1)

        // Frames before the retry time don't touch the bus.
        frame.plot(20, 20)
        for _ in 0..<7 {
            rig.clock.advance(.milliseconds(33))
            try rig.driver.show(frame)
        }
        #expect(rig.bus.transactionCount == before + 3)
        #expect(rig.driver.statistics.framesSkipped == 7)

        // 0.25 s after the failure: re-initialise, full frame, shown exactly.
        rig.clock.advance(.milliseconds(30))
        frame.plot(21, 21)
        try rig.driver.show(frame)
        #expect(!rig.driver.isLost)
        #expect(rig.model.visibleFramebuffer() == frame)
        #expect(rig.driver.statistics.initialisations == 2)
        #expect(rig.log.count(.notice, containing: "display answers again") == 1)
        #expect(rig.log.count(.error, containing: "display lost") == 1)
        // And partial updates again.
        frame.plot(22, 22)
        try rig.driver.show(frame)
        #expect(rig.driver.lastFrame.bytes == 9)
        #expect(rig.memoryHolds(frame))
    }

    @Test(arguments: [true, false])
    func unpluggedDisplayBacksOffAndComesBack(plain: Bool) throws {
        let rig = Rig(capabilities: plain ? [.plainI2C, .smbusBlockWrite] : [.smbusBlockWrite])
        var rng = SplitMix64(seed: 7)
        var frame = sampleFrame()
        try rig.driver.show(frame)
        rig.bus.isUnplugged = true

        // 30 simulated seconds at 30 fps, a new frame every time; no error stops the loop.
        var errors: [DeviceError] = []
        var attempts: [Instant] = []
        rig.bus.onTransaction = { t in if t.failure != nil { attempts.append(t.at) } }
        for _ in 0..<(30 * 30) {
            frame = nextFrame(after: frame, using: &rng)
            do { try rig.driver.show(frame) } catch { errors.append(error) }
            rig.clock.advance(.nanoseconds(33_333_333))
        }
        #expect(rig.driver.isLost)
        #expect(errors.count == attempts.count)  // one transaction per attempt, each thrown once
        #expect(errors.allSatisfy { $0.errno == I2CErrno.remoteIO })
        #expect(errors.first?.hint == "no answer at 0x3C: display unplugged or wrong address")
        #if os(Linux)
        #expect(errors.first?.description.contains("Remote I/O error") == true)
        #endif
        // Backoff: 0.25, 0.5, 1, 2, 4, 8, 8 … s between attempts (each on the first frame after).
        let gaps = zip(attempts.dropFirst(), attempts).map { ($0 - $1).nanoseconds }
        let expected: [Int64] = [250, 500, 1000, 2000, 4000, 8000, 8000].map { $0 * 1_000_000 }
        #expect(gaps.count >= 6)
        for (gap, want) in zip(gaps, expected) {
            #expect(gap >= want && gap < want + 34_000_000, "gap \(gap) ns, expected \(want) ns")
        }
        #expect(rig.log.count(.error, containing: "display lost") == 1)
        #expect(rig.driver.statistics.framesSkipped > 800)

        // Plugged back in: the model power-cycled (off, RAM garbage); the next attempt
        // re-initialises and sends the latest frame whole.
        rig.bus.isUnplugged = false
        #expect(!rig.model.isOn)
        var shown = false
        for _ in 0..<(9 * 30) {
            frame = nextFrame(after: frame, using: &rng)
            try rig.driver.show(frame)
            rig.clock.advance(.nanoseconds(33_333_333))
            if !rig.driver.isLost {
                shown = true
                break
            }
        }
        #expect(shown)
        #expect(rig.model.visibleFramebuffer() == frame)
        #expect(rig.model.violations.isEmpty)
        #expect(rig.log.count(.notice, containing: "display answers again") == 1)
        for _ in 0..<50 {
            frame = nextFrame(after: frame, using: &rng)
            try rig.driver.show(frame)
            #expect(rig.memoryHolds(frame))
        }
    }

    @Test func unsupportedAdapterIsReportedNotCrashed() {
        let rig = Rig(capabilities: [])
        #expect(throws: DeviceError.self) { try rig.driver.show(sampleFrame()) }
        #expect(rig.driver.isLost)
        #expect(rig.bus.transactionCount == 0)
    }
}
