#if canImport(Glibc)
import Glibc
#endif
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Logging
import SystemPackage
import UnwindMaintenance
import UnwindCore
import UnwindSeams

/// How a request is answered: now, or once something finishes (a write reaching the card, the
/// modem answering). `poll` is asked on every pass of the loop until it gives an answer; once
/// `until` has passed it is asked with `expired` true and must answer. `cancel` runs when the
/// command went away before the answer.
public enum ControlReply {
    case now(ControlResponse)
    case later(until: Instant, poll: (Moment, _ expired: Bool) -> ControlResponse?, cancel: () -> Void)
}

/// What answers requests: the maintainer's desk (`MaintainerDesk`) on the running device.
/// `restorable`: a restore's archive as the decoder's queue parsed it (nil: any other request).
protocol ControlHandling: AnyObject {
    func handleControl(_ request: ControlRequest, restorable: Result<MaintenanceEdits.RestorableState, ControlFailure>?,
                       from peer: ControlServer.Peer, at now: Moment) -> ControlReply
}

/// The device's end of the control socket (see `ControlEnvelope` for the protocol), serviced
/// from the device loop's poll and never blocking it.
///
/// - The listening socket and every connection are non-blocking. Each pass of the loop accepts
///   what is waiting, reads what has arrived, answers a complete request, writes what the
///   socket takes (the rest on the next pass: the loop passes at least 30 times a second).
/// - With no command connected, a pass costs one `accept` that fails with EAGAIN and no
///   allocation; the descriptors the loop polls are a stored array.
///
/// What one connection can cost the device is bounded, whatever the command on the other end
/// does (the limits are `ControlLimits`):
/// - One request at a time. A connection is read only while it owes the device a request:
///   not while its request is being answered, nor while its answer has not all gone into the
///   socket. A command that sends without reading the answers therefore fills its own socket
///   buffer and waits there; the device holds at most one request (at most
///   `maximumRequest` + 1 bytes, with what followed its newline) and one answer (at most
///   `maximumAnswer` bytes) for it. At most 256 KB is read from a connection in one pass and at
///   most one request answered, so no connection can take over a pass.
/// - Deadlines (`Deadlines`): a request must arrive whole within `wholeRequest` of its first
///   byte, or it is answered with an error and the connection closed (a byte now and then does
///   not keep a connection); an answer the command takes none of for `answerProgress` is
///   dropped with its connection; a connection with nothing pending is closed after `idle`.
///   A connection whose request is still being answered (a write, the modem) is kept for as
///   long as that request says, and closed as soon as its command hangs up.
/// - Slots: at most `maximumClients` connections, at most `maximumClientsPerUser` of them with
///   the same uid (SO_PEERCRED), so one local user can never hold them all. A newcomer is not
///   refused for want of room: if its own uid is at its share, that uid's longest-idle
///   connection is closed; if the socket is full, the longest-idle connection of the uid
///   holding the most is. Only connections waiting for their next request (or half-sent ones)
///   are closed this way, never one whose request is being answered, so a burst of a user's
///   own commands cannot cut off the change another of them is making; the newcomer is
///   refused, with an answer saying so, only while every connection it could displace is in
///   the middle of a request — which the deadlines above end. The closed connection is told
///   why in one answer line.
/// - A request line over `maximumRequest` bytes, or one that is not a request, is answered with
///   an error and the connection closed.
/// - Access is the socket file's: mode 0660 and the group of the directory it is in from the
///   moment it appears (see `listen(on:at:logger:)`). On the device that is `/run/unwind`, made by systemd
///   with `RuntimeDirectory=unwind`, `RuntimeDirectoryMode=0750` and the unit's `Group=` the
///   maintainer group (e.g. `unwind-maint`): only the service user and that group can connect.
///   Every connection's peer (SO_PEERCRED: uid, gid, pid) is logged (at most one a second, the rest
///   counted), and every change it asks for.
public final class ControlServer {
    public let path: String
    public let stateDirectory: String
    /// The shipped content's directory, for `unwind mantras reset` (nil: the built-in texts).
    public let contentDirectory: String?
    public let startedAt: WallTime
    let logger: Logger
    public let deadlines: Deadlines
    private var listener: Int32
    private var clients: [Client] = []
    /// Set when `accept` ran out of descriptors or memory: the pending connection keeps the
    /// listener readable, so it leaves the poll for a second instead of waking the loop on
    /// every pass until something frees up.
    private var acceptPausedUntil: Instant?
    /// Decodes request lines off the loop's thread (see `RequestDecoder`).
    let decoder: RequestDecoder
    /// Bytes of requests the decoder may still be given. A 1 MB request takes tens of
    /// milliseconds to decode in a debug build, so each pass earns `decodedPerPass` and a request
    /// waits until the credit covers it: however many clients flood the socket, the decoder's
    /// thread takes on average 64 KB a pass (it shares the board's cores with the loop), and a
    /// command's small request goes at once.
    private var decodeCredit = ControlServer.decodedPerPass
    static let decodedPerPass = 64 * 1024
    /// Requests handed to the device in one pass, whatever the number of connections: each is
    /// answered from the device's state on the loop's thread (a status, a mantra list), so 16
    /// connections flooding well-formed requests could otherwise ask for 16 of them a pass.
    static let answersPerPass = 4
    private var answersLeft = ControlServer.answersPerPass
    /// Which connection goes first this pass: each in turn, so none is always last.
    private var firstServed = 0
    private var scratch: [UInt8]
    /// The listener and every connection: what the loop polls.
    public private(set) var pollDescriptors: [Int32] = []
    /// "ok" or "lost" for the display (the daemon's SSD1306 knows); nil: not known.
    public var displayHealth: (() -> String?)?
    /// The latest errors and warnings the device logged, newest last.
    public var recentErrors: (() -> [String])?

