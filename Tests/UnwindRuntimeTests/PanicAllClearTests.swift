import Foundation
import Testing
@testable import UnwindCore
@testable import UnwindRuntime
import UnwindMaintenance
import UnwindModem
import UnwindSimulatedHardware

/// "I'm OK now" while alerts are in doubt: every contact who may have any part of
/// the alert gets exactly one all-clear — counted as the simulated network saw them — and nobody
/// else; "nobody had it" only when no part of any alert can have reached anyone.
@Suite("Panic path: \"I'm OK now\" while alerts are in doubt")
struct PanicAllClearTests {
    static let ok = PanicSettings.defaultOKMessage

    /// Five contacts, one of each: sent; a two-part alert whose part 1 was accepted and part 2 is
    /// refused; a submit that got no answer (in doubt, retrying); a submit whose answer has not
    /// come when the person confirms (it ends in doubt afterwards); one never tried yet.
    @Test func everyContactWhoMayHaveAnyPartGetsExactlyOneAllClear() throws {
        var script = ModemScript()
        script.resultsByText = ["TWO-TWO": .cmsError(38), "SILENT": .silence]
        // UCS-2 (the emoji): two parts of at most 67 characters, "TWO-TWO" in the second.
        let long = "Please call me \u{1F64F} PART-ONE " + String(repeating: "x", count: 50) + " TWO-TWO please."
        let contacts = [
            try AlertSlot(name: "Sent", number: "+15550100001", message: "Please call me (A)."),
            try AlertSlot(name: "Partly", number: "+15550100002", message: long),
            try AlertSlot(name: "Doubt", number: "+15550100003", message: "Please call me SILENT (C)."),
            try AlertSlot(name: "Flight", number: "+15550100004", message: "Please call me SILENT (D)."),
            try AlertSlot(name: "Pending", number: "+15550100005", message: "Please call me (E)."),
        ]
        let rig = try PanicCoreRig(script: script, contacts: contacts)
        rig.run(until: { rig.modem.status.link == .ready }, for: .seconds(10))
        rig.panic()
        // Contact 3's first submit times out (its wait is cut to let the others' first attempts
        // out within 10 s) and is in doubt; contact 4's is on the wire; contact 5 waits.
        rig.run(for: .milliseconds(8500))
        let before = rig.core.state.panic.progress
        #expect(before.map(\.delivery.word) == ["DELIVERED", "retrying", "retrying", "sending", "queued"], "\(before)")
        #expect(before.map(\.canHaveIt) == [true, true, true, false, false], "\(before)")
        #expect(rig.anyPart(to: "+15550100004", containing: "(D)"), "contact 4's PDU is not on the wire yet")
        #expect(!rig.anyPart(to: "+15550100005", containing: "(E)"))
        rig.imOK()
        #expect(rig.core.state.panic.notice == .allClearSending, "\(String(describing: rig.core.state.panic.notice))")
        #expect(rig.core.state.panic.aftercare.allClear.map(\.slot) == [0, 1, 2], "who was told, on screen")
        rig.run(for: .seconds(120))
        // What the network saw: the alert, then one "I'm OK now", to each who may have any of it.
        let markers = ["(A)", "PART-ONE", "(C)", "(D)", "(E)"]
        for (k, c) in contacts.enumerated() {
            let hadAlert = rig.anyPart(to: c.number.text, containing: markers[k])
            let told = rig.copies(to: c.number.text, containing: Self.ok)
            #expect(told == (hadAlert ? 1 : 0), "contact \(k + 1): alert \(hadAlert), \(told) all-clear(s)")
        }
        #expect(!rig.anyPart(to: "+15550100005", containing: "(E)"), "a pending alert went after all")
        #expect(rig.core.state.panic.aftercare.allClear.map(\.slot) == [0, 1, 2, 3], "the one on the wire was told too")
        #expect(rig.requested.filter { $0.purpose == .allClear }.count == 4)
    }

