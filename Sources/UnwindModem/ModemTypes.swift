import UnwindCore

/// Timeouts and periods of the modem session. The defaults suit a real modem; tests shorten them.
public struct ModemTimeouts: Equatable, Sendable {
    /// An ordinary command's final result.
    public var command: Duration = .seconds(3)
    /// Each `AT` while synchronising (autobaud, a modem still booting).
    public var syncAttempt: Duration = .milliseconds(500)
    /// The `> ` prompt after AT+CMGS.
    public var prompt: Duration = .seconds(5)
    /// `+CMGS: <mr>` after the PDU, from the second attempt of a message on: the modems'
    /// documented maximum (SIM800: 60 s; a network under load can take that long).
    public var submit: Duration = .seconds(60)
    /// The same for a message's first attempt. A confirmation usually takes seconds; one slow or
    /// lost confirmation must not hold every other contact's first alert for a minute, so after
    /// this the message is "in doubt", the others go first, and it is sent again (at least once).
    public var firstSubmit: Duration = .seconds(20)
    /// ATD's answer.
    public var dial: Duration = .seconds(30)
    /// `AT+COPS=0`: registering again may take this long (27.007 gives no bound; modems' manuals
    /// say up to 120-180 s; most answer within seconds).
    public var operatorSelection: Duration = .seconds(120)
    /// How long a dial request waits for a modem that is not ready before it fails visibly.
    public var dialPatience: Duration = .seconds(30)
    /// After an ESC: what still arrives is drained this long.
    public var drain: Duration = .milliseconds(300)
    /// After `+CMGS`, how long the closing OK may take.
    public var resultGrace: Duration = .seconds(1)
    /// "SIM busy" / "+CPIN: NOT READY": asked again after this.
    public var simBusyRetry: Duration = .seconds(1)
    /// No SIM, a locked SIM, a failed SIM: asked again after this.
    public var simProblemRetry: Duration = .seconds(5)
    /// Registration is asked this often while not registered.
    public var registrationPoll: Duration = .seconds(5)
    /// Sending waits this long for registration before trying anyway (the modem may know better).
    public var registrationPatience: Duration = .seconds(20)
    /// Signal, registration and operator are refreshed this often when idle.
    public var statusRefresh: Duration = .seconds(60)
    /// After AT+CFUN=1,1: how long to wait for the modem's boot messages before talking to it.
    public var reset: Duration = .seconds(20)
    /// Boot messages this close to the previous one belong to the same restart.
    public var bootSettle: Duration = .seconds(10)
    /// A modem finishes its own start-up well after its first words (SIM800's Call Ready and SMS
    /// Ready, EC25's +QIND: SMS DONE, SIM7600's SMS DONE and PB DONE: seconds to a minute after
    /// RDY or START). Those lines this soon after the modem's last start, or after the device
    /// first spoke to it, are that start finishing, not a restart.
    public var lateStartup: Duration = .seconds(120)
    /// AT+CMGL: listing a SIM's store can be slow (SIM800: up to 20 s).
    public var store: Duration = .seconds(20)
    /// AT+CMGR, AT+CMGD: one message (SIM800: up to 5 s). An alert waits for one in flight.
    public var storeItem: Duration = .seconds(5)
    /// The SIM's store is listed this often (and at every start-up): a +CMTI lost on the line
    /// (noise, the line down, a modem restarting) leaves its message there for at most this long.
    public var storeSweep: Duration = .seconds(300)
    /// A long reply whose parts have not all come after this is shown as far as it came, with "…".
    public var replyParts: Duration = .seconds(120)
    /// A sent message waits this long for its status reports; then "sent" stands for good and it
    /// leaves the outbox (a network that loses a report must not keep it there forever).
    public var reports: Duration = .seconds(72 * 3600)
    /// At start-up, how long readiness waits for the modem's answers before saying what it knows.
    public var readiness: Duration = .seconds(30)

    public init() {}
}

/// Retry spacing: exponential from `first` to `maximum`, with ± `jitter` (a fraction) drawn
/// from the injected random source so that several devices do not retry in step.
public struct ModemBackoff: Equatable, Sendable {
    public var first: Duration = .seconds(2)
    public var maximum: Duration = .seconds(60)
    public var jitter: Double = 0.2
    /// Reopening a vanished tty.
    public var reopenFirst: Duration = .milliseconds(500)
    public var reopenMaximum: Duration = .seconds(10)
    /// After this many modem errors in a row (+CMS ERROR 500, ERROR), the modem is restarted.
    public var resetAfterModemErrors: Int = 3

    public init() {}

