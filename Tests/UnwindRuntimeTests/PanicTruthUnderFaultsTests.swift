import Foundation
import Testing
@testable import UnwindCore
import UnwindRuntime
import UnwindLinuxHardware
import UnwindModem
import UnwindSimulatedHardware

/// The panic path's truth under faults: the whole device — the core, the real panic link, the GSM modem and its outbox — against a modem
/// simulator that is the network and records what it really accepted (`PanicCoreRig`, on
/// simulated time, so each attack runs its minutes in milliseconds; the same scripted modem the
/// pty end-to-end runs use). After every pass of the loop, three rules are checked against the
/// network's record, not against what the device believes:
///
/// 1. no contact is shown SENT or DELIVERED before the network had every part of their alert,
///    and DELIVERED only once the network reported every part delivered;
/// 2. no part reaches a contact more than twice (one copy too many at most);
/// 3. after "I'm OK now", every contact who may have any part gets exactly one all-clear, and
///    the screen says "nobody had it" only when no part reached anyone.
enum PanicTruth {
    static let ok = PanicSettings.defaultOKMessage

    static func contacts(_ messages: [String]? = nil) throws -> [AlertSlot] {
        let m = messages ?? ["Please call me (A).", "Please call me (B).", "Please call me (C)."]
        return try m.enumerated().map { k, text in try AlertSlot(name: "C\(k + 1)", number: "+1555010000\(k + 1)", message: text) }
    }

    /// UCS-2 (the emoji) in two parts of at most 67 characters.
    static let twoParts = "Please call me \u{1F64F} PART-ONE " + String(repeating: "x", count: 50) + " TWO-TWO please."

    static func real(_ c: inout ModemConfiguration) {
        c.timeouts = ModemTimeouts()
        c.backoff = ModemBackoff()
    }

    /// What the rules found, one line each (empty: the device told the truth).
    final class Watch {
        let rig: PanicCoreRig
        let contacts: [AlertSlot]
        let maximumCopies: Int
        var broken: [String] = []

        init(_ rig: PanicCoreRig, _ contacts: [AlertSlot], maximumCopies: Int = 2) {
            self.rig = rig
            self.contacts = contacts
            self.maximumCopies = maximumCopies
        }

        /// The parts of the alert (not of an all-clear) the network took for `number`.
        func alertParts(_ number: String) -> [SimulatedPart] {
            rig.line.parts.filter { $0.submit.number == number && !$0.submit.text.contains(PanicTruth.ok) }
        }

        func everyPart(_ number: String) -> Bool {
            let parts = alertParts(number)
            guard let total = parts.first.map({ $0.submit.concatenation?.parts ?? 1 }) else { return false }
            return Set(parts.map { $0.submit.concatenation?.part ?? 1 }) == Set(1...total)
        }

        func check() {
            for p in rig.core.state.panic.progress {
                let n = contacts[p.slot].number.text
                let when = "at \(rig.time.instant), contact \(p.slot + 1)"
                if (p.delivery == .sent || p.delivery == .delivered) && !everyPart(n) {
                    note("\(when) shown \(p.delivery.word) with parts \(alertParts(n).map { $0.submit.concatenation?.part ?? 1 }) on the network")
                }
                if p.delivery == .delivered {
                    let total = alertParts(n).first?.submit.concatenation?.parts ?? 1
                    let reported = Set(rig.line.reportsSent.filter { $0.number == n && $0.status == 0 }.map(\.reference))
                    if reported.count < total { note("\(when) shown DELIVERED with \(reported.count) of \(total) parts reported delivered") }
                }
                var byPart: [Int: Int] = [:]
                for part in alertParts(n) { byPart[part.submit.concatenation?.part ?? 1, default: 0] += 1 }
                if let most = byPart.values.max(), most > maximumCopies { note("\(when): \(most) copies of one part on the network") }
            }
        }

        /// After "I'm OK now" and a settled network.
        func checkAllClear() {
            for (k, c) in contacts.enumerated() {
                let had = !alertParts(c.number.text).isEmpty
                let told = rig.copies(to: c.number.text, containing: PanicTruth.ok)
                if told != (had ? 1 : 0) { note("contact \(k + 1): alert parts on the network \(had), all-clears \(told)") }
            }
            let anyone = contacts.contains { !alertParts($0.number.text).isEmpty }
            if anyone && rig.core.state.panic.notice == .allClearNobody { note("\"nobody had the alert\" while someone may have it") }
        }

        func note(_ s: String) { if !broken.contains(s) { broken.append(s) } }

        /// Runs the device, checking after every pass.
        func run(for d: Duration) { rig.run(until: { check(); return false }, for: d) }
        func run(until done: () -> Bool, for d: Duration) -> Bool { rig.run(until: { check(); return done() }, for: d) }
    }

