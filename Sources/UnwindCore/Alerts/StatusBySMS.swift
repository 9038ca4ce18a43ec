
/// Asking the device by SMS: a contact in one of the alert slots texts STATUS and is
/// told whether a PANIC would go out now; the maintainer, when one is configured, is texted when
/// the device has been unable to do its job for a while, and again when it recovers.
///
/// Everything here is rules on state — recognising a request, the limits on answers, the words
/// of each text. The modem sends what is decided here, below every alert (`Delivery`).
/// A STATUS request is never shown to the person: it is not a reply to them.

/// The device's texts that are not alerts, as configuration sets them.
public struct StatusTextSettings: Equatable, Sendable {
    /// How the device signs its texts (`device.name`).
    public var deviceName: String
    /// Words besides STATUS that ask for the status (`sms.status_words`), e.g. ESTADO, ÉTAT.
    public var statusWords: [String]
    /// Who is texted when the device cannot do its job (`maintainer.number`); nil: nobody.
    public var maintainer: PhoneNumber?
    /// How long a problem lasts before the maintainer is texted (`maintainer.alert_after_minutes`).
    public var maintainerAfter: Duration

    public static let defaultName = "Unwind"
    public static let nameLimit = 24
    public static let wordLimit = 20
    public static let wordsLimit = 10

    public init(deviceName: String = StatusTextSettings.defaultName, statusWords: [String] = [],
                maintainer: PhoneNumber? = nil, maintainerAfter: Duration = .seconds(3600)) {
        self.deviceName = deviceName
        self.statusWords = statusWords
        self.maintainer = maintainer
        self.maintainerAfter = maintainerAfter
    }

    /// Why `name` cannot sign the device's texts, or nil: it goes into every answer, so it
    /// follows an alert message's rules and stays short enough to leave room for the news.
    public static func nameProblem(_ name: String) -> String? {
        if name.count > nameLimit { return "at most \(nameLimit) characters" }
        do { try AlertSlot.validateMessage(name) } catch { return error.description }
        return nil
    }

    /// Why `word` cannot ask for the status, or nil: one word of letters or digits.
    public static func wordProblem(_ word: String) -> String? {
        if word.isEmpty || word.count > wordLimit { return "each word has 1 to \(wordLimit) letters" }
        if !word.allSatisfy({ $0.isLetter || $0.isNumber }) { return "\(String(reflecting: word)): letters and digits only, one word" }
        return nil
    }
}

/// A text the device sends on its own: a STATUS answer or a message to the maintainer. Its
/// recipient and words are validated like an alert's; the number is always one the device
/// stores (the slot's, the configured maintainer's), never the sender's as the network gave it.
public struct DeviceText: Equatable, Sendable {
    public enum Kind: Equatable, Sendable {
        /// The answer to slot `slot`'s (0-based) STATUS.
        case statusAnswer(slot: Int)
        case maintainer
    }
    public var kind: Kind
    public var message: AlertSlot
    /// Names this text when the modem says what became of it (`DeviceEvent.deviceTextOutcome`).
    public var token: Int

    public init(kind: Kind, message: AlertSlot, token: Int = 0) {
        self.kind = kind
        self.message = message
        self.token = token
    }
}

/// What became of a text the device sent on its own, as the modem saw it.
public enum DeviceTextOutcome: Equatable, Sendable {
    /// The network accepted it (`+CMGS`).
    case sent
    /// Its PDU went and no confirmation came: it may have gone (it is not sent again).
    case unconfirmed
    /// It never went: refused, or not sent in time (behind alerts, with no network).
    case dropped(String)
}

/// What keeps the device from doing its job while SMS itself still works: the maintainer is
/// texted about these. (The modem's own problems — no network, no SIM — leave no way to text
/// anyone: those are for `unwind status --json`.)
public enum DeviceProblem: String, CaseIterable, Equatable, Sendable {
    case noContacts = "no-contacts"
    case display
    case motor
    case stateDisk = "state-disk"
    case clock
    case monthlyTest = "monthly-test"