    /// Creates the socket at `path`, replacing a stale one (a socket nobody answers on).
    public convenience init(path: String, stateDirectory: String, contentDirectory: String? = nil, logger: Logger,
                            now: WallTime, deadlines: Deadlines = .device) throws(ControlFailure) {
        try self.init(path: path, stateDirectory: stateDirectory, contentDirectory: contentDirectory, logger: logger, now: now,
                      deadlines: deadlines, decoder: RequestDecoder())
    }

    /// `decoder`: a test's, to show what the loop does while a request is being decoded.
    init(path: String, stateDirectory: String, contentDirectory: String? = nil, logger: Logger,
         now: WallTime, deadlines: Deadlines = .device, decoder: RequestDecoder) throws(ControlFailure) {
        self.decoder = decoder
        self.path = path
        self.deadlines = deadlines
        self.stateDirectory = stateDirectory
        self.contentDirectory = contentDirectory
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
        do throws(ControlFailure) {
            try Self.listen(on: listener, at: path, logger: logger)
        } catch {
            Glibc.close(listener)
            throw error
        }
        pollDescriptors = [listener]
        pollDescriptors.reserveCapacity(ControlLimits.maximumClients + 1)
        logger.info("control socket at \(path)")
    }

    deinit { close() }

    /// Binds `listener`, lets it listen and puts it at `path`: mode 0660, the group of the
    /// directory it is in (the maintainer group on the device), from the moment it is there.
    ///
    /// The umask is not touched: it is the whole process's, and setting it around `bind` once
    /// left a directory another thread made at that moment unsearchable. The socket is bound
    /// instead in a private directory (mode 0700, beside `path`: the same filesystem), where
    /// nobody else can reach it whatever mode `bind` gave it, and given its mode and group there;
    /// then linked to `path`, which is atomic and refused if something took the name meanwhile,
    /// as `bind` would refuse it. It is bound through /proc/self/fd so that the private
    /// directory's longer name does not shorten the longest `path` a socket can have.
    private static func listen(on listener: Int32, at path: String, logger: Logger) throws(ControlFailure) {
        let file = FilePath(path)
        let directory = file.removingLastComponent().string
        let parent = directory.isEmpty ? "." : directory
        var template = Array((parent + "/." + (file.lastComponent?.string ?? path) + ".XXXXXX").utf8CString)
        let made = template.withUnsafeMutableBufferPointer { buffer -> String? in
            guard let base = buffer.baseAddress, let made = mkdtemp(base) else { return nil }
            return String(cString: made)
        }
        guard let privateDirectory = made else {
            throw .failed("control socket: cannot make a private directory beside \(path): \(errnoText(errno))")
        }
        let inside = open(privateDirectory, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        defer {
            unlinkat(inside, "s", 0)
            Glibc.close(inside)
            rmdir(privateDirectory)
        }
        guard inside >= 0, fchmod(inside, 0o700) == 0 else {  // 0700 whatever the umask took from it
            throw .failed("control socket: cannot use the private directory \(privateDirectory): \(errnoText(errno))")
        }
        var address = ControlClient.address("/proc/self/fd/\(inside)/s")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0, fchmodat(inside, "s", 0o660, 0) == 0 else {
            throw .failed("control socket: cannot bind \(path): \(errnoText(errno))")
        }
        var dirInfo = stat()
        if stat(parent, &dirInfo) == 0, dirInfo.st_gid != getegid(),
           fchownat(inside, "s", uid_t.max, dirInfo.st_gid, AT_SYMLINK_NOFOLLOW) != 0 {
            logger.warning("control socket \(path): cannot give it the group \(dirInfo.st_gid) of its directory (\(errnoText(errno))); only this user can connect")
        }
        guard Glibc.listen(listener, Int32(Self.acceptsPerPass)) == 0 else {
            throw .failed("control socket: cannot listen on \(path): \(errnoText(errno))")
        }
        guard linkat(inside, "s", AT_FDCWD, path, 0) == 0 else {
            throw .failed("control socket: cannot bind \(path): \(errnoText(errno))")
        }
    }


    /// Closes every connection and the socket, and removes its file.
    public func close() {
        for c in clients { closeClient(c) }
        clients.removeAll()
        if listener >= 0 {
            Glibc.close(listener)
            listener = -1
            unlink(path)
            decoder.close()
        }
        pollDescriptors = []
    }

    /// At most this many connections taken from the backlog in one pass (the backlog's size): a
    /// flood of connects cannot keep a pass in `accept`.
    static let acceptsPerPass = 16
    /// A full `restore` (~400 KB) in a few passes; with 16 connections flooding, a pass still
    /// copies at most 1 MB (at 256 KB each, a flood of connects pegs a debug build).
    static let readPerPass = 64 * 1024

    /// One pass: accept, read, answer, write. Called by the loop on every pass.
    func service(_ handler: ControlHandling, at now: Moment) {
        guard listener >= 0 else { return }
        decodeCredit = min(decodeCredit + Self.decodedPerPass, ControlLimits.maximumRequest + 1)
        var accepted = false
        if !(acceptPausedUntil.map { now.instant < $0 } ?? false) {
            if acceptPausedUntil != nil {
                acceptPausedUntil = nil
                accepted = true  // the listener goes back into the poll
            }
            accepted = acceptWaiting(now) || accepted
        }
        if clients.isEmpty {
            if accepted { rebuildDescriptors() }
            return
        }
        // Before the jobs are looked at: an outcome that lands after this wakes the next pass.
        if clients.contains(where: { $0.decoding != nil }) { decoder.drainWakes() }
        answersLeft = Self.answersPerPass
        firstServed = (firstServed + 1) % clients.count
        for k in clients.indices {
            let c = clients[(firstServed + k) % clients.count]
            if c.waiting != nil { noticeHangUp(c) }
            read(c, now)
            answerRequest(c, handler, now)
            if let w = c.waiting {
                let expired = now.instant >= w.until
                if let r = w.poll(now, expired) {
                    c.waiting = nil
                    respond(c, r, now)
                }
            }
            write(c, now)
            enforceDeadlines(c, now)
            if c.closeAfterWrite && c.output.isEmpty { closeClient(c) }
            if c.eof && c.decoding == nil && c.waiting == nil && c.output.isEmpty && c.newline == nil { closeClient(c) }
        }
        clients.removeAll { $0.closed }
        // Which connections are read changes with every request: a connection that is not read
        // must not be polled either, or its unread bytes would wake the loop without end.
        rebuildDescriptors()
    }

    private func rebuildDescriptors() {
        pollDescriptors.removeAll(keepingCapacity: true)
        if acceptPausedUntil == nil { pollDescriptors.append(listener) }
        for c in clients where c.owesRequest { pollDescriptors.append(c.fd) }
        if clients.contains(where: { $0.decoding != nil }) { pollDescriptors.append(decoder.wakeDescriptor) }
    }

    private func acceptWaiting(_ now: Moment) -> Bool {
        var changed = false
        for _ in 0..<Self.acceptsPerPass {
            let fd: Int32
            do throws(Errno) { fd = try valueOrErrno { accept(listener, nil, nil) } } catch {
                let e = error.rawValue
                if e == ECONNABORTED { continue }
                if e == EMFILE || e == ENFILE || e == ENOBUFS || e == ENOMEM {
                    logger.error("control: cannot accept a connection: \(errnoText(e)); not accepting for 1 s")
                    acceptPausedUntil = now.instant + .seconds(1)
                    return true
                }
                return changed  // EAGAIN: nobody else waiting
            }
            // (accept4 is not exported to Swift here: the flags are set right after.)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            let peer = Self.peer(of: fd)
            let occupants = clients.map { Occupant(uid: $0.peer.uid, busy: $0.busy, idleSince: $0.closeAfterWrite ? nil : $0.lastActivity) }
            switch Self.admission(of: peer.uid, among: occupants) {
            case .room:
                break
            case .closing(let index):
                let c = clients[index]
                warn("control: closing the connection of \(c.peer) (idle \(Self.seconds(now.instant - c.lastActivity))) to make room for \(peer)", now)
                sendAndForget(c.fd, ControlResponse(.failed("closed to make room for another command (at most \(ControlLimits.maximumClientsPerUser) connections per user, \(ControlLimits.maximumClients) in all); run the command again")))
                dropClient(c)
                clients.remove(at: index)
            case .refused:
                warn("control: refusing a connection from \(peer): every connection it could replace is in the middle of a request", now)
                sendAndForget(fd, ControlResponse(.failed("the device is busy with \(clients.count) other commands in progress; try again in a few seconds")))
                Glibc.close(fd)
                continue
            }
            if let held = connections.allow(now.instant) {
                logger.info("control: connection from \(peer)\(held > 0 ? " (and \(held) more connections in the last second, not logged)" : "")")
            }
            let c = Client(fd: fd, peer: peer, now: now.instant)
            clients.append(c)
            // A command sends its request right after connecting: read it now, so that while
            // more connections arrive in this pass it counts as a request in progress, not as
            // an idle connection to close for them.
            read(c, now)
            if c.closed { clients.removeLast() }
            changed = true
        }
        return changed
    }

    /// What the slot policy needs to know about a connection.
    struct Occupant: Equatable {
        var uid: UInt32
        var busy: Bool
        /// Nil: already closing (the first to go).
        var idleSince: Instant?
    }

    enum Admission: Equatable {
        case room
        /// Close `occupants[index]` first.
        case closing(Int)
        case refused
    }

    /// Where a newcomer from `uid` goes (see the type's comment): room if there is some; else
    /// the longest-idle connection not in the middle of a request, of its own uid when that uid
    /// is at its share, else of the uid holding the most connections (the next most if all of
    /// those are busy); refused when there is none.
    static func admission(of uid: UInt32, among occupants: [Occupant]) -> Admission {
        var held: [UInt32: Int] = [:]
        for o in occupants { held[o.uid, default: 0] += 1 }
        let mine = held[uid] ?? 0
        if mine < ControlLimits.maximumClientsPerUser && occupants.count < ControlLimits.maximumClients { return .room }
        var best: Int?
        // Which to close first: one already closing; then one of the uid holding the most (when
        // the newcomer's own uid is at its share, only its own are candidates); then the one
        // idle the longest.
        func better(_ i: Int, than j: Int) -> Bool {
            let a = occupants[i], b = occupants[j]
            if (a.idleSince == nil) != (b.idleSince == nil) { return a.idleSince == nil }
            if held[a.uid] != held[b.uid] { return (held[a.uid] ?? 0) > (held[b.uid] ?? 0) }
            guard let x = a.idleSince, let y = b.idleSince else { return false }
            return x < y
        }
        for i in occupants.indices where !occupants[i].busy {
            if mine >= ControlLimits.maximumClientsPerUser && occupants[i].uid != uid { continue }
            if best.map({ better(i, than: $0) }) ?? true { best = i }
        }
        return best.map { .closing($0) } ?? .refused
    }

    static func peer(of fd: Int32) -> Peer {
        var raw = (Int32(0), UInt32(0), UInt32(0))  // struct ucred: pid, uid, gid
        var length = socklen_t(MemoryLayout.size(ofValue: raw))
        if getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &raw, &length) != 0 { return Peer(pid: -1, uid: .max, gid: .max) }
        return Peer(pid: raw.0, uid: raw.1, gid: raw.2)
    }

