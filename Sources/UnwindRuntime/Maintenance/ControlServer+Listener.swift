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

/// The listening socket: put in place with its mode and group, and what waits on it accepted.
extension ControlServer {
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
    static func listen(on listener: Int32, at path: String, logger: Logger) throws(ControlFailure) {
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

    func acceptWaiting(_ now: Moment) -> Bool {
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

    static func peer(of fd: Int32) -> Peer {
        var raw = (Int32(0), UInt32(0), UInt32(0))  // struct ucred: pid, uid, gid
        var length = socklen_t(MemoryLayout.size(ofValue: raw))
        if getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &raw, &length) != 0 { return Peer(pid: -1, uid: .max, gid: .max) }
        return Peer(pid: raw.0, uid: raw.1, gid: raw.2)
    }
}
