#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import UnwindCore

/// The control protocol between the maintainer's `unwind` commands and the running device.
///
/// Transport: a SOCK_STREAM UNIX-domain socket — `/run/unwind/control.sock` for the daemon
/// (`$RUNTIME_DIRECTORY/control.sock` under systemd), `<state dir>/control.sock` for the
/// simulators; a command finds it in `<state dir>/.daemon` (see `DaemonPresence`).
///
/// Framing: one JSON object per line (UTF-8, `\n`-terminated), written by Foundation's
/// JSONEncoder: a request `{"version":1,"request":{…}}`, answered by exactly one response line.
/// A connection may carry several requests, one at a time (`unwind screen --watch` keeps one
/// open): the device reads the next request only once the previous answer is in the socket, so
/// a command that sends requests without reading the answers is made to wait by its own socket
/// buffer, not queued for in the device.
///
/// Limits on the daemon's side (`ControlLimits`; how each is enforced: `ControlServer`):
/// - a request line of at most `maximumRequest` bytes, arriving whole within `wholeRequest` of
///   its first byte; one that is larger, late or not a request is answered with an error and the
///   connection closed;
/// - an answer of at most `maximumAnswer` bytes (a larger one is replaced by an error), closed
///   when the command does not take any of it for `answerProgress`;
/// - `maximumClients` connections, at most `maximumClientsPerUser` of them from one uid; room is
///   made for a newcomer by closing an idle connection (it is refused only while every
///   connection it could displace is in the middle of a request);
/// - a connection idle between requests for `idleTimeout` is closed;
/// - at most one test message (`testAlert`, the only request that sends an SMS) every
///   `testMessageInterval`, device-wide; one asked for sooner is answered with an error saying
///   when to try again.
///
/// Every request that changes something is applied by the device to its own state and saved
/// by it (the device is the one writer while it runs); the answer comes once the files are on
/// the card (fsync'd), so a command that exits 0 has left its change durable.
public enum ControlLimits {
    /// Large enough for `restore` of a full state directory (a full mantras.txt is 321 KB).
    public static let maximumRequest = 1 << 20
    /// Far above any real answer (a full mantra list is ~0.4 MB as JSON): only a safety net for
    /// what one connection can make the device hold.
    public static let maximumAnswer = 4 << 20
    /// Each holds at most one request and one answer in memory.
    public static let maximumClients = 16
    /// Below `maximumClients`, so one local user cannot fill the socket: the other maintainers
    /// always find room. High enough for a maintainer's own commands run in parallel.
    public static let maximumClientsPerUser = 8
    /// A command writes its request at once; only a stalled or hostile client takes longer.
    public static let wholeRequest: Duration = .seconds(10)
    /// A command reads its answer at once; one that does not is not coming back.
    public static let answerProgress: Duration = .seconds(10)
    public static let idleTimeout: Duration = .seconds(30)
    /// A test message reaches a real person's phone: a mistake or a script must not send them
    /// a flood of them.
    public static let testMessageInterval: Duration = .seconds(30)
    public static let protocolVersion = 1
}

public struct ControlEnvelope: Codable, Equatable, Sendable {
    public var version: Int
    public var request: ControlRequest

    public init(_ request: ControlRequest) {
        version = ControlLimits.protocolVersion
        self.request = request
    }
}

/// What a command asks of the device.
public enum ControlRequest: Codable, Equatable, Sendable {
    /// Everything `unwind status` prints.
    case status
    /// The framebuffer the device drew last.
    case screen
    /// A new mantra at the end of the list; it becomes the one shown.
    case addMantra(text: String)
    /// Deletes mantra `number` (1-based) if it still reads `expected`.
    case deleteMantra(number: Int, expected: String?)
    /// The shipped list again.
    case resetMantras
    /// A schedule in the words of `reminders.txt` ("daily 21:30").
    case setReminder(line: String)
    /// Changes a slot; a nil field keeps what the slot has (an empty slot needs all three).
    case setAlert(slot: Int, name: String?, number: String?, message: String?)
    case clearAlert(slot: Int)
    /// Sends the slot's message marked "[TEST] " and waits for the outcome.
    case testAlert(slot: Int, waitSeconds: Int)
    case resetStatistics
    /// Replaces the state with an archive's files (already opened and checked by the command;
    /// checked again by the device).
    case restore(files: [String: Data])
    /// The modem's start-up queries again, each step reported.
    case modemCheck
    /// One technician's AT command.
    case modemCommand(String)
    /// The device pulses its own motor.
    case motorTest