    /// The delay before retry number `failures` (1 = after the first failure).
    public func delay(after failures: Int, first: Duration? = nil, maximum: Duration? = nil,
                      random: inout some RandomNumberGenerator) -> Duration {
        let f = Double((first ?? self.first).nanoseconds), m = Double((maximum ?? self.maximum).nanoseconds)
        let base = min(m, f * pow2(max(0, failures - 1)))
        let j = jitter > 0 ? Double.random(in: -jitter...jitter, using: &random) : 0
        return .nanoseconds(Int64(max(0, base * (1 + j))))
    }

    private func pow2(_ n: Int) -> Double { n >= 62 ? Double(Int64.max) : Double(Int64(1) << n) }
}

/// A SIM PIN: 4 to 8 ASCII digits, nothing else, so it can stand on an AT command line.
public struct SIMPin: Equatable, Sendable {
    public let digits: String
    public init?(_ text: String) {
        guard (4...8).contains(text.utf8.count), text.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
        digits = text
    }
}

/// Everything the modem session is configured with.
public struct ModemConfiguration: Equatable, Sendable {
    /// Entered once per modem start when the SIM asks for a PIN, never again after a refusal
    /// (three wrong PINs lock a SIM behind its PUK).
    public var simPIN: SIMPin?
    /// The SMS service centre, set with AT+CSCA when the SIM has none (+CMS ERROR 330).
    public var serviceCentre: PhoneNumber?
    /// TP-VP of every message (nil: the network's default).
    public var validity: SMSValidityPeriod?
    public var timeouts: ModemTimeouts
    public var backoff: ModemBackoff
    /// Readiness: a registered modem with `+CSQ` rssi below this (0–31) cannot be relied on to
    /// send (5 is about -103 dBm).
    public var readinessSignalFloor: Int = 5

    public init(serviceCentre: PhoneNumber? = nil, validity: SMSValidityPeriod? = nil,
                timeouts: ModemTimeouts = ModemTimeouts(), backoff: ModemBackoff = ModemBackoff()) {
        self.serviceCentre = serviceCentre
        self.validity = validity
        self.timeouts = timeouts
        self.backoff = backoff
    }
}

/// Why a message has not gone (yet).
public enum SendProblem: Equatable, Sendable, CustomStringConvertible {
    /// +CMS ERROR 1: the number is not in service. Not retried.
    case unassignedNumber(PhoneNumber)
    /// +CMS ERROR 2–127, 512–514 (and 331, 332): the network. Retried.
    case network(code: Int)
    /// +CMS ERROR 330: the SIM has no service centre number.
    case noServiceCentre(configured: Bool)
    /// +CMS ERROR 330 although a service centre is set (this number, as `AT+CSCA?` gave it):
    /// the network refuses that centre.
    case serviceCentreRefused(String)
    /// +CMS ERROR 310–316: the SIM. PIN and registration are checked again.
    case sim(code: Int)
    /// +CMS ERROR 500, a plain ERROR, a +CME ERROR: the modem. Restarted after several in a row.
    case modem(String)
    /// Another +CMS ERROR.
    case rejected(code: Int)
    /// No `> ` prompt: nothing was written; ESC, drain, `AT`, and again.
    case noPrompt
    /// The PDU was written but no `+CMGS` came: in doubt, sent again (a duplicate beats a loss).
    case noConfirmation
    /// The modem restarted while the message was on its way.
    case modemRestarted
    /// The tty went away while the message was on its way.
    case lineLost
    /// The outbox file could not be written; the message is sent anyway.
    case notJournaled(String)
    /// A status report said the message will not reach the phone (TP-ST 0x40–0xFF).
    case notDelivered(status: Int)
    /// Asked for longer ago than `LateAlerts.tooOldAfter`: not sent (see `LateAlerts`).
    case tooOld(age: Int64)

    public var isPermanent: Bool {
        switch self {
        case .unassignedNumber, .tooOld: true
        default: false
        }
    }

    public var description: String {
        switch self {
        case .unassignedNumber(let n): "\(n.text) is not in service (unassigned number); check the number"
        case .network(let c): "network error \(c)" + (SendProblem.cmsNames[c].map { " (\($0))" } ?? "")
        case .noServiceCentre(let configured):
            configured ? "the SIM had no message centre; set it from the configuration"
                : "the SIM has no message centre number; set modem.service_centre in the configuration"
        case .serviceCentreRefused(let n):
            "the network refused the message centre \(n) (+CMS ERROR: 330); ask the operator for the right number and set modem.service_centre in the configuration"
        case .sim(let c): "SIM error \(c)" + (SendProblem.cmsNames[c].map { " (\($0))" } ?? "")
        case .modem(let what): "modem error (\(what))"
        case .rejected(let c): "rejected, error \(c)" + (SendProblem.cmsNames[c].map { " (\($0))" } ?? "")
        case .noPrompt: "the modem did not ask for the message"
        case .noConfirmation: "no confirmation from the modem; sending again"
        case .modemRestarted: "the modem restarted"
        case .lineLost: "the modem's line was lost"
        case .notJournaled(let why): "could not be saved to the outbox (\(why)); sending anyway"
        case .notDelivered(let st): SendProblem.reportText(st)
        case .tooOld(let age): "not sent: asked for \(durationText(age)) ago, and news that old would mislead the contact"
        }
    }

