#if canImport(Glibc)
import Glibc
#endif
import UnwindMaintenance
import UnwindSimulatedHardware
import UnwindCore
import UnwindModem
import UnwindRuntime

/// The panic path in the headless simulator, on simulated time: each message is queued, goes on
/// the wire `sendingAfter` later and is confirmed `sentAfter` later; a slot listed in `failing`
/// ends "failed" instead (an unassigned number); with `deliveredAfter` set, a status report says
/// "delivered" that long after "sent" (nil: no reports, "sent" stands). Replies, readiness
/// changes and the way dialled calls end are scripted too (`LinkEvent`, the headless script's
/// `reply`, `readiness`, `reports`, `fail` and `calls` lines). Every request is recorded.
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
        public var purpose: AlertPurpose = .panic
    }

    public var sendingAfter: Duration = .milliseconds(200)
    public var sentAfter: Duration = .seconds(2)
    /// A status report this long after "sent" says "delivered" (nil: none comes).
    public var deliveredAfter: Duration?
    public var failing: Set<Int> = []
    /// What a dialled call does: stays on until hung up (nil), or ends by itself after this.
    public var callsEndAfter: Duration?
    /// Readiness at the start (reported at the first step).
    public var readiness: AlertReadiness = .ready
    /// Slot (0-based) → the number of its contact, for `reply N` lines before any alert went there.
    public var slotNumbers: [Int: String] = [:]
    public private(set) var requests: [Request] = []
    public private(set) var calls: [(Instant, String)] = []
    /// Ids the core marked seen.
    public private(set) var seenReplies: [String] = []
    public private(set) var selfTests = 0

    private var pending: [(slot: Int, purpose: AlertPurpose, queuedAt: Instant, reported: AlertDelivery)] = []
    private var scheduled: [(at: Duration, action: LinkAction)] = []
    private var origin: Instant?
    private var started = false
    private var callEndsAt: Instant?
    private var callActive = false
    private var callNews: [Bool] = []
    private var readinessNews: [AlertReadiness] = []
    private var replyCount = 0

    public init() {}

    /// Scripted events, at times from `origin` (the simulation's start).
    public func schedule(_ events: [LinkEvent], origin: Instant) {
        self.origin = origin
        scheduled += events.map { ($0.at, $0.action) }
        scheduled.sort { $0.at < $1.at }
    }

    public var pollDescriptors: [Int32] { [] }

    public var nextDeadline: Instant? {
        var d: [Instant] = pending.compactMap { p in
            switch p.reported {
            case .queued: p.queuedAt + sendingAfter
            case .sending: p.queuedAt + sendingAfter + sentAfter
            case .sent: deliveredAfter.map { p.queuedAt + sendingAfter + sentAfter + $0 }
            default: nil
            }
        }
        if let o = origin, let first = scheduled.first { d.append(o + first.at) }
        if let c = callEndsAt { d.append(c) }
        if !started || !callNews.isEmpty || !readinessNews.isEmpty { d.append(origin ?? .zero) }
        return d.min()
    }

    public func send(_ requests: [AlertRequest], at now: Moment) {
        for r in requests {
            self.requests.append(Request(at: now.instant, slot: r.slot, name: r.alert.name, number: r.alert.number.text,
                                         message: r.alert.message, purpose: r.purpose))
            pending.append((r.slot, r.purpose, now.instant, .queued))
        }
    }

    /// Texts that are not alerts (STATUS answers, the maintainer's), as asked: a scripted link
    /// has no network, so they are only recorded — and reported sent at the next step.
    public private(set) var texts: [DeviceText] = []
    private var textNews: [Int] = []
    public func sendText(_ text: DeviceText, at now: Moment) {
        texts.append(text)
        textNews.append(text.token)
    }

    public func dial(_ number: PhoneNumber, at now: Moment) {
        calls.append((now.instant, "dial \(number.text)"))
        callActive = true
        callNews.append(true)
        callEndsAt = callsEndAfter.map { now.instant + $0 }
    }

    public func hangUp() {
        calls.append((calls.last?.0 ?? .zero, "hang up"))
        endCall()
    }

    /// The scripted network keeps no call across a restart: nothing to look for.
    public func followCallLeftUp() {}

    private func endCall() {
        callEndsAt = nil
        if callActive {
            callActive = false
            callNews.append(false)
        }
    }

    public func markRepliesSeen(_ ids: [String]) { seenReplies += ids }

    /// Alerts still queued are cancelled (reported at the next step); one already on its way
    /// goes on, as on a real modem.
    public func cancelAlerts(_ slots: [Int]) {
        for p in pending where slots.contains(p.slot) && p.reported == .queued && (p.purpose == .panic || p.purpose == .checkIn) {
            cancelled.append(p.slot)
        }
        pending.removeAll { slots.contains($0.slot) && $0.reported == .queued && ($0.purpose == .panic || $0.purpose == .checkIn) }
    }
    /// Slots whose queued alert was cancelled: reported at the next step.
    private var cancelled: [Int] = []

    public func runSelfTest(at now: Moment) {
        selfTests += 1
        readinessNews.append(readiness)
    }

    public func step(at now: Moment, into updates: inout [AlertLinkUpdate]) {
        if origin == nil { origin = now.instant }
        if !started {
            started = true
            updates.append(.readiness(readiness))
        }
        if let o = origin {
            while let first = scheduled.first, now.instant >= o + first.at {
                scheduled.removeFirst()
                perform(first.action, at: now, into: &updates)
            }
        }
        if let c = callEndsAt, now.instant >= c { endCall() }
        for active in callNews { updates.append(.call(active: active)) }
        callNews.removeAll()
        for r in readinessNews { updates.append(.readiness(r)) }
        readinessNews.removeAll()
        for t in textNews { updates.append(.textOutcome(token: t, .sent)) }
        textNews.removeAll()
        for slot in cancelled { updates.append(.delivery(slot: slot, .cancelled)) }
        cancelled.removeAll()
        var i = 0
        while i < pending.count {
            let p = pending[i]
            func report(_ d: AlertDelivery) {
                pending[i].reported = d
                updates.append(p.purpose == .panic || p.purpose == .checkIn ? .delivery(slot: p.slot, d)
                               : .followUp(slot: p.slot, purpose: p.purpose, d))
            }
            let sentAt = p.queuedAt + sendingAfter + sentAfter
            if pending[i].reported == .queued, now.instant >= p.queuedAt + sendingAfter { report(.sending) }
            if pending[i].reported == .sending, now.instant >= sentAt {
                if failing.contains(p.slot) {
                    report(.failed("not in service"))
                } else {
                    report(.sent)
                }
            }
            if pending[i].reported == .sent, let d = deliveredAfter, now.instant >= sentAt + d { report(.delivered) }
            let done: Bool = switch pending[i].reported {
            case .sent: deliveredAfter == nil
            case .delivered, .failed: true
            default: false
            }
            if done { pending.remove(at: i) } else { i += 1 }
        }
    }

    private func perform(_ action: LinkAction, at now: Moment, into updates: inout [AlertLinkUpdate]) {
        switch action {
        case .reply(let from, let text):
            let number: String
            switch from {
            case .number(let n): number = n
            case .slot(let s): number = requests.last { $0.slot == s }?.number ?? slotNumbers[s] ?? "unknown"
            }
            replyCount += 1
            updates.append(.reply(IncomingReply(id: "scripted-\(replyCount)", from: number, text: text, sent: now.wall)))
        case .readiness(let r):
            if r != readiness {
                readiness = r
                updates.append(.readiness(r))
            }
        case .reports(let after):
            deliveredAfter = after
        case .fail(let slot):
            failing.insert(slot)
        case .calls(let end):
            callsEndAfter = end
        }
    }

    public func close() {}
}

