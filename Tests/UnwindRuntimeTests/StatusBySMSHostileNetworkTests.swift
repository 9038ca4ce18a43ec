import Foundation
import Testing
@testable import UnwindCore
import UnwindRuntime
import UnwindLinuxHardware
import UnwindModem
@testable import UnwindSimulatedHardware

/// STATUS by SMS against a hostile network, through the real panic link and the scripted
/// modem, on simulated time: forged senders at the PDU level, odd encodings, lying headers,
/// floods, a PANIC in the middle, and what `unwind status` is told.
enum HostileNetwork {
    static let mum = "+15550100001", dad = "+15550100002", sam = "+15550100003"
    static let contacts = [(mum, "Mum"), (dad, "Dad"), (sam, "Sam")]
    static let stamp: Int64 = 1_767_225_600

    static func slots() throws -> [AlertSlot] {
        try contacts.map { try AlertSlot(name: $0.1, number: $0.0, message: "Panic attack. Please call me.") }
    }

    static func rig(_ script: ModemScript = ModemScript(), settings: DeviceSettings = DeviceSettings(), contacts: [AlertSlot]? = nil,
                    name: String = #function) throws -> PanicCoreRig {
        let rig = try PanicCoreRig(script: script, contacts: try contacts ?? slots(), settings: settings, inbox: true, name: name)
        rig.apply(.wallClockSynchronised(true))
        #expect(rig.run(until: { rig.core.state.panic.readiness.current?.isReady == true }, for: .seconds(30)))
        return rig
    }

    /// Every part the network took (or may have) that is a STATUS answer, by recipient.
    static func answers(_ rig: PanicCoreRig) -> [String] {
        rig.line.parts.filter { $0.submit.text.contains("PANIC would") || $0.submit.text.contains("modem is still") }.map(\.submit.number)
    }

    static func allSent(_ rig: PanicCoreRig, _ n: Int = 3) -> Bool {
        rig.core.state.panic.progress.count == n && rig.core.state.panic.progress.allSatisfy { $0.delivery == .sent || $0.delivery == .delivered }
    }

    /// An SMS-DELIVER with a hand-made originating address (`oa`: length, TOA, value).
    static func deliver(oa: [UInt8], text: String) -> [UInt8] {
        DeliverEncoder.pdu(oa, dcs: 0x00, stamp: DeliverEncoder.timestamp(stamp), udh: nil, septets: GSM7.septets(of: text)!)
    }

    /// TP-OA of type alphanumeric (0xD0) holding `name` in GSM-7, whatever characters it has.
    static func alphanumeric(_ name: String) -> [UInt8] {
        let septets = GSM7.septets(of: name)!
        var packed: [UInt8] = []
        var bits = 0, acc = 0
        for s in septets {
            acc |= Int(s) << bits
            bits += 7
            while bits >= 8 { packed.append(UInt8(acc & 0xFF)); acc >>= 8; bits -= 8 }
        }
        if bits > 0 { packed.append(UInt8(acc & 0xFF)) }
        return [UInt8((septets.count * 7 + 3) / 4), 0xD0] + packed
    }

    /// TP-OA of digits (semi-octets; "*#abc" as nibbles A–E) under type of address `toa`.
    static func digits(_ d: String, toa: UInt8) -> [UInt8] {
        let map: [Character: UInt8] = ["*": 0xA, "#": 0xB, "a": 0xC, "b": 0xD, "c": 0xE]
        let n: [UInt8] = d.map { $0.wholeNumberValue.map(UInt8.init) ?? map[$0]! }
        var octets: [UInt8] = []
        for i in stride(from: 0, to: n.count, by: 2) { octets.append((i + 1 < n.count ? n[i + 1] : 0x0F) << 4 | n[i]) }
        return [UInt8(n.count), toa] + octets
    }

    static func part(_ text: String, _ k: Int, of n: Int, reference: Int, from: String) -> [UInt8] {
        DeliverEncoder.pdu(DeliverEncoder.address(from), dcs: 0x00, stamp: DeliverEncoder.timestamp(stamp),
                           udh: DeliverEncoder.concatenation(reference, k, n, false), septets: GSM7.septets(of: text)!)
    }

