#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Logging
import UnwindCore

/// How a request is answered: now, or once something finishes (a write reaching the card, the
/// modem answering). `poll` is asked on every pass of the loop until it gives an answer; once
/// `until` has passed it is asked with `expired` true and must answer. `cancel` runs when the
/// command went away before the answer.
public enum ControlReply {
    case now(ControlResponse)
    case later(until: Instant, poll: (Moment, _ expired: Bool) -> ControlResponse?, cancel: () -> Void)
}

/// What answers requests: the device loop.
protocol ControlHandling: AnyObject {
    func handleControl(_ request: ControlRequest, from peer: ControlServer.Peer, at now: Moment) -> ControlReply
}

/// The device's end of the control socket (see `ControlEnvelope` for the protocol), serviced
/// from the device loop's poll and never blocking it.
///
/// - The listening socket and every connection are non-blocking. Each pass of the loop accepts
///   what is waiting, reads what has arrived, answers every complete line, writes what the
///   socket takes (the rest on the next pass: the loop passes at least 30 times a second).
/// - With no command connected, a pass costs one `accept4` that fails with EAGAIN and no
///   allocation; the descriptors the loop polls are a stored array.
/// - A request line over `ControlLimits.maximumRequest` bytes, or one that is not a request, is
///   answered with an error and the connection closed; at most `ControlLimits.maximumClients`
///   connections; an idle one is closed after `ControlLimits.idleTimeout`.
/// - Access is the socket file's: created mode 0660 (umask 0117 around `bind`), its group set to
///   the group of the directory it is in. On the device that is `/run/unwind`, made by systemd
///   with `RuntimeDirectory=unwind`, `RuntimeDirectoryMode=0750` and the unit's `Group=` the
///   maintainer group (e.g. `unwind-maint`): only the service user and that group can connect.
///   Every connection's peer (SO_PEERCRED: uid, gid, pid) is logged, and every change it asks for.
public final class ControlServer {
    public struct Peer: Equatable, Sendable, CustomStringConvertible {
        public var pid: Int32
        public var uid: UInt32
        public var gid: UInt32
        public var description: String { "uid \(uid) gid \(gid) pid \(pid)" }
    }

    final class Client {
        let fd: Int32
        let peer: Peer
        var input: [UInt8] = []
        var output: [UInt8] = []
        var lastActivity: Instant
        var closeAfterWrite = false
        /// The command closed its end (or shut down writing): answer what came, then close.
        var eof = false
        var waiting: (until: Instant, poll: (Moment, Bool) -> ControlResponse?, cancel: () -> Void)?
        var closed = false

        init(fd: Int32, peer: Peer, now: Instant) {
            self.fd = fd
            self.peer = peer
            self.lastActivity = now
        }
    }

    public let path: String
    public let stateDirectory: String
    /// The shipped content, for `unwind mantras reset`.
    public let contentDirectory: String
    public let startedAt: WallTime
    let logger: Logger
    private var listener: Int32
    private var clients: [Client] = []
    private var scratch: [UInt8]
    /// The listener and every connection: what the loop polls.
    public private(set) var pollDescriptors: [Int32] = []
    /// "ok" or "lost" for the display (the daemon's SSD1306 knows); nil: not known.
    public var displayHealth: (() -> String?)?
    /// The latest errors and warnings the device logged, newest last.
    public var recentErrors: (() -> [String])?