    /// In the maintainer's text.
    public var words: String {
        switch self {
        case .noContacts: "no alert contacts are set"
        case .display: "the display is not working"
        case .motor: "the motor is not working"
        case .stateDisk: "the SD card is full or read-only"
        case .clock: "the clock is not set"
        case .monthlyTest: "the monthly test SMS failed"
        }
    }

    /// In the maintainer's text when it is over.
    public var fixedWords: String {
        switch self {
        case .noContacts: "an alert contact is set"
        case .display: "the display works"
        case .motor: "the motor works"
        case .stateDisk: "the SD card can be written"
        case .clock: "the clock is set"
        case .monthlyTest: "the monthly test SMS went out"
        }
    }

    /// Its place in the per-problem arrays (`since`, `retryAt`, `clearSince`) and its `bit`.
    var index: Int { Self.allCases.firstIndex(of: self)! }
    var bit: UInt8 { UInt8(1) << UInt8(index) }
}

/// One text the device sent on its own, as `statusTexts.txt` keeps it.
public struct StatusTextRecord: Equatable, Sendable {
    public enum Kind: Equatable, Sendable {
        /// A STATUS answer to slot `slot` (0-based).
        case answer(slot: Int)
        /// The maintainer was told of a problem.
        case problem(DeviceProblem)
        /// The maintainer was told it is over.
        case recovered(DeviceProblem)
    }
    public var at: WallTime
    public var kind: Kind
    public init(at: WallTime, kind: Kind) {
        self.at = at
        self.kind = kind
    }
}

/// `statusTexts.txt`: the texts the device sent on its own, newest last, one a line —
/// `<seconds since 1970> answer <slot 1-5>`, `<seconds> problem <name>` or
/// `<seconds> recovered <name>` (names as `DeviceProblem`). Kept so the limits hold across a
/// restart: one answer per contact per 10 minutes, 10 a day, one maintainer text a day per
/// problem.
public enum StatusTextsFile {
    public static let name = "statusTexts.txt"
    static let maximumBytes = 4096
    /// Lines kept: more than a day's worth at the limits (10 answers, 6 problems and their ends).
    static let kept = 40

    public enum Problem: Error, Equatable, CustomStringConvertible {
        case tooLong(Int), notText, malformed(line: Int, String)
        public var description: String {
            switch self {
            case .tooLong(let n): "\(n) bytes, more than \(maximumBytes)"
            case .notText: "not UTF-8 text"
            case .malformed(let line, let why): "line \(line): \(why)"
            }
        }
    }

    public static func format(_ records: [StatusTextRecord]) -> String {
        var s = ""
        for r in records.suffix(kept) {
            s += "\(r.at.secondsSinceEpoch) "
            switch r.kind {
            case .answer(let slot): s += "answer \(slot + 1)\n"
            case .problem(let p): s += "problem \(p.rawValue)\n"
            case .recovered(let p): s += "recovered \(p.rawValue)\n"
            }
        }
        return s
    }

    public static func parse(_ bytes: [UInt8]) throws(Problem) -> [StatusTextRecord] {
        if bytes.count > maximumBytes { throw .tooLong(bytes.count) }
        guard let text = String(validating: bytes, as: UTF8.self) else { throw .notText }
        var out: [StatusTextRecord] = []
        for (n, line) in text.split(separator: "\n", omittingEmptySubsequences: true).enumerated() {
            let f = line.split(separator: " ", omittingEmptySubsequences: false)
            guard f.count == 3, let seconds = Int64(f[0]), seconds >= 0, seconds < 1 << 40 else {
                throw .malformed(line: n + 1, "expected '<seconds since 1970> <answer|problem|recovered> <slot or problem>'")
            }
            let kind: StatusTextRecord.Kind
            switch f[1] {
            case "answer":
                guard let slot = Int(f[2]), (1...PanicState.slotCount).contains(slot) else {
                    throw .malformed(line: n + 1, "a slot is 1 to \(PanicState.slotCount)")
                }
                kind = .answer(slot: slot - 1)
            case "problem", "recovered":
                guard let p = DeviceProblem(rawValue: String(f[2])) else {
                    throw .malformed(line: n + 1, "unknown problem \(String(reflecting: String(f[2])))")
                }
                kind = f[1] == "problem" ? .problem(p) : .recovered(p)
            default:
                throw .malformed(line: n + 1, "unknown kind \(String(reflecting: String(f[1])))")
            }
            out.append(StatusTextRecord(at: WallTime(secondsSinceEpoch: seconds), kind: kind))
        }
        return Array(out.suffix(kept))
    }
}

