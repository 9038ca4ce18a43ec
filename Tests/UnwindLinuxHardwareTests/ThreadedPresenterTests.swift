import Foundation
import Synchronization
import Testing
import UnwindCore
import UnwindSeams
@testable import UnwindLinuxHardware

/// The display's own thread.
struct ThreadedPresenterTests {
    final class CountingPanel: DisplayPanel, @unchecked Sendable {
        let shown = Atomic<Int>(0)
        func show(_ frame: Framebuffer) throws(DeviceError) { shown.add(1, ordering: .relaxed) }
    }

    /// A device that fails to start stops its presenter and lets it go at once, often before a
    /// busy machine has run the presenter's thread at all: the thread must still find it (it
    /// once held it unowned, and its first look was a fatal error), and then let it go.
    @Test func aPresenterStoppedAndReleasedAtOnceIsLetGoByItsThread() {
        weak var last: ThreadedPresenter?
        for _ in 0..<200 {
            let presenter = ThreadedPresenter(panel: CountingPanel(), logger: quietLogger())
            presenter.stop()
            last = presenter
        }
        #expect(waitUntil(.seconds(30)) { last == nil }, "the last presenter's thread never ended")
    }

    /// Frames offered reach the panel; stop ends the thread.
    @Test func framesReachThePanelUntilStop() {
        let panel = CountingPanel()
        weak var held: ThreadedPresenter?
        do {
            let presenter = ThreadedPresenter(panel: panel, logger: quietLogger())
            held = presenter
            presenter.present(Framebuffer(width: 128, height: 64), at: Instant(nanoseconds: 0))
            #expect(waitUntil(.seconds(30)) { panel.shown.load(ordering: .relaxed) == 1 })
            presenter.stop()
        }
        #expect(waitUntil(.seconds(30)) { held == nil }, "a stopped presenter's thread never ended")
    }
}
