import UnwindSeams
#if os(Linux)
import Glibc
import SystemPackage

extension SerialConfiguration {
    /// The termios speed constant for `baud`.
    ///
    /// Typed `speed_t` because that is all the headers promise: glibc up to 2.41 defines `B9600`
    /// as a plain int (imported as `Int32`), glibc 2.42 reworked the speeds and defines it as
    /// `9600U` (`UInt32`). `speed_t(...)` on each constant builds against both.
    public static func speed(forBaud baud: Int) throws(DeviceError) -> speed_t {
        let b: speed_t
        switch baud {
        case 1200: b = speed_t(B1200)
        case 2400: b = speed_t(B2400)
        case 4800: b = speed_t(B4800)
        case 9600: b = speed_t(B9600)
        case 19_200: b = speed_t(B19200)
        case 38_400: b = speed_t(B38400)
        case 57_600: b = speed_t(B57600)
        case 115_200: b = speed_t(B115200)
        case 230_400: b = speed_t(B230400)
        case 460_800: b = speed_t(B460800)
        case 921_600: b = speed_t(B921600)
        default:
            throw DeviceError(device: "modem serial line", operation: "set baud rate \(baud)", errno: EINVAL,
                              hint: "supported rates: " + supportedBauds.map(String.init).joined(separator: ", "))
        }
        return b
    }
}

/// A serial tty in raw mode, 8N1, non-blocking: the modem's AT line.
///
/// Every call is the C call named in its documentation, called again while a signal interrupts
/// it (`valueOrErrno`); failures throw a `DeviceError` carrying the errno and what to do about it.
public final class SerialPort: SerialTransport {
    public let configuration: SerialConfiguration
    public private(set) var descriptor: Int32?
    private let speed: speed_t
    private var chunk = [UInt8](repeating: 0, count: 1024)

    public var name: String { configuration.path }

    /// Checks the configuration (an unknown baud rate is an error here, not at first use).
    public init(_ configuration: SerialConfiguration) throws(DeviceError) {
        guard !configuration.path.isEmpty, !configuration.path.utf8.contains(0) else {
            throw DeviceError(device: "modem serial line", operation: "configure", errno: EINVAL,
                              hint: "give the tty's path, e.g. /dev/serial/by-id/usb-SimTech_…-if02-port0 or /dev/ttyS0")
        }
        self.configuration = configuration
        self.speed = try SerialConfiguration.speed(forBaud: configuration.baud)
    }

    deinit { close() }

    /// open(O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC), ioctl(TIOCEXCL), flock(LOCK_EX | LOCK_NB),
    /// tcgetattr, cfmakeraw + CLOCAL | CREAD | CS8 (+ CRTSCTS), VMIN 1 / VTIME 0,
    /// cfsetispeed / cfsetospeed, tcsetattr(TCSANOW), tcflush(TCIOFLUSH).
    ///
    /// With O_NONBLOCK and VMIN 1, `read` tells "nothing yet" (EAGAIN) from "hung up" (0).
    public func open() throws(DeviceError) {
        close()
        let path = configuration.path
        let fd: Int32
        do { fd = try valueOrErrno { Glibc.open(path, O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC) } } catch {
            throw failure("open", error.rawValue)
        }
        do throws(DeviceError) {
            guard isatty(fd) == 1 else { throw failure("open", ENOTTY) }
            if ioctl(fd, UInt(TIOCEXCL)) != 0 { throw failure("ioctl(TIOCEXCL)", errno) }
            do { _ = try valueOrErrno { flock(fd, LOCK_EX | LOCK_NB) } } catch {
                throw failure("flock", error == .wouldBlock ? EBUSY : error.rawValue)
            }
            var t = termios()
            if tcgetattr(fd, &t) != 0 { throw failure("tcgetattr", errno) }
            cfmakeraw(&t)
            t.c_cflag |= tcflag_t(CLOCAL | CREAD)
            t.c_cflag &= ~tcflag_t(CSTOPB | PARENB | CSIZE)
            t.c_cflag |= tcflag_t(CS8)
            if configuration.hardwareFlowControl { t.c_cflag |= tcflag_t(CRTSCTS) } else { t.c_cflag &= ~tcflag_t(CRTSCTS) }
            withUnsafeMutableBytes(of: &t.c_cc) { cc in
                cc[Int(VMIN)] = 1
                cc[Int(VTIME)] = 0
            }
            if cfsetispeed(&t, speed) != 0 || cfsetospeed(&t, speed) != 0 { throw failure("cfsetspeed", errno) }
            do { _ = try valueOrErrno { tcsetattr(fd, TCSANOW, &t) } } catch { throw failure("tcsetattr", error.rawValue) }
            _ = tcflush(fd, TCIOFLUSH)  // whatever was waiting belongs to nobody now
        } catch {
            Glibc.close(fd)
            throw error
        }
        descriptor = fd
    }