/// A STATUS request and what became of it, for `unwind status` (in memory: a flood must not
/// write to the card once per text).
public struct StatusRequestNote: Equatable, Sendable {
    public enum Outcome: Equatable, Sendable {
        case answered
        /// This contact was answered less than `StatusLimits.perContact` ago.
        case tooSoon
        /// `StatusLimits.perDay` answers went in the last 24 hours.
        case dailyLimit
        /// The sender is no alert contact: kept in the replies, never answered.
        case notAContact
        /// The sender's number matches slots holding different numbers: who asked is not known.
        case ambiguous([Int])
        /// The answer could not be made a valid SMS (should not happen; logged).
        case unsendable(String)
        /// The answer is on its way: the modem has not said yet what became of it.
        case sending
        /// The answer's PDU went, and no confirmation came: it may have reached the contact.
        case unconfirmed
        /// The answer never went (refused by the network, or not sent in time).
        case notSent(String)

        public var words: String {
            switch self {
            case .answered: "answered"
            case .sending: "answering (the answer is on its way)"
            case .unconfirmed: "answered, not confirmed by the network (it may have gone)"
            case .notSent(let why): "not answered: the answer could not be sent (\(why))"
            case .tooSoon: "not answered: this contact had an answer less than 10 minutes ago"
            case .dailyLimit: "not answered: \(StatusLimits.perDay) answers in the last 24 hours"
            case .notAContact: "not answered: not an alert contact"
            case .ambiguous(let slots): "not answered: the number matches slots " + slots.map { String($0 + 1) }.joined(separator: " and ")
            case .unsendable(let why): "not answered: \(why)"
            }
        }
    }
    public var at: WallTime
    /// 0-based; nil for a stranger (or an ambiguous number).
    public var slot: Int?
    public var outcome: Outcome
    /// The answer's `DeviceText.token`, while its outcome is awaited.
    var token: Int?
}

/// A text asked of the modem whose outcome is not known yet. It counts against the limits as
/// if sent; it is written to `statusTexts.txt` only once the network has (or may have) taken it.
struct PendingText: Equatable, Sendable {
    var token: Int
    var record: StatusTextRecord
}

/// The limits on answers: what a STATUS may cost, whoever sends it and however often.
public enum StatusLimits {
    public static let perContact: Int64 = 600
    public static let perDay = 10
    static let day: Int64 = 86_400
    /// The maintainer hears of each problem at most once in this.
    static let maintainerEvery: Int64 = 86_400
    /// A problem the maintainer was told of must stay away this long to count as over.
    static let recoveryPatience: Duration = .seconds(300)
    /// A maintainer's text that could not be sent is asked for again after this.
    static let maintainerRetry: Duration = .seconds(600)
}