    /// The device restarted on the same outbox and network; the rules go on being checked.
    static func restart(_ w: Watch, settings: DeviceSettings = DeviceSettings()) throws -> Watch {
        let rig = try PanicCoreRig(restarting: w.rig, contacts: w.contacts, settings: settings, configure: real)
        let again = Watch(rig, w.contacts, maximumCopies: w.maximumCopies)
        again.broken = w.broken
        return again
    }

    static func start(_ script: ModemScript, _ contacts: [AlertSlot], settings: DeviceSettings = DeviceSettings(),
                      configure: (inout ModemConfiguration) -> Void = real, maximumCopies: Int = 2,
                      name: String = #function) throws -> Watch {
        let rig = try PanicCoreRig(script: script, contacts: contacts, settings: settings, configure: configure, name: name)
        rig.run(until: { rig.modem.status.link == .ready }, for: .seconds(30))
        let w = Watch(rig, contacts, maximumCopies: maximumCopies)
        rig.panic()
        return w
    }

    /// A status report as a network sends it in a +CDS (no SMSC, MR, RA, two stamps, ST).
    static func cds(reference: Int, to number: String, status: UInt8) -> [String] {
        let digits = number.filter(\.isNumber).compactMap { $0.wholeNumberValue.map(UInt8.init) }
        var b: [UInt8] = [0x00, 0x06, UInt8(reference & 0xFF), UInt8(digits.count), 0x91]
        for i in stride(from: 0, to: digits.count, by: 2) { b.append((i + 1 < digits.count ? digits[i + 1] : 0x0F) << 4 | digits[i]) }
        let stamp: [UInt8] = [0x62, 0x10, 0x10, 0x21, 0x43, 0x65, 0x00]
        b += stamp + stamp + [status]
        return ["+CDS: \(b.count - 1)", b.map { String(format: "%02X", $0) }.joined()]
    }
}

/// Faulty confirmations, reports at awkward times, kills, calls and "I'm OK now" at awkward
/// moments: each rule holds at every pass.
@Suite("Panic path: what the network took against what the device shows, under faults")
struct PanicTruthUnderFaultsTests {
    typealias R = PanicTruth

    /// +CMGS said twice, missing, 30 s and 70 s late, contradicted by an error, garbled, a modem
    /// that restarts instead of answering, and +CMS ERRORs — for contact 1's first submit.
    @Test(arguments: [
        ("repeated +CMGS", SubmitPlan(repeatResultAfter: .milliseconds(200))),
        ("no answer at all", SubmitPlan(result: .silence)),
        ("+CMGS 30 s late", SubmitPlan(resultDelay: .seconds(30))),
        ("+CMGS 70 s late", SubmitPlan(resultDelay: .seconds(70))),
        ("+CMGS then +CMS ERROR", SubmitPlan(corruptedResult: ["+CMGS: 5", "+CMS ERROR: 500"])),
        ("+CMGS garbled", SubmitPlan(corruptedResult: ["+CMG$: 7", "OK"])),
        ("+CMGS without OK", SubmitPlan(result: .acceptedWithoutOK)),
        ("modem restarts instead", SubmitPlan(result: .restart)),
        ("+CMS ERROR 38", SubmitPlan(result: .cmsError(38))),
        ("+CMS ERROR 500", SubmitPlan(result: .cmsError(500))),
        ("+CMS ERROR 512", SubmitPlan(result: .cmsError(512))),
        ("no prompt", SubmitPlan(prompt: .never)),
        ("prompt 25 s late", SubmitPlan(prompt: .after(.seconds(25)))),
    ] as [(String, SubmitPlan)])
    func aFaultyConfirmation(_ what: String, _ plan: SubmitPlan) throws {
        var script = ModemScript()
        script.submits[1] = plan
        let contacts = try R.contacts()
        let w = try R.start(script, contacts)
        w.run(for: .seconds(400))
        #expect(w.rig.core.state.panic.progress.allSatisfy { $0.delivery == .delivered }, "\(what): \(w.rig.core.state.panic.progress.map(\.delivery.word))")
        #expect(w.broken.isEmpty, "\(what): \(w.broken)")
    }