    // Breathing beyond the box
    /// One of the maintainer's own breathing patterns: a name and `--pattern`'s words.
    case addPattern(name: String, pattern: String)
    case removePattern(name: String)

    // How am I doing?
    /// A coping card at the end of the list: a concern and the person's answer to it.
    case addCard(concern: String, answer: String)
    /// Deletes card `number` (1-based) if it still reads `concern` and `answer` (when given).
    case deleteCard(number: Int, concern: String?, answer: String?)
    /// The weekly self-check reminder in the words of `reminders.txt` ("never", "weekly sun 18:00").
    case setSelfCheckReminder(line: String)
    /// `unwind setup import`: the setup file's contacts and what the screen says of the import,
    /// as one change (all of them saved, or none).
    case importSetup(alerts: [ImportedAlert], screen: [String])
}

/// One contact of a setup file, for its slot.
public struct ImportedAlert: Codable, Equatable, Sendable {
    public var slot: Int
    public var name: String
    public var number: String
    public var message: String

    public init(slot: Int, name: String, number: String, message: String) {
        self.slot = slot
        self.name = name
        self.number = number
        self.message = message
    }
}

/// The answer: `code` 0 (done), 1 (could not be done) or 2 (bad input), with one line of
/// `message`, and whatever the request asked for.
public struct ControlResponse: Codable, Equatable, Sendable {
    public var code: Int32
    public var message: String?
    public var status: StatusReport?
    public var screen: ScreenReport?
    public var mantras: MantrasReport?
    public var alert: AlertReport?
    public var steps: [ModemStepReport]?
    public var lines: [String]?

    public init(code: Int32 = 0, message: String? = nil) {
        self.code = code
        self.message = message
    }

    public static func done(_ message: String? = nil) -> ControlResponse { ControlResponse(code: 0, message: message) }

    public init(_ failure: ControlFailure) {
        self.init(code: failure.code, message: failure.message)
    }

    public var failure: ControlFailure? {
        code == 0 ? nil : ControlFailure(code, message ?? "failed without a reason")
    }
}

public struct ScreenReport: Codable, Equatable, Sendable {
    public var width: Int
    public var height: Int
    /// The framebuffer in SSD1306 order (pages of column bytes, bit 0 on top).
    public var bytes: Data
    public var asleep: Bool
    public var page: String
    package init(width: Int, height: Int, bytes: Data, asleep: Bool, page: String) {
        self.width = width
        self.height = height
        self.bytes = bytes
        self.asleep = asleep
        self.page = page
    }
}

public struct MantrasReport: Codable, Equatable, Sendable {
    public var items: [String]
    /// 1-based; 0 for an empty list or when unknown.
    public var current: Int
    package init(items: [String], current: Int) {
        self.items = items
        self.current = current
    }
}

public struct AlertReport: Codable, Equatable, Sendable {
    public var slot: Int
    public var name: String
    public var number: String
    public var message: String
    /// "GSM-7, 1 part (45 of 160 septets)".
    public var encoding: String
    package init(slot: Int, name: String, number: String, message: String, encoding: String) {
        self.slot = slot
        self.name = name
        self.number = number
        self.message = message
        self.encoding = encoding
    }
}

public struct ModemStepReport: Codable, Equatable, Sendable {
    public var command: String
    /// "OK", "ERROR", "+CME ERROR: 10", "no answer", "not run: …".
    public var outcome: String
    public var lines: [String]
    public var ok: Bool
    package init(command: String, outcome: String, lines: [String], ok: Bool) {
        self.command = command
        self.outcome = outcome
        self.lines = lines
        self.ok = ok
    }
}

/// The release, as the Debian changelog's first entry names it (a test keeps them equal).
public enum UnwindVersion {
    public static let current = "1.1.0"
}