/// Where the STATUS answers and the maintainer's texts stand.
public struct StatusTexts: Equatable, Sendable {
    /// What `statusTexts.txt` holds: the texts sent, newest last.
    public internal(set) var sent: [StatusTextRecord] = []
    /// The latest requests (at most `StatusTexts.notesKept`), newest last.
    public internal(set) var requests: [StatusRequestNote] = []
    /// Requests since start, answered or not.
    public internal(set) var requestCount = 0
    /// Problems the edge reports (the display, the motor, the SD card), as a bit set.
    var reported: UInt8 = 0
    /// By `DeviceProblem`, in its order: since when each problem is there (nil: not there).
    public internal(set) var since: [WallTime?] = Array(repeating: nil, count: DeviceProblem.allCases.count)
    var sinceInstant: [Instant?] = Array(repeating: nil, count: DeviceProblem.allCases.count)
    /// By `DeviceProblem`: since when a problem the maintainer was told of has been away.
    var clearSince: [Instant?] = Array(repeating: nil, count: DeviceProblem.allCases.count)
    /// Problems the maintainer was told of (or a text about is on its way) and not yet of their
    /// end (from the file at start).
    var told: UInt8 = 0
    /// Texts asked of the modem, their outcome awaited.
    var pending: [PendingText] = []
    var nextToken = 1
    /// By `DeviceProblem`: a maintainer's text about it that could not be sent is asked for
    /// again from then.
    var retryAt: [Instant?] = Array(repeating: nil, count: DeviceProblem.allCases.count)
    /// The modem's last signal (`+CSQ` rssi, 99 unknown; nil: not heard).
    public internal(set) var signal: Int?

    static let notesKept = 20

    public init() {}

    /// Problems there now.
    public var problems: [(problem: DeviceProblem, since: WallTime)] {
        DeviceProblem.allCases.enumerated().compactMap { i, p in since[i].map { (p, $0) } }
    }

    mutating func note(_ n: StatusRequestNote) {
        requestCount += 1
        requests.append(n)
        if requests.count > Self.notesKept { requests.removeFirst(requests.count - Self.notesKept) }
    }

    /// A text asked of the modem: pending until its outcome; returns its token.
    mutating func ask(_ r: StatusTextRecord) -> Int {
        let token = nextToken
        nextToken = nextToken == Int.max ? 1 : nextToken + 1
        pending.append(PendingText(token: token, record: r))
        // The modem drops what it cannot send in 10 minutes: an outcome never told (a link
        // without a modem) must not hold the limits for ever.
        if pending.count > StatusTextsFile.kept { pending.removeFirst(pending.count - StatusTextsFile.kept) }
        return token
    }

    mutating func record(_ r: StatusTextRecord) {
        sent.append(r)
        if sent.count > StatusTextsFile.kept { sent.removeFirst(sent.count - StatusTextsFile.kept) }
    }

    /// Records from the future — the wall clock was set back since they were made (by hand, by
    /// NTP after a clock that ran ahead, a board without a real-time clock starting at an old
    /// time) — are re-dated to `now`: they count in full from now, so setting a clock back never
    /// opens a limit, and shuts one at most for the limit's own length (a day) from when the
    /// device first sees it (in memory: nothing is written for it — the file keeps what was
    /// written, and a start with a clock still wrong re-dates again). Allocation-free; returns
    /// whether a record moved.
    @discardableResult
    mutating func settleClock(at now: WallTime) -> Bool {
        var moved = false
        for k in sent.indices where sent[k].at.secondsSinceEpoch > now.secondsSinceEpoch {
            sent[k].at = now
            moved = true
        }
        for k in pending.indices where pending[k].record.at.secondsSinceEpoch > now.secondsSinceEpoch {
            pending[k].record.at = now
            moved = true
        }
        return moved
    }

    /// Whether an answer to `slot` may go at `now`, or why not. A record from the future (a
    /// clock set back) within a day still counts: the limits must not open by moving a clock.
    /// Answers on their way count as sent.
    func refusal(slot: Int, at now: WallTime) -> StatusRequestNote.Outcome? {
        let t = now.secondsSinceEpoch
        var today = 0
        for r in sent + pending.map(\.record) {
            guard case .answer(let s) = r.kind else { continue }
            let age = t - r.at.secondsSinceEpoch
            guard age > -StatusLimits.day, age < StatusLimits.day else { continue }
            if s == slot && age < StatusLimits.perContact { return .tooSoon }
            today += 1
        }
        return today >= StatusLimits.perDay ? .dailyLimit : nil
    }

