import Logging
import UnwindCore

/// Messages that come in — replies, and status reports the modem stored — from the SIM's store
/// to the SD card, and the store kept clean so it never fills:
///
/// - `+CMTI: <mem>,<index>` (a reply) and `+CDSI: <mem>,<index>` (a stored report) queue
///   AT+CMGR=<index>; so does every index `AT+CMGL=4` lists, at each start-up, every
///   `storeSweep`, and at once when the store says it is full (`+CMS ERROR: 322`, or a vendor's
///   "SMS full" indication).
/// - What AT+CMGR read goes to the card (a reply to the inbox, a report to the outbox journal)
///   before AT+CMGD=<index> may delete it. A write that fails leaves it on the SIM; the next
///   sweep tries again. Reading the same message twice stores it once (the inbox knows it).
/// - `+CDS` and `+CMT` carry their PDU inline: handled the same way, and acknowledged with
///   AT+CNMA when the message service is phase 2+ (`+CSMS: 1`) — only once on the card.
/// - Only digits reach a command line: indexes are parsed and range-checked (`StoreIndex`).
struct Replies {
    enum Job: Equatable {
        case list
        case read(StoreIndex)
        case delete(StoreIndex)
        case acknowledge
        case indications(MessageIndications)
        case readFrom(ReadMemory)
    }

    let configuration: ModemConfiguration
    let logger: Logger
    private(set) var toRead: [StoreIndex] = []
    private(set) var toDelete: [StoreIndex] = []
    /// Read but not on the card (the write failed) or refused by the modem: left for the next sweep.
    private var skipped: Set<StoreIndex> = []
    private(set) var acknowledgements = 0
    /// A start-up (or the store filling up): list the store once the alerts are out.
    private(set) var sweepFirst = false
    var nextSweep: Instant?
    /// AT+CNMA was refused: the modem may have turned routing off (27.005 §3.4.4); set it again.
    private var reassert: MessageIndications?
    /// Stored outgoing messages seen on the SIM (left alone), logged once.
    private var outgoingNoted = false
    /// Status reports the modem keeps in its "SR" memory: read and deleted there, between
    /// AT+CPMS="SR" and AT+CPMS="SM", in one go while nothing else of the store is read.
    private(set) var reportsToRead: [StoreIndex] = []
    private(set) var reportsToDelete: [StoreIndex] = []
    /// AT+CPMS="SR" answered OK and "SM" not yet set back: reads and deletes reach the reports.
    private(set) var readingReports = false
    /// The modem refused AT+CPMS="SR": its reports cannot be read (said once).
    private var reportMemoryRefused = false

    init(configuration: ModemConfiguration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
    }

    var hasWork: Bool {
        acknowledgements > 0 || sweepFirst || reassert != nil || !toRead.isEmpty || !toDelete.isEmpty
            || !reportsToRead.isEmpty || !reportsToDelete.isEmpty || readingReports
    }

    /// The modem is set up: what is already stored is collected first.
    mutating func modemReady(_ ctx: inout PolicyContext) {
        sweepFirst = true
        skipped.removeAll()
        toRead.removeAll()
        toDelete.removeAll()
        reportsToRead.removeAll()
        reportsToDelete.removeAll()
        readingReports = false  // the set-up chose the SIM's store again
    }

    /// Acknowledgements: the network waits for them.
    mutating func nextUrgent() -> (ATRequest, Job)? {
        guard acknowledgements > 0 else { return nil }
        acknowledgements -= 1
        return (ATRequest(.acknowledgeMessage, timeout: configuration.timeouts.command), .acknowledge)
    }

