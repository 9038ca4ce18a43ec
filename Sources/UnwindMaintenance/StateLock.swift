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

/// A failure of the maintenance machinery (lock, socket, request) with the exit status it
/// means for a command: 1 (could not do it) or 2 (bad usage or input). The message is one line.
public struct ControlFailure: Error, Equatable, Sendable, CustomStringConvertible {
    public var code: Int32
    public var message: String

    public init(_ code: Int32, _ message: String) {
        self.code = code
        self.message = message
    }

    /// Bad input: exit status 2.
    public static func input(_ message: String) -> ControlFailure { ControlFailure(2, message) }
    /// Could not be done: exit status 1.
    public static func failed(_ message: String) -> ControlFailure { ControlFailure(1, message) }

    public var description: String { message }
}

package func errnoText(_ e: Int32) -> String { String(cString: strerror(e)) }

/// flock(2), called again on EINTR: nil when the lock was taken, else the errno.
func flockFailure(_ fd: Int32, _ operation: Int32) -> Int32? {
    do throws(Errno) {
        _ = try valueOrErrno { flock(fd, operation) }
        return nil
    } catch {
        return error.rawValue
    }
}

/// Opens one of the state directory's own dot-files (`.lock`, `.daemon`) the safe way: the
/// service user can write the directory and a maintainer's command may run as root, so a link
/// planted under the name must not make root create, truncate or lock a file elsewhere.
/// `open` with O_NOFOLLOW (ELOOP on a link), then `fstat`: only a regular file with one name
/// (a hard link to someone else's file is refused too) is used. Nil: no such file.
func openStateDotFile(_ path: String, _ flags: Int32, _ mode: mode_t) throws(ControlFailure) -> Int32? {
    let fd: Int32
    do throws(Errno) { fd = try valueOrErrno { open(path, flags | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, mode) } } catch {
        let e = error.rawValue
        if e == ELOOP { throw .failed("\(path) is a symbolic link; it must be a plain file (remove it: links in the state directory are never followed)") }
        if e == ENOENT { return nil }
        throw .failed("cannot open \(path): \(errnoText(e))"
                      + (e == EACCES ? " (run the command as the service user, in the maintainer group, or with sudo)" : ""))
    }
    var info = stat()
    if fstat(fd, &info) != 0 || info.st_mode & S_IFMT != S_IFREG || info.st_nlink != 1 {
        close(fd)
        throw .failed("\(path) is not a plain file (a directory, a FIFO, a device or a second name of another file); remove it")
    }
    // Made by root (`sudo unwind …` with the device stopped): the service user must still be
    // able to open it, or every later save of the device would wait for a lock it cannot open.
    var directory = stat()
    let parent = String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)])
    if geteuid() == 0, stat(parent.isEmpty ? "." : parent, &directory) == 0,
       info.st_uid != directory.st_uid || info.st_gid != directory.st_gid {
        _ = fchown(fd, directory.st_uid, directory.st_gid)
    }
    return fd
}

/// The lock that serialises every writer of the state directory: an exclusive `flock` on
/// `<state dir>/.lock`.
///
/// Who takes it:
/// - the daemon (and both simulators) while loading the state files at start, and around each
///   of its own writes (on its background writer queue, never on the real-time loop's thread on
///   the device);
/// - a maintainer's command that edits the files itself, because no daemon is running, for its
///   whole read-modify-write;
/// - `unwind backup`, shared, while it reads the files, so the archive is one consistent moment.
///
/// Each acquisition opens the file anew, so two holders in one process (the start-up and the
/// writer queue) exclude each other like two processes do. The lock is advisory: it orders the
/// programs that take it, and every state file is still replaced atomically by rename.
public final class StateLock: Sendable {
    public static let fileName = ".lock"
    public let path: String

    public init(stateDirectory: String) {
        path = stateDirectory + "/" + Self.fileName
    }

    /// A held lock; `release` (or deinit) lets it go.
    public final class Held {
        private var fd: Int32
        init(fd: Int32) { self.fd = fd }
        public func release() {
            if fd >= 0 {
                flock(fd, LOCK_UN)
                close(fd)
                fd = -1
            }
        }
        deinit { release() }
    }

