#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization
import Testing
import UnwindTestSupport
import UnwindMaintenance
import UnwindSimulatedHardware
import UnwindCore
@testable import UnwindRuntime
import UnwindSimulator

/// The loop's frame counts (from `unwind status`) and this process's resident memory (sampled
/// every 20 ms, the peak kept) around an attack.
final class AttackWatch: @unchecked Sendable {
    struct Cost {
        var framesDrawn: Int
        var framesMissed: Int
        /// Peak resident memory during the attack, less what it was before.
        var growth: Int
        var seconds: Double
        /// How long the loop's thread was ready to run but waited for a CPU meanwhile.
        var starved: Duration
    }

    let rig: MaintenanceRig
    let before: StatusReport
    let residentBefore: Int
    let waitingBefore: Duration
    let started = ContinuousClock.now
    private let peak = Atomic<Int>(0)
    private let stop = Atomic<Bool>(false)
    private let sampled = DispatchSemaphore(value: 0)

    init(_ rig: MaintenanceRig) throws {
        self.rig = rig
        before = try #require(rig.status())
        waitingBefore = timeWaitingForACPU(thread: rig.loopThread.load(ordering: .acquiring))
        residentBefore = Self.resident()
        peak.store(residentBefore, ordering: .relaxed)
        Thread { [self] in
            while !stop.load(ordering: .relaxed) {
                let now = Self.resident()
                if now > peak.load(ordering: .relaxed) { peak.store(now, ordering: .relaxed) }
                usleep(20_000)  // how often memory is sampled
            }
            sampled.signal()
        }.start()
    }

    func finish() throws -> Cost {
        let elapsed = ContinuousClock.now - started
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        stop.store(true, ordering: .relaxed)
        sampled.wait()
        let after = try #require(rig.status())
        let starved = timeWaitingForACPU(thread: rig.loopThread.load(ordering: .acquiring)) - waitingBefore
        return Cost(framesDrawn: after.framesRendered - before.framesRendered, framesMissed: after.framesMissed - before.framesMissed,
                    growth: peak.load(ordering: .relaxed) - residentBefore, seconds: seconds, starved: starved)
    }

    /// VmRSS from /proc/self/status, in bytes.
    static func resident() -> Int {
        guard let text = readText("/proc/self/status"),
              let line = text.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
              let kB = line.split(separator: " ").dropFirst().first.flatMap({ Int($0) }) else { return 0 }
        return kB * 1024
    }
}

/// A connection made by hand, as a hostile local user would make it; non-blocking.
final class RawConnection: @unchecked Sendable {
    struct Refused: Error { var errno: Int32 }

    let fd: Int32
    private var buffered: [UInt8] = []

    init(_ path: String) throws {
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var a = sockaddr_un()
        a.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &a.sun_path) { $0.copyBytes(from: Array(path.utf8) + [0]) }
        let r = withUnsafePointer(to: &a) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        if r != 0 {
            let e = errno
            close(fd)
            throw Refused(errno: e)
        }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
    }

    deinit { close(fd) }

    /// Whatever the socket takes now: the bytes taken (0: it is full), nil once the device has
    /// closed the connection.
    func offer(_ bytes: [UInt8]) -> Int? {
        let n = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        if n >= 0 { return n }
        return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? 0 : nil
    }

    /// Offers all of `bytes`, as fast as the socket takes them, until `end`: whether it took all.
    func offerWhole(_ bytes: [UInt8], until end: ContinuousClock.Instant) -> Bool {
        var at = 0
        while at < bytes.count {
            let sent = bytes[at...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            let n: Int? = sent >= 0 ? sent : (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? 0 : nil)
            guard let n, ContinuousClock.now < end else { return false }
            if n == 0 {
                var p = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                _ = poll(&p, 1, 100)
            }
            at += n
        }
        return true
    }

    /// One answer line, waiting at most `limit` for it.
    func readLine(within limit: Duration) -> String? {
        let end = ContinuousClock.now + limit
        while true {
            if let newline = buffered.firstIndex(of: 0x0A) {
                let line = String(decoding: buffered[..<newline], as: UTF8.self)
                buffered.removeSubrange(...newline)
                return line
            }
            if receive(until: end) != .data { return nil }
        }
    }

    /// Reads until the device closes the connection, at most until `end`: whether it did, and
    /// what it said before.
    func waitForClose(until end: ContinuousClock.Instant) -> (closed: Bool, said: String) {
        while true {
            switch receive(until: end) {
            case .data: continue
            case .closed: return (true, String(decoding: buffered, as: UTF8.self))
            case .nothing: return (false, String(decoding: buffered, as: UTF8.self))
            }
        }
    }

    private enum Received { case data, closed, nothing }

    private func receive(until end: ContinuousClock.Instant) -> Received {
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n > 0 {
                buffered += chunk[0..<n]
                return .data
            }
            if n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) { return .closed }
            let left = end - ContinuousClock.now
            if left <= .zero { return .nothing }
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            _ = poll(&p, 1, Int32(max(1, min(1000, left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000))))
        }
    }
}

/// An attacker on a thread of its own, given the instant to stop at.
final class Background: @unchecked Sendable {
    private let done = DispatchSemaphore(value: 0)

    init(for duration: Duration, _ body: @escaping @Sendable (ContinuousClock.Instant) -> Void) {
        let end = ContinuousClock.now + duration
        let done = self.done
        Thread {
            body(end)
            done.signal()
        }.start()
    }

    func join() { done.wait() }
}

/// Answer lines gathered from the attackers' threads, by attacker.
final class Answers: Sendable {
    let lines = Mutex<[Int: String]>([:])
}

/// Bytes counted from another thread.
final class Tally: Sendable {
    private let count = Atomic<Int>(0)
    func add(_ n: Int) { count.add(n, ordering: .relaxed) }
    var total: Int { count.load(ordering: .relaxed) }
}