    /// When the maintainer was last told of `p` (either way), within a day of `now`.
    func lastTold(_ p: DeviceProblem, at now: WallTime) -> Bool {
        sent.contains { r in
            let age = now.secondsSinceEpoch - r.at.secondsSinceEpoch
            guard age > -StatusLimits.day, age < StatusLimits.maintainerEvery else { return false }
            if case .problem(let q) = r.kind { return q == p }
            return false
        }
    }
}

// MARK: - Recognising a request

extension StatusTextSettings {
    /// Whether `text` asks for the status: exactly STATUS or one of the configured words, in any
    /// case, with spaces and line breaks around it. Anything more ("status please", "Status?")
    /// is an ordinary reply and shown to the person as one: a contact's real words are never
    /// swallowed because they begin like a command.
    public func isStatusRequest(_ text: String) -> Bool {
        // Far longer than any word: not one (and a flood of long texts costs no folding).
        guard text.utf8.count <= 64 else { return false }
        let word = text.trimmingSpaces.lowercased()
        if word == "status" { return true }
        return statusWords.contains { $0.lowercased() == word }
    }
}

// MARK: - The answer's words

public enum StatusAnswer {
    /// The answer, at most one SMS of 160 characters: the device's name, whether a PANIC would
    /// go out now and if not why, the signal, the last monthly test, and what else is wrong.
    /// Nothing about the person's sessions, moods or other contacts.
    /// `limit`: the characters one SMS holds (160, or 70 in UCS-2); what else is wrong is left
    /// out to fit it, and, with `cut`, the rest cut at it.
    public static func text(name: String, readiness: AlertReadiness?, notReadySince: WallTime?, signal: Int?,
                            lastTest: AlertTestRecord?, problems: [DeviceProblem], now: WallTime, zone: LocalTimeZone,
                            limit: Int = AlertSlot.messageLimit, cut: Bool = true) -> String {
        var head = "\(name): "
        if let r = readiness {
            if r.isReady {
                head += "a PANIC would go out now."
            } else {
                let why = r.problems.map(words).joined(separator: ", ")
                head += "a PANIC would NOT go out now: \(why)"
                if let since = notReadySince { head += " since " + clockText(since, now: now, zone: zone) }
                head += "."
            }
        } else {
            head += "the modem is still starting."
        }
        var tail = " Signal: \(signalWords(signal))."
        if let t = lastTest {
            tail += " Last test \(dateText(t.at, zone: zone)): \(t.outcome.word)."
        } else {
            tail += " No test yet."
        }
        var extra = problems.map(\.words)
        // The news first; what else is wrong as far as one SMS holds it.
        while true {
            let also = extra.isEmpty ? "" : " Also: " + extra.joined(separator: "; ") + "."
            let s = head + tail + also
            if s.count <= limit || extra.isEmpty { return cut ? String(s.prefix(limit)) : s }
            extra.removeLast()
        }
    }

    /// A readiness problem in the contact's words.
    static func words(_ p: AlertReadiness.Problem) -> String {
        switch p {
        case .noModem: "no modem"
        case .modemSilent: "modem not answering"
        case .sim(let why):
            why.contains("PUK") ? "SIM locked (needs its PUK)"
                : why.contains("PIN") ? "SIM asks for its PIN"
                : why.contains("no SIM") ? "no SIM card" : "SIM not working"
        case .notRegistered: "no mobile network"
        case .weakSignal: "signal too weak"
        case .noServiceCentre: "no message centre number"
        case .serviceCentreRefused: "the network refuses the message centre"
        }
    }

    /// `+CSQ` rssi in words (99: the modem does not know).
    static func signalWords(_ rssi: Int?) -> String {
        guard let r = rssi, (0...31).contains(r) else { return "unknown" }
        switch r {
        case 0...1: return "none"
        case 2...9: return "weak"
        case 10...14: return "fair"
        case 15...19: return "good"
        default: return "strong"
        }
    }

