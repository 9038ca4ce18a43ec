import Foundation
import Testing
@testable import UnwindCore
import UnwindRuntime
import UnwindLinuxHardware
import UnwindModem
@testable import UnwindSimulatedHardware

/// STATUS by SMS through the real panic link and the scripted modem, on simulated time (issue
/// 28): the request read from the SIM, decided by the core, answered by the modem — after every
/// alert, never before one — and the odd encodings a phone may use.
@Suite struct StatusBySMSLinkTests {
    static let mum = "+15550100001", dad = "+15550100002", sam = "+15550100003"
    static let contacts = [(mum, "Mum"), (dad, "Dad"), (sam, "Sam")]

    static func rig(name: String = #function) throws -> PanicCoreRig {
        let slots = try contacts.map { try AlertSlot(name: $0.1, number: $0.0, message: "Panic attack. Please call me.") }
        let rig = try PanicCoreRig(script: ModemScript(), contacts: slots, inbox: true, name: name)
        rig.apply(.wallClockSynchronised(true))
        #expect(rig.run(until: { rig.core.state.panic.readiness.current?.isReady == true }, for: .seconds(30)))
        return rig
    }

    /// What the network took for `number` that is a STATUS answer.
    static func answers(_ rig: PanicCoreRig, to number: String) -> [String] {
        rig.line.delivered.filter { $0.number == number && $0.text.contains("PANIC would") }.map(\.text)
    }

    @Test func aContactAsksAndIsAnswered() throws {
        let rig = try Self.rig()
        rig.line.receiveSMS(from: Self.mum, text: "Status")
        #expect(rig.run(until: { !Self.answers(rig, to: Self.mum).isEmpty }, for: .seconds(30)))
        #expect(Self.answers(rig, to: Self.mum) == ["Unwind: a PANIC would go out now. Signal: \(StatusAnswer.signalWords(rig.modem.status.signal?.rssi)). No test yet."])
        #expect(rig.core.state.panic.aftercare.replies.isEmpty, "the person sees nothing")
        #expect(rig.run(until: { rig.line.store.isEmpty }, for: .seconds(10)), "the request left the SIM")
        // Only the contact who asked got anything.
        #expect(rig.line.delivered.map(\.number) == [Self.mum])
    }

    /// A STATUS written in UCS-2 (a phone that sends every text so) is the same word.
    @Test func aRequestInUCS2() throws {
        let rig = try Self.rig()
        rig.line.receivePDU(DeliverEncoder.pdu(DeliverEncoder.address(Self.dad), dcs: 0x08,
                                               stamp: DeliverEncoder.timestamp(1_767_225_600), udh: nil, ucs2: Array("STATUS".utf16)))
        #expect(rig.run(until: { !Self.answers(rig, to: Self.dad).isEmpty }, for: .seconds(30)))
    }

    /// STATUS split in two parts ("STA" + "TUS", a concatenated SMS): joined, then answered. A
    /// request whose second part never comes is "STA…": an ordinary reply, never answered.
    @Test func aRequestInTwoParts() throws {
        let rig = try Self.rig()
        func part(_ text: String, _ k: Int, of n: Int, reference: Int, from: String) -> [UInt8] {
            DeliverEncoder.pdu(DeliverEncoder.address(from), dcs: 0x00, stamp: DeliverEncoder.timestamp(1_767_225_600),
                               udh: DeliverEncoder.concatenation(reference, k, n, false), septets: GSM7.septets(of: text)!)
        }
        rig.line.receivePDU(part("TUS", 2, of: 2, reference: 9, from: Self.sam))
        rig.line.receivePDU(part("STA", 1, of: 2, reference: 9, from: Self.sam))
        #expect(rig.run(until: { !Self.answers(rig, to: Self.sam).isEmpty }, for: .seconds(30)))
        rig.line.receivePDU(part("STA", 1, of: 2, reference: 10, from: Self.dad))
        rig.run(for: .seconds(180))
        #expect(Self.answers(rig, to: Self.dad).isEmpty)
        #expect(rig.core.state.panic.aftercare.replies.map(\.text) == ["STA…"])
    }

