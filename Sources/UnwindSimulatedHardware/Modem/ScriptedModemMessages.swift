import UnwindCore

/// A message in the simulated SIM's store: its `<stat>` (0 unread, 1 read, 2/3 stored outgoing)
/// and its PDU as AT+CMGR gives it (SMSC field first).
public struct StoredSMS: Equatable, Sendable {
    public var stat: Int
    public var pdu: [UInt8]
    /// The TPDU's length as announced (`+CMGR: <stat>,,<length>`): the PDU without its SMSC
    /// field, unless a test plants a wrong one.
    public var length: Int

    public init(stat: Int = 0, pdu: [UInt8], length: Int? = nil) {
        self.stat = stat
        self.pdu = pdu
        self.length = length ?? max(0, pdu.count - 1 - Int(pdu.first ?? 0))
    }
}

/// A status report due from the network.
struct ScheduledReport: Equatable, Sendable {
    var at: Instant
    var reference: Int
    var number: String
    var typeOfAddress: UInt8
    var status: UInt8
}

/// A status report the network sent, and how it reached the device.
public struct SentReport: Equatable, Sendable {
    public enum Route: String, Equatable, Sendable { case inline, stored, dropped, storeFull }
    public var reference: Int
    public var number: String
    public var status: UInt8
    public var route: Route
}

/// What a healthy SIM800/SIM7600 does about receiving: the SIM's store (AT+CPMS, +CMTI, AT+CMGR,
/// AT+CMGL, AT+CMGD, +CMS ERROR: 321 for an index out of range, a full store holding the
/// network's messages back), status reports routed as AT+CNMI says (+CDS inline, +CDSI stored,
/// or nowhere), AT+CNMA, and calls that ring, end on their own or are refused.
extension ScriptedModem {
    // MARK: The network's side

    /// Someone sends the device an SMS at `now`: split and encoded by the network (GSM-7 when it
    /// can, UCS-2 otherwise, long messages in parts with `reference`), stored on the SIM with a
    /// +CMTI each — or held by the network while the store is full.
    public mutating func receiveSMS(from: String, text: String, at now: Instant, reference: Int? = nil, wide: Bool = false) {
        incomingReference = (incomingReference + 1) % 256
        let ref = reference ?? incomingReference
        let time = script.networkTime + Int64(now.nanoseconds / 1_000_000_000)
        for pdu in DeliverEncoder.encode(from: from, text: text, reference: ref, wide: wide, time: time) {
            arrive(pdu, at: now)
        }
    }

    /// A +CMT or +CDS a test injects by hand wants its AT+CNMA like one the modem sent.
    public mutating func expectAcknowledgement() { acknowledgementsDue += 1 }

    /// A PDU (SMSC field first) arrives from the network as it is: how tests send hostile ones.
    public mutating func receivePDU(_ pdu: [UInt8], at now: Instant) { arrive(pdu, at: now) }

    /// Puts a message straight into the store (as if it arrived before the device started).
    @discardableResult
    public mutating func plant(_ message: StoredSMS) -> Int? {
        guard let i = freeIndex() else { return nil }
        store[i] = message
        return i
    }

    mutating func arrive(_ pdu: [UInt8], at now: Instant) {
        if indications.mt == 2, mode == .command {
            send(["+CMT: ,\(max(0, pdu.count - 1 - Int(pdu.first ?? 0)))", hexString(pdu)], at: now)
            return
        }
        guard let i = freeIndex() else {
            heldByNetwork.append(pdu)
            return
        }
        store[i] = StoredSMS(pdu: pdu)
        if indications.mt == 1, isAwake { send(["+CMTI: \"SM\",\(i)"], at: now) }
    }

    private var isAwake: Bool { if case .booting = mode { false } else { true } }

    func freeIndex() -> Int? {
        let first = script.firstStoreIndex
        guard store.count < script.storeCapacity else { return nil }
        return (first..<(first + script.storeCapacity)).first { store[$0] == nil }
    }

    /// Room again: the network delivers what it held.
    mutating func deliverHeld(at now: Instant) {
        while !heldByNetwork.isEmpty, freeIndex() != nil {
            arrive(heldByNetwork.removeFirst(), at: now)
        }
    }

    mutating func scheduleReports(for s: DecodedSubmit, reference: Int, occurrence: Int, at now: Instant) {
        guard s.firstOctet & 0x20 != 0 else { return }  // no TP-SRR, no report
        let plan = script.reports[occurrence] ?? script.defaultReports
        for r in plan.reports {
            scheduledReports.append(ScheduledReport(at: now + r.after, reference: reference,
                                                    number: s.number, typeOfAddress: s.typeOfAddress, status: r.status))
        }
    }

