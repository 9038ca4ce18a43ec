/// `escalation.txt`: what came of the last alerts, so that a restart goes on exactly where the
/// device was — who had the alert, who answered, which calls the ladder made and with what result,
/// what it does next and when, and whether "I'm OK now" went. Times are the wall clock's Unix
/// seconds: the monotonic clock starts again with every boot, the wall clock does not.
///
///     unwind-escalation 1
///     purpose panic                       panic | check-in
///     started 1767225600
///     phase waiting 1767225780            idle | waiting <t> | ringing <slot> <t> | between <t> | ended <why>
///     round 1
///     to-ring 3,4                         slots still to ring this round, or -
///     all-clear no                        no | yes
///     contact 1 +17785550101 sent replied Mum     <slot> <number> <delivery> <flags|-> <name>
///     call 2 1 1767225783 unanswered             <slot> <round> <t> <ringing|unanswered|answered|cut>
///     follow-up 1 sent                    an "I'm OK now" to a slot, and where it stands
///     end
///
/// Empty (or missing): no alerts since the device was set up. The `end` line is how a cut-off
/// file is told from a shorter one.
public struct EscalationRecord: Equatable, Sendable {
    public enum Phase: Equatable, Sendable {
        case idle
        case waiting(until: WallTime)
        /// 0-based slot.
        case ringing(slot: Int, since: WallTime)
        case between(next: WallTime)
        case ended(EscalationEnd)
    }

    public struct Contact: Equatable, Sendable {
        /// 0-based slot.
        public var slot: Int
        public var name: String
        public var number: PhoneNumber
        public var delivery: AlertDelivery
        public var acknowledged: Bool
        public var mayHaveReached: Bool
        public init(slot: Int, name: String, number: PhoneNumber, delivery: AlertDelivery,
                    acknowledged: Bool = false, mayHaveReached: Bool = false) {
            self.slot = slot
            self.name = name
            self.number = number
            self.delivery = delivery
            self.acknowledged = acknowledged
            self.mayHaveReached = mayHaveReached
        }
    }

    public struct Call: Equatable, Sendable {
        public var slot: Int
        public var round: Int
        public var at: WallTime
        public var outcome: CallOutcome
        public init(slot: Int, round: Int, at: WallTime, outcome: CallOutcome) {
            self.slot = slot
            self.round = round
            self.at = at
            self.outcome = outcome
        }
    }

    public var purpose: AlertPurpose
    public var started: WallTime
    public var phase: Phase
    public var round: Int
    public var toRing: [Int]
    public var allClearSent: Bool
    public var contacts: [Contact]
    public var calls: [Call]
    /// "I'm OK now" per slot.
    public var followUps: [(slot: Int, delivery: AlertDelivery)]

    public init(purpose: AlertPurpose, started: WallTime, phase: Phase = .idle, round: Int = 0, toRing: [Int] = [],
                allClearSent: Bool = false, contacts: [Contact] = [], calls: [Call] = [],
                followUps: [(slot: Int, delivery: AlertDelivery)] = []) {
        self.purpose = purpose
        self.started = started
        self.phase = phase
        self.round = round
        self.toRing = toRing
        self.allClearSent = allClearSent
        self.contacts = contacts
        self.calls = calls
        self.followUps = followUps
    }

    public static func == (a: Self, b: Self) -> Bool {
        a.purpose == b.purpose && a.started == b.started && a.phase == b.phase && a.round == b.round
            && a.toRing == b.toRing && a.allClearSent == b.allClearSent && a.contacts == b.contacts
            && a.calls == b.calls && a.followUps.elementsEqual(b.followUps) { $0.slot == $1.slot && $0.delivery == $1.delivery }
    }
}

/// How one call of the ladder ended.
public enum CallOutcome: String, Equatable, Sendable {
    /// Still ringing (the device stopped mid-call: a restart goes on from here).
    case ringing
    /// It rang out, was busy or ended before anyone picked up.
    case unanswered
    /// The contact picked up (the modem's `AT+CLCC` said the call is active).
    case answered
    /// The device hung up before it rang out: the person's own call, "stop the calls", a reply.
    case cut
}

extension EscalationRecord {
    /// As a restore takes it: what happened stays, nothing more is done — a ladder under way in
    /// the backup is ended (a restore never rings anyone, as it never resends an alert).
    public var restored: EscalationRecord {
        var r = self
        switch r.phase {
        case .waiting, .ringing, .between:
            r.phase = .ended(.restored)
            r.toRing = []
            for k in r.calls.indices where r.calls[k].outcome == .ringing { r.calls[k].outcome = .cut }
        case .idle, .ended: break
        }
        return r
    }
}

public enum EscalationFile {
    public static let name = "escalation.txt"
    /// Five contacts, up to five rounds of calls and five follow-ups fit in a few KB.
    static let maximumBytes = 16 * 1024
    static let maximumCalls = 64
    static let header = "unwind-escalation 1"