    /// Reads while the connection owes a request, at most `readPerPass` bytes, and never past
    /// one request: a byte more than `maximumRequest` without a newline is the end of it.
    private func read(_ c: Client, _ now: Moment) {
        var taken = 0
        while c.owesRequest && taken < Self.readPerPass {
            let room = ControlLimits.maximumRequest + 1 - c.input.count
            let n: Int
            do throws(Errno) {
                n = try valueOrErrno { scratch.withUnsafeMutableBytes { Glibc.read(c.fd, $0.baseAddress, min($0.count, room)) } }
            } catch {
                if error != .wouldBlock { dropClient(c) }
                return
            }
            if n > 0 {
                let start = c.input.count
                c.input.append(contentsOf: scratch[0..<n])
                taken += n
                // memchr over the bytes just read: a flood's megabytes are scanned at memory speed
                // on the loop's thread (a generic search is many times slower in a debug build).
                let found: Int? = scratch.withUnsafeBytes { b in
                    guard let base = b.baseAddress, let p = memchr(base, 0x0A, n) else { return nil }
                    return UnsafeRawPointer(p) - base
                }
                if let found { c.newline = start + found }
                if c.requestStarted == nil { c.requestStarted = now.instant }
                if c.newline == nil && c.input.count > ControlLimits.maximumRequest {
                    warn("control: a request of more than \(ControlLimits.maximumRequest) bytes from \(c.peer); closing", now)
                    c.input = []
                    respond(c, ControlResponse(.input("the request is larger than \(ControlLimits.maximumRequest) bytes")), now)
                    c.closeAfterWrite = true
                }
                continue
            }
            c.eof = true
            return
        }
    }