    /// "14:05" today, "2 Mar 14:05" before.
    static func clockText(_ t: WallTime, now: WallTime, zone: LocalTimeZone) -> String {
        let (day, second) = CivilDate.local(t.secondsSinceEpoch, in: zone)
        let minute = Int(second / 60)
        let hm = "\(minute / 60 < 10 ? "0" : "")\(minute / 60):\(minute % 60 < 10 ? "0" : "")\(minute % 60)"
        if day == CivilDate.local(now.secondsSinceEpoch, in: zone).day { return hm }
        return dateText(t, zone: zone) + " " + hm
    }

    /// "2 Mar".
    static func dateText(_ t: WallTime, zone: LocalTimeZone) -> String {
        let date = CivilDate.civil(ofDay: CivilDate.local(t.secondsSinceEpoch, in: zone).day)
        return "\(date.day) \(CivilDate.monthAbbreviations[Int(date.month) - 1])"
    }

    /// The maintainer's text about a problem, or its end.
    public static func maintainerText(name: String, problem: DeviceProblem, since: WallTime?, recovered: Bool,
                                      now: WallTime, zone: LocalTimeZone) -> String {
        if recovered { return "\(name) is fine again: \(problem.fixedWords)." }
        var s = "\(name) needs attention: \(problem.words)"
        if let since { s += " since " + clockText(since, now: now, zone: zone) }
        return s + "."
    }
}

// MARK: - The rules

extension AlertSlotState {
    /// Every slot (0-based) whose contact an SMS from `sender` may have come from.
    public static func slots(sending sender: String, in slots: [AlertSlotState], counselling: PhoneNumber?) -> [Int] {
        var known: [String] = []
        for s in slots { if case .ready(let a) = s, a.number.isInternational { known.append(a.number.digits) } }
        if let line = counselling, line.isInternational { known.append(line.digits) }
        return slots.indices.filter { i in
            if case .ready(let a) = slots[i] { a.number.isSameNumber(asSender: sender, known: known) } else { false }
        }
    }
}

extension DeviceCore {
    /// A STATUS request (the text is one: `StatusTextSettings.isStatusRequest`). It is marked
    /// seen at once — never on the screen, never shown again after a restart — and answered
    /// within the limits, to the number the slot stores.
    mutating func statusRequested(_ reply: IncomingReply, at now: Moment, effects: inout [Effect]) {
        effects.append(.markRepliesSeen([reply.id]))
        // A sender that is a name is nobody's number, whatever it spells.
        let slots = reply.fromName ? []
            : AlertSlotState.slots(sending: reply.from, in: state.panic.slots, counselling: state.panic.counselling.dialNumber)
        var numbers: [PhoneNumber] = []
        for s in slots { if case .ready(let a) = state.panic.slots[s], !numbers.contains(a.number) { numbers.append(a.number) } }
        func refuse(_ outcome: StatusRequestNote.Outcome, slot: Int?) {
            state.statusTexts.note(StatusRequestNote(at: now.wall, slot: slot, outcome: outcome))
            let who = slot.map { "alert slot \($0 + 1)" } ?? "a number in no alert slot"
            effects.append(.log("STATUS by SMS from \(who): \(outcome.words)"))
        }
        guard let first = slots.first, case .ready(let contact) = state.panic.slots[first] else {
            return refuse(.notAContact, slot: nil)
        }
        // One person in two slots — in any two forms of one number — gets one answer; a number two
        // different contacts could have sent from is nobody's to answer.
        guard numbers.allSatisfy({ $0.isSameNumber(asSender: numbers[0].text) }) else { return refuse(.ambiguous(slots), slot: nil) }
        state.statusTexts.settleClock(at: now.wall)
        if let why = state.statusTexts.refusal(slot: first, at: now.wall) { return refuse(why, slot: first) }
        // One SMS, always: signed with `device.name` when the answer then fits one (160 GSM-7
        // characters, or 70 when the name needs UCS-2 — what else is wrong left out first), else
        // with "Unwind".
        func answer(_ name: String, limit: Int, cut: Bool) throws(AlertFieldError) -> AlertSlot? {
            let words = StatusAnswer.text(name: name, readiness: state.panic.readiness.current,
                                          notReadySince: state.panic.readiness.notReadySinceWall, signal: state.statusTexts.signal,
                                          lastTest: state.panic.readiness.lastTest, problems: currentProblems,
                                          now: now.wall, zone: settings.timeZone, limit: limit, cut: cut)
            guard words.count <= AlertSlot.messageLimit else { return nil }
            let m = try AlertSlot(name: contact.name, number: contact.number, message: words)
            return m.encoding.isSinglePart ? m : nil
        }
        let name = settings.statusTexts.deviceName
        let message: AlertSlot
        do {
            guard let m = try answer(name, limit: AlertSlot.messageLimit, cut: false)
                    ?? answer(name, limit: SMSEncoding.singlePartUnits, cut: false)
                    ?? answer(StatusTextSettings.defaultName, limit: AlertSlot.messageLimit, cut: true) else {
                return refuse(.unsendable("no answer fits one SMS"), slot: first)
            }
            message = m
        } catch {
            return refuse(.unsendable(String(describing: error)), slot: first)
        }
        let token = state.statusTexts.ask(StatusTextRecord(at: now.wall, kind: .answer(slot: first)))
        state.statusTexts.note(StatusRequestNote(at: now.wall, slot: first, outcome: .sending, token: token))
        effects.append(.sendText(DeviceText(kind: .statusAnswer(slot: first), message: message, token: token)))
        effects.append(.log("STATUS by SMS from alert slot \(first + 1) (\(contact.name)): answering"))
    }