    public enum Problem: Error, Equatable, CustomStringConvertible {
        case tooLong(Int), notText, malformed(String)
        public var description: String {
            switch self {
            case .tooLong(let n): "\(n) bytes, more than an escalation record's \(maximumBytes)"
            case .notText: "not UTF-8 text"
            case .malformed(let why): why
            }
        }
    }

    public static func format(_ r: EscalationRecord?) -> String {
        guard let r else { return "" }
        var s = header + "\n"
        s += "purpose \(r.purpose.rawValue)\n"
        s += "started \(r.started.secondsSinceEpoch)\n"
        switch r.phase {
        case .idle: s += "phase idle\n"
        case .waiting(let t): s += "phase waiting \(t.secondsSinceEpoch)\n"
        case .ringing(let slot, let t): s += "phase ringing \(slot + 1) \(t.secondsSinceEpoch)\n"
        case .between(let t): s += "phase between \(t.secondsSinceEpoch)\n"
        case .ended(let why): s += "phase ended \(why.word)\n"
        }
        s += "round \(r.round)\n"
        s += "to-ring \(r.toRing.isEmpty ? "-" : r.toRing.map { String($0 + 1) }.joined(separator: ","))\n"
        s += "all-clear \(r.allClearSent ? "yes" : "no")\n"
        for c in r.contacts {
            var flags: [String] = []
            if c.acknowledged { flags.append("replied") }
            if c.mayHaveReached { flags.append("reached") }
            s += "contact \(c.slot + 1) \(c.number.text) \(word(c.delivery)) \(flags.isEmpty ? "-" : flags.joined(separator: ",")) \(c.name)\n"
        }
        for c in r.calls { s += "call \(c.slot + 1) \(c.round) \(c.at.secondsSinceEpoch) \(c.outcome.rawValue)\n" }
        for f in r.followUps { s += "follow-up \(f.slot + 1) \(word(f.delivery))\n" }
        return s + "end\n"
    }

    /// Where an alert stands, in one word (the reasons are the outbox's and the log's).
    static func word(_ d: AlertDelivery) -> String {
        switch d {
        case .queued: "queued"
        case .sending: "sending"
        case .sent: "sent"
        case .delivered: "delivered"
        case .retrying: "retrying"
        case .failed: "failed"
        case .blocked: "cannot"
        case .cancelled: "cancelled"
        }
    }

    /// A message still on its way before the restart is only on its way after it if the outbox
    /// resends it (then the outbox's news replaces this); otherwise nothing sends it any more.
    static let lostInRestart = "not in the outbox after a restart"

    static func delivery(_ w: Substring) -> AlertDelivery? {
        switch w {
        case "queued", "sending", "retrying", "cannot": .failed(lostInRestart)
        case "sent": .sent
        case "delivered": .delivered
        case "failed": .failed("failed before a restart")
        case "cancelled": .cancelled
        default: nil
        }
    }

