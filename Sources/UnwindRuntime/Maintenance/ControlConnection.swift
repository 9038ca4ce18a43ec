#if canImport(Glibc)
import Glibc
#endif
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Logging
import UnwindMaintenance
import UnwindCore

/// One maintainer's connection as the server keeps it, who is on the other end, and how long
/// either side may keep the other waiting.
extension ControlServer {
    public struct Peer: Equatable, Sendable, CustomStringConvertible {
        public var pid: Int32
        public var uid: UInt32
        public var gid: UInt32
        public var description: String { "uid \(uid) gid \(gid) pid \(pid)" }
    }

    /// How long a connection may keep the device waiting on it. The device's are
    /// `ControlLimits`'s; a test shortens them to watch them act.
    public struct Deadlines: Sendable, Equatable {
        /// From a request's first byte to its newline.
        public var wholeRequest: Duration
        /// For a pending answer to move into the socket at all.
        public var answerProgress: Duration
        /// Between requests.
        public var idle: Duration

        public init(wholeRequest: Duration = ControlLimits.wholeRequest, answerProgress: Duration = ControlLimits.answerProgress,
                    idle: Duration = ControlLimits.idleTimeout) {
            self.wholeRequest = wholeRequest
            self.answerProgress = answerProgress
            self.idle = idle
        }

        public static let device = Deadlines()
    }

    /// An answer being waited for (`ControlReply.later`).
    ///
    /// A named struct, not an optional tuple of closures: Debian's Swift 6.2.3 (an assertions
    /// build) aborts in IRGen's LoadableByAddress pass on the tuple's accessors ("Source and
    /// target type do not match"), for every target. Tests/CrossBuild builds with that compiler.
    struct PendingAnswer {
        let until: Instant
        let poll: (Moment, _ expired: Bool) -> ControlResponse?
        let cancel: () -> Void
    }

    final class Client {
        let fd: Int32
        let peer: Peer
        /// The request arriving; after its newline, at most one read's worth of what came next.
        var input: [UInt8] = []
        /// Where the first newline in `input` is: a whole request waits to be answered.
        var newline: Int?
        /// One answer, or what the socket has not taken of it yet.
        var output: [UInt8] = []
        /// The last request taken or answer delivered: what idleness is counted from.
        var lastActivity: Instant
        /// When the request arriving now began (its first byte read).
        var requestStarted: Instant?
        /// When the pending answer last moved into the socket (or was made).
        var answerMoved: Instant
        var closeAfterWrite = false
        /// The command closed its end (or shut down writing): answer what came, then close.
        var eof = false
        var waiting: PendingAnswer?
        /// Its request, with the decoder (`RequestDecoder`) until its outcome is picked up.
        var decoding: RequestDecoder.Job?
        var closed = false

        init(fd: Int32, peer: Peer, now: Instant) {
            self.fd = fd
            self.peer = peer
            self.lastActivity = now
            self.answerMoved = now
        }

        /// Whether the device reads from it: only while it owes a request, so a command that does
        /// not read its answers (or streams behind a request) is held back by its socket buffer.
        var owesRequest: Bool {
            !closed && !eof && !closeAfterWrite && decoding == nil && waiting == nil && output.isEmpty && newline == nil
        }

        /// In the middle of a request: one whole and waiting, being answered, or its answer
        /// being written. Such a connection is never closed to make room for another.
        var busy: Bool { !closed && !closeAfterWrite && (newline != nil || decoding != nil || waiting != nil || !output.isEmpty) }
    }
}
