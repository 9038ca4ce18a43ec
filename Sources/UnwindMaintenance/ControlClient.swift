#if canImport(Glibc)
import Glibc
#endif
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SystemPackage
import UnwindSeams

/// A command's end of the control socket: connect, send one request line, wait (with a time
/// limit) for the one answer line. Blocking: it runs in a command, never in the device loop.
public final class ControlClient {
    public let path: String
    private var fd: Int32
    private var buffered: [UInt8] = []

    /// Connects. Every way this fails is a one-line `ControlFailure` saying what to do.
    public init(path: String) throws(ControlFailure) {
        self.path = path
        guard path.utf8.count < MemoryLayout.size(ofValue: sockaddr_un().sun_path) else {
            throw .failed("the control socket path \(path) is too long for a UNIX socket")
        }
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        if fd < 0 { throw .failed("socket: \(errnoText(errno))") }
        var address = Self.address(path)
        do throws(Errno) {
            _ = try valueOrErrno {
                withUnsafePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
                }
            }
        } catch {
            let e = error.rawValue
            Glibc.close(fd)
            fd = -1
            switch e {
            case ENOENT, ECONNREFUSED:
                throw .failed("the device is not running (nobody answers on \(path))")
            case EACCES, EPERM:
                throw .failed("cannot connect to \(path): permission denied; only the service user and the maintainer group may (sudo usermod -aG unwind-maint $USER, then log in again)")
            case ENOTSOCK:
                throw .failed("\(path) is not a socket")
            default:
                throw .failed("cannot connect to \(path): \(errnoText(e))")
            }
        }
    }

    deinit { close() }

    public func close() {
        if fd >= 0 {
            Glibc.close(fd)
            fd = -1
        }
    }

    /// Sends `request` and waits at most `timeout` for the answer.
    public func send(_ request: ControlRequest, timeout: Duration = .seconds(20)) throws(ControlFailure) -> ControlResponse {
        guard fd >= 0 else { throw .failed("not connected") }
        let line: [UInt8]
        do { line = try ControlEnvelope(request).encodedLine() } catch { throw .failed("cannot encode the request: \(error)") }
        if line.count > ControlLimits.maximumRequest {
            throw .input("the request is \(line.count) bytes; the device takes at most \(ControlLimits.maximumRequest)")
        }
        let unsent: Errno? = line.withUnsafeBytes { b in
            do throws(Errno) {
                try writingAll(b) { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                return nil
            } catch {
                return error
            }
        }
        if let e = unsent { throw .failed("the device closed the connection (\(errnoText(e.rawValue))); run the command again") }
        let clock = ContinuousClock()
        let end = clock.now + timeout
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            if let newline = buffered.firstIndex(of: 0x0A) {
                let answer = Array(buffered[..<newline])
                buffered.removeSubrange(...newline)
                do {
                    return try JSONDecoder().decode(ControlResponse.self, from: Data(answer))
                } catch {
                    throw .failed("the device's answer could not be read (\(error)); are the daemon and this command the same version?")
                }
            }
            let left = end - clock.now
            if left <= .zero { throw .failed("the device did not answer within \(timeout)") }
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ms = Int32(min(Int64(Int32.max), max(1, left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000)))
            // Not retried on EINTR here: the loop recomputes what is left of the timeout.
            let ready: Int32
            do throws(Errno) { ready = try valueOrErrno(retryOnInterrupt: false) { poll(&p, 1, ms) } } catch {
                if error == .interrupted { continue }
                throw .failed("poll: \(errnoText(error.rawValue))")
            }
            if ready == 0 { continue }
            let n: Int
            do throws(Errno) { n = try valueOrErrno { chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) } } } catch {
                throw .failed("reading the answer: \(errnoText(error.rawValue))")
            }
            if n == 0 {
                throw .failed("the device closed the connection before answering (is it stopping?); run the command again")
            }
            buffered.append(contentsOf: chunk[0..<n])
        }
    }

    /// One request on a connection of its own.
    public static func request(_ request: ControlRequest, path: String, timeout: Duration = .seconds(20)) throws(ControlFailure) -> ControlResponse {
        let client = try ControlClient(path: path)
        defer { client.close() }
        return try client.send(request, timeout: timeout)
    }

    /// Whether something accepts connections on `path`.
    package static func answers(_ path: String) -> Bool {
        guard let c = try? ControlClient(path: path) else { return false }
        c.close()
        return true
    }

    package static func address(_ path: String) -> sockaddr_un {
        var a = sockaddr_un()
        a.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &a.sun_path) { raw in
            let bytes = Array(path.utf8.prefix(raw.count - 1))
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        return a
    }
}
