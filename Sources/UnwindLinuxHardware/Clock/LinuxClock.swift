import UnwindSeams
#if os(Linux)
import Glibc
import CLinuxSystem
import SystemPackage
import UnwindCore

/// The board's clocks: CLOCK_MONOTONIC for every deadline, CLOCK_REALTIME only for dates.
public final class LinuxClock: DeviceClock, Sendable {
    public init() {}

    /// clock_gettime(CLOCK_MONOTONIC) and clock_gettime(CLOCK_REALTIME).
    public func now() -> Moment {
        var m = timespec(), w = timespec()
        clock_gettime(CLOCK_MONOTONIC, &m)
        clock_gettime(CLOCK_REALTIME, &w)
        return Moment(Instant(nanoseconds: Int64(m.tv_sec) * 1_000_000_000 + Int64(m.tv_nsec)),
                      wall: WallTime(secondsSinceEpoch: Int64(w.tv_sec)))
    }
}

/// Waits on absolute CLOCK_MONOTONIC deadlines while watching descriptors.
///
/// clock_nanosleep(TIMER_ABSTIME) cannot wake for a button edge or a modem byte, so the
/// deadline is armed as an absolute timerfd and polled together with the descriptors: the
/// same absolute, drift-free deadline, and one wait for everything.
public final class PollWaiter: LoopWaiter {
    let timer: Int32
    var fds: [pollfd] = []

    /// timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK).
    public init() throws(DeviceError) {
        timer = timerfd_create(CLOCK_MONOTONIC, Int32(TFD_CLOEXEC | TFD_NONBLOCK))
        if timer < 0 { throw DeviceError(device: "timer", operation: "timerfd_create", errno: errno) }
        fds.reserveCapacity(8)
    }

    deinit { close(timer) }

    /// timerfd_settime(TFD_TIMER_ABSTIME) then poll(2), retried on EINTR.
    public func wait(until deadline: Instant, watching descriptors: [Int32]) throws(DeviceError) {
        var spec = itimerspec()
        let ns = max(1, deadline.nanoseconds)
        spec.it_value.tv_sec = Int(ns / 1_000_000_000)
        spec.it_value.tv_nsec = Int(ns % 1_000_000_000)
        if timerfd_settime(timer, Int32(TFD_TIMER_ABSTIME), &spec, nil) != 0 {
            throw DeviceError(device: "timer", operation: "timerfd_settime", errno: errno)
        }
        fds.removeAll(keepingCapacity: true)
        fds.append(pollfd(fd: timer, events: Int16(POLLIN), revents: 0))
        for d in descriptors { fds.append(pollfd(fd: d, events: Int16(POLLIN), revents: 0)) }
        do {
            // poll(2), called again when a signal cuts it short: the deadline is absolute.
            _ = try fds.withUnsafeMutableBufferPointer { (buf) throws(Errno) in
                try valueOrErrno { poll(buf.baseAddress, nfds_t(buf.count), -1) }
            }
        } catch {
            throw DeviceError(device: "timer", operation: "poll", errno: error.rawValue)
        }
        // A descriptor stuck in error or hang-up (an unplugged USB modem, a released line)
        // would make every poll return at once and spin the loop: when nothing is readable,
        // wait for the deadline alone; the owner of the broken descriptor reports it.
        var readable = false, broken = false
        for i in 1..<fds.count {
            if fds[i].revents & Int16(POLLIN) != 0 { readable = true }
            if fds[i].revents & Int16(POLLERR | POLLHUP | POLLNVAL) != 0 { broken = true }
        }
        if broken && !readable && fds[0].revents & Int16(POLLIN) == 0 {
            fds.removeLast(fds.count - 1)
            // poll(2) on the timer alone; it cannot fail but by a signal, which calls it again.
            _ = fds.withUnsafeMutableBufferPointer { buf in
                try? valueOrErrno { poll(buf.baseAddress, 1, -1) }
            }
        }
        if fds[0].revents & Int16(POLLIN) != 0 {
            // read(2) of the expiry count, only to clear it; O_NONBLOCK, so at most EAGAIN.
            var expirations: UInt64 = 0
            _ = try? valueOrErrno { read(timer, &expirations, 8) }
        }
    }
}
#endif
