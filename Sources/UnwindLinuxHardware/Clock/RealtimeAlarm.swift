#if canImport(Glibc)
import Glibc
#endif
#if os(Linux)
import CLinuxSystem
#endif
import SystemPackage
import UnwindCore
import UnwindSeams

#if os(Linux)
/// The board's reminder alarm: a timerfd on CLOCK_REALTIME armed with TFD_TIMER_ABSTIME and
/// TFD_TIMER_CANCEL_ON_SET. The kernel fires it when the wall clock reaches the due second,
/// whatever the clock did meanwhile — and when the clock is set discontinuously (the NTP step
/// at boot on a board without a real-time clock, a manual change, `date -s`) the read fails
/// with ECANCELED, which the loop turns into "compute the due time again".
///
/// Synchronisation: the kernel's NTP state (adjtimex: not TIME_ERROR, i.e. STA_UNSYNC clear —
/// systemd-timesyncd, chrony and ntpd all clear it once synchronised), or systemd-timesyncd's
/// flag file `/run/systemd/timesync/synchronized`.
public final class RealtimeAlarm: WallClockAlarm {
    let fd: Int32
    var armed: WallTime?
    let adjtimex: (@convention(c) (UnsafeMutableRawPointer?) -> Int32)?
    let timex = UnsafeMutableRawPointer.allocate(byteCount: 512, alignment: 16)

    /// timerfd_create(CLOCK_REALTIME, TFD_CLOEXEC | TFD_NONBLOCK).
    public init() throws(DeviceError) {
        fd = timerfd_create(CLOCK_REALTIME, Int32(TFD_CLOEXEC | TFD_NONBLOCK))
        if fd < 0 { throw DeviceError(device: "reminder alarm", operation: "timerfd_create", errno: errno) }
        // Glibc's Swift module does not export <sys/timex.h>; adjtimex is looked up by name.
        if let p = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "adjtimex") {
            adjtimex = unsafeBitCast(p, to: (@convention(c) (UnsafeMutableRawPointer?) -> Int32).self)
        } else {
            adjtimex = nil
        }
    }

    deinit {
        close(fd)
        timex.deallocate()
    }

    public var pollDescriptor: Int32? { fd }

    public func arm(_ due: WallTime?) throws(DeviceError) {
        var spec = itimerspec()
        var flags: Int32 = 0
        if let due {
            // Zero would disarm: an (absurd) due time at the epoch fires at once instead.
            spec.it_value.tv_sec = max(1, Int(due.secondsSinceEpoch))
            flags = Int32(TFD_TIMER_ABSTIME) | Int32(TFD_TIMER_CANCEL_ON_SET)
        }
        if timerfd_settime(fd, flags, &spec, nil) != 0 {
            throw DeviceError(device: "reminder alarm", operation: "timerfd_settime", errno: errno)
        }
        armed = due
    }

    /// read(2) of the expiry count (O_NONBLOCK: EAGAIN while not due; ECANCELED after the wall
    /// clock was set).
    public func poll() -> AlarmEvent {
        var expirations: UInt64 = 0
        do {
            if try valueOrErrno({ read(fd, &expirations, 8) }) == 8, let due = armed {
                armed = nil
                return .fired(due)
            }
        } catch {
            if error == .canceled { return .clockChanged }
        }
        return .none
    }

    public func clockIsSynchronised() -> Bool {
        if let adjtimex {
            memset(timex, 0, 512)   // modes = 0: read only, no privilege needed
            let state = adjtimex(timex)
            if state >= 0 && state != 5 /* TIME_ERROR: STA_UNSYNC */ { return true }
        }
        return access("/run/systemd/timesync/synchronized", F_OK) == 0
    }
}
#endif

extension SSD1306: DisplayControl {}