    /// TS 23.040 §9.2.3.15, in the person's words. 0x60–0x7F are temporary errors the centre
    /// gave up on; values above 0x7F are reserved and, as the specification says, read as
    /// "service rejected".
    static func reportText(_ st: Int) -> String {
        let code = "status 0x" + (st < 16 ? "0" : "") + String(st, radix: 16, uppercase: true)
        let names: [Int: String] = [
            0x40: "remote procedure error", 0x41: "incompatible destination", 0x42: "connection rejected by the phone",
            0x43: "the number cannot be reached", 0x44: "quality of service not available", 0x45: "no interworking available",
            0x47: "deleted by the sender", 0x48: "deleted by the message centre", 0x49: "the message no longer exists",
            0x60: "network congestion", 0x61: "the phone was busy", 0x62: "no response from the phone",
            0x63: "service rejected", 0x64: "quality of service not available", 0x65: "error in the phone",
        ]
        if st == 0x46 { return "expired: the phone could not be reached before the message's validity ran out (\(code))" }
        if let n = names[st] { return "not delivered: \(n) (\(code))" }
        if st >= 0x80 { return "not delivered: service rejected (\(code), a reserved value)" }
        return "not delivered: the message centre gave up (\(code))"
    }

    /// 3GPP TS 24.011 / 27.005 names of the codes a person may meet.
    static let cmsNames: [Int: String] = [
        1: "unassigned number", 8: "operator determined barring", 10: "call barred", 21: "short message transfer rejected",
        27: "destination out of service", 28: "unidentified subscriber", 29: "facility rejected", 30: "unknown subscriber",
        38: "network out of order", 41: "temporary failure", 42: "congestion", 47: "resources unavailable",
        50: "facility not subscribed", 69: "facility not implemented", 81: "invalid reference", 95: "invalid message",
        111: "protocol error", 127: "interworking", 300: "ME failure", 302: "operation not allowed",
        303: "operation not supported", 304: "invalid PDU mode parameter", 310: "SIM not inserted", 311: "SIM PIN required",
        312: "PH-SIM PIN required", 313: "SIM failure", 314: "SIM busy", 315: "SIM wrong", 316: "SIM PUK required",
        330: "SMSC address unknown", 331: "no network service", 332: "network timeout", 500: "unknown error",
        512: "network", 513: "network", 514: "network",
    ]
}

/// Where a message stands, for the panic page and `unwind status`.
public enum MessageState: Equatable, Sendable {
    /// Written to the outbox, waiting for the modem.
    case queued
    /// On the wire now.
    case sending
    /// Every part got `+CMGS`: the network has it. Without a status report, this is all anyone knows.
    case sent(at: WallTime)
    /// A status report said the recipient's phone has it (every part of a long message).
    case delivered(at: WallTime)
    /// An attempt failed; the next one is due at `next`. Retries never stop on their own.
    case retrying(SendProblem, next: Instant)
    /// Will not be retried until someone asks (only an unassigned number).
    case failed(SendProblem)
    /// Cancelled by the person or the maintainer.
    case cancelled

    /// Nothing more will be sent (a sent message may still hear from its status reports).
    public var isFinished: Bool {
        switch self {
        case .sent, .delivered, .cancelled: true
        default: false
        }
    }
}

public struct MessageStatus: Equatable, Sendable {
    public var id: MessageID
    public var slot: Int?
    public var contactName: String
    public var number: PhoneNumber
    public var state: MessageState
    public var attempts: Int
    public var partsSent: Int
    public var parts: Int
    /// The last problem met, also after a later success.
    public var lastProblem: SendProblem?
    /// False when the outbox file could not be written (the message is still sent).
    public var journaled: Bool
    public var purpose: AlertPurpose = .panic
    /// Sent, and status reports for it may still come (delivered or failed then).
    public var awaitingReports = false
    /// Parts a status report said were delivered.
    public var partsDelivered = 0
    /// Some part may be on the recipient's phone: one was accepted (`+CMGS`), or a PDU was
    /// written and its answer never came or could not be trusted (in doubt). A cancelled
    /// message keeps it: "I'm OK now" must reach whoever may have had any of it.
    public var mayHaveReached = false
}