    /// tcflush(TCOFLUSH) then close: a real UART's close would otherwise wait up to 30 s for
    /// output that a stalled CTS line holds back.
    public func close() {
        guard let fd = descriptor else { return }
        descriptor = nil
        _ = tcflush(fd, TCOFLUSH)
        Glibc.close(fd)  // not retried: on Linux the descriptor is released even on EINTR
    }

    /// read(2) until EAGAIN. A return of 0 (end of file: the tty hung up) and EIO / ENXIO /
    /// ENODEV (the other end closed, the USB device went away) throw.
    public func read(into bytes: inout [UInt8]) throws(DeviceError) -> Int {
        guard let fd = descriptor else { throw failure("read", EBADF) }
        var total = 0
        // At most this much a call: a modem (a USB one is not held to the baud rate) that floods
        // the line must not keep one pass of the loop reading; the rest waits for the next pass.
        while total < Self.maximumReadPerCall {
            let n: Int
            do {
                n = try valueOrErrno { chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) } }
            } catch {
                if error == .resourceTemporarilyUnavailable { return total }
                throw failure("read", error.rawValue)
            }
            if n == 0 { throw DeviceError(device: "modem \(configuration.path)", operation: "read", errno: EIO,
                                          hint: "the tty hung up (modem unplugged or reset?); it will be reopened") }
            bytes.append(contentsOf: chunk[0..<n])
            total += n
        }
        return total
    }

    /// Three seconds of a 115200-baud line; a pass of the loop reads no more than this.
    static let maximumReadPerCall = 32 * 1024

    /// write(2) once (called again on EINTR); EAGAIN writes nothing and returns 0.
    public func write(_ bytes: ArraySlice<UInt8>) throws(DeviceError) -> Int {
        guard let fd = descriptor else { throw failure("write", EBADF) }
        if bytes.isEmpty { return 0 }
        do {
            return try valueOrErrno { bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) } }
        } catch {
            if error == .resourceTemporarilyUnavailable { return 0 }
            throw failure("write", error.rawValue)
        }
    }

    private func failure(_ operation: String, _ code: Int32) -> DeviceError {
        let path = configuration.path
        let hint: String
        switch code {
        case ENOENT:
            hint = "no device at \(path): is the modem plugged in and powered? Name it by its stable path "
                + "under /dev/serial/by-id/ (ls -l /dev/serial/by-id/)"
        case EACCES, EPERM:
            hint = "permission denied: add the service user to the dialout group (usermod -aG dialout <user>) "
                + "and restart the service"
        case EBUSY:
            hint = "another program (ModemManager?) holds \(path): stop it (systemctl disable --now ModemManager) "
                + "or tell it to ignore the modem"
        case ENXIO, ENODEV, EIO:
            hint = "the device is gone (modem unplugged or reset?); it will be reopened"
        case ENOTTY:
            hint = "\(path) is not a serial device"
        case EINVAL where operation == "tcsetattr":
            hint = "the driver refused the settings (baud \(configuration.baud)"
                + (configuration.hardwareFlowControl ? ", RTS/CTS)" : ")")
        default:
            hint = ""
        }
        return DeviceError(device: "modem \(path)", operation: operation, errno: code, hint: hint)
    }
}
#endif
