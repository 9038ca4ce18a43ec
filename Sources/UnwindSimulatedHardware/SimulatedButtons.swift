import UnwindCore
import UnwindDevices

/// The five button lines in simulation: a test (or the keyboard) presses them at chosen
/// instants, bounce included; the loop reads the edges when their time has come.
public final class SimulatedButtons: ButtonLines {
    let clock: DeviceClock
    private var queue: [ButtonEdge] = []

    public init(clock: DeviceClock) {
        self.clock = clock
        queue.reserveCapacity(64)
    }

    public var pollDescriptors: [Int32] { [] }

    public var nextEdgeTime: Instant? { queue.first?.at }

    /// Schedules a raw edge.
    public func edge(_ button: Button, pressed: Bool, at: Instant) {
        let e = ButtonEdge(button, pressed: pressed, at: at)
        var i = queue.count
        while i > 0 && queue[i - 1].at > at { i -= 1 }
        queue.insert(e, at: i)
    }

    /// A press held for `holdFor`, then released.
    public func tap(_ button: Button, at: Instant, holdFor: Duration = .milliseconds(80)) {
        edge(button, pressed: true, at: at)
        edge(button, pressed: false, at: at + holdFor)
    }

    /// A press whose contacts chatter `bounces` times on the way down and up, 1 ms apart.
    public func bouncyTap(_ button: Button, at: Instant, holdFor: Duration, bounces: Int) {
        var t = at
        for _ in 0..<bounces {
            edge(button, pressed: true, at: t); t = t + .milliseconds(1)
            edge(button, pressed: false, at: t); t = t + .milliseconds(1)
        }
        edge(button, pressed: true, at: t)
        t = at + holdFor
        for _ in 0..<bounces {
            edge(button, pressed: false, at: t); t = t + .milliseconds(1)
            edge(button, pressed: true, at: t); t = t + .milliseconds(1)
        }
        edge(button, pressed: false, at: t)
    }

    public func readEdges(into edges: inout [ButtonEdge]) throws(DeviceError) {
        let now = clock.now().instant
        var n = 0
        while n < queue.count && queue[n].at <= now { edges.append(queue[n]); n += 1 }
        if n > 0 { queue.removeFirst(n) }
    }
}