    /// The same faults on part 1 of a two-part alert.
    @Test(arguments: [
        ("repeated +CMGS", SubmitPlan(repeatResultAfter: .milliseconds(200))),
        ("no answer at all", SubmitPlan(result: .silence)),
        ("+CMGS 70 s late", SubmitPlan(resultDelay: .seconds(70))),
        ("+CMS ERROR 38", SubmitPlan(result: .cmsError(38))),
        ("modem restarts instead", SubmitPlan(result: .restart)),
    ] as [(String, SubmitPlan)])
    func aFaultyConfirmationOfAPart(_ what: String, _ plan: SubmitPlan) throws {
        var script = ModemScript()
        script.submits[2] = plan  // part 2 of contact 1
        let contacts = try R.contacts([R.twoParts, "Please call me (B).", "Please call me (C)."])
        let w = try R.start(script, contacts)
        w.run(for: .seconds(400))
        #expect(w.rig.core.state.panic.progress.allSatisfy { $0.delivery == .delivered }, "\(what): \(w.rig.core.state.panic.progress.map(\.delivery.word))")
        #expect(w.broken.isEmpty, "\(what): \(w.broken)")
    }

    /// Status reports early (at the +CMGS), late (ten minutes), twice, "still trying" then
    /// delivered, and for a long message's first part only.
    @Test(arguments: [
        ("at once", ReportPlan.delivered(after: .zero)),
        ("ten minutes late", ReportPlan.delivered(after: .seconds(600))),
        ("twice", ReportPlan([(.seconds(1), 0x00), (.seconds(2), 0x00)])),
        ("busy, then delivered", ReportPlan.temporaryThenDelivered(after: .seconds(1), then: .seconds(5))),
        ("never", ReportPlan.never),
    ] as [(String, ReportPlan)])
    func reportsAtAwkwardTimes(_ what: String, _ plan: ReportPlan) throws {
        var script = ModemScript()
        script.defaultReports = plan
        let contacts = try R.contacts([R.twoParts, "Please call me (B).", "Please call me (C)."])
        let w = try R.start(script, contacts)
        w.run(for: .seconds(700))
        let words = w.rig.core.state.panic.progress.map(\.delivery.word)
        #expect(words == Array(repeating: plan.reports.isEmpty ? "SENT" : "DELIVERED", count: 3), "\(what): \(words)")
        #expect(w.broken.isEmpty, "\(what): \(w.broken)")
    }

    /// Part 1 of contact 1's two-part alert reported delivered twice, part 2 never: SENT, never
    /// DELIVERED (two reports of one part are not two parts).
    @Test func aDuplicatedReportOfOnePartIsNotTheOtherPart() throws {
        var script = ModemScript()
        script.reports[1] = ReportPlan([(.seconds(1), 0x00), (.seconds(2), 0x00), (.seconds(3), 0x00)])
        script.reports[2] = .never
        let contacts = try R.contacts([R.twoParts, "Please call me (B)."])
        let w = try R.start(script, contacts)
        w.run(for: .seconds(120))
        #expect(w.rig.core.state.panic.progress.map(\.delivery.word) == ["SENT", "DELIVERED"])
        #expect(w.broken.isEmpty, "\(w.broken)")
    }

    /// Reports the device never asked about: an unknown reference, a known reference for
    /// another number, a known number with another reference — before and after the real ones.
    @Test func reportsForUnknownMessagesChangeNothing() throws {
        var script = ModemScript()
        script.defaultReports = .never
        let contacts = try R.contacts()
        let w = try R.start(script, contacts)
        #expect(w.run(until: { w.rig.core.state.panic.progress.allSatisfy { $0.delivery == .sent } }, for: .seconds(30)))
        w.rig.line.inject(R.cds(reference: 200, to: "+15550100999", status: 0))
        w.rig.line.inject(R.cds(reference: 1, to: "+15550100999", status: 0))
        w.rig.line.inject(R.cds(reference: 201, to: "+15550100001", status: 0))
        w.rig.line.inject(R.cds(reference: 202, to: "+15550100002", status: 0x41))
        w.run(for: .seconds(30))
        #expect(w.rig.core.state.panic.progress.map(\.delivery.word) == ["SENT", "SENT", "SENT"])
        #expect(w.broken.isEmpty, "\(w.broken)")
    }