    /// The problems there now, in `DeviceProblem`'s order.
    var currentProblems: [DeviceProblem] {
        DeviceProblem.allCases.enumerated().compactMap { i, p in state.statusTexts.since[i] == nil ? nil : p }
    }

    /// The edge's news: the display, the motor or the SD card failing, or working again.
    mutating func deviceProblem(_ p: DeviceProblem, failing: Bool) {
        if failing { state.statusTexts.reported |= p.bit } else { state.statusTexts.reported &= ~p.bit }
    }

    /// Which problems are there now: the edge's, and those the core sees itself.
    private func presentProblems() -> UInt8 {
        var bits = state.statusTexts.reported
        if !state.panic.hasAContact { bits |= DeviceProblem.noContacts.bit }
        if !state.reminders.clockTrusted { bits |= DeviceProblem.clock.bit }
        if case .failed? = state.panic.readiness.lastTest?.outcome { bits |= DeviceProblem.monthlyTest.bit }
        return bits
    }

    /// Once a wall-clock second: when each problem began and ended; the maintainer texted when
    /// one has lasted `maintainerAfter` (at most once a day each) and when a problem they were
    /// told of has stayed away `recoveryPatience`. Allocation-free unless a text goes.
    mutating func tickMaintainer(at now: Moment, effects: inout [Effect]) {
        state.statusTexts.settleClock(at: now.wall)
        let present = presentProblems()
        for (i, p) in DeviceProblem.allCases.enumerated() {
            if present & p.bit != 0 {
                state.statusTexts.clearSince[i] = nil
                if state.statusTexts.since[i] == nil {
                    state.statusTexts.since[i] = now.wall
                    state.statusTexts.sinceInstant[i] = now.instant
                }
                guard state.statusTexts.told & p.bit == 0, let began = state.statusTexts.sinceInstant[i],
                      now.instant - began >= settings.statusTexts.maintainerAfter,
                      state.statusTexts.retryAt[i].map({ now.instant >= $0 }) ?? true,
                      !state.statusTexts.lastTold(p, at: now.wall) else { continue }
                if textMaintainer(p, recovered: false, at: now, effects: &effects) { state.statusTexts.told |= p.bit }
            } else {
                state.statusTexts.since[i] = nil
                state.statusTexts.sinceInstant[i] = nil
                guard state.statusTexts.told & p.bit != 0 else { continue }
                guard let clear = state.statusTexts.clearSince[i] else {
                    state.statusTexts.clearSince[i] = now.instant
                    continue
                }
                guard now.instant - clear >= StatusLimits.recoveryPatience else { continue }
                state.statusTexts.told &= ~p.bit
                state.statusTexts.clearSince[i] = nil
                _ = textMaintainer(p, recovered: true, at: now, effects: &effects)
            }
        }
    }