public struct StatusReport: Codable, Equatable, Sendable {
    /// After the alerts, the check-in and whether alerts could go out now. Every
    /// field is optional in JSON: a newer `unwind status` can read an older daemon's answer.
    public struct Help: Codable, Equatable, Sendable {
        /// "ready", "not ready", or "unknown" (the modem not heard yet).
        public var readiness: String
        public var readinessProblems: [String]
        /// Why the last alerts went ("panic", "check-in"); nil: none since start.
        public var alertsFor: String?
        public var contacts: [Contact]
        /// Replies from contacts on the person's screen, not yet dismissed.
        public var repliesShown: Int
        public var escalation: String
        public var calls: [String]
        /// "I'm OK now": where each follow-up stands.
        public var allClear: [Contact]
        public var checkIn: String
        public var monthlyTest: String
        /// What contacts replied since the last alerts, oldest first (nil: a daemon too old to say).
        public var replies: [Reply]?
        /// Since when a PANIC could not go out (seconds since 1970; nil: it could, or not known):
        /// the fleet's channel when SMS itself is impossible.
        public var readinessSince: Int64?
        /// What keeps the device from its job while SMS works, each with its start.
        public var problems: [Problem]?
        /// The latest STATUS requests by SMS and what became of each, oldest first.
        public var statusRequests: [String]?
        /// STATUS answers and the maintainer's texts sent (what `statusTexts.txt` keeps), oldest first.
        public var textsSent: [String]?
        package init(readiness: String, readinessProblems: [String], alertsFor: String?, contacts: [Contact],
                     repliesShown: Int, escalation: String, calls: [String], allClear: [Contact],
                     checkIn: String, monthlyTest: String, replies: [Reply]? = nil, readinessSince: Int64? = nil,
                     problems: [Problem]? = nil, statusRequests: [String]? = nil, textsSent: [String]? = nil) {
            self.replies = replies
            self.readinessSince = readinessSince
            self.problems = problems
            self.statusRequests = statusRequests
            self.textsSent = textsSent
            self.readiness = readiness
            self.readinessProblems = readinessProblems
            self.alertsFor = alertsFor
            self.contacts = contacts
            self.repliesShown = repliesShown
            self.escalation = escalation
            self.calls = calls
            self.allClear = allClear
            self.checkIn = checkIn
            self.monthlyTest = monthlyTest
        }
    }

    /// A problem that keeps the device from its job (`no-contacts`, `display`, `motor`,
    /// `state-disk`, `clock`, `monthly-test`) and since when (seconds since 1970).
    public struct Problem: Codable, Equatable, Sendable {
        public var name: String
        public var words: String
        public var since: Int64
        package init(name: String, words: String, since: Int64) {
            self.name = name
            self.words = words
            self.since = since
        }
    }

    /// A contact's reply: who, what (one line, no terminal controls), when.
    public struct Reply: Codable, Equatable, Sendable {
        public var slot: Int
        public var name: String
        public var text: String
        /// Seconds since 1970 (UTC), by the device's clock.
        public var at: Int64
        public var secondsAgo: Int64
        package init(slot: Int, name: String, text: String, at: Int64, secondsAgo: Int64) {
            self.slot = slot
            self.name = name
            self.text = text
            self.at = at
            self.secondsAgo = secondsAgo
        }

        /// The line `unwind status` prints (escaped again on the way out, as every line is).
        public var line: String {
            "\(name) (slot \(slot)) replied \(secondsAgo) s ago: \"\(TextSafety.oneLine(text, limit: 320))\""
        }
    }

    /// One contact of the last alerts, as the person's screen shows it.
    public struct Contact: Codable, Equatable, Sendable {
        public var slot: Int
        public var name: String
        /// queued, sending, sent, delivered, retrying, failed, blocked, cancelled.
        public var state: String
        public var detail: String?
        public var acknowledged: Bool
        package init(slot: Int, name: String, state: String, detail: String?, acknowledged: Bool) {
            self.slot = slot
            self.name = name
            self.state = state
            self.detail = detail
            self.acknowledged = acknowledged
        }
    }