    /// The device killed at every quarter second of the first five after PANIC (each submit's
    /// answer comes half a second after its PDU, so kills land before a PDU, with it on the
    /// wire, and between the network's acceptance and the device's hearing of it) and started
    /// again on the same outbox and `escalation.txt`; "I'm OK now" at once (the network now slow
    /// to prompt, so nothing is resent before the person confirms): everyone the network gave
    /// any part to is told exactly once. Copies counted on the network across the restart. A
    /// kill with a PDU on the wire is the hard case: the restarted device must know the attempt
    /// had begun (`Delivery.track`), or that contact is left untold.
    @Test(arguments: 0..<20)
    func killedAndRestartedWhileSending(_ quarter: Int) throws {
        var script = ModemScript()
        script.defaultSubmit = SubmitPlan(resultDelay: .milliseconds(500))
        let contacts = try R.contacts([R.twoParts, "Please call me (B).", "Please call me (C)."])
        let w = try R.start(script, contacts)
        w.run(for: .milliseconds(Int64(quarter) * 250))
        w.rig.line.withScriptedModem { $0.script.defaultSubmit = SubmitPlan(prompt: .after(.seconds(5)), resultDelay: .milliseconds(500)) }
        let after = try R.restart(w)
        after.run(for: .milliseconds(200))
        let resumed = !after.rig.core.state.panic.progress.isEmpty
        if resumed { after.rig.imOK() }
        after.run(for: .seconds(300))
        if resumed { after.checkAllClear() }
        for c in contacts { #expect(!after.alertParts(c.number.text).isEmpty || resumed, "killed at \(quarter * 250) ms: \(c.name) never got it") }
        #expect(after.broken.isEmpty, "killed at \(quarter * 250) ms: \(after.broken)")
    }

    /// Calls: picked up then hung up, never answered, busy at once, refused by the network —
    /// each call shown as the network saw it, nobody rung twice, nobody after the one who
    /// picked up.
    @Test(arguments: [
        ("answered, then hung up", DialPlan.answers(after: .seconds(4), hangsUpAfter: .seconds(20)), true),
        ("never answered", DialPlan.rings, false),
        ("busy", DialPlan.refused("BUSY"), false),
        ("no carrier", DialPlan.endsAfter(.seconds(3), "NO CARRIER"), false),
        ("error", DialPlan.refused("+CME ERROR: 30"), false),
    ] as [(String, DialPlan, Bool)])
    func theSecondContactsCall(_ what: String, _ plan: DialPlan, _ answers: Bool) throws {
        var script = ModemScript()
        script.dials["+15550100002"] = plan
        var settings = DeviceSettings()
        settings.panic.escalateAfter = .seconds(30)
        let contacts = try R.contacts()
        let w = try R.start(script, contacts, settings: settings)
        w.run(for: .seconds(200))
        let calls = w.rig.core.state.panic.aftercare.calls
        let dialled = w.rig.line.calls.filter { $0.hasPrefix("ATD") }
        #expect(dialled == (answers ? ["ATD+15550100001;", "ATD+15550100002;"] : contacts.map { "ATD\($0.number.text);" }), "\(what): \(dialled)")
        #expect(calls.map(\.outcome) == (answers ? [.unanswered, .answered] : [.unanswered, .unanswered, .unanswered]), "\(what): \(calls)")
        #expect(w.rig.line.answeredCalls == (answers ? ["+15550100002"] : []), "\(what)")
        #expect(w.rig.core.state.panic.progress.map(\.answeredCall) == [false, answers, false], "\(what)")
        #expect(w.broken.isEmpty, "\(what): \(w.broken)")
    }

    /// "I'm OK now" at awkward moments: while contact 1's submit waits for an answer that never
    /// comes, while part 2 of a two-part alert is refused, while everything is still queued
    /// behind a slow prompt, after every submit was refused, and after one alert failed for
    /// good on a report.
    @Test(arguments: [
        ("a submit in doubt", [1: SubmitPlan(result: .silence)], [String]?.none, 8.5),
        ("a part refused", [2: SubmitPlan(result: .cmsError(38))], [R.twoParts, "Please call me (B).", "Please call me (C)."], 3.0),
        ("a part in doubt", [2: SubmitPlan(result: .silence)], [R.twoParts, "Please call me (B).", "Please call me (C)."], 8.5),
        ("all on the wire", [1: SubmitPlan(prompt: .after(.seconds(15)))], nil, 1.0),
        ("right at PANIC", [:], nil, 0.0),
        ("everything refused", [1: SubmitPlan(result: .cmsError(21)), 2: SubmitPlan(result: .cmsError(21)), 3: SubmitPlan(result: .cmsError(21))], nil, 2.0),
    ] as [(String, [Int: SubmitPlan], [String]?, Double)])
    func imOKNowAtAnAwkwardMoment(_ what: String, _ submits: [Int: SubmitPlan], _ messages: [String]?, _ after: Double) throws {
        var script = ModemScript()
        script.submits = submits
        let contacts = try R.contacts(messages)
        let w = try R.start(script, contacts)
        w.run(for: .milliseconds(Int64(after * 1000)))
        w.rig.imOK()
        w.run(for: .seconds(400))
        w.checkAllClear()
        #expect(w.broken.isEmpty, "\(what): \(w.broken); progress \(w.rig.core.state.panic.progress.map(\.delivery.word)), notice \(String(describing: w.rig.core.state.panic.notice))")
    }
}