    /// Whether a text to the maintainer went (none is configured: nothing, and nothing counts).
    private mutating func textMaintainer(_ p: DeviceProblem, recovered: Bool, at now: Moment, effects: inout [Effect]) -> Bool {
        guard let number = settings.statusTexts.maintainer else { return false }
        let i = p.index
        // One SMS: signed "Unwind" when `device.name` would make it two.
        var words = ""
        var message: AlertSlot?
        for name in [settings.statusTexts.deviceName, StatusTextSettings.defaultName] where message?.encoding.isSinglePart != true {
            words = StatusAnswer.maintainerText(name: name, problem: p, since: state.statusTexts.since[i],
                                                recovered: recovered, now: now.wall, zone: settings.timeZone)
            message = try? AlertSlot(name: "Maintainer", number: number, message: words)
        }
        guard let message else {
            effects.append(.log("maintainer: could not make a text of \(String(reflecting: words))"))
            return false
        }
        let token = state.statusTexts.ask(StatusTextRecord(at: now.wall, kind: recovered ? .recovered(p) : .problem(p)))
        effects.append(.sendText(DeviceText(kind: .maintainer, message: message, token: token)))
        effects.append(.log("maintainer texted: \(words)"))
        return true
    }

    /// The modem's word on a text the device sent on its own. Only what the network took (or
    /// may have: a copy may have cost) is kept in `statusTexts.txt` and shown as sent; a text
    /// that never went is shown so, counts against no limit, and — the maintainer's — is asked
    /// for again after `StatusLimits.maintainerRetry` (its end: once the problem has stayed
    /// away `recoveryPatience` again).
    mutating func deviceTextOutcome(token: Int, _ outcome: DeviceTextOutcome, at now: Moment, effects: inout [Effect]) {
        guard let k = state.statusTexts.pending.firstIndex(where: { $0.token == token }) else { return }
        let record = state.statusTexts.pending.remove(at: k).record
        let note: StatusRequestNote.Outcome
        switch outcome {
        case .sent, .unconfirmed:
            state.statusTexts.record(record)
            effects.append(.save(.statusTexts, StatusTextsFile.format(state.statusTexts.sent)))
            note = outcome == .sent ? .answered : .unconfirmed
        case .dropped(let why):
            note = .notSent(why)
            switch record.kind {
            case .answer: break
            case .problem(let p):
                let i = p.index
                state.statusTexts.told &= ~p.bit
                state.statusTexts.retryAt[i] = now.instant + StatusLimits.maintainerRetry
            case .recovered(let p):
                let i = p.index
                state.statusTexts.told |= p.bit
                state.statusTexts.clearSince[i] = nil
            }
            effects.append(.log("a text the device sent on its own was not sent (\(why)); not counted as sent"))
        }
        if let n = state.statusTexts.requests.firstIndex(where: { $0.token == token }) {
            state.statusTexts.requests[n].outcome = note
            state.statusTexts.requests[n].token = nil
        }
    }

    /// At start: the texts `statusTexts.txt` remembers; a problem whose last text said it began
    /// is still "told" (its end is texted when it is seen to be over).
    mutating func restoreStatusTexts(_ records: [StatusTextRecord]) {
        state.statusTexts.sent = Array(records.suffix(StatusTextsFile.kept))
        for r in records {
            switch r.kind {
            case .problem(let p): state.statusTexts.told |= p.bit
            case .recovered(let p): state.statusTexts.told &= ~p.bit
            case .answer: break
            }
        }
    }
}