    /// A command that hung up while its request is being answered (the modem, a write) gives
    /// its slot back now rather than when the answer is ready. Its socket is not read meanwhile,
    /// so only the hang-up itself (POLLHUP: both directions gone) can tell.
    private func noticeHangUp(_ c: Client) {
        var p = pollfd(fd: c.fd, events: 0, revents: 0)
        if poll(&p, 1, 0) == 1 && p.revents & Int16(POLLHUP | POLLERR) != 0 {
            logger.info("control: \(c.peer) hung up before its answer; closing")
            dropClient(c)
        }
    }

    /// Hands the whole request waiting to the decoder, if the previous answer is out of the way;
    /// answers it once decoded.
    private func answerRequest(_ c: Client, _ handler: ControlHandling, _ now: Moment) {
        if let job = c.decoding {
            // Over this pass's share: the next pass (at the latest the next frame's) answers it.
            guard !c.closed, answersLeft > 0, let outcome = job.result else { return }
            answersLeft -= 1
            c.decoding = nil
            answer(c, outcome, handler, now)
            return
        }
        guard !c.closed, !c.closeAfterWrite, c.waiting == nil, c.output.isEmpty, let newline = c.newline else { return }
        guard newline <= decodeCredit else { return }  // a later pass
        // One decoded here is answered here: within this pass's share.
        if newline <= decoder.inlineLimit && answersLeft <= 0 { return }
        decodeCredit -= newline
        let line = Array(c.input[..<newline])
        c.input.removeSubrange(...newline)
        c.newline = c.input.firstIndex(of: 0x0A)
        // Part of the next request may have come with this one: its time starts once the
        // device wants it (see `enforceDeadlines`), not while this one is answered.
        c.requestStarted = nil
        c.lastActivity = now.instant
        if line.count > ControlLimits.maximumRequest {
            respond(c, ControlResponse(.input("the request is larger than \(ControlLimits.maximumRequest) bytes")), now)
            c.closeAfterWrite = true
            return
        }
        if line.count <= decoder.inlineLimit {
            answersLeft -= 1
            answer(c, decoder.decode(line), handler, now)
        } else {
            c.decoding = decoder.submit(line)
        }
    }