    /// A stranger's STATUS — a forged-looking alphanumeric sender too — is kept and never answered.
    @Test func aStrangerGetsNothing() throws {
        let rig = try Self.rig()
        rig.line.receiveSMS(from: "+15550100009", text: "STATUS")
        rig.line.receiveSMS(from: "Mum", text: "STATUS")
        #expect(rig.run(until: { rig.core.state.statusTexts.requestCount == 2 }, for: .seconds(30)))
        rig.run(for: .seconds(30))
        #expect(rig.line.parts.isEmpty, "nothing sent to anyone")
        #expect(rig.core.state.statusTexts.requests.map(\.outcome) == [.notAContact, .notAContact])
    }

    /// PANIC in the middle of a flood of 1,000 STATUS texts in a minute (from a contact and
    /// strangers): every alert goes out as fast as with no flood, the one answer only after
    /// them, and no more than one.
    @Test func aPanicDuringAFloodGoesOutAsFastAsWithout() throws {
        func panicToAllSent(flood: Bool, name: String) throws -> (Duration, PanicCoreRig, Int) {
            let rig = try Self.rig(name: name)
            if flood {
                for k in 0..<500 {
                    rig.line.receiveSMS(from: k % 2 == 0 ? Self.mum : "+1555010\(1000 + k)", text: "STATUS")
                    rig.run(for: .milliseconds(60))
                }
            }
            rig.press(.down(.panic))
            let start = rig.time.instant, partsBefore = rig.line.parts.count
            #expect(rig.run(until: { rig.core.state.panic.progress.count == 3 && rig.core.state.panic.progress.allSatisfy { $0.delivery == .sent || $0.delivery == .delivered } },
                            for: .seconds(60)))
            let took = rig.time.instant - start
            if flood {
                for k in 500..<1000 {
                    rig.line.receiveSMS(from: k % 2 == 0 ? Self.mum : "+1555010\(1000 + k)", text: "STATUS")
                    rig.run(for: .milliseconds(60))
                }
                rig.run(for: .seconds(30))
            }
            return (took, rig, partsBefore)
        }
        let (quiet, _, _) = try panicToAllSent(flood: false, name: "quiet")
        let (busy, rig, partsBefore) = try panicToAllSent(flood: true, name: "flooded")
        #expect(busy <= quiet + .milliseconds(100), "PANIC to the last alert accepted: \(busy) in the flood, \(quiet) without")
        let toMum = rig.line.parts.filter { $0.submit.number == Self.mum }.map(\.submit.text)
        #expect(toMum.filter { $0.contains("PANIC would") }.count == 1, "one answer in ten minutes")
        #expect(rig.line.parts[partsBefore...].prefix(3).allSatisfy { $0.submit.text.hasPrefix("Panic attack") },
                "after PANIC, the alerts first")
        #expect(rig.line.parts.allSatisfy { [Self.mum, Self.dad, Self.sam].contains($0.submit.number) }, "no stranger got anything")
    }

    /// An answer asked for while a PANIC batch is pending waits behind it.
    @Test func anAnswerWaitsForThePanicBatch() throws {
        var script = ModemScript()
        // The first two submits are refused: the batch stays pending, retried with backoff.
        script.submits[1] = SubmitPlan(result: .cmsError(38))
        script.submits[2] = SubmitPlan(result: .cmsError(38))
        let slots = try Self.contacts.map { try AlertSlot(name: $0.1, number: $0.0, message: "Panic attack. Please call me.") }
        let rig = try PanicCoreRig(script: script, contacts: slots, inbox: true)
        #expect(rig.run(until: { rig.core.state.panic.readiness.current?.isReady == true }, for: .seconds(30)))
        rig.press(.down(.panic))
        rig.run(for: .milliseconds(1600))
        rig.line.receiveSMS(from: Self.dad, text: "STATUS")
        #expect(rig.run(until: { !Self.answers(rig, to: Self.dad).isEmpty }, for: .seconds(120)))
        let order = rig.line.parts.map(\.submit.text)
        let answer = try #require(order.firstIndex { $0.contains("PANIC would") })
        #expect(try #require(order.lastIndex { $0.hasPrefix("Panic attack") }) < answer, "every alert before the answer")
        #expect(rig.core.state.panic.progress.allSatisfy { $0.delivery == .sent || $0.delivery == .delivered })
    }
}
