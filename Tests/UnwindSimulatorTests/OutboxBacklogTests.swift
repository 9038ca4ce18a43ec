import Testing
import UnwindSimulator

/// An outbox full of messages at start (the device was off, or without a network, while alerts
/// piled up) costs the loop no frame of its own, and a new PANIC's alerts go before them: the
/// device assembled as the daemon is, on the real clock, its modem on a pseudo-terminal.
@Suite struct OutboxBacklogTests {
    /// 300 alerts an hour old, then PANIC once the modem is set up: its five alerts reach the
    /// modem within seconds, however many old ones are still to go, and the loop draws every
    /// frame the machine gives it a CPU for (under an emulator only the order is checked).
    @Test func threeHundredOldAlertsCostTheLoopNoFrameAndANewPanicGoesFirst() throws {
        let cost = try FrameDeadlineRig.outboxBacklog(300, age: 3_600)
        print(cost)
        let seconds = try #require(cost.newPanicSeconds, "the new PANIC's alerts did not reach the modem within 60 s")
        #expect(seconds < 10, "\(cost)")
        if !TestMachine.emulated {
            #expect(cost.frames.framesMissed <= cost.frames.missedAllowed, "\(cost) (\(cost.frames.missedAllowed) allowed)")
        }
    }
}