    /// Takes the lock, waiting at most `timeout` (nil: as long as it takes).
    public func acquire(exclusive: Bool = true, timeout: Duration = .seconds(10)) throws(ControlFailure) -> Held {
        guard let fd = try openStateDotFile(path, O_RDONLY | O_CREAT, 0o660) else {
            throw .failed("cannot create the state lock \(path)")
        }
        let operation = exclusive ? LOCK_EX : LOCK_SH
        let clock = ContinuousClock()
        let end = clock.now + timeout
        while let e = flockFailure(fd, operation | LOCK_NB) {
            guard e == EWOULDBLOCK else {
                close(fd)
                throw .failed("cannot lock \(path): \(errnoText(e))")
            }
            if clock.now >= end {
                close(fd)
                throw .failed("the state directory is busy: something has held \(path) for \(timeout) (see: fuser -v \(path)); try again")
            }
            usleep(10_000)
        }
        return Held(fd: fd)
    }

    /// Runs `body` holding the lock.
    public func withLock<T>(exclusive: Bool = true, timeout: Duration = .seconds(10),
                            _ body: () throws(ControlFailure) -> T) throws(ControlFailure) -> T {
        let held = try acquire(exclusive: exclusive, timeout: timeout)
        defer { held.release() }
        return try body()
    }
}

/// How a command finds out whether a device (the daemon or a simulator) is running on a state
/// directory, and where its control socket is: `<state dir>/.daemon`.
///
/// The device holds an exclusive `flock` on that file for as long as it runs (the kernel lets
/// go when it dies, SIGKILL included) and writes into it, in place, its pid and its socket's
/// path. A command that can take a shared lock on the file knows no device is running.
/// The file is never replaced by rename: the lock lives on its inode.
public final class DaemonPresence {
    public static let fileName = ".daemon"
    /// The socket a device without one names (the headless simulator): it holds the state
    /// directory and takes no commands.
    public static let noSocket = "none"

    /// What a command sees.
    public enum Probe: Equatable, Sendable {
        case stopped
        case running(pid: Int32?, socket: String?)
    }

    private var fd: Int32
    public let path: String

    /// Claims the state directory for this process. Throws when another device holds it.
    public init(stateDirectory: String, socketPath: String) throws(ControlFailure) {
        path = stateDirectory + "/" + Self.fileName
        guard let opened = try openStateDotFile(path, O_RDWR | O_CREAT, 0o640) else {
            throw .failed("cannot create \(path)")
        }
        fd = opened
        // It names the socket; the group (the maintainers) reads it, nobody else, whatever the
        // umask or an older version left.
        _ = fchmod(fd, 0o640)
        if let e = flockFailure(fd, LOCK_EX | LOCK_NB) {
            close(fd)
            fd = -1
            if e == EWOULDBLOCK {
                let other = (try? Self.probe(stateDirectory: stateDirectory)).flatMap { p -> Int32? in
                    if case .running(let pid, _) = p { return pid }
                    return nil
                }
                throw .failed("another unwind is already running on \(stateDirectory)" + (other.map { " (pid \($0))" } ?? ""))
            }
            throw .failed("cannot lock \(path): \(errnoText(e))")
        }
        let text = Array("pid \(getpid())\nsocket \(socketPath)\n".utf8)
        _ = ftruncate(fd, 0)
        _ = text.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
    }

    deinit { release() }

    /// Lets the state directory go (the file stays; without the lock it means "stopped").
    public func release() {
        if fd >= 0 {
            _ = ftruncate(fd, 0)
            flock(fd, LOCK_UN)
            close(fd)
            fd = -1
        }
    }

    /// Whether a device runs on `stateDirectory`, and its socket when it said.
    public static func probe(stateDirectory: String) throws(ControlFailure) -> Probe {
        let path = stateDirectory + "/" + fileName
        guard let fd = try openStateDotFile(path, O_RDONLY, 0) else { return .stopped }
        defer { close(fd) }
        if let e = flockFailure(fd, LOCK_SH | LOCK_NB) {
            if e != EWOULDBLOCK { throw .failed("cannot check \(path): \(errnoText(e))") }
            var buffer = [UInt8](repeating: 0, count: 4096)
            let n = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
            var pid: Int32?
            var socket: String?
            for line in String(decoding: buffer.prefix(max(0, n)), as: UTF8.self).split(separator: "\n") {
                if line.hasPrefix("pid ") { pid = Int32(line.dropFirst(4)) }
                if line.hasPrefix("socket ") { socket = String(line.dropFirst(7)) }
            }
            return .running(pid: pid, socket: socket)
        }
        flock(fd, LOCK_UN)
        return .stopped
    }
}
