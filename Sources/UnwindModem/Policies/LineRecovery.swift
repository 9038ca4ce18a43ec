import UnwindCore

/// When to open the tty again. A USB modem unplugged, a driver that hung up, a path that
/// vanished: the line is closed and reopened with growing backoff (jittered, so a fleet does not
/// hammer its modems in step), until it opens; then the conversation starts over.
struct LineRecovery {
    let backoff: ModemBackoff
    private(set) var isOpen = false
    /// Not before then (nil: at once).
    private(set) var reopenAt: Instant?
    private var failures = 0

    init(backoff: ModemBackoff) { self.backoff = backoff }

    func isDue(at now: Instant) -> Bool { reopenAt.map { now >= $0 } ?? true }

    /// When the arbiter must try: the backoff's end, or at once.
    func deadline(now: Instant) -> Instant { reopenAt ?? now }

    mutating func opened() {
        isOpen = true
        failures = 0
        reopenAt = nil
    }

    mutating func openFailed(at now: Instant, random: inout AnyRandom) {
        failures += 1
        reopenAt = now + backoff.delay(after: failures, first: backoff.reopenFirst, maximum: backoff.reopenMaximum, random: &random)
    }

    /// Closed on purpose (shutdown): a later step opens it again, at once.
    mutating func closed() { isOpen = false }

    /// The line failed under the conversation: the first backoff before the next try.
    mutating func lost(at now: Instant, random: inout AnyRandom) {
        isOpen = false
        failures = 1
        reopenAt = now + backoff.delay(after: 1, first: backoff.reopenFirst, maximum: backoff.reopenMaximum, random: &random)
    }
}
