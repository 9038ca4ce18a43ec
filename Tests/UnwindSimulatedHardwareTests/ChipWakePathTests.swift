import Glibc
import Testing
import UnwindCore
import UnwindLinuxHardware
import UnwindSeams
import UnwindSimulatedHardware

/// A simulated chip's wake path, as a kernel's line events are: a press from another thread
/// makes the buttons' one descriptor readable, so a loop polling it on the real clock wakes at
/// once; reading the edges empties it; a chip on simulated time offers no descriptor at all.
@Suite struct ChipWakePathTests {
    static func readable(_ fd: Int32, within milliseconds: Int32) -> Bool {
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return poll(&p, 1, milliseconds) == 1 && p.revents & Int16(POLLIN) != 0
    }

    @Test func aPressFromAnotherThreadWakesThePollerAndReadingQuietsIt() throws {
        let clock = LinuxClock()
        let buttons = try SimulatedButtons(wakingPollersOn: clock)
        #expect(buttons.pollDescriptors.count == 1, "one descriptor for the five lines")
        let fd = try #require(buttons.pollDescriptors.first)
        #expect(!Self.readable(fd, within: 0))
        startThread(name: "presser") { buttons.tap(.panic, holdFor: .milliseconds(30)) }
        // Waits for the condition itself; the limit only fails the test.
        #expect(Self.readable(fd, within: 10_000))
        var edges: [ButtonEdge] = []
        try buttons.readEdges(into: &edges)
        #expect(!Self.readable(fd, within: 0), "reading the edges empties the wake path")
        // The release is due 30 ms after the press: the loop's deadline, not a wake (on a busy
        // machine it may have come before the first read).
        if let release = buttons.nextEdgeTime {
            while clock.now().instant < release { usleep(1_000) }
            try buttons.readEdges(into: &edges)
        }
        #expect(edges.map(\.pressed) == [true, false] && edges.allSatisfy { $0.button == .panic }, "\(edges)")
        #expect(buttons.isIdle)
    }

    @Test func aChipOnSimulatedTimeOffersNoDescriptor() throws {
        let buttons = SimulatedButtons(clock: SimulatedTime())
        #expect(buttons.pollDescriptors.isEmpty)
        buttons.tap(.select, at: .zero)
        #expect(!buttons.isIdle)
    }
}
