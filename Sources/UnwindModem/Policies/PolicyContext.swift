import Logging
import UnwindCore

/// What every policy may touch besides its own state while it decides or handles an answer:
/// the time the arbiter was given, the status the device shows, the events the loop hears of,
/// the session's one random source (jitter), and requests to the others. A policy never reads
/// a clock and never touches the line; it writes what it wants into `requests` and the arbiter
/// carries them out, in order, before it asks anyone anything else.
struct PolicyContext {
    var now = Instant.zero
    var wall = WallTime(secondsSinceEpoch: 0)
    var status: ModemStatus
    var events: [ModemEvent] = []
    var requests: [ModemRequest] = []
    var random: AnyRandom
    /// The store AT+CPMS set for reading (nil: it refused, so the modem's own is used).
    var messageStoreName: String?

    /// A problem with the modem itself, logged once until it changes.
    mutating func noteProblem(_ problem: String, _ logger: Logger) {
        if status.lastProblem != problem { logger.error("modem: \(problem)") }
        status.lastProblem = problem
        events.append(.statusChanged)
    }

    mutating func statusChanged() { events.append(.statusChanged) }
}

/// What one policy asks of the line or of another policy; the arbiter carries it out.
enum ModemRequest: Equatable {
    /// ESC (and CR: the start-up's "clear a stuck prompt"), then the drain.
    case escape(carriageReturn: Bool)
    /// A command got no answer, so the line may be in any state: ESC (unless one was just
    /// written), drain, and `AT` before anything else. After a submit, only a clean OK counts
    /// as the line being quiet: that submit's answer may still come.
    case resynchronise(afterSubmit: Bool)
    /// The SIM may have changed (a +CMS ERROR 31x, a refused AT+CMGF=0, an unsolicited +CPIN):
    /// PIN, PDU mode and registration again; every attempt under way starts over.
    case checkSIMAgain
    /// Several modem errors in a row: AT+CFUN=1,1 before anything else.
    case restartModem
    /// The SIM has no (or another) service centre: AT+CSCA with the configured one.
    case setServiceCentre
    /// A technician's command answered something the status shows (SIM, registration, signal).
    case statusAnswer(ATCommand, ATResponse)
    /// The outbox journal.
    case journal(JournalChange)
    /// Every part of a message got `+CMGS`: status reports take it from here.
    case accepted(OutboxEntry, MessageStatus)
    /// A message or status report read from the modem (`index`: where it is stored, nil for one
    /// that came inline): on the card, or applied to the outbox, before it may be deleted.
    case incoming(IncomingTPDU, index: StoreIndex?)
    /// A PDU that could not be read: kept for the maintainer before it may be deleted.
    case unreadable(String, problem: String, index: StoreIndex?)
    /// Bring-up is done: readiness and the store's first sweep follow.
    case modemReady
}

/// A change to the outbox journal, asked for by delivery, written by the arbiter.
enum JournalChange: Equatable {
    /// The entry as it stands (attempts, parts sent, history).
    case save(OutboxEntry)
    /// Settled (sent with no reports to wait for, delivered, failed by a report, or waited
    /// for long enough): gone from the journal.
    case sent(MessageID)
    /// Cancelled by the person or the maintainer.
    case cancelled(MessageID)
}

/// A random source behind one concrete type (the session is not generic over it).
struct AnyRandom: RandomNumberGenerator {
    var base: any RandomNumberGenerator
    init(_ base: some RandomNumberGenerator) { self.base = base }
    mutating func next() -> UInt64 { base.next() }
}

extension ModemStatus {
    /// "CREG registered (home), CEREG searching": for log lines.
    var registrationSummary: String {
        if registration.isEmpty { return "registration unknown" }
        return RegistrationDomain.allCases.compactMap { d in registration[d].map { "\(d.rawValue) \($0)" } }
            .joined(separator: ", ")
    }
}
