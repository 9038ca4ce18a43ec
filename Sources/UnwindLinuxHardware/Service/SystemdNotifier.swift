#if os(Linux)
import Glibc
import UnwindCore
import UnwindSeams

/// Tells systemd how the daemon is doing, as sd_notify(3) does, without linking libsystemd:
/// one datagram per message on the AF_UNIX socket named by $NOTIFY_SOCKET.
/// Outside systemd (no $NOTIFY_SOCKET) every call does nothing.
public final class SystemdNotifier {
    private let fd: Int32
    private var address = sockaddr_un()
    private var addressLength: socklen_t = 0
    /// Half of $WATCHDOG_USEC, the interval systemd expects a WATCHDOG=1 within.
    public let watchdogInterval: Duration?
    private var lastPet: Instant?

    /// socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC).
    public init(environment: [String: String]) {
        var fd: Int32 = -1
        if let path = environment["NOTIFY_SOCKET"], !path.isEmpty, path.utf8.count < 108 {
            fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            address.sun_family = sa_family_t(AF_UNIX)
            var bytes = Array(path.utf8)
            // "@name" is an abstract socket: a leading NUL instead of the @.
            if bytes.first == UInt8(ascii: "@") { bytes[0] = 0 }
            withUnsafeMutableBytes(of: &address.sun_path) { raw in
                for (i, b) in bytes.enumerated() { raw[i] = b }
            }
            addressLength = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count)
        }
        self.fd = fd
        if let usec = environment["WATCHDOG_USEC"].flatMap(Int64.init), usec > 0,
           environment["WATCHDOG_PID"].flatMap(Int32.init).map({ $0 == getpid() }) ?? true {
            watchdogInterval = .microseconds(usec / 2)
        } else {
            watchdogInterval = nil
        }
    }

    deinit { if fd >= 0 { close(fd) } }

    public var isActive: Bool { fd >= 0 }

    /// sendto(2) of one state line such as "READY=1".
    public func notify(_ state: String) {
        guard fd >= 0 else { return }
        var addr = address
        let len = addressLength
        // A notification systemd does not take is not retried later: the next one says the same.
        _ = state.withCString { text in
            withUnsafePointer(to: &addr) { p in
                p.withMemoryRebound(to: sockaddr.self, capacity: 1) { sa in
                    try? valueOrErrno { sendto(fd, text, strlen(text), Int32(MSG_NOSIGNAL), sa, len) }
                }
            }
        }
    }

    /// WATCHDOG=1 at most once per half watchdog interval; the caller decides it is healthy.
    public func petWatchdog(at now: Instant) {
        guard let interval = watchdogInterval else { return }
        if let last = lastPet, now - last < interval / 2 { return }
        lastPet = now
        notify("WATCHDOG=1")
    }
}
#endif