    /// After the alerts: a start-up's listing, deleting what is safe on the card, reading what
    /// is announced, the periodic sweep.
    mutating func next(_ ctx: inout PolicyContext) -> (ATRequest, Job)? {
        let t = configuration.timeouts
        // The report memory's turn, once begun, runs to its end: the SIM's store waits.
        if readingReports {
            if !reportsToDelete.isEmpty {
                let i = reportsToDelete.removeFirst()
                return (ATRequest(.deleteMessage(i), timeout: t.storeItem), .delete(i))
            }
            if !reportsToRead.isEmpty {
                let i = reportsToRead.removeFirst()
                return (ATRequest(.readMessage(i), timeout: t.storeItem), .read(i))
            }
            return (ATRequest(.readFrom(.sim), timeout: t.command), .readFrom(.sim))
        }
        if sweepFirst {
            sweepFirst = false
            return (ATRequest(.listMessages, timeout: t.store), .list)
        }
        if let r = reassert {
            reassert = nil
            return (ATRequest(.messageIndications(r), timeout: t.command), .indications(r))
        }
        if !toDelete.isEmpty {
            let i = toDelete.removeFirst()
            return (ATRequest(.deleteMessage(i), timeout: t.storeItem), .delete(i))
        }
        if !toRead.isEmpty {
            let i = toRead.removeFirst()
            return (ATRequest(.readMessage(i), timeout: t.storeItem), .read(i))
        }
        if !reportsToRead.isEmpty || !reportsToDelete.isEmpty {
            return (ATRequest(.readFrom(.reports), timeout: t.command), .readFrom(.reports))
        }
        if let s = nextSweep, ctx.now >= s {
            nextSweep = ctx.now + t.storeSweep
            return (ATRequest(.listMessages, timeout: t.store), .list)
        }
        return nil
    }

    // MARK: Indications

    /// `+CMTI: "SM",3` or `+CDSI: "SM",3`.
    mutating func announced(_ line: String, _ ctx: inout PolicyContext) {
        guard let colon = line.firstIndex(of: ":") else { return }
        let f = splitFields(String(line[line.index(after: colon)...]))
        guard f.count == 2, let index = StoreIndex(field: f[1]) else {
            logger.warning("modem: \(line.debugDescription) names no message index; the store will be listed")
            sweepFirst = true
            return
        }
        let memory = f[0].unquoted.uppercased()
        if memory == ReadMemory.reports.rawValue, line.hasPrefix("+CDSI:"), ctx.messageStoreName == ReadMemory.sim.rawValue,
           !reportMemoryRefused {
            if !reportsToRead.contains(index) && !reportsToDelete.contains(index) { reportsToRead.append(index) }
            return
        }
        if let ours = ctx.messageStoreName, memory != ours {
            logger.warning("modem: \(line) is in \(memory), which the device does not read (it set \(ours)); ignored")
            return
        }
        queueRead(index)
    }

    /// The store is full (`+CMS ERROR: 322` anywhere, or a vendor's indication).
    mutating func storeFull(_ why: String) {
        logger.warning("the SIM's message store is full (\(why)); collecting and deleting what it holds")
        skipped.removeAll()
        sweepFirst = true
    }

    private mutating func queueRead(_ i: StoreIndex) {
        if !toRead.contains(i) && !toDelete.contains(i) { toRead.append(i) }
    }

    /// A +CDS or +CMT with its PDU: to the card (the arbiter), acknowledged once it is there.
    mutating func inline(header: String, pdu: String, report: Bool, _ ctx: inout PolicyContext) {
        let fields = header.drop { $0 != ":" }.dropFirst()
        let announced = splitFields(String(fields)).last.flatMap { Int($0) }
        do {
            let tpdu = try IncomingPDU.decode(hex: pdu, announced: announced)
            ctx.requests.append(.incoming(tpdu, index: nil))
        } catch {
            logger.warning("modem: the PDU of \(report ? "+CDS" : "+CMT") could not be read (\(error))")
            ctx.requests.append(.unreadable(pdu, problem: error.description, index: nil))
        }
    }

    /// What the arbiter did with a message read (`index`) or received inline (nil).
    mutating func handled(_ index: StoreIndex?, stored: Bool, _ ctx: inout PolicyContext) {
        if let index, readingReports {
            // A report that did not reach the card stays in the memory: the next +CDSI, or
            // the modem's own limit, brings the memory's turn again.
            if stored && !reportsToDelete.contains(index) { reportsToDelete.append(index) }
        } else if let index {
            if stored {
                if !toDelete.contains(index) { toDelete.append(index) }
            } else {
                skipped.insert(index)
            }
        } else if stored, ctx.status.messageService == 1 {
            acknowledgements += 1
        }
    }

    // MARK: Answers

