#if canImport(Glibc)
import Glibc
#endif
import SystemPackage
import UnwindCore

/// A failure at the hardware edge, with the errno that explains it and what to do about it.
public struct DeviceError: Error, Equatable, CustomStringConvertible {
    public var device: String
    public var operation: String
    public var errno: Int32
    public var hint: String

    public init(device: String, operation: String, errno: Int32, hint: String = "") {
        self.device = device
        self.operation = operation
        self.errno = errno
        self.hint = hint
    }

    /// `errno` as swift-system's type, for comparing with `.resourceBusy` and the like.
    public var code: Errno { Errno(rawValue: errno) }

    public var description: String {
        var s = "\(device): \(operation) failed: \(describeErrno(errno)) (errno \(errno))"
        if !hint.isEmpty { s += ". " + hint }
        return s
    }
}

/// The vibration motor's GPIO line: on or off, nothing in between.
public protocol MotorLine: AnyObject {
    func set(_ on: Bool) throws(DeviceError)
}

/// The button lines: edge events with the kernel's timestamps, read without blocking.
public protocol ButtonLines: AnyObject {
    /// File descriptors the loop polls; readable means edges are waiting.
    var pollDescriptors: [Int32] { get }
    /// Appends every edge that has arrived, oldest first, without blocking.
    func readEdges(into edges: inout [ButtonEdge]) throws(DeviceError)
    /// For simulated lines: when the next edge will arrive, so simulated time can jump there.
    var nextEdgeTime: Instant? { get }
}

extension ButtonLines {
    public var nextEdgeTime: Instant? { nil }
}

/// The OLED panel. `show` blocks for the bus transfer, so the loop calls it from a
/// `FramePresenter`, never directly.
public protocol DisplayPanel: AnyObject {
    func show(_ frame: Framebuffer) throws(DeviceError)
}

/// Where the loop hands finished frames: never blocks the loop.
public protocol FramePresenter: AnyObject {
    /// Offers a frame. If the panel is still busy with an earlier one, the older pending frame
    /// is replaced (a late frame is dropped, not queued).
    func present(_ frame: Framebuffer, at: Instant)
    /// Frames offered but never shown because a newer one replaced them.
    var droppedFrames: Int { get }
    /// The last frame sent failed (the maintainer may be texted about it).
    var isFailing: Bool { get }
}

extension FramePresenter {
    /// A presenter that cannot tell never reports the panel failing.
    public var isFailing: Bool { false }
}

/// Both clocks, read together.
public protocol DeviceClock: AnyObject {
    func now() -> Moment
}

/// Sleeps until an absolute monotonic deadline or until a watched descriptor is readable.
public protocol LoopWaiter: AnyObject {
    func wait(until deadline: Instant, watching descriptors: [Int32]) throws(DeviceError)
}

/// strerror, for messages a person reads.
public func describeErrno(_ e: Int32) -> String {
    guard let s = strerror(e) else { return "error \(e)" }
    return String(cString: s)
}