    public static func parse(_ bytes: [UInt8]) throws(Problem) -> EscalationRecord? {
        if bytes.count > maximumBytes { throw .tooLong(bytes.count) }
        guard let text = String(validating: bytes, as: UTF8.self) else { throw .notText }
        if text.isEmpty { return nil }
        guard text.hasSuffix("\n") else { throw .malformed("cut short (no line end)") }
        let lines = text.dropLast().split(separator: "\n", omittingEmptySubsequences: false)
        guard lines.first == Substring(header) else { throw .malformed("line 1: expected '\(header)'") }
        guard lines.last == "end" else { throw .malformed("cut short (no 'end' line)") }
        func bad(_ n: Int, _ why: String) -> Problem { .malformed("line \(n + 1): \(why)") }
        func time(_ s: Substring) -> WallTime? {
            guard s.utf8.count <= 12, s.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let v = Int64(s) else { return nil }
            return WallTime(secondsSinceEpoch: v)
        }
        func slot(_ s: Substring) -> Int? {
            guard s.utf8.count == 1, let v = Int(s), (1...PanicState.slotCount).contains(v) else { return nil }
            return v - 1
        }
        var purpose: AlertPurpose?, started: WallTime?, phase: EscalationRecord.Phase?, round: Int?, toRing: [Int]?, allClear: Bool?
        var contacts: [EscalationRecord.Contact] = [], calls: [EscalationRecord.Call] = []
        var followUps: [(slot: Int, delivery: AlertDelivery)] = []
        for (n, line) in lines.enumerated().dropFirst().dropLast() {
            let f = line.split(separator: " ", omittingEmptySubsequences: false)
            guard let key = f.first, !line.isEmpty else { throw bad(n, "an empty line") }
            switch key {
            case "purpose":
                guard purpose == nil, f.count == 2, let p = AlertPurpose(rawValue: String(f[1])), p == .panic || p == .checkIn else {
                    throw bad(n, "expected 'purpose panic|check-in'")
                }
                purpose = p
            case "started":
                guard started == nil, f.count == 2, let t = time(f[1]) else { throw bad(n, "expected 'started <unix seconds>'") }
                started = t
            case "phase":
                guard phase == nil, f.count >= 2 else { throw bad(n, "expected 'phase …'") }
                switch (f[1], f.count) {
                case ("idle", 2): phase = .idle
                case ("waiting", 3): phase = time(f[2]).map { .waiting(until: $0) }
                case ("between", 3): phase = time(f[2]).map { .between(next: $0) }
                case ("ringing", 4):
                    if let s = slot(f[2]), let t = time(f[3]) { phase = .ringing(slot: s, since: t) }
                case ("ended", 3): phase = EscalationEnd(word: f[2]).map { .ended($0) }
                default: break
                }
                if phase == nil { throw bad(n, "unknown phase \(String(reflecting: String(line.dropFirst(6))))") }
            case "round":
                guard round == nil, f.count == 2, f[1].utf8.count == 1, let r = Int(f[1]), (0...5).contains(r) else {
                    throw bad(n, "expected 'round <0-5>'")
                }
                round = r
            case "to-ring":
                guard toRing == nil, f.count == 2 else { throw bad(n, "expected 'to-ring <slots>|-'") }
                if f[1] == "-" { toRing = [] } else {
                    let s = f[1].split(separator: ",", omittingEmptySubsequences: false).map(slot)
                    guard s.count <= PanicState.slotCount, s.allSatisfy({ $0 != nil }) else { throw bad(n, "expected 'to-ring <slots>|-'") }
                    toRing = s.compactMap { $0 }
                }
            case "all-clear":
                guard allClear == nil, f.count == 2, f[1] == "yes" || f[1] == "no" else { throw bad(n, "expected 'all-clear yes|no'") }
                allClear = f[1] == "yes"
            case "contact":
                let c = line.split(separator: " ", maxSplits: 5, omittingEmptySubsequences: false)
                guard c.count == 6, let s = slot(c[1]), let d = delivery(c[3]) else {
                    throw bad(n, "expected 'contact <slot> <number> <delivery> <flags> <name>'")
                }
                guard !contacts.contains(where: { $0.slot == s }) else { throw bad(n, "slot \(s + 1) twice") }
                let number: PhoneNumber
                do { number = try PhoneNumber(String(c[2])) } catch { throw bad(n, "\(error)") }
                let name = String(c[5])
                do { try AlertSlot.validateName(name) } catch { throw bad(n, "\(error)") }
                let flags = c[4] == "-" ? [] : c[4].split(separator: ",", omittingEmptySubsequences: false)
                guard flags.allSatisfy({ $0 == "replied" || $0 == "reached" }) else { throw bad(n, "unknown flags \(String(reflecting: String(c[4])))") }
                contacts.append(.init(slot: s, name: name, number: number, delivery: d,
                                      acknowledged: flags.contains("replied"), mayHaveReached: flags.contains("reached")))
            case "call":
                guard calls.count < maximumCalls, f.count == 5, let s = slot(f[1]), f[2].utf8.count == 1, let r = Int(f[2]),
                      (1...5).contains(r), let t = time(f[3]), let o = CallOutcome(rawValue: String(f[4])) else {
                    throw bad(n, "expected 'call <slot> <round> <unix seconds> <outcome>' (at most \(maximumCalls))")
                }
                calls.append(.init(slot: s, round: r, at: t, outcome: o))
            case "follow-up":
                guard f.count == 3, let s = slot(f[1]), let d = delivery(f[2]), !followUps.contains(where: { $0.slot == s }) else {
                    throw bad(n, "expected 'follow-up <slot> <delivery>', once per slot")
                }
                followUps.append((s, d))
            default:
                throw bad(n, "unknown line \(String(reflecting: String(key.prefix(40))))")
            }
        }
        guard let purpose, let started, let phase, let round, let toRing, let allClear else {
            throw .malformed("purpose, started, phase, round, to-ring and all-clear are each needed once")
        }
        return EscalationRecord(purpose: purpose, started: started, phase: phase, round: round, toRing: toRing,
                                allClearSent: allClear, contacts: contacts.sorted { $0.slot < $1.slot }, calls: calls,
                                followUps: followUps)
    }
}

extension EscalationEnd {
    /// The word in `escalation.txt` and `unwind status`.
    public var word: String {
        switch self {
        case .replied: "replied"
        case .answered: "answered"
        case .roundsDone: "rounds-done"
        case .stopped: "stopped"
        case .allClear: "all-clear"
        case .restored: "restored"
        }
    }

    init?(word: Substring) {
        switch word {
        case "replied": self = .replied
        case "answered": self = .answered
        case "rounds-done": self = .roundsDone
        case "stopped": self = .stopped
        case "all-clear": self = .allClear
        case "restored": self = .restored
        default: return nil
        }
    }
}