public enum SIMState: Equatable, Sendable, CustomStringConvertible {
    case unknown
    case ready
    /// "SIM busy" / "+CPIN: NOT READY": waited through.
    case busy
    /// Needs a PIN or PUK the device does not have.
    case locked(String)
    case absent
    case failed(String)

    public var description: String {
        switch self {
        case .unknown: "unknown"
        case .ready: "ready"
        case .busy: "busy"
        case .locked(let what): "locked (\(what)); remove the PIN from the SIM card"
        case .absent: "no SIM card"
        case .failed(let why): "SIM failure (\(why))"
        }
    }
}

/// Signal quality from AT+CSQ.
public struct SignalQuality: Equatable, Sendable, CustomStringConvertible {
    /// 0–31, or 99 for unknown.
    public var rssi: Int
    public init(rssi: Int) { self.rssi = rssi }
    /// -113 dBm + 2 × rssi; nil when unknown.
    public var dBm: Int? { (0...31).contains(rssi) ? -113 + 2 * rssi : nil }
    /// 0–4 bars for a small screen.
    public var bars: Int {
        guard let _ = dBm else { return 0 }
        switch rssi {
        case 0...1: return 0
        case 2...9: return 1
        case 10...14: return 2
        case 15...19: return 3
        default: return 4
        }
    }
    public var description: String { dBm.map { "\($0) dBm (\(bars)/4)" } ?? "unknown" }
}

/// The modem as the panic page and `unwind status` show it.
public struct ModemStatus: Equatable, Sendable {
    public enum Link: Equatable, Sendable {
        /// The tty is not open; why, when known.
        case closed(String?)
        /// Talking to the modem: synchronising, checking the SIM, setting it up.
        case starting
        case ready
        /// AT+CFUN=1,1 sent; waiting for it to come back.
        case resetting
    }

    public var port: String
    public var link: Link = .closed(nil)
    public var sim: SIMState = .unknown
    public var registration: [RegistrationDomain: RegistrationState] = [:]
    public var signal: SignalQuality?
    public var operatorName: String?
    /// Set when the SIM had no service centre (+CMS ERROR 330).
    public var serviceCentre: String?
    /// The last thing that went wrong with the modem itself.
    public var lastProblem: String?
    public var restarts = 0
    /// How status reports reach the device (AT+CNMI at start-up).
    public var statusReports: ReportRouting = .unknown
    /// `+CSMS` service: 1 (phase 2+) means every +CDS / +CMT is acknowledged with AT+CNMA.
    public var messageService: Int?
    /// The SIM's message store (AT+CPMS): used and total.
    public var messageStore: (used: Int, total: Int)? {
        get { messageStoreCounts.map { ($0[0], $0[1]) } }
        set { messageStoreCounts = newValue.map { [$0.used, $0.total] } }
    }
    var messageStoreCounts: [Int]?
    /// Whether the SIM holds a service centre number (AT+CSCA?); nil until asked.
    public var serviceCentreKnown: Bool?
    /// The service centre number `AT+CSCA?` last gave (digits and "+" only), when it gave one.
    public var simServiceCentre: String?

    public var isRegistered: Bool { registration.values.contains { $0.isRegistered } }
}

public enum CallState: Equatable, Sendable {
    case idle
    /// Asked for; ATD is (about to be) on its way.
    case dialling(PhoneNumber)
    /// The modem accepted the dial: dialling or ringing at the other end.
    case active(PhoneNumber)
    /// The other end picked up (`AT+CLCC` lists the call as active).
    case answered(PhoneNumber)
    case hangingUp
    /// The last call ended ("NO CARRIER", "BUSY", "hung up" …).
    case ended(String)
    case failed(String)

    public var isInCall: Bool {
        switch self {
        case .dialling, .active, .answered, .hangingUp: true
        default: false
        }
    }
}

/// What happened, for the loop to turn into screen changes and motor patterns.
public enum ModemEvent: Equatable, Sendable {
    case messageSent(MessageID)
    case messageRetrying(MessageID, SendProblem)
    case messageFailed(MessageID, SendProblem)
    case callChanged(CallState)
    case statusChanged
    /// A status report: every part is on the recipient's phone.
    case messageDelivered(MessageID)
    /// An SMS is on the SD card (and about to leave the SIM).
    case replyReceived(IncomingReply)
    /// Could a PANIC go out now: when first known, after each change, after a self-test.
    case readiness(AlertReadiness, selfTest: Bool)
}
