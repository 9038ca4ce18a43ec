import Logging
import UnwindCore

extension ControlServer {
    /// Warnings about what clients do, at most one a second: a hostile client makes one per
    /// request, thousands a second, and each is a write from the loop's thread (and a flood in
    /// the journal). The ones held back are counted in the next.
    func warn(_ message: @autoclosure () -> String, _ now: Moment) {
        guard let held = warnings.allow(now.instant) else { return }
        logger.warning("\(message())\(held > 0 ? " (and \(held) more warnings about clients in the last second, not logged)" : "")")
    }

    /// At most one line a second; the lines held back meanwhile are counted.
    struct LogThrottle {
        private var quietUntil: Instant?
        private var heldBack = 0

        /// Nil: hold this one back. Otherwise log it, saying how many were held back before it.
        mutating func allow(_ now: Instant) -> Int? {
            if let until = quietUntil, now < until {
                heldBack += 1
                return nil
            }
            defer { heldBack = 0 }
            quietUntil = now + .seconds(1)
            return heldBack
        }
    }
}