    /// Reports and call ends that are due.
    mutating func networkTimers(_ now: Instant) {
        if let at = callAnswers, now >= at, let n = callNumber {
            // Picked up: from now on AT+CLCC lists the call active.
            callAnswers = nil
            callPickedUp = true
            answeredCalls.append(n)
        }
        if let end = callEnds, now >= end.at {
            callEnds = nil
            callNumber = nil
            callAnswers = nil
            callPickedUp = false
            send([end.line], at: now)
        }
        guard isAwake else { return }
        while let k = scheduledReports.indices.min(by: { scheduledReports[$0].at < scheduledReports[$1].at }),
              scheduledReports[k].at <= now {
            let r = scheduledReports.remove(at: k)
            let pdu = DeliverEncoder.statusReport(r, time: script.networkTime + Int64(now.nanoseconds / 1_000_000_000))
            var route = SentReport.Route.dropped
            switch indications.ds {
            case 1:
                send(["+CDS: \(pdu.count - 1 - Int(pdu[0]))", hexString(pdu)], at: now)
                if script.messageService == 1 { acknowledgementsDue += 1 }
                route = .inline
            case 2:
                if script.reportMemory == "SR" {
                    let i = (script.firstStoreIndex...).first { reportStore[$0] == nil }!
                    reportStore[i] = StoredSMS(pdu: pdu)
                    send(["+CDSI: \"SR\",\(i)"], at: now)
                    route = .stored
                } else if let i = freeIndex() {
                    store[i] = StoredSMS(pdu: pdu)
                    send(["+CDSI: \"SM\",\(i)"], at: now)
                    route = .stored
                } else {
                    route = .storeFull
                }
            default:
                break
            }
            reportsSent.append(SentReport(reference: r.reference, number: r.number, status: r.status, route: route))
        }
    }

    mutating func dial(_ number: String, at now: Instant) {
        switch script.dials[number] ?? script.defaultDial {
        case .rings:
            callNumber = number
            ok(now)
        case .endsAfter(let d, let line):
            callNumber = number
            callEnds = (now + d, line)
            ok(now)
        case .refused(let line):
            send([line], at: now)
        case .answers(let after, let talk):
            callNumber = number
            callAnswers = now + after
            callEnds = (now + after + talk, "NO CARRIER")
            ok(now)
        }
    }

    // MARK: Commands

    /// AT+CSMS?, AT+CPMS, AT+CNMI, AT+CMGL, AT+CMGR, AT+CMGD, AT+CNMA. False: not one of them.
    mutating func messageCommand(_ text: String, at now: Instant) -> Bool {
        let upper = text.uppercased()
        let used = store.count, total = script.storeCapacity
        switch upper {
        case "AT+CSMS?":
            send(["+CSMS: \(script.messageService),1,1,1", "OK"], at: now)
        case "AT+CPMS=\"SM\",\"SM\",\"SM\"", "AT+CPMS=\"SM\"":
            readMemory = "SM"
            send(["+CPMS: \(used),\(total),\(used),\(total),\(used),\(total)", "OK"], at: now)
        case "AT+CPMS=\"SR\"":
            guard script.reportMemory == "SR" else {
                send(["+CMS ERROR: 302"], at: now)
                return true
            }
            readMemory = "SR"
            send(["+CPMS: \(reportStore.count),\(total),\(used),\(total),\(used),\(total)", "OK"], at: now)
        case "AT+CNMA":
            if acknowledgementsDue > 0 {
                acknowledgementsDue -= 1
                ok(now)
            } else {
                send(["+CMS ERROR: 340"], at: now)  // no +CNMA acknowledgement expected
            }
        case "AT+CMGL=4":
            var lines: [String] = []
            let listed = readMemory == "SR" ? reportStore : store
            for i in listed.keys.sorted() {
                guard let m = listed[i] else { continue }
                lines += ["+CMGL: \(i),\(m.stat),,\(m.length)", hexString(m.pdu)]
                if m.stat == 0 { if readMemory == "SR" { reportStore[i]?.stat = 1 } else { store[i]?.stat = 1 } }
            }
            send(lines + ["OK"], at: now)
        default:
            if upper.hasPrefix("AT+CNMI=") {
                let p = String(upper.dropFirst(8))
                let f = p.split(separator: ",").map { Int($0) }
                guard f.count == 5, f.allSatisfy({ $0 != nil }), !script.refusedIndications.contains(p) else {
                    send(["ERROR"], at: now)
                    return true
                }
                indications = (f[1] ?? 0, f[3] ?? 0)
                ok(now)
            } else if upper.hasPrefix("AT+CMGR="), let i = Self.index(upper.dropFirst(8)) {
                guard (script.firstStoreIndex..<(script.firstStoreIndex + script.storeCapacity)).contains(i) else {
                    send(["+CMS ERROR: 321"], at: now)
                    return true
                }
                if readMemory == "SR", let m = reportStore[i] {
                    send(["+CMGR: \(m.stat),,\(m.length)", hexString(m.pdu), "OK"], at: now)
                } else if readMemory == "SM", let m = store[i] {
                    send(["+CMGR: \(m.stat),,\(m.length)", hexString(m.pdu), "OK"], at: now)
                    if m.stat == 0 { store[i]?.stat = 1 }
                } else {
                    ok(now)  // SIM800: an empty index answers OK alone
                }
            } else if upper.hasPrefix("AT+CMGD="), let i = Self.index(upper.dropFirst(8)) {
                guard (script.firstStoreIndex..<(script.firstStoreIndex + script.storeCapacity)).contains(i) else {
                    send(["+CMS ERROR: 321"], at: now)
                    return true
                }
                if readMemory == "SR" { reportStore[i] = nil } else { store[i] = nil }
                deletions.append(i)
                ok(now)
                deliverHeld(at: now)
            } else {
                return false
            }
        }
        return true
    }

    static func index(_ s: Substring) -> Int? {
        guard !s.isEmpty, s.count <= 5, s.allSatisfy(\.isASCII), s.allSatisfy(\.isNumber) else { return nil }
        return Int(s)
    }

    func hexString(_ bytes: [UInt8]) -> String {
        let d = Array("0123456789ABCDEF")
        var s = ""
        for b in bytes { s.append(d[Int(b >> 4)]); s.append(d[Int(b & 0x0F)]) }
        return s
    }
}