    /// Creates the socket at `path`, replacing a stale one (a socket nobody answers on).
    public init(path: String, stateDirectory: String, contentDirectory: String? = nil, logger: Logger,
                now: WallTime) throws(ControlFailure) {
        self.path = path
        self.stateDirectory = stateDirectory
        self.contentDirectory = DeviceContent.directory(override: contentDirectory)
        self.logger = logger
        self.startedAt = now
        scratch = [UInt8](repeating: 0, count: 64 * 1024)
        guard path.utf8.count < MemoryLayout.size(ofValue: sockaddr_un().sun_path) else {
            throw .failed("the control socket path \(path) is too long for a UNIX socket (at most 107 bytes)")
        }
        var info = stat()
        if lstat(path, &info) == 0 {
            guard info.st_mode & S_IFMT == S_IFSOCK else {
                throw .failed("\(path) exists and is not a socket; remove it or choose another --socket")
            }
            if ControlClient.answers(path) {
                throw .failed("another unwind answers on \(path)")
            }
            unlink(path)
        }
        listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        if listener < 0 { throw .failed("control socket: socket: \(errnoText(errno))") }
        var address = ControlClient.address(path)
        let old = umask(0o117)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        let bindErrno = errno
        umask(old)
        if bound != 0 {
            Glibc.close(listener)
            throw .failed("control socket: cannot bind \(path): \(errnoText(bindErrno))")
        }
        // The group that may connect is the directory's (the maintainer group on the device).
        let directory = (path as NSString).deletingLastPathComponent
        var dirInfo = stat()
        if stat(directory.isEmpty ? "." : directory, &dirInfo) == 0, dirInfo.st_gid != getegid() {
            if chown(path, uid_t.max, dirInfo.st_gid) != 0 {
                logger.warning("control socket \(path): cannot give it the group \(dirInfo.st_gid) of its directory (\(errnoText(errno))); only this user can connect")
            }
        }
        if listen(listener, 16) != 0 {
            let e = errno
            Glibc.close(listener)
            unlink(path)
            throw .failed("control socket: cannot listen on \(path): \(errnoText(e))")
        }
        pollDescriptors = [listener]
        pollDescriptors.reserveCapacity(ControlLimits.maximumClients + 1)
        logger.info("control socket at \(path)")
    }

    deinit { close() }

    /// Closes every connection and the socket, and removes its file.
    public func close() {
        for c in clients { closeClient(c) }
        clients.removeAll()
        if listener >= 0 {
            Glibc.close(listener)
            listener = -1
            unlink(path)
        }
        pollDescriptors = []
    }

    /// One pass: accept, read, answer, write. Called by the loop on every pass.
    func service(_ handler: ControlHandling, at now: Moment) {
        guard listener >= 0 else { return }
        var changed = acceptWaiting(now)
        if clients.isEmpty {
            if changed { rebuildDescriptors() }
            return
        }
        for c in clients {
            read(c, now)
            answerLines(c, handler, now)
            if let w = c.waiting {
                let expired = now.instant >= w.until
                if let r = w.poll(now, expired) {
                    c.waiting = nil
                    respond(c, r, now)
                    answerLines(c, handler, now)  // a request sent meanwhile
                }
            }
            write(c)
            if !c.closed, c.waiting == nil, c.output.isEmpty, now.instant - c.lastActivity >= ControlLimits.idleTimeout {
                logger.info("control: closing an idle connection (\(c.peer))")
                closeClient(c)
            }
            if c.closeAfterWrite && c.output.isEmpty { closeClient(c) }
            if c.eof && c.waiting == nil && c.output.isEmpty && !c.input.contains(0x0A) { closeClient(c) }
        }
        if clients.contains(where: { $0.closed }) {
            clients.removeAll { $0.closed }
            changed = true
        }
        if changed { rebuildDescriptors() }
    }

    private func rebuildDescriptors() {
        pollDescriptors.removeAll(keepingCapacity: true)
        pollDescriptors.append(listener)
        for c in clients { pollDescriptors.append(c.fd) }
    }

