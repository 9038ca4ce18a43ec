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

/// Each connection in a pass: read while it owes a request, answer it, write the answer, hold it
/// to its deadlines, close it.
extension ControlServer {
    /// Reads while the connection owes a request, at most `readPerPass` bytes, and never past
    /// one request: a byte more than `maximumRequest` without a newline is the end of it.
    func read(_ c: Client, _ now: Moment) {
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
    func noticeHangUp(_ c: Client) {
        var p = pollfd(fd: c.fd, events: 0, revents: 0)
        if poll(&p, 1, 0) == 1 && p.revents & Int16(POLLHUP | POLLERR) != 0 {
            logger.info("control: \(c.peer) hung up before its answer; closing")
            dropClient(c)
        }
    }

    /// Hands the whole request waiting to the decoder, if the previous answer is out of the way;
    /// answers it once decoded.
    func answerRequest(_ c: Client, _ handler: ControlHandling, _ now: Moment) {
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

    func respond(_ c: Client, _ r: ControlResponse, _ now: Moment) {
        var line = r.encodedLine()
        if line.count > ControlLimits.maximumAnswer {
            logger.error("control: an answer of \(line.count) bytes for \(c.peer) is over the limit; sent an error instead")
            line = ControlResponse(.failed("the answer is larger than \(ControlLimits.maximumAnswer) bytes; the device did not send it")).encodedLine()
        }
        if c.output.isEmpty { c.answerMoved = now.instant }
        c.output.append(contentsOf: line)
    }

    func write(_ c: Client, _ now: Moment) {
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

    func enforceDeadlines(_ c: Client, _ now: Moment) {
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

    /// One answer line on a connection the device is about to close: what the socket takes now
    /// and nothing more.
    func sendAndForget(_ fd: Int32, _ r: ControlResponse) {
        let line = r.encodedLine()
        _ = line.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT)) }
    }

    /// Closes a connection whose request may still be in progress (its command is gone).
    func dropClient(_ c: Client) {
        if let w = c.waiting { w.cancel() }
        closeClient(c)
    }

    func closeClient(_ c: Client) {
        guard !c.closed else { return }
        c.closed = true
        c.waiting = nil
        c.decoding = nil
        c.input = []
        c.output = []
        Glibc.close(c.fd)
    }
}
