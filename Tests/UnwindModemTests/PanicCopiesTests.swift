import Foundation
import Testing
import UnwindSimulatedHardware
import UnwindCore
import UnwindLinuxHardware
import UnwindModem

/// How many copies each contact gets, counted as the simulated network saw them (every part it
/// took, answered or not), and how soon each contact's first attempt goes out.
/// The device's real timeouts: 20 s for a first attempt's confirmation, the modem's 60 s after.
@Suite("Panic path: copies per contact, first attempts")
struct PanicCopiesTests {
    static func real(_ c: inout ModemConfiguration) {
        c.timeouts = ModemTimeouts()
        c.backoff = ModemBackoff()
    }

    static func wentOut(_ s: MessageState?) -> Bool {
        switch s {
        case .sent?, .delivered?: true
        default: false
        }
    }

    static let numbers = (1...5).map { "+1555010000\($0)" }

    /// The most copies of any one part of the messages to `number` the network took.
    static func copies(_ sim: any SimulatedModem, to number: String) -> Int {
        var byPart: [Int: Int] = [:]
        for p in sim.parts where p.submit.number == number { byPart[p.submit.concatenation?.part ?? 1, default: 0] += 1 }
        return byPart.values.max() ?? 0
    }

    /// Runs until every number has had a part on the wire; returns when each first did.
    static func firstAttempts(_ rig: ModemRig, _ numbers: [String], within limit: Duration) -> [String: Duration] {
        let start = rig.now.instant
        var first: [String: Duration] = [:]
        _ = rig.run(until: {
            for n in numbers where first[n] == nil && rig.sim.parts.contains(where: { $0.submit.number == n }) {
                first[n] = rig.now.instant - start
            }
            return first.count == numbers.count
        }, within: limit)
        return first
    }

    /// Contact 1's confirmation comes `late` seconds after its PDU (the network took it at once);
    /// contacts 2–5 wait for the line and are answered at once. Every contact ends SENT, with at
    /// most one copy too many of each part — whether the modem answers in order (nothing until
    /// that result) or goes on answering other commands meanwhile.
    @Test(arguments: [10, 30, 70, 120], [false, true])
    func aLateConfirmationCostsAtMostOneCopy(_ late: Int, answersMeanwhile: Bool) throws {
        var script = ModemScript()
        script.answersWhileSubmitPending = answersMeanwhile
        script.submits[1] = SubmitPlan(resultDelay: .seconds(Int64(late)))
        let rig = try ModemRig(script: script, configure: Self.real)
        #expect(rig.ready(within: .seconds(30)))
        let ids = rig.modem.sendAll((1...5).map { (slot: $0, alert: alert("C\($0)", Self.numbers[$0 - 1], "Please call me, \($0).")) }, at: rig.now)
        let first = Self.firstAttempts(rig, Self.numbers, within: .seconds(200))
        // Every first attempt within 10 s of the alerts — once the modem answers at all (one that
        // answers nothing until contact 1's result can be written to only then).
        let modemSilentFor: Duration = answersMeanwhile ? .zero : .seconds(Int64(late))
        for n in Self.numbers {
            #expect((first[n] ?? .seconds(999)) <= max(.seconds(10), modemSilentFor + .seconds(5)),
                    "\(n): first attempt after \(String(describing: first[n])) (late \(late) s)")
        }
        #expect(rig.settle(within: .seconds(600)))
        rig.run(for: .seconds(200))
        let copies = Self.numbers.map { Self.copies(rig.sim, to: $0) }
        for (k, n) in copies.enumerated() { #expect((1...2).contains(n), "contact \(k + 1) got \(n) copies (late \(late) s)") }
        for id in ids { #expect(Self.wentOut(rig.modem.message(id)?.state), "\(id): \(String(describing: rig.modem.message(id)))") }
        expectClean(rig.sim)
    }

    /// The same with a two-part message to contact 1 whose first part's confirmation is late:
    /// parts count too.
    @Test(arguments: [10, 30, 70, 120], [false, true])
    func aLateConfirmationOfAPartCostsAtMostOneCopyOfIt(_ late: Int, answersMeanwhile: Bool) throws {
        var script = ModemScript()
        script.answersWhileSubmitPending = answersMeanwhile
        script.submits[1] = SubmitPlan(resultDelay: .seconds(Int64(late)))
        let rig = try ModemRig(script: script, configure: Self.real)
        #expect(rig.ready(within: .seconds(30)))
        let long = alert("C1", Self.numbers[0], "Please call me now \u{1F64F} I need help, I am at home and I cannot breathe well. Come if you can.")
        var alerts = [(slot: 1, alert: long)]
        alerts += (2...5).map { (slot: $0, alert: alert("C\($0)", Self.numbers[$0 - 1], "Please call me, \($0).")) }
        let ids = rig.modem.sendAll(alerts, at: rig.now)
        #expect(rig.settle(within: .seconds(600)))
        rig.run(for: .seconds(200))
        let copies = Self.numbers.map { Self.copies(rig.sim, to: $0) }
        for (k, n) in copies.enumerated() { #expect((1...2).contains(n), "contact \(k + 1) got \(n) copies of a part (late \(late) s)") }
        #expect(rig.sim.delivered.contains(SimulatedSMS(number: Self.numbers[0], text: long.message, parts: 2)))
        for id in ids { #expect(Self.wentOut(rig.modem.message(id)?.state), "\(id): \(String(describing: rig.modem.message(id)))") }
        expectClean(rig.sim)
    }
}

/// A prompt and results with line noise glued in front: found, the alert goes once,
/// and every contact's first attempt is out within 10 s of the alerts being asked for.
@Suite("Panic path: line noise in front of the prompt and the results")
struct PanicNoiseTests {
    @Test(arguments: [[0xFF, 0xFE], [0x00, 0xF0, 0x13]] as [[UInt8]])
    func noiseInFrontOfThePromptAndTheResultCodes(_ noise: [UInt8]) throws {
        var script = ModemScript()
        script.submits[1] = SubmitPlan(noise: noise)
        script.submits[3] = SubmitPlan(noise: [0x80] + noise)
        let rig = try ModemRig(script: script, configure: PanicCopiesTests.real)
        #expect(rig.ready(within: .seconds(30)))
        let numbers = PanicCopiesTests.numbers
        let ids = rig.modem.sendAll((1...5).map { (slot: $0, alert: alert("C\($0)", numbers[$0 - 1], "Please call me, \($0).")) }, at: rig.now)
        let first = PanicCopiesTests.firstAttempts(rig, numbers, within: .seconds(60))
        for n in numbers { #expect((first[n] ?? .seconds(999)) <= .seconds(10), "\(n): first attempt after \(String(describing: first[n]))") }
        #expect(rig.settle(within: .seconds(300)))
        for n in numbers { #expect(PanicCopiesTests.copies(rig.sim, to: n) == 1, "\(n)") }
        for id in ids { #expect(PanicCopiesTests.wentOut(rig.modem.message(id)?.state), "\(id): \(String(describing: rig.modem.message(id)))") }
        expectClean(rig.sim)
    }
}
