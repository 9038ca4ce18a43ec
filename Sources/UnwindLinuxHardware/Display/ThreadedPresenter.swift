import Logging
import UnwindCore
import UnwindSeams

/// Hands frames to a display panel on its own thread, so a slow or failing bus never delays
/// the loop (and so never a motor pulse). Holds at most one pending frame: a newer frame
/// replaces it. Frames are copied into two preallocated buffers: presenting allocates nothing.
public final class ThreadedPresenter: FramePresenter, @unchecked Sendable {
    let panel: DisplayPanel
    let logger: Logger
    let condition = ThreadCondition()
    var pending: Framebuffer
    var hasPending = false
    var stopping = false
    var dropped = 0
    var failing = false

    public init(panel: DisplayPanel, width: Int = 128, height: Int = 64, logger: Logger) {
        self.panel = panel
        self.logger = logger
        self.pending = Framebuffer(width: width, height: height)
        // The thread holds the presenter until `stop` has ended it. It was `unowned`: a device
        // that failed to start (a second simulator on a held state directory) stopped and
        // released its presenter before a busy machine had run the thread at all, and the
        // thread's first look at it was a fatal error — on a terminal, Swift's backtracer then
        // waited 30 s for a key, which looked like a hang in exit. No cycle: the presenter
        // keeps no reference to its thread.
        startThread(name: "unwind.display") { self.work() }
    }

    public var droppedFrames: Int {
        condition.lock(); defer { condition.unlock() }
        return dropped
    }

    public var isFailing: Bool {
        condition.lock(); defer { condition.unlock() }
        return failing
    }

    public func present(_ frame: Framebuffer, at: Instant) {
        condition.lock()
        if hasPending { dropped += 1 }
        pending.bytes.withUnsafeMutableBufferPointer { dst in
            frame.bytes.withUnsafeBufferPointer { src in _ = dst.update(fromContentsOf: src) }
        }
        hasPending = true
        condition.signal()
        condition.unlock()
    }

    /// Stops the thread after the frame it is sending.
    public func stop() {
        condition.lock()
        stopping = true
        condition.signal()
        condition.unlock()
    }

    private func work() {
        var sending = pending
        while true {
            condition.lock()
            while !hasPending && !stopping { condition.wait() }
            if stopping { condition.unlock(); return }
            swap(&sending, &pending)
            hasPending = false
            condition.unlock()
            var failed = false
            do { try panel.show(sending) } catch {
                failed = true
                logger.debug("display: \(error)")
            }
            condition.lock()
            failing = failed
            condition.unlock()
        }
    }
}
