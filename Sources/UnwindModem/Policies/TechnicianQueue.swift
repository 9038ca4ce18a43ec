import Logging
import UnwindCore

/// The technician's commands (`unwind modem at`) and start-up checks (`unwind modem check`):
/// queued, run one at a time in the modem's quiet moments — after alerts, or while set-up
/// waits for the SIM — and answered by ticket.
struct TechnicianQueue {
    /// Answers kept for tickets nobody collected: at most this many.
    static let resultsKept = 64

    let timeouts: ModemTimeouts
    let logger: Logger
    private(set) var queue: [(id: Int, command: ATCommand)] = []
    private var results: [Int: TechnicianResult] = [:]
    private var nextID = 1

    init(timeouts: ModemTimeouts, logger: Logger) {
        self.timeouts = timeouts
        self.logger = logger
    }

    var isEmpty: Bool { queue.isEmpty }

    mutating func enqueue(_ command: ATCommand) -> TechnicianTicket {
        let id = nextID
        nextID += 1
        queue.append((id, command))
        return TechnicianTicket(id: id)
    }

    mutating func take(_ ticket: TechnicianTicket) -> TechnicianResult? {
        results.removeValue(forKey: ticket.id)
    }

    mutating func cancel(_ ticket: TechnicianTicket) {
        queue.removeAll { $0.id == ticket.id }
        results[ticket.id] = nil
    }

    mutating func next() -> (ATRequest, id: Int)? {
        guard !queue.isEmpty else { return nil }
        let (id, command) = queue.removeFirst()
        logger.notice("technician: \(command.line)")
        return (ATRequest(command, timeout: timeouts.command), id)
    }

    mutating func completed(_ id: Int, _ command: ATCommand, _ r: ATResponse, _ ctx: inout PolicyContext) {
        results[id] = TechnicianResult(command: command.line, response: r)
        if results.count > Self.resultsKept, let oldest = results.keys.min() { results[oldest] = nil }
        ctx.requests.append(.statusAnswer(command, r))
        // A command that got no answer may have left the line in any state: ESC, drain, AT.
        if case .timedOut = r.outcome { ctx.requests.append(.resynchronise(afterSubmit: false)) }
    }
}

/// A queued technician's command or start-up check.
public struct TechnicianTicket: Hashable, Sendable {
    public let id: Int
}

/// How a technician's command (or a start-up check step) ended.
public struct TechnicianResult: Equatable, Sendable {
    /// The command line as sent.
    public var command: String
    public var response: ATResponse
}