    private func acceptWaiting(_ now: Moment) -> Bool {
        var changed = false
        while true {
            let fd = accept(listener, nil, nil)
            if fd < 0 {
                if errno == EINTR || errno == ECONNABORTED { continue }
                return changed  // EAGAIN: nobody else waiting
            }
            // (accept4 is not exported to Swift here: the flags are set right after.)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            let peer = Self.peer(of: fd)
            if clients.count >= ControlLimits.maximumClients {
                logger.warning("control: refusing a connection from \(peer): \(ControlLimits.maximumClients) already open")
                var line = ControlResponse(.failed("the device is busy with \(ControlLimits.maximumClients) other commands; try again")).encodedLine()
                _ = line.withUnsafeMutableBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT)) }
                Glibc.close(fd)
                continue
            }
            logger.info("control: connection from \(peer)")
            clients.append(Client(fd: fd, peer: peer, now: now.instant))
            changed = true
        }
    }

    static func peer(of fd: Int32) -> Peer {
        var raw = (Int32(0), UInt32(0), UInt32(0))  // struct ucred: pid, uid, gid
        var length = socklen_t(MemoryLayout.size(ofValue: raw))
        if getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &raw, &length) != 0 { return Peer(pid: -1, uid: .max, gid: .max) }
        return Peer(pid: raw.0, uid: raw.1, gid: raw.2)
    }

    private func read(_ c: Client, _ now: Moment) {
        guard !c.closed, !c.eof else { return }
        while true {
            let n = scratch.withUnsafeMutableBytes { Glibc.read(c.fd, $0.baseAddress, $0.count) }
            if n > 0 && c.closeAfterWrite { continue }  // the rest of a refused request: read and dropped
            if n > 0 {
                c.input.append(contentsOf: scratch[0..<n])
                c.lastActivity = now.instant
                if c.input.count > ControlLimits.maximumRequest && !c.input.contains(0x0A) {
                    logger.warning("control: a request of more than \(ControlLimits.maximumRequest) bytes from \(c.peer); closing")
                    c.input.removeAll()
                    respond(c, ControlResponse(.input("the request is larger than \(ControlLimits.maximumRequest) bytes")), now)
                    c.closeAfterWrite = true
                    return
                }
                continue
            }
            if n == 0 {
                c.eof = true
                return
            }
            if errno == EINTR { continue }
            if errno != EAGAIN && errno != EWOULDBLOCK {
                if let w = c.waiting { w.cancel() }
                closeClient(c)
            }
            return
        }
    }

    private func answerLines(_ c: Client, _ handler: ControlHandling, _ now: Moment) {
        while !c.closed, !c.closeAfterWrite, c.waiting == nil, let newline = c.input.firstIndex(of: 0x0A) {
            let line = Array(c.input[..<newline])
            c.input.removeSubrange(...newline)
            if line.count > ControlLimits.maximumRequest {
                respond(c, ControlResponse(.input("the request is larger than \(ControlLimits.maximumRequest) bytes")), now)
                c.closeAfterWrite = true
                return
            }
            let envelope: ControlEnvelope
            do {
                envelope = try JSONDecoder().decode(ControlEnvelope.self, from: Data(line))
            } catch {
                logger.warning("control: \(c.peer) sent something that is not a request; closing")
                respond(c, ControlResponse(.input("not a control request (one JSON object per line expected)")), now)
                c.closeAfterWrite = true
                return
            }
            guard envelope.version == ControlLimits.protocolVersion else {
                respond(c, ControlResponse(.failed("control protocol \(envelope.version); this device speaks \(ControlLimits.protocolVersion): use the unwind command installed with it")), now)
                c.closeAfterWrite = true
                return
            }
            switch handler.handleControl(envelope.request, from: c.peer, at: now) {
            case .now(let r): respond(c, r, now)
            case .later(let until, let poll, let cancel): c.waiting = (until, poll, cancel)
            }
        }
    }

    private func respond(_ c: Client, _ r: ControlResponse, _ now: Moment) {
        c.output.append(contentsOf: r.encodedLine())
        c.lastActivity = now.instant
    }

    private func write(_ c: Client) {
        while !c.closed, !c.output.isEmpty {
            let n = c.output.withUnsafeBytes { send(c.fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT)) }
            if n > 0 {
                c.output.removeFirst(n)
                continue
            }
            if n < 0 && errno == EINTR { continue }
            if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { return }  // the rest next pass
            if let w = c.waiting { w.cancel() }
            closeClient(c)
            return
        }
    }

    private func closeClient(_ c: Client) {
        guard !c.closed else { return }
        c.closed = true
        c.waiting = nil
        Glibc.close(c.fd)
    }
}
