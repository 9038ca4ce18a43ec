import SystemPackage
import UnwindCore

/// The buttons on GPIO input lines with both-edge events, read without blocking. On the board
/// `LinuxButtonLines` (`GPIOButtons<LibgpiodBackend>`); in tests and the simulator, the same
/// code on a simulated chip.
///
/// Polarity is handled here, not by the kernel: the lines are requested without ACTIVE_LOW,
/// so each event is the pin's physical edge (what a scope shows and gpiomon prints), and with
/// `activeLow` a falling edge is a press. The bias follows the wiring: pull-up for active-low
/// buttons (to ground), pull-down for active-high ones (to 3V3).
public final class GPIOButtons<Backend: GPIOBackend>: ButtonLines {
    public struct Line: Sendable, Equatable {
        public var button: Button
        public var selector: LineSelector
        public var chip: String
        public var path: String
        public var offset: Int
    }

    public let lines: [Line]
    public let activeLow: Bool
    public let backend: Backend
    /// The lines' event descriptors; empty once released (and on a simulated chip without a
    /// wake path).
    public private(set) var pollDescriptors: [Int32]
    private var requests: [Backend.LineRequest?]
    private let batch: UnsafeMutableBufferPointer<GPIOEdge>

    /// Requests each button's line as an input with both-edge events and the bias the wiring
    /// wants. If one line fails, the ones already requested are let go before the error is
    /// thrown, so a retry finds them free.
    public init(_ buttons: [Button: LineSelector], activeLow: Bool = true, consumer: String = "unwind",
                backend: Backend) throws(DeviceError) {
        var lines: [Line] = []
        var requests: [Backend.LineRequest?] = []
        var fds: [Int32] = []
        let bias: GPIOBias = activeLow ? .pullUp : .pullDown
        for button in Button.allCases {
            guard let selector = buttons[button] else { continue }
            let purpose = "\(button.rawValue) button"
            do throws(DeviceError) {
                let address = try backend.resolve(selector, purpose: purpose)
                let request: Backend.LineRequest
                do {
                    request = try retryingInterrupts { () throws(Errno) in
                        try backend.requestInput(chipPath: address.path, offset: address.offset, consumer: consumer, bias: bias)
                    }
                } catch {
                    throw backend.requestError(address, purpose: purpose, operation: "request as input with edge events", errno: error)
                }
                lines.append(Line(button: button, selector: selector, chip: address.chip, path: address.path, offset: address.offset))
                requests.append(request)
                // Once each: a chip may offer one descriptor for all its lines.
                if let fd = backend.eventDescriptor(request), !fds.contains(fd) { fds.append(fd) }
            } catch {
                for case let r? in requests { backend.release(r) }
                throw error
            }
        }
        self.lines = lines
        self.requests = requests
        self.pollDescriptors = fds
        self.activeLow = activeLow
        self.backend = backend
        self.batch = .allocate(capacity: 16)
        self.batch.initialize(repeating: GPIOEdge(rising: false, at: .zero))
    }

    /// The buttons of a configuration, with its wiring and consumer name.
    public convenience init(configuration: GPIOConfiguration, backend: Backend) throws(DeviceError) {
        try self.init(configuration.buttons, activeLow: configuration.activeLowButtons, consumer: configuration.consumer,
                      backend: backend)
    }

    /// Every edge waiting on every line, as presses and releases: the edges of all lines merged
    /// oldest first, each at the instant the kernel stamped it. Allocates nothing once `edges`
    /// has capacity. A line that fails is reported after the others have been read, so one bad
    /// line does not silence the rest.
    public func readEdges(into edges: inout [ButtonEdge]) throws(DeviceError) {
        let start = edges.count
        var failure: DeviceError?
        for i in requests.indices {
            guard let request = requests[i] else { continue }
            let button = lines[i].button
            // A line bouncing faster than we read could keep us here: 64 batches is plenty.
            for _ in 0..<64 {
                let n: Int
                do {
                    n = try retryingInterrupts { () throws(Errno) in try backend.readEdges(request, into: batch) }
                } catch {
                    if failure == nil {
                        failure = GPIOErrors.io(chip: lines[i].chip, offset: lines[i].offset, purpose: "\(button.rawValue) button",
                                                operation: "read edge events", errno: error.rawValue)
                    }
                    break
                }
                for k in 0..<n {
                    let e = batch[k]
                    let edge = ButtonEdge(button, pressed: GPIOConfiguration.pressed(lineHigh: e.rising, activeLow: activeLow), at: e.at)
                    Self.insert(edge, into: &edges, after: start)
                }
                if n < batch.count { break }
            }
        }
        if let failure { throw failure }
    }

    /// Whether the button is held down now, from its line's level and the wiring.
    public func isPressed(_ button: Button) throws(DeviceError) -> Bool {
        guard let i = lines.firstIndex(where: { $0.button == button }) else { return false }
        let line = lines[i]
        guard let request = requests[i] else {
            throw GPIOErrors.io(chip: line.chip, offset: line.offset, purpose: "\(button.rawValue) button",
                                operation: "read value", errno: Errno.badFileDescriptor.rawValue)
        }
        do {
            let high = try retryingInterrupts { () throws(Errno) in try backend.value(request) }
            return GPIOConfiguration.pressed(lineHigh: high, activeLow: activeLow)
        } catch {
            throw GPIOErrors.io(chip: line.chip, offset: line.offset, purpose: "\(button.rawValue) button",
                                operation: "read value", errno: error.rawValue)
        }
    }

    public var nextEdgeTime: Instant? { backend.nextEdgeTime }

    /// Appends keeping `edges[start...]` in time order (stable: equal instants keep read order).
    @inline(__always)
    static func insert(_ edge: ButtonEdge, into edges: inout [ButtonEdge], after start: Int) {
        edges.append(edge)
        var j = edges.count - 1
        while j > start && edges[j - 1].at > edge.at {
            edges.swapAt(j - 1, j)
            j -= 1
        }
    }

    /// Lets every line go. Safe to call twice.
    public func release() {
        for i in requests.indices {
            if let r = requests[i] { backend.release(r) }
            requests[i] = nil
        }
        pollDescriptors = []
    }

    deinit {
        release()
        batch.deallocate()
    }
}