    /// A modem that answers other commands while a submit waits, no status reports, and one
    /// contact's alert in doubt (its `+CMGS` never comes): an all-clear written while that
    /// answer may still come could not be told from it, and one not credited would go again.
    /// Each contact who may have the alert gets "I'm OK now" exactly once, and meanwhile the
    /// screen never says an all-clear is retrying or failed.
    @Test func anAlertInDoubtNeverMakesAnAllClearGoTwice() throws {
        var script = ModemScript()
        script.answersWhileSubmitPending = true
        script.defaultReports = ReportPlan([])
        script.resultsByText = ["SILENT": .silence]
        let contacts = [
            try AlertSlot(name: "Doubt", number: "+15550100001", message: "Please call me SILENT (A)."),
        ] + (2...5).map { k in try! AlertSlot(name: "C\(k)", number: "+1555010000\(k)", message: "Please call me (\(k)).") }
        let rig = try PanicCoreRig(script: script, contacts: contacts, configure: PanicTruth.real)
        rig.run(until: { rig.modem.status.link == .ready }, for: .seconds(10))
        rig.panic()
        rig.run(for: .seconds(10))
        #expect(rig.core.state.panic.progress.map(\.canHaveIt) == [true, true, true, true, true], "\(rig.core.state.panic.progress)")
        rig.imOK()
        var words: Set<String> = []
        rig.run(until: {
            for p in rig.core.state.panic.aftercare.allClear { words.insert(p.delivery.word) }
            return false
        }, for: .seconds(180))
        for c in contacts {
            #expect(rig.copies(to: c.number.text, containing: Self.ok) == 1, "\(c.name): \(rig.copies(to: c.number.text, containing: Self.ok)) all-clears")
        }
        #expect(!words.contains("retrying") && !words.contains("FAILED"), "the screen said \(words.sorted())")
        #expect(rig.core.state.panic.aftercare.allClear.allSatisfy { $0.delivery.word == "SENT" || $0.delivery.word == "DELIVERED" },
                "\(rig.core.state.panic.aftercare.allClear)")
    }

    /// Every mix of the four kinds the core can be told of: the all-clear goes exactly to the
    /// contacts who may have any part (now, or when news says so later), never twice, and the
    /// screen says "nobody had it" only when none can.
    @Test(arguments: 0..<256)
    func everyMixOfSentPartlyInDoubtAndPending(_ mix: Int) throws {
        // Four contacts, each one of: 0 sent, 1 partly sent, 2 in doubt, 3 pending.
        let kinds = (0..<4).map { (mix >> (2 * $0)) & 3 }
        var core = DeviceCore()
        core.alertSlotsChanged((0..<4).map { k in .ready(try! AlertSlot(name: "C\(k)", number: "+1555010000\(k)", message: "Help")) })
        var effects: [Effect] = []
        var t = 0.0
        func at(_ s: Double) -> Moment { Moment(.seconds(1000 + s), wall: WallTime(secondsSinceEpoch: 1_767_225_600 + Int64(s))) }
        func apply(_ e: DeviceEvent) { t += 0.1; core.apply(e, at: at(t), effects: &effects) }
        apply(.button(.down(.panic))); t += 1.5; apply(.tick)
        for (slot, kind) in kinds.enumerated() {
            switch kind {
            case 0: apply(.alertDelivery(slot: slot, .sending)); apply(.alertDelivery(slot: slot, .sent))
            case 1: apply(.alertDelivery(slot: slot, .sending)); apply(.alertMayHaveReached(slot: slot))
                    apply(.alertDelivery(slot: slot, .retrying("refused")))
            case 2: apply(.alertDelivery(slot: slot, .sending)); apply(.alertMayHaveReached(slot: slot))
                    apply(.alertDelivery(slot: slot, .retrying("no confirmation")))
            default: break
            }
        }
        let canHave = kinds.enumerated().filter { $0.element != 3 }.map(\.offset)
        apply(.button(.down(.select))); t += 0.8; apply(.button(.long(.select)))
        apply(.button(.up(.select, heldFor: .milliseconds(900))))
        effects = []
        apply(.button(.down(.select)))
        let told = { effects.flatMap { e -> [Int] in if case .sendAlerts(let r) = e { r.filter { $0.purpose == .allClear }.map(\.slot) } else { [] } } }
        let cancelled = effects.flatMap { e -> [Int] in if case .cancelAlerts(let s) = e { s } else { [] } }
        #expect(told() == canHave, "kinds \(kinds)")
        #expect(core.state.panic.notice == (canHave.isEmpty ? .allClearNobody : .allClearSending), "kinds \(kinds)")
        #expect(Set(cancelled) == Set(kinds.enumerated().filter { $0.element != 0 }.map(\.offset)), "kinds \(kinds)")
        // Late news of the same contacts (the cancelled message reports its doubt, a late
        // confirmation) sends nothing twice.
        for slot in canHave {
            apply(.alertMayHaveReached(slot: slot))
            apply(.alertDelivery(slot: slot, .sent))
        }
        #expect(told().sorted() == canHave, "kinds \(kinds): sent twice")
        // A pending alert that turns out to have gone anyway (it was on the wire) is told once.
        if let pending = kinds.firstIndex(of: 3) {
            apply(.alertMayHaveReached(slot: pending))
            apply(.alertDelivery(slot: pending, .cancelled))
            #expect(told().filter { $0 == pending }.count == 1, "kinds \(kinds)")
        }
    }
}

/// `unwind status` says who replied, what and when, in text and `--json`, with
/// the reply's text made safe for a terminal.
@Suite("Status: what contacts replied")
struct StatusRepliesTests {
    @Test func whoRepliedWhatAndWhen() throws {
        var core = DeviceCore()
        core.alertSlotsChanged([.ready(try AlertSlot(name: "Mum", number: "+15550100001", message: "Help"))])
        var effects: [Effect] = []
        func at(_ s: Int64) -> Moment { Moment(.seconds(Double(1000 + s)), wall: WallTime(secondsSinceEpoch: 1_767_225_600 + s)) }
        core.apply(.button(.down(.panic)), at: at(0), effects: &effects)
        core.apply(.tick, at: Moment(.seconds(1001.6), wall: WallTime(secondsSinceEpoch: 1_767_225_601)), effects: &effects)
        core.apply(.replyReceived(IncomingReply(id: "r1", from: "+15550100001", text: "On my way\u{1B}[2J\nsee you")), at: at(30), effects: &effects)
        // Dismissed on the screen: status still says it.
        core.apply(.button(.down(.left)), at: at(40), effects: &effects)
        #expect(core.state.panic.aftercare.replies.isEmpty)
        let help = DeviceStatus.help(core.state, settings: DeviceSettings(), now: at(90))
        let r = try #require(help.replies?.first)
        #expect(r.slot == 1 && r.name == "Mum" && r.at == 1_767_225_630 && r.secondsAgo == 60)
        #expect(r.text == "On my way [2J see you", "\(r.text)")
        #expect(r.line == "Mum (slot 1) replied 60 s ago: \"On my way [2J see you\"")
        let json = String(decoding: try JSONEncoder().encode(help), as: UTF8.self)
        #expect(json.contains("\"text\":\"On my way [2J see you\""), "\(json)")
        #expect(!json.unicodeScalars.contains { TextSafety.isTerminalControl($0) })
    }
}
