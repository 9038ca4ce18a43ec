#if os(Linux)
import Foundation
import Glibc
import Testing
import UnwindCore
import UnwindLinuxHardware

/// The board's alarm on this machine's real CLOCK_REALTIME (the clock is not changed: that
/// needs privileges and would disturb everything else running here).
@Suite struct RealtimeAlarmTests {
    func wallNow() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    @Test func firesOnTheWallClockSecond() throws {
        let alarm = try RealtimeAlarm()
        let due = WallTime(secondsSinceEpoch: Int64(wallNow().rounded(.down)) + 2)
        try alarm.arm(due)
        #expect(alarm.poll() == .none)
        var fds = [pollfd(fd: alarm.pollDescriptor!, events: Int16(POLLIN), revents: 0)]
        let r = poll(&fds, 1, 5000)
        let at = wallNow()
        #expect(r == 1)
        #expect(alarm.poll() == .fired(due))
        #expect(abs(at - Double(due.secondsSinceEpoch)) < 0.5, "woke at \(at), due \(due.secondsSinceEpoch)")
        #expect(alarm.poll() == .none)
    }

    @Test func aPastDueTimeFiresAtOnceAndDisarmingStopsIt() throws {
        let alarm = try RealtimeAlarm()
        try alarm.arm(WallTime(secondsSinceEpoch: Int64(wallNow()) - 10))
        var fds = [pollfd(fd: alarm.pollDescriptor!, events: Int16(POLLIN), revents: 0)]
        #expect(poll(&fds, 1, 1000) == 1)
        #expect(alarm.poll() != .none)
        try alarm.arm(WallTime(secondsSinceEpoch: Int64(wallNow()) + 1))
        try alarm.arm(nil)
        fds[0].revents = 0
        #expect(poll(&fds, 1, 1500) == 0)
        #expect(alarm.poll() == .none)
        _ = alarm.clockIsSynchronised()      // answers without privileges (either way here)
    }
}
#endif
