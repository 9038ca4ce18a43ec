#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Glibc
import UnwindCore
import UnwindLinuxHardware
import UnwindModem
import UnwindSeams
import UnwindSimulatedHardware

/// What an outbox full of old messages costs at start-up (the device was off, or had no network,
/// while alerts piled up): the loop's frames in the first seconds, and how soon a new PANIC's
/// five alerts reach the modem behind them.
public struct OutboxBacklogCost: CustomStringConvertible {
    public var messages: Int
    public var age: Int64
    public var frames: FrameDeadlineCost
    /// From the PANIC press to the last of its five alerts at the modem (nil: not within 60 s).
    public var newPanicSeconds: Double?
    public var backlogSent: Int

    public var description: String {
        "\(messages) messages \(durationText(age)) old in the outbox at start: \(frames.framesDrawn) frames drawn, "
            + "\(frames.framesMissed) missed in \(frames.seconds.fixed(1)) s (the loop waited \(frames.starved.nanoseconds / 1_000_000) ms for a CPU); "
            + "a new PANIC's 5 alerts at the modem "
            + (newPanicSeconds.map { "\($0.fixed(2)) s after the press" } ?? "not within 60 s")
            + "; \(backlogSent) old ones sent meanwhile"
    }
}

extension FrameDeadlineRig {
    /// `count` alerts `age` seconds old in the outbox, then the device started and PANIC pressed
    /// once the modem is set up; the loop's counters over the whole run.
    public static func outboxBacklog(_ count: Int, age: Int64) throws -> OutboxBacklogCost {
        let old = try AlertSlot(name: "Old", number: "+15550109999", message: "An alert from long ago.")
        let rig = try FrameDeadlineRig { directory in
            let path = directory + "/" + Outbox.directoryName
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            let outbox = Outbox(storage: try DirectoryStore.outbox(at: path))
            let created = WallTime(secondsSinceEpoch: Int64(time(nil)) - age)
            for k in 0..<count {
                _ = outbox.add(old, slot: k % AlertSlotFile.slotCount + 1, at: created, reference: UInt16(k), nonce: UInt16(k))
            }
        }
        rig.start()
        let t0 = LinuxClock().now().instant
        guard wait(.seconds(20), until: { rig.modemSim.withScriptedModem { $0.commands.contains { $0.hasPrefix("AT+COPS?") } } }) else {
            _ = rig.finish()
            throw DeviceError(device: "outbox backlog", operation: "wait for the modem", errno: ETIMEDOUT)
        }
        let pressed = LinuxClock().now().instant
        rig.buttons.tap(.panic, holdFor: panicHold + .milliseconds(20))
        let fresh = { rig.modemSim.delivered.filter { $0.text.hasPrefix("Panic alert") }.count }
        let arrived = wait(.seconds(60), until: { fresh() >= 5 })
        let newPanic = arrived ? seconds(since: pressed) : nil
        // At least 20 s in all, so the start's cost is counted whatever the PANIC took.
        let rest = 20 - seconds(since: t0)
        if rest > 0 { usleep(UInt32(rest * 1_000_000)) }
        let sentOld = rig.modemSim.delivered.filter { $0.number == "+15550109999" }.count
        let (s, starved) = rig.finishMeasured()
        let frames = FrameDeadlineCost(what: "outbox backlog", count: 0, framesDrawn: s.framesRendered,
                                       framesMissed: s.framesMissed, seconds: seconds(since: t0), starved: starved)
        return OutboxBacklogCost(messages: count, age: age, frames: frames, newPanicSeconds: newPanic, backlogSent: sentOld)
    }
}