    private func answer(_ c: Client, _ outcome: RequestDecoder.Outcome, _ handler: ControlHandling, _ now: Moment) {
        let envelope: ControlEnvelope
        var restorable: Result<MaintenanceEdits.RestorableState, ControlFailure>?
        switch outcome {
        case .request(let e):
            envelope = e
        case .restore(let e, let checked):
            envelope = e
            restorable = checked
        case .tooDeep:
            warn("control: \(c.peer) sent a request nested deeper than \(RequestDecoder.maximumNesting) levels; closing", now)
            respond(c, ControlResponse(.input("not a control request (nested deeper than \(RequestDecoder.maximumNesting) levels)")), now)
            c.closeAfterWrite = true
            return
        case .tooLong(let field):
            warn("control: \(c.peer) sent a \(field) of more than \(RequestDecoder.longestText) bytes", now)
            respond(c, ControlResponse(.input("\(field): longer than \(RequestDecoder.longestText) bytes; far too long for any \(field)")), now)
            return
        case .notARequest:
            warn("control: \(c.peer) sent something that is not a request; closing", now)
            respond(c, ControlResponse(.input("not a control request (one JSON object per line expected)")), now)
            c.closeAfterWrite = true
            return
        }
        guard envelope.version == ControlLimits.protocolVersion else {
            respond(c, ControlResponse(.failed("control protocol \(envelope.version); this device speaks \(ControlLimits.protocolVersion): use the unwind command installed with it")), now)
            c.closeAfterWrite = true
            return
        }
        switch handler.handleControl(envelope.request, restorable: restorable, from: c.peer, at: now) {
        case .now(let r): respond(c, r, now)
        case .later(let until, let poll, let cancel): c.waiting = PendingAnswer(until: until, poll: poll, cancel: cancel)
        }
    }

