import Testing
import UnwindSimulator

// The bench's panic-path rig lives with the simulator (it assembles modem, serial port and the
// simulated modem), so its smoke test lives here.
@Suite("Panic latency")
struct PanicLatencyTests {
    /// PANIC armed (five alerts written to the outbox) → first byte of AT+CMGS at a ready modem,
    /// 115200 baud over a pty: target under 1 s.
    @Test func underOneSecond() throws {
        // The figure itself is the benchmark's (unwind-bench); here: the path works end to end.
        let latency = try measurePanicLatency(alerts: 5, baud: 115_200)
        #expect(latency > .zero)
    }
}
