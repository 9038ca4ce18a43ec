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

/// What answers requests: the maintainer's desk (`MaintenanceDesk`) on the running device.
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
    var listener: Int32
    var clients: [Client] = []
    /// Set when `accept` ran out of descriptors or memory: the pending connection keeps the
    /// listener readable, so it leaves the poll for a second instead of waking the loop on
    /// every pass until something frees up.
    var acceptPausedUntil: Instant?
    /// Decodes request lines off the loop's thread (see `RequestDecoder`).
    let decoder: RequestDecoder
    /// Bytes of requests the decoder may still be given. A 1 MB request takes tens of
    /// milliseconds to decode in a debug build, so each pass earns `decodedPerPass` and a request
    /// waits until the credit covers it: however many clients flood the socket, the decoder's
    /// thread takes on average 64 KB a pass (it shares the board's cores with the loop), and a
    /// command's small request goes at once.
    var decodeCredit = ControlServer.decodedPerPass
    static let decodedPerPass = 64 * 1024
    /// Requests handed to the device in one pass, whatever the number of connections: each is
    /// answered from the device's state on the loop's thread (a status, a mantra list), so 16
    /// connections flooding well-formed requests could otherwise ask for 16 of them a pass.
    static let answersPerPass = 4
    var answersLeft = ControlServer.answersPerPass
    /// Which connection goes first this pass: each in turn, so none is always last.
    private var firstServed = 0
    var scratch: [UInt8]
    /// The listener and every connection: what the loop polls.
    public private(set) var pollDescriptors: [Int32] = []
    /// "ok" or "lost" for the display (the daemon's SSD1306 knows); nil: not known.
    public var displayHealth: (() -> String?)?
    /// The latest errors and warnings the device logged, newest last.
    public var recentErrors: (() -> [String])?
    /// Warnings about clients, at most one a second (`warn`).
    var warnings = LogThrottle()
    /// Each connection's peer is logged, but no more than one a second either: a client that
    /// connects thousands of times a second would otherwise fill the journal from the loop.
    var connections = LogThrottle()

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
}