    private func respond(_ c: Client, _ r: ControlResponse, _ now: Moment) {
        var line = r.encodedLine()
        if line.count > ControlLimits.maximumAnswer {
            logger.error("control: an answer of \(line.count) bytes for \(c.peer) is over the limit; sent an error instead")
            line = ControlResponse(.failed("the answer is larger than \(ControlLimits.maximumAnswer) bytes; the device did not send it")).encodedLine()
        }
        if c.output.isEmpty { c.answerMoved = now.instant }
        c.output.append(contentsOf: line)
    }

    private func write(_ c: Client, _ now: Moment) {
        while !c.closed, !c.output.isEmpty {
            let n: Int
            do throws(Errno) {
                n = try valueOrErrno { c.output.withUnsafeBytes { send(c.fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT)) } }
            } catch {
                if error != .wouldBlock { dropClient(c) }  // EAGAIN: the rest next pass
                return
            }
            if n > 0 {
                c.output.removeFirst(n)
                c.answerMoved = now.instant
                if c.output.isEmpty { c.lastActivity = now.instant }
                continue
            }
            dropClient(c)
            return
        }
    }

    private func enforceDeadlines(_ c: Client, _ now: Moment) {
        guard !c.closed else { return }
        if !c.output.isEmpty {
            if now.instant - c.answerMoved >= deadlines.answerProgress {
                warn("control: \(c.peer) has not read its answer for \(Self.seconds(now.instant - c.answerMoved)); closing", now)
                dropClient(c)
            }
            return
        }
        guard c.owesRequest else { return }
        if !c.input.isEmpty {
            let started = c.requestStarted ?? now.instant
            c.requestStarted = started
            if now.instant - started >= deadlines.wholeRequest {
                warn("control: \(c.peer) sent part of a request and not the rest within \(Self.seconds(deadlines.wholeRequest)); closing", now)
                c.input = []
                respond(c, ControlResponse(.input("the request did not arrive whole within \(Self.seconds(deadlines.wholeRequest)) of its first byte")), now)
                c.closeAfterWrite = true
            }
        } else if now.instant - c.lastActivity >= deadlines.idle {
            logger.info("control: closing an idle connection (\(c.peer))")
            closeClient(c)
        }
    }

    static func seconds(_ d: Duration) -> String {
        let ms = d.nanoseconds / 1_000_000
        return ms % 1000 == 0 ? "\(ms / 1000) s" : "\(Double(ms) / 1000) s"
    }

    /// Warnings about what clients do, at most one a second: a hostile client makes one per
    /// request, thousands a second, and each is a write from the loop's thread (and a flood in
    /// the journal). The ones held back are counted in the next.
    private func warn(_ message: @autoclosure () -> String, _ now: Moment) {
        guard let held = warnings.allow(now.instant) else { return }
        logger.warning("\(message())\(held > 0 ? " (and \(held) more warnings about clients in the last second, not logged)" : "")")
    }
    private var warnings = LogThrottle()
    /// Each connection's peer is logged, but no more than one a second either: a client that
    /// connects thousands of times a second would otherwise fill the journal from the loop.
    private var connections = LogThrottle()

    /// At most one line a second; the lines held back meanwhile are counted.
    struct LogThrottle {
        private var quietUntil: Instant?
        private var heldBack = 0

        /// Nil: hold this one back. Otherwise log it, saying how many were held back before it.
        mutating func allow(_ now: Instant) -> Int? {
            if let until = quietUntil, now < until {
                heldBack += 1
                return nil
            }
            defer { heldBack = 0 }
            quietUntil = now + .seconds(1)
            return heldBack
        }
    }

    /// One answer line on a connection the device is about to close: what the socket takes now
    /// and nothing more.
    private func sendAndForget(_ fd: Int32, _ r: ControlResponse) {
        let line = r.encodedLine()
        _ = line.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT)) }
    }

    /// Closes a connection whose request may still be in progress (its command is gone).
    private func dropClient(_ c: Client) {
        if let w = c.waiting { w.cancel() }
        closeClient(c)
    }

    private func closeClient(_ c: Client) {
        guard !c.closed else { return }
        c.closed = true
        c.waiting = nil
        c.decoding = nil
        c.input = []
        c.output = []
        Glibc.close(c.fd)
    }
}