    mutating func completed(_ job: Job, _ r: ATResponse, _ ctx: inout PolicyContext) {
        if case .cmsError(let c) = r.outcome, c.number == 322 { storeFull("+CMS ERROR: 322") }
        if case .timedOut = r.outcome {
            ctx.requests.append(.resynchronise(afterSubmit: false))
            switch job {
            case .read(let i) where readingReports: reportsToRead.insert(i, at: 0)
            case .delete(let i) where readingReports: reportsToDelete.insert(i, at: 0)
            case .read(let i): toRead.insert(i, at: 0)
            case .delete(let i): toDelete.insert(i, at: 0)
            default: break
            }
            return
        }
        if r.outcome == .abandoned { return }
        switch job {
        case .list: listed(r, &ctx)
        case .read(let i): read(i, r, &ctx)
        case .delete(let i):
            if r.outcome.isOK {
                logger.info("message \(i) deleted from the SIM")
            } else {
                logger.warning("AT+CMGD=\(i) answered \(r.outcome); tried again at the next sweep")
                skipped.insert(i)
            }
        case .acknowledge:
            if !r.outcome.isOK {
                logger.warning("AT+CNMA answered \(r.outcome); setting the message indications again")
                reassert = MessageIndications.forRouting(ctx.status.statusReports)
            }
        case .indications(let m):
            if !r.outcome.isOK { logger.warning("AT+CNMI=\(m.parameters) answered \(r.outcome)") }
        case .readFrom(.reports):
            if r.outcome.isOK {
                readingReports = true
            } else {
                reportMemoryRefused = true
                reportsToRead.removeAll()
                reportsToDelete.removeAll()
                logger.warning("the modem announces status reports in its \"SR\" memory but refused AT+CPMS=\"SR\" (\(r.outcome)); they cannot be read, so alerts stay \"sent\", never \"delivered\"")
            }
        case .readFrom(.sim):
            if r.outcome.isOK {
                readingReports = false
            } else {
                logger.warning("AT+CPMS=\"SM\" answered \(r.outcome); the line is resynchronised and it is asked again")
                ctx.requests.append(.resynchronise(afterSubmit: false))
            }
        }
    }

    private mutating func listed(_ r: ATResponse, _ ctx: inout PolicyContext) {
        nextSweep = ctx.now + configuration.timeouts.storeSweep
        guard r.outcome.isOK else {
            if r.outcome != .cmsError(ATErrorCode("322")) { logger.info("AT+CMGL=4 answered \(r.outcome)") }
            return
        }
        var outgoing = 0
        for line in r.lines where line.hasPrefix("+CMGL:") {
            let f = splitFields(String(line.dropFirst(6)))
            guard f.count >= 2, let i = StoreIndex(field: f[0]), let stat = Int(f[1]) else {
                logger.warning("modem: \(line.debugDescription) is not a message listing; skipped")
                continue
            }
            if stat == 2 || stat == 3 {
                outgoing += 1
                continue
            }
            if !skipped.contains(i) { queueRead(i) }
        }
        if outgoing > 0 && !outgoingNoted {
            outgoingNoted = true
            logger.notice("the SIM holds \(outgoing) stored outgoing message(s), not the device's; left alone")
        }
    }

    /// `+CMGR: <stat>,[<alpha>],<length>` and the PDU on the next line; nothing at all for an empty index.
    private mutating func read(_ i: StoreIndex, _ r: ATResponse, _ ctx: inout PolicyContext) {
        guard r.outcome.isOK else {
            if case .cmsError(let c) = r.outcome, c.number == 321 { return }  // invalid index: nothing there
            logger.warning("AT+CMGR=\(i) answered \(r.outcome); tried again at the next sweep")
            skipped.insert(i)
            return
        }
        guard let k = r.lines.firstIndex(where: { $0.hasPrefix("+CMGR:") }) else { return }  // an empty index
        let f = splitFields(String(r.lines[k].dropFirst(6)))
        let stat = f.first.flatMap { Int($0) }
        if stat == 2 || stat == 3 { return }  // a stored outgoing message: not ours to delete
        guard k + 1 < r.lines.count else {
            logger.warning("AT+CMGR=\(i): no PDU after \(r.lines[k].debugDescription); tried again at the next sweep")
            skipped.insert(i)
            return
        }
        let pdu = r.lines[k + 1]
        let announced = f.count >= 2 ? f.last.flatMap { Int($0) } : nil
        do {
            ctx.requests.append(.incoming(try IncomingPDU.decode(hex: pdu, announced: announced), index: i))
        } catch IncomingPDUProblem.notForUs {
            return
        } catch {
            logger.warning("message \(i) on the SIM could not be read (\(error)); kept for the maintainer")
            ctx.requests.append(.unreadable(pdu, problem: error.description, index: i))
        }
    }
}

extension MessageIndications {
    static func forRouting(_ r: ReportRouting) -> MessageIndications {
        switch r {
        case .inline, .unknown: .inlineReports
        case .stored: .storedReports
        case .unavailable: .noReports
        }
    }
}
