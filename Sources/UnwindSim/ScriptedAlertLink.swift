import UnwindControl
import UnwindSimulatedHardware
import UnwindCore
import UnwindModem
import UnwindDevice

/// The panic path in the headless simulator, on simulated time: each alert is queued, goes on
/// the wire `sendingAfter` later and is confirmed `sentAfter` later; a slot listed in
/// `failing` ends "failed" instead (an unassigned number). Every request is recorded.
/// (The real AT path — GSMModem against ModemSimulator on a pseudo-terminal — runs in real
/// time in `unwind sim` and in the modem tests.)
public final class ScriptedAlertLink: AlertLink {
    /// No modem: the maintainer's modem commands say so.
    public var attachedModem: GSMModem? { nil }
    public struct Request: Equatable, Sendable {
        public var at: Instant
        public var slot: Int
        public var name: String
        public var number: String
        public var message: String
    }

    public var sendingAfter: Duration = .milliseconds(200)
    public var sentAfter: Duration = .seconds(2)
    public var failing: Set<Int> = []
    public private(set) var requests: [Request] = []
    public private(set) var calls: [(Instant, String)] = []
    private var pending: [(slot: Int, queuedAt: Instant, reported: AlertDelivery)] = []

    public init() {}

    public var pollDescriptors: [Int32] { [] }

    public var nextDeadline: Instant? {
        pending.map { p in p.reported == .queued ? p.queuedAt + sendingAfter : p.queuedAt + sendingAfter + sentAfter }.min()
    }

    public func send(_ requests: [AlertRequest], at now: Moment) {
        for r in requests {
            self.requests.append(Request(at: now.instant, slot: r.slot, name: r.alert.name,
                                         number: r.alert.number.text, message: r.alert.message))
            pending.append((r.slot, now.instant, .queued))
        }
    }

    public func dial(_ number: PhoneNumber, at now: Moment) { calls.append((now.instant, "dial \(number.text)")) }
    public func hangUp() { calls.append((calls.last?.0 ?? .zero, "hang up")) }
    public func markRepliesSeen(_ ids: [String]) {}
    public func cancelAlerts(_ slots: [Int]) {
        for p in pending where slots.contains(p.slot) && p.reported == .queued {
            canceled.append(p.slot)
        }
        pending.removeAll { slots.contains($0.slot) && $0.reported == .queued }
    }
    /// Slots whose queued alert was cancelled: reported at the next step.
    private var canceled: [Int] = []
    public func runSelfTest(at now: Moment) {}

    public func step(at now: Moment, into updates: inout [AlertLinkUpdate]) {
        for slot in canceled { updates.append(.delivery(slot: slot, .cancelled)) }
        canceled.removeAll()
        var i = 0
        while i < pending.count {
            let p = pending[i]
            if p.reported == .queued, now.instant >= p.queuedAt + sendingAfter {
                pending[i].reported = .sending
                updates.append(.delivery(slot: p.slot, .sending))
            }
            if pending[i].reported == .sending, now.instant >= p.queuedAt + sendingAfter + sentAfter {
                updates.append(.delivery(slot: p.slot, failing.contains(p.slot) ? .failed("not in service") : .sent))
                pending.remove(at: i)
                continue
            }
            i += 1
        }
    }

    public func close() {}
}