    /// The command lines the device wrote: each must be one the panic path knows, never one made
    /// from what a request said.
    static func commandsAreOurs(_ rig: PanicCoreRig) -> [String] {
        let ours = ["AT", "ATE0", "AT+CMEE", "AT+CMGF", "AT+CPIN", "AT+CREG", "AT+CGREG", "AT+CEREG", "AT+CSQ", "AT+COPS", "AT+CSCA",
                    "AT+CNMI", "AT+CSMS", "AT+CPMS", "AT+CMGS=", "AT+CMGR=", "AT+CMGD=", "AT+CMGL=", "AT+CNMA", "ATD", "ATH", "AT+CFUN",
                    "AT+CLCC", "AT+CGMI", "AT+CGMM", "AT+CGMR", "AT+CIMI", "AT+CCID", "AT+CBC", "AT+CSCS", "AT+CLIP", "AT+CRC"]
        return rig.line.commands.filter { c in
            !ours.contains { c == $0 || c.hasPrefix($0) } || c.contains("STATUS") || c.contains("1999") || c.contains("\"+1555")
        }
    }
}

/// Nobody but a contact is answered, nothing of a request reaches a command line, a PANIC is
/// never held back or doubted because of an answer, and only what the network took is recorded.
@Suite("STATUS by SMS through the panic link against a hostile network")
struct StatusBySMSHostileNetworkTests {
    /// Forged senders at the PDU level: types of address, alphanumeric names, nibbles that are
    /// not digits, a 20-digit number, Mum's number with a digit more. Nobody is answered and
    /// nothing reaches a command line.
    @Test func forgedSendersAtThePDULevelGetNothing() throws {
        let rig = try HostileNetwork.rig()
        let oas: [[UInt8]] = [
            HostileNetwork.alphanumeric("Mum"),
            HostileNetwork.alphanumeric("ATD112;"),
            HostileNetwork.alphanumeric("\"STATUS\""),
            HostileNetwork.digits("1555010000*1", toa: 0x91),
            HostileNetwork.digits("15550100001#", toa: 0x91),
            HostileNetwork.digits("a15550100001", toa: 0x81),
            HostileNetwork.digits("155501000011", toa: 0x91),
            HostileNetwork.digits("15550100001999999999", toa: 0x91),
            HostileNetwork.digits("1999555000", toa: 0xA1),
            HostileNetwork.digits("", toa: 0x91),
        ]
        for oa in oas { rig.line.receivePDU(HostileNetwork.deliver(oa: oa, text: "STATUS")) }
        #expect(rig.run(until: { rig.core.state.statusTexts.requestCount == oas.count && rig.line.store.isEmpty }, for: .seconds(60)),
                "requests seen: \(rig.core.state.statusTexts.requestCount)")
        rig.run(for: .seconds(30))
        #expect(HostileNetwork.answers(rig).isEmpty)
        #expect(rig.line.parts.isEmpty, "nothing sent to anyone")
        #expect(HostileNetwork.commandsAreOurs(rig).isEmpty, "\(HostileNetwork.commandsAreOurs(rig))")
        #expect(rig.core.state.panic.aftercare.replies.isEmpty, "nothing on the person's screen")
    }

    /// Odd encodings that are not a contact's STATUS: 8-bit data, a GSM-7 escape before the word,
    /// UCS-2 lookalikes, a class-0 flash message. None is answered; no crash.
    @Test func oddEncodingsFromStrangersAndLookalikesFromAContact() throws {
        let rig = try HostileNetwork.rig()
        let stamp = DeliverEncoder.timestamp(HostileNetwork.stamp)
        let stranger = DeliverEncoder.address("+19995550000")
        let dad = DeliverEncoder.address(HostileNetwork.dad)
        var pdus: [[UInt8]] = []
        pdus.append(DeliverEncoder.pdu(stranger, dcs: 0x08, stamp: stamp, udh: nil, ucs2: Array("STATUS".utf16)))
        pdus.append(DeliverEncoder.pdu(stranger, dcs: 0x00, stamp: stamp, udh: nil, septets: GSM7.septets(of: "status")!))
        pdus.append(DeliverEncoder.pdu(stranger, dcs: 0x10, stamp: stamp, udh: nil, septets: GSM7.septets(of: "STATUS")!))  // class 0
        // From Dad, but not the word: full-width letters, a zero-width space, an escape before it.
        pdus.append(DeliverEncoder.pdu(dad, dcs: 0x08, stamp: stamp, udh: nil, ucs2: Array("ＳＴＡＴＵＳ".utf16)))
        pdus.append(DeliverEncoder.pdu(dad, dcs: 0x08, stamp: stamp, udh: nil, ucs2: Array("STA\u{200B}TUS".utf16)))
        pdus.append(DeliverEncoder.pdu(dad, dcs: 0x00, stamp: stamp, udh: nil, septets: [0x1B, 0x65] + GSM7.septets(of: "STATUS")!))  // €STATUS
        // 8-bit data whose octets spell STATUS ("ST", "AT", "US" as 16-bit units: the same bytes).
        pdus.append(DeliverEncoder.pdu(dad, dcs: 0x04, stamp: stamp, udh: nil, ucs2: [0x5354, 0x4154, 0x5553]))
        for p in pdus { rig.line.receivePDU(p) }
        #expect(rig.run(until: { rig.line.store.isEmpty && rig.modem.inbox?.replies.count == pdus.count }, for: .seconds(60)))
        rig.run(for: .seconds(30))
        #expect(HostileNetwork.answers(rig).isEmpty)
        #expect(rig.line.parts.isEmpty)
    }

    /// Concatenated parts that lie: a stranger's "TUS" with the reference of Dad's "STA" (parts
    /// are joined per sender), part numbers beyond the total, duplicated parts, a part 0, a total
    /// of 1 with a header. Never an answer to anyone but Dad, at most one, nothing stuck.
    @Test func lyingConcatenationHeaders() throws {
        let rig = try HostileNetwork.rig()
        let stranger = "+19995550000"
        // Dad's "STA" + a stranger's "TUS", same reference and total: not joined.
        rig.line.receivePDU(HostileNetwork.part("STA", 1, of: 2, reference: 7, from: HostileNetwork.dad))
        rig.line.receivePDU(HostileNetwork.part("TUS", 2, of: 2, reference: 7, from: stranger))
        // The stranger's own parts in every wrong way.
        rig.line.receivePDU(HostileNetwork.part("STA", 1, of: 2, reference: 8, from: stranger))
        rig.line.receivePDU(HostileNetwork.part("TUS", 5, of: 2, reference: 8, from: stranger))
        rig.line.receivePDU(HostileNetwork.part("STATUS", 0, of: 1, reference: 9, from: stranger))
        rig.line.receivePDU(HostileNetwork.part("STATUS", 1, of: 1, reference: 10, from: stranger))
        rig.line.receivePDU(HostileNetwork.part("TUS", 2, of: 2, reference: 11, from: stranger))
        rig.line.receivePDU(HostileNetwork.part("TUS", 2, of: 2, reference: 11, from: stranger))
        rig.line.receivePDU(HostileNetwork.part("STA", 1, of: 2, reference: 11, from: stranger))
        rig.line.receivePDU(HostileNetwork.part("STA", 1, of: 255, reference: 12, from: stranger))
        // After the two minutes a part may wait, everything is out of the SIM and off the card.
        rig.run(for: .seconds(200))
        #expect(rig.line.store.isEmpty)
        #expect(rig.modem.inbox?.waitingParts == 0)
        #expect(HostileNetwork.answers(rig).isEmpty, "answered: \(HostileNetwork.answers(rig))")
        #expect(rig.line.parts.isEmpty)
        // Dad's half is his reply "STA…", on the person's screen; nothing of the stranger is.
        #expect(rig.core.state.panic.aftercare.replies.map(\.text) == ["STA…"])
    }

    /// A burst of 1,000 texts (STATUS from Dad, from strangers, ordinary texts) arriving while
    /// PANIC is held: the alerts go first and as fast as with no burst, one answer at most, to
    /// Dad only, nothing to a stranger, and memory and card bounded.
    @Test func aBurstDuringThePanicHold() throws {
        func run(burst: Bool, name: String) throws -> (Duration, PanicCoreRig) {
            let rig = try HostileNetwork.rig(name: name)
            rig.press(.down(.panic))
            let start = rig.time.instant
            if burst {
                for k in 0..<1_000 {
                    let from = k % 3 == 0 ? HostileNetwork.dad : "+1999555\(String(format: "%04d", k))"
                    rig.line.receiveSMS(from: from, text: k % 7 == 0 ? "hello \(k)" : "STATUS")
                }
            }
            #expect(rig.run(until: { HostileNetwork.allSent(rig) }, for: .seconds(120)))
            let took = rig.time.instant - start
            if burst { rig.run(for: .seconds(600)) }
            return (took, rig)
        }
        let (quiet, _) = try run(burst: false, name: "burst-quiet")
        let (busy, rig) = try run(burst: true, name: "burst-busy")
        #expect(busy <= quiet + .milliseconds(100), "PANIC to all sent: \(busy) in the burst, \(quiet) without")
        #expect(Set(HostileNetwork.answers(rig)).isSubset(of: [HostileNetwork.dad]))
        #expect(HostileNetwork.answers(rig).count <= 1)
        #expect(rig.line.parts.allSatisfy { [HostileNetwork.mum, HostileNetwork.dad, HostileNetwork.sam].contains($0.submit.number) })
        #expect(HostileNetwork.commandsAreOurs(rig).isEmpty, "\(HostileNetwork.commandsAreOurs(rig).prefix(5))")
        #expect((rig.modem.inbox?.replies.count ?? 0) <= Inbox.maximumReplies)
        #expect(rig.core.state.statusTexts.requests.count <= 20)
        let first = try #require(rig.line.parts.firstIndex { $0.submit.text.hasPrefix("Panic attack") })
        #expect(rig.line.parts[first...].prefix(3).allSatisfy { $0.submit.text.hasPrefix("Panic attack") })
    }

    /// On a slow line (9600 baud) a flood of long texts from strangers and STATUS from a contact
    /// keeps the device reading the SIM: a read in flight is the most that PANIC waits for.
    @Test func aFloodOnASlowLineHoldsThePanicBackOneReadAtMost() throws {
        func run(flood: Bool, name: String) throws -> Duration {
            var script = ModemScript()
            script.outputBaud = 9600
            let rig = try HostileNetwork.rig(script, name: name)
            if flood {
                let long = String(repeating: "Ж", count: 70)   // UCS-2: a full PDU per read
                for k in 0..<200 {
                    rig.line.receiveSMS(from: k % 4 == 0 ? HostileNetwork.dad : "+1999555\(String(format: "%04d", k))", text: k % 4 == 0 ? "STATUS" : long)
                }
                rig.run(for: .seconds(2))
            }
            rig.press(.down(.panic))
            let start = rig.time.instant
            #expect(rig.run(until: { HostileNetwork.allSent(rig) }, for: .seconds(120)))
            return rig.time.instant - start
        }
        let quiet = try run(flood: false, name: "slow-quiet")
        let busy = try run(flood: true, name: "slow-busy")
        #expect(busy <= quiet + .milliseconds(500), "PANIC to all sent at 9600 baud: \(busy) in the flood, \(quiet) without")
    }

    /// STATUS in UCS-2 with a surrogate pair after it, and split in two UCS-2 parts in the wrong
    /// order with a duplicate: one answer, to Dad.
    @Test func ucs2PartsOutOfOrderAndDuplicated() throws {
        let rig = try HostileNetwork.rig()
        let stamp = DeliverEncoder.timestamp(HostileNetwork.stamp)
        let dad = DeliverEncoder.address(HostileNetwork.dad)
        func p(_ s: String, _ k: Int) -> [UInt8] {
            DeliverEncoder.pdu(dad, dcs: 0x08, stamp: stamp, udh: DeliverEncoder.concatenation(3, k, 2, false), ucs2: Array(s.utf16))
        }
        rig.line.receivePDU(p("TUS", 2))
        rig.line.receivePDU(p("TUS", 2))
        rig.line.receivePDU(p("sta", 1))
        rig.line.receivePDU(p("sta", 1))
        #expect(rig.run(until: { !HostileNetwork.answers(rig).isEmpty }, for: .seconds(60)))
        rig.run(for: .seconds(200))
        #expect(HostileNetwork.answers(rig) == [HostileNetwork.dad])
    }

    /// A STATUS answer on the wire does not hold a PANIC back: an alert takes the line from a
    /// notice rather than wait for its submit (prompt and confirmation, 3 s each at most).
    ///
    /// The bound (the PANIC as fast as with no answer, ±0.5 s) holds where the line
    /// allows it: when the answer's PDU has gone (`pduWritten`), on a modem that answers while a
    /// submit is pending, the answer's confirmation is not waited for. While the answer's
    /// `AT+CMGS` waits for its prompt, the scripted modem (like a real one) takes whatever it
    /// is sent as the message until its `> ` comes — 2.9 s here, 1.4 s after PANIC armed — so
    /// no command can go before it: the prompt is then closed with ESC (nothing of the answer
    /// goes; it goes after the alerts) and the alerts go at once. Bound there: the rest of the
    /// modem's own prompt delay and the ESC's drain (0.3 s), never the answer's confirmation.
    @Test(arguments: [false, true])
    func anAnswerOnTheWireDoesNotHoldThePanicBack(pduWritten: Bool) throws {
        let promptDelay: Duration = .milliseconds(2900), hold: Duration = .milliseconds(1500)
        func took(answerFirst: Bool, name: String) throws -> (Duration, PanicCoreRig) {
            var script = ModemScript()
            if answerFirst {
                if pduWritten {
                    script.answersWhileSubmitPending = true
                    script.submits[1] = SubmitPlan(result: .accepted, resultDelay: promptDelay)
                } else {
                    script.submits[1] = SubmitPlan(prompt: .after(promptDelay), result: .accepted, resultDelay: promptDelay)
                }
            }
            let rig = try HostileNetwork.rig(script, name: name)
            if answerFirst {
                rig.line.receiveSMS(from: HostileNetwork.dad, text: "STATUS")
                #expect(rig.run(until: { rig.line.commands.contains { $0.hasPrefix("AT+CMGS") } }, for: .seconds(30)))
            }
            rig.press(.down(.panic))
            let start = rig.time.instant
            #expect(rig.run(until: { HostileNetwork.allSent(rig) }, for: .seconds(120)))
            let took = rig.time.instant - start
            rig.run(for: .seconds(60))
            return (took, rig)
        }
        let (quiet, _) = try took(answerFirst: false, name: "prompt-quiet-\(pduWritten)")
        let (busy, rig) = try took(answerFirst: true, name: "prompt-busy-\(pduWritten)")
        let allowed = pduWritten ? .milliseconds(500) : promptDelay - hold + .milliseconds(300) + .milliseconds(500)
        #expect(busy <= quiet + allowed, "PANIC → every alert accepted: \(busy) behind a STATUS answer, \(quiet) without")
        for n in [HostileNetwork.mum, HostileNetwork.dad, HostileNetwork.sam] {
            #expect(rig.copies(to: n, containing: "Panic attack") == 1, "\(rig.copies(to: n, containing: "Panic attack")) copies of the alert to \(n)")
        }
        // The answer: withdrawn at its prompt and sent after the alerts, or sent once.
        #expect(HostileNetwork.answers(rig) == [HostileNetwork.dad], "answers: \(HostileNetwork.answers(rig))")
        if !pduWritten {
            let first = try #require(rig.line.parts.firstIndex { $0.submit.text.hasPrefix("Panic attack") })
            let answer = try #require(rig.line.parts.firstIndex { $0.submit.text.contains("PANIC would") })
            #expect(first < answer, "the answer went before the alerts")
        }
    }

    /// A STATUS answer whose confirmation never comes (the network swallowed it) is never left
    /// "open" for the modem's 60 s: every alert accepted meanwhile could not be told apart from
    /// it, and each would show "retrying" for a minute and be sent again, with status reports or
    /// without. The line is resynchronised instead, and the alerts' answers are theirs.
    @Test(arguments: [false, true])
    func aLostAnswerConfirmationLeavesNoAlertInDoubt(reportsNever: Bool) throws {
        func run(answerFirst: Bool, name: String) throws -> (Duration, PanicCoreRig) {
            var script = ModemScript()
            if reportsNever { script.defaultReports = .never }
            if answerFirst { script.submits[1] = SubmitPlan(result: .silence) }
            let rig = try HostileNetwork.rig(script, name: name)
            if answerFirst {
                rig.line.receiveSMS(from: HostileNetwork.dad, text: "STATUS")
                #expect(rig.run(until: { rig.line.commands.contains { $0.hasPrefix("AT+CMGS") } }, for: .seconds(30)))
            }
            rig.press(.down(.panic))
            let start = rig.time.instant
            #expect(rig.run(until: { HostileNetwork.allSent(rig) }, for: .seconds(300)))
            let took = rig.time.instant - start
            rig.run(for: .seconds(120))
            return (took, rig)
        }
        let (quiet, _) = try run(answerFirst: false, name: "lost-quiet-\(reportsNever)")
        let (busy, rig) = try run(answerFirst: true, name: "lost-busy-\(reportsNever)")
        #expect(busy <= quiet + .seconds(4), "PANIC → every alert shown SENT: \(busy) after a lost STATUS confirmation, \(quiet) without")
        for n in [HostileNetwork.mum, HostileNetwork.dad, HostileNetwork.sam] {
            #expect(rig.copies(to: n, containing: "Panic attack") == 1, "\(rig.copies(to: n, containing: "Panic attack")) copies of the alert to \(n)")
        }
    }

    /// An alphanumeric sender whose name is a contact's number (`15550100001`, 11 characters:
    /// what any bulk-SMS gateway lets anyone set) is nobody, neither for STATUS (an answer to
    /// Mum would use up her 10 minutes) nor as a reply ("Mum replied" would end the calls): the
    /// address's type reaches the core (`IncomingReply.fromName`, kept in the reply's file), and
    /// a name matches nobody.
    @Test func anAlphanumericSenderSpellingAContactsNumberIsNobody() throws {
        let rig = try HostileNetwork.rig()
        rig.line.receivePDU(HostileNetwork.deliver(oa: HostileNetwork.alphanumeric("15550100001"), text: "STATUS"))
        #expect(rig.run(until: { rig.core.state.statusTexts.requestCount == 1 }, for: .seconds(60)))
        rig.run(for: .seconds(30))
        #expect(rig.core.state.statusTexts.requests.map(\.outcome) == [.notAContact])
        #expect(HostileNetwork.answers(rig).isEmpty, "answered: \(HostileNetwork.answers(rig))")
        // And as a reply during an alert: shown as Mum's, calls ended.
        rig.panic()
        #expect(rig.run(until: { HostileNetwork.allSent(rig) }, for: .seconds(60)))
        rig.line.receivePDU(HostileNetwork.deliver(oa: HostileNetwork.alphanumeric("15550100001"), text: "On my way"))
        rig.run(for: .seconds(30))
        #expect(rig.core.state.panic.aftercare.replies.isEmpty, "a forged sender's text shown as Mum's: \(rig.core.state.panic.aftercare.replies.map(\.name))")
    }

    /// The modem reports what became of each text (`DeviceTextOutcome`), and only what the
    /// network took is recorded: an answer the modem dropped (it waited behind a PANIC batch
    /// still pending after 10 minutes) is not "answered" in `unwind status`, not in "Texts sent",
    /// and counts for nothing against the day's ten.
    @Test func aDroppedAnswerIsNotReportedAsAnswered() throws {
        var script = ModemScript()
        script.resultsByText = ["Panic attack": .cmsError(38)]   // the alerts are refused, retried for ever
        let rig = try HostileNetwork.rig(script)
        rig.panic()
        rig.line.receiveSMS(from: HostileNetwork.dad, text: "STATUS")
        #expect(rig.run(until: { rig.core.state.statusTexts.requestCount == 1 }, for: .seconds(60)))
        rig.run(for: .seconds(660))
        #expect(HostileNetwork.answers(rig).isEmpty, "precondition: nothing went")
        let said = rig.core.state.statusTexts.requests.map(\.outcome.words)
        #expect(rig.core.state.statusTexts.requests.last?.outcome != .answered, "unwind status says: \(said)")
        #expect(!rig.core.state.statusTexts.sent.contains { $0.kind == .answer(slot: 1) },
                "statusTexts.txt and `Texts sent` list an answer that never went")
    }

    /// A maintainer text the network refuses three times is dropped and not recorded (recorded,
    /// `unwind status` would say "maintainer told" and the maintainer would not be texted about
    /// that problem for a day — never told at all): it is asked for again after 10 minutes.
    @Test func aDroppedMaintainerTextIsAskedForAgain() throws {
        var settings = DeviceSettings()
        settings.statusTexts.maintainer = try PhoneNumber("+15550100099")
        settings.statusTexts.maintainerAfter = .seconds(300)
        var script = ModemScript()
        script.resultsByText = ["needs attention": .cmsError(38)]
        let rig = try HostileNetwork.rig(script, settings: settings, contacts: [])   // no alert contacts: a problem
        #expect(rig.run(until: { !rig.texts.isEmpty }, for: .seconds(400)), "the maintainer's text was asked for")
        rig.run(for: .seconds(900))
        rig.line.setScript { $0.resultsByText = [:] }   // the network works again
        rig.run(for: .seconds(1800))
        let toMaintainer = rig.line.delivered.filter { $0.number == "+15550100099" }
        #expect(!toMaintainer.isEmpty || !rig.core.state.statusTexts.sent.contains { $0.kind == .problem(.noContacts) },
                "nothing reached the maintainer, yet statusTexts says: \(StatusTextsFile.format(rig.core.state.statusTexts.sent))")
        // Asked for again once the network works, told once, and recorded once.
        #expect(toMaintainer.count == 1, "\(toMaintainer.count) texts reached the maintainer")
        #expect(rig.core.state.statusTexts.sent.filter { $0.kind == .problem(.noContacts) }.count == 1)
    }
}