extension ScriptedAlertLink {
    /// The contact number of a slot (0-based) as its file says, for a simulated reply. Read
    /// beside the running device without taking part in its store (no recovery of its files);
    /// like the device, it follows no link and reads only a small regular file.
    public static func slotNumber(stateDirectory: String, slot: Int) -> String? {
        let fd = open(stateDirectory + "/" + AlertSlotFile.name(slot: slot + 1), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { _ = Glibc.close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_size <= 4096 else { return nil }
        var bytes = [UInt8](repeating: 0, count: Int(info.st_size))
        let n = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard n == bytes.count else { return nil }
        return AlertSlotState(file: bytes).alert?.number.text
    }
}

/// Something the scripted link does at a time of the headless script.
public struct LinkEvent: Equatable, Sendable {
    public var at: Duration
    public var action: LinkAction
    public init(at: Duration, _ action: LinkAction) {
        self.at = at
        self.action = action
    }
}

public enum LinkAction: Equatable, Sendable {
    public enum Sender: Equatable, Sendable {
        /// The contact of this slot (0-based), as the alert went to it or its slot file says.
        case slot(Int)
        case number(String)
    }
    /// An SMS arrives.
    case reply(from: Sender, text: String)
    /// Whether a PANIC could go out now changes.
    case readiness(AlertReadiness)
    /// From now on, "delivered" comes this long after "sent" (nil: no reports).
    case reports(after: Duration?)
    /// From now on, this slot's (0-based) alerts fail.
    case fail(slot: Int)
    /// From now on, a dialled call ends by itself after this (nil: it rings until hung up).
    case calls(endAfter: Duration?)
}
