#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import UnwindCore
import UnwindSeams

/// Buttons a test (or the benchmark) presses from its own thread while the loop runs on
/// another: edges go into a locked queue and a byte into a pipe the loop polls, so it wakes at
/// once.
public final class InjectedButtons: ButtonLines, @unchecked Sendable {
    public let clock: DeviceClock
    private let queue = Mutex<[ButtonEdge]>([])
    private let reader: Int32
    private let writer: Int32

    public init(clock: DeviceClock) throws(DeviceError) {
        self.clock = clock
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw DeviceError(device: "test buttons", operation: "pipe", errno: errno) }
        reader = fds[0]
        writer = fds[1]
        _ = fcntl(reader, F_SETFL, fcntl(reader, F_GETFL) | O_NONBLOCK)
    }

    deinit {
        close(reader)
        close(writer)
    }

    public var pollDescriptors: [Int32] { [reader] }
    public var nextEdgeTime: Instant? { queue.withLock { $0.first?.at } }

    /// A press now, released after `holdFor`.
    public func tap(_ button: Button, holdFor: Duration = .milliseconds(80)) {
        let now = clock.now().instant
        queue.withLock { q in
            q.append(ButtonEdge(button, pressed: true, at: now))
            q.append(ButtonEdge(button, pressed: false, at: now + holdFor))
            q.sort { $0.at < $1.at }
        }
        var b: UInt8 = 1
        _ = write(writer, &b, 1)
    }

    /// Every edge tapped has been handed to the device.
    public var isIdle: Bool { queue.withLock { $0.isEmpty } }

    public func readEdges(into edges: inout [ButtonEdge]) throws(DeviceError) {
        var sink = [UInt8](repeating: 0, count: 64)
        while read(reader, &sink, sink.count) > 0 {}
        let now = clock.now().instant
        queue.withLock { q in
            var n = 0
            while n < q.count && q[n].at <= now { edges.append(q[n]); n += 1 }
            if n > 0 { q.removeFirst(n) }
        }
    }
}
