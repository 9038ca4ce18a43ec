import UnwindCore
import UnwindSeams

/// The display in simulation: every frame the loop presents, with its instant, readable pixel
/// by pixel. A display can be made slow (each frame keeps it busy for `busyFor` of simulated
/// time; frames offered meanwhile replace each other, like the threaded presenter on the board).
public final class SimulatedDisplay: FramePresenter {
    public private(set) var current: Framebuffer
    public private(set) var framesShown = 0
    public private(set) var droppedFrames = 0
    public var busyFor: Duration = .zero
    /// Called for every frame shown, for logs and the terminal view.
    public var onFrame: ((Framebuffer, Instant) -> Void)?
    private var busyUntil = Instant(nanoseconds: .min)

    public init(width: Int = 128, height: Int = 64) {
        current = Framebuffer(width: width, height: height)
    }

    public func present(_ frame: Framebuffer, at: Instant) {
        if at < busyUntil {
            droppedFrames += 1
            return
        }
        busyUntil = at + busyFor
        current.bytes.withUnsafeMutableBufferPointer { dst in
            frame.bytes.withUnsafeBufferPointer { src in _ = dst.update(fromContentsOf: src) }
        }
        framesShown += 1
        onFrame?(current, at)
    }

    public subscript(x: Int, y: Int) -> Bool { current[x, y] }
}