    public struct Modem: Codable, Equatable, Sendable {
        public var port: String
        public var link: String
        public var sim: String
        public var registration: String
        public var signal: String
        public var operatorName: String?
        public var serviceCentre: String?
        public var lastProblem: String?
        public var restarts: Int
        public var call: String
        package init(port: String, link: String, sim: String, registration: String, signal: String, operatorName: String?, serviceCentre: String?, lastProblem: String?, restarts: Int, call: String) {
            self.port = port
            self.link = link
            self.sim = sim
            self.registration = registration
            self.signal = signal
            self.operatorName = operatorName
            self.serviceCentre = serviceCentre
            self.lastProblem = lastProblem
            self.restarts = restarts
            self.call = call
        }
    }

    public struct Message: Codable, Equatable, Sendable {
        public var id: String
        public var slot: Int?
        public var contact: String
        public var state: String
        public var attempts: Int
        public var lastProblem: String?
        package init(id: String, slot: Int?, contact: String, state: String, attempts: Int, lastProblem: String?) {
            self.id = id
            self.slot = slot
            self.contact = contact
            self.state = state
            self.attempts = attempts
            self.lastProblem = lastProblem
        }
    }

    public var pid: Int32
    public var startedAt: Int64
    public var now: Int64
    public var stateDirectory: String
    public var page: String
    public var overlay: String
    public var session: String
    public var display: String
    public var displayHealth: String?
    public var totalSeconds: Int64
    public var sessions: Int64
    public var shortestSeconds: Int64
    public var longestSeconds: Int64
    public var mantraCount: Int
    public var currentMantra: Int
    public var reminder: String
    public var nextReminder: Int64?
    public var alertSlots: [String]
    public var modem: Modem?
    public var outboxPending: Int
    public var outboxFailed: Int
    public var messages: [Message]
    public var framesRendered: Int
    public var framesMissed: Int
    public var loopErrors: Int
    public var recentErrors: [String]
    /// Machine-readable facts for fleet tools (the Ansible role waits on these).
    public var version: String?
    public var sessionRunning: Bool?
    public var alertsPending: Bool?
    /// The pattern the breathing page offers now and the session length SELECT starts, e.g.
    /// "box: 4-4-4-4 (3.7 breaths a minute); sessions open-ended".
    public var breathing: String?
    public var help: Help?
    package init(pid: Int32, startedAt: Int64, now: Int64, stateDirectory: String, page: String, overlay: String, session: String, display: String, displayHealth: String?, totalSeconds: Int64, sessions: Int64, shortestSeconds: Int64, longestSeconds: Int64, mantraCount: Int, currentMantra: Int, reminder: String, nextReminder: Int64?, alertSlots: [String], modem: Modem?, outboxPending: Int, outboxFailed: Int, messages: [Message], framesRendered: Int, framesMissed: Int, loopErrors: Int, recentErrors: [String]) {
        self.pid = pid
        self.startedAt = startedAt
        self.now = now
        self.stateDirectory = stateDirectory
        self.page = page
        self.overlay = overlay
        self.session = session
        self.display = display
        self.displayHealth = displayHealth
        self.totalSeconds = totalSeconds
        self.sessions = sessions
        self.shortestSeconds = shortestSeconds
        self.longestSeconds = longestSeconds
        self.mantraCount = mantraCount
        self.currentMantra = currentMantra
        self.reminder = reminder
        self.nextReminder = nextReminder
        self.alertSlots = alertSlots
        self.modem = modem
        self.outboxPending = outboxPending
        self.outboxFailed = outboxFailed
        self.messages = messages
        self.framesRendered = framesRendered
        self.framesMissed = framesMissed
        self.loopErrors = loopErrors
        self.recentErrors = recentErrors
    }
}

extension ControlEnvelope {
    /// One line: the JSON and its `\n`.
    public func encodedLine() throws -> [UInt8] {
        var bytes = [UInt8](try JSONEncoder().encode(self))
        bytes.append(0x0A)
        return bytes
    }
}

extension ControlResponse {
    public func encodedLine() -> [UInt8] {
        let encoder = JSONEncoder()
        var bytes = (try? encoder.encode(self)).map { [UInt8]($0) }
            ?? Array(#"{"code":1,"message":"the answer could not be encoded"}"#.utf8)
        bytes.append(0x0A)
        return bytes
    }
}
