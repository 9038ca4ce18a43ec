import Foundation
import Testing
import UnwindSimulatedHardware
import UnwindCore
import UnwindRuntime
import UnwindSimulator

/// The headless simulator's scripted modem link and the script lines that drive it, so
/// end-to-end headless runs can play delivery reports, replies, readiness and calls.
@Suite struct ScriptedLinkTests {
    static let script = """
        0     reports after 4
        0     calls end-after 25
        0     fail 3
        1     PANIC hold 1.7
        40    reply 1   On my way, 10 min   # the comment is not part of it
        41    reply +15550100009 Who is this?
        60    readiness not-registered weak-signal 3
        61    readiness sim PIN required by the card
        70    readiness ready
        80    reports never
        90    calls ring
        100   end
        """

    @Test func theLinkLinesParse() throws {
        let s = try ButtonScript.parse(Self.script)
        #expect(s.presses.count == 1)
        #expect(s.link == [
            LinkEvent(at: .zero, .reports(after: .seconds(4))),
            LinkEvent(at: .zero, .calls(endAfter: .seconds(25))),
            LinkEvent(at: .zero, .fail(slot: 2)),
            LinkEvent(at: .seconds(40), .reply(from: .slot(0), text: "On my way, 10 min")),
            LinkEvent(at: .seconds(41), .reply(from: .number("+15550100009"), text: "Who is this?")),
            LinkEvent(at: .seconds(60), .readiness(AlertReadiness(problems: [.notRegistered, .weakSignal(3)]))),
            LinkEvent(at: .seconds(61), .readiness(AlertReadiness(problems: [.sim("PIN required by the card")]))),
            LinkEvent(at: .seconds(70), .readiness(.ready)),
            LinkEvent(at: .seconds(80), .reports(after: nil)),
            LinkEvent(at: .seconds(90), .calls(endAfter: nil)),
        ])
    }

    @Test(arguments: ["1 reply 9 hello\n2 end", "1 reply 1\n2 end", "1 readiness bogus\n2 end", "1 readiness weak-signal\n2 end",
                      "1 reports after\n2 end", "1 reports soon 3\n2 end", "1 fail 0\n2 end", "1 calls end-after -1\n2 end",
                      "1 readiness\n2 end"])
    func badLinkLinesSayWhy(_ text: String) {
        #expect(throws: ButtonScript.ParseError.self) { try ButtonScript.parse(text) }
    }

    /// Stepped by hand: the news in order, on the script's time line.
    @Test func theLinkPlaysTheScript() throws {
        let link = ScriptedAlertLink()
        let start = Instant(nanoseconds: 1_000_000_000)
        link.schedule(try ButtonScript.parse(Self.script).link, origin: start)
        let mum = try AlertSlot(name: "Mum", number: "+15550100001", message: "Help")
        var updates: [AlertLinkUpdate] = []
        func step(_ s: Double) { link.step(at: Moment(start + .milliseconds(Int64(s * 1000))), into: &updates) }
        step(0)
        #expect(updates == [.readiness(.ready)])
        link.send([AlertRequest(slot: 0, alert: mum), AlertRequest(slot: 2, alert: mum),
                   AlertRequest(slot: 0, alert: mum, purpose: .allClear)], at: Moment(start + .seconds(1)))
        for t in stride(from: 1.0, through: 100, by: 0.5) { step(t) }
        #expect(updates.contains(.delivery(slot: 0, .delivered)))
        #expect(updates.contains(.delivery(slot: 2, .failed("not in service"))))
        #expect(updates.contains(.followUp(slot: 0, purpose: .allClear, .delivered)))
        let replies = updates.compactMap { if case .reply(let r) = $0 { r } else { nil } }
        #expect(replies.map(\.from) == ["+15550100001", "+15550100009"])
        #expect(replies.map(\.text) == ["On my way, 10 min", "Who is this?"])
        let readiness = updates.compactMap { if case .readiness(let r) = $0 { r } else { nil } }
        #expect(readiness.map(\.isReady) == [true, false, false, true])
        link.markRepliesSeen([replies[0].id])
        #expect(link.seenReplies == [replies[0].id])
    }

    @Test func callsEndByThemselvesWhenScripted() {
        let link = ScriptedAlertLink()
        link.callsEndAfter = .seconds(25)
        var updates: [AlertLinkUpdate] = []
        link.step(at: Moment(.zero), into: &updates)
        link.dial(try! PhoneNumber("+15550100001"), at: Moment(.seconds(1)))
        link.step(at: Moment(.seconds(1)), into: &updates)
        link.step(at: Moment(.seconds(26)), into: &updates)
        #expect(updates.filter { if case .call = $0 { true } else { false } } == [.call(active: true), .call(active: false)])
        #expect(link.nextDeadline == nil)
        link.runSelfTest(at: Moment(.seconds(30)))
        link.step(at: Moment(.seconds(30)), into: &updates)
        #expect(updates.last == .readiness(.ready) && link.selfTests == 1)
    }

    /// A whole headless run with link lines: the device takes every kind of news without trouble.
    @Test func aHeadlessRunWithLinkLines() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try FileManager.default.createDirectory(atPath: dir + "/state", withIntermediateDirectories: true)
        try Data("Mum\n+15550100001\nPlease call me.\n".utf8).write(to: URL(fileURLWithPath: dir + "/state/alert01.txt"))
        let sim = HeadlessSimulation(script: try ButtonScript.parse(Self.script), stateDirectory: dir + "/state", recordFrames: false)
        let r = try sim.run()
        #expect(r.alertRequests.map(\.number) == ["+15550100001"])
        #expect(sim.alerts.slotNumbers[0] == "+15550100001")
    }
}
