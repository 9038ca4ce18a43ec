#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization
import Testing
import UnwindTestSupport
import UnwindMaintenance
import UnwindSimulatedHardware
import UnwindCore
@testable import UnwindRuntime
import UnwindSimulator

/// The control socket against a hostile local user: each attack run for a few seconds against
/// the real loop on the real clock (MaintenanceRig) over connections made here with socket(2) and connect(2). Each attack must leave the loop drawing its
/// frames, this process's memory (the loop, the rig and the attacker all live in it) within
/// `memoryBound` of where it was, and a maintainer's `unwind status` working meanwhile.
@Suite("Hostile control-socket clients", .serialized) struct HostileSocketTests {
    /// The device's deadlines, shortened so that each acts within a test of a few seconds.
    static let deadlines = ControlServer.Deadlines(wholeRequest: .milliseconds(1500), answerProgress: .milliseconds(1500),
                                                   idle: .seconds(2))
    static let memoryBound = 64 << 20

    /// A client that sends requests and never reads the answers.
    @Test func aClientThatNeverReadsItsAnswers() throws {
        let rig = try MaintenanceRig(controlDeadlines: Self.deadlines)
        let path = try #require(rig.host.server?.path)
        let watch = try AttackWatch(rig)
        let attacker = try RawConnection(path)
        let burst = Array(repeatElement(try ControlEnvelope(.status).encodedLine(), count: 256).joined())
        let sent = Tally(), closedAfter = Tally(), pushed = Tally()
        // Until the device closes it; stopped at 4 MB, by when the device has shown it takes
        // whatever is sent.
        let attack = Background(for: .seconds(10)) { end in
            let start = ContinuousClock.now
            while ContinuousClock.now < end && sent.total < 4 << 20 {
                guard let n = attacker.offer(burst) else {
                    closedAfter.add(Int((ContinuousClock.now - start).nanoseconds / 1_000_000))
                    break
                }
                sent.add(n)
                if n == 0 { pushed.add(1); usleep(2000) }  // the attacker's own pace: retry a full socket
            }
        }
        // In the thick of it: the socket is full and the attacker keeps offering.
        _ = waitUntil(.seconds(10)) { pushed.total > 0 || closedAfter.total > 0 || sent.total >= 4 << 20 }
        let during = rig.unwind(["status"])
        attack.join()
        let cost = try watch.finish()
        // Not read while its answers piled up: its own socket buffer made it wait…
        let pushedBack = sent.total < 4 << 20
        #expect(pushedBack, "the attacker got \(sent.total) bytes into the socket")
        // …until its answers had filled that buffer and not moved for the deadline.
        let closed = closedAfter.total > 0
        #expect(closed, "the device never closed the connection")
        record("requests whose answers are never read", cost, during, pushedBack && closed,
               "\(sent.total / 1024) KB sent before the socket pushed back, closed after \(Double(closedAfter.total) / 1000) s")
    }

    /// A request the device answers later (the modem's), with bytes streamed behind it, and a
    /// newline right after it (the old size check only looked for a request without one).
    @Test func bytesStreamedBehindARequestBeingAnswered() throws {
        let rig = try MaintenanceRig(controlDeadlines: Self.deadlines)
        let path = try #require(rig.host.server?.path)
        #expect(rig.wait { rig.status()?.modem?.link == "ready" })
        // Unplugged, the modem cannot run a technician's command: it waits for it (15 s).
        rig.modemSim.unplug()
        #expect(rig.wait { rig.status().map { $0.modem?.link != "ready" } ?? false })
        let watch = try AttackWatch(rig)
        let attacker = try RawConnection(path)
        let request = try ControlEnvelope(.modemCommand("AT+CSQ")).encodedLine()
        #expect(attacker.offer(request + [0x0A]) == request.count + 1)
        let flood = [UInt8](repeating: 0x41, count: 64 * 1024)
        let sent = Tally(), pushed = Tally(), ended = Tally()
        // Stopped at 160 MB, which is enough to break the memory bound.
        let attack = Background(for: .seconds(3)) { end in
            while ContinuousClock.now < end && sent.total < 160 << 20 {
                guard let n = attacker.offer(flood) else { break }
                sent.add(n)
                if n == 0 { pushed.add(1); usleep(2000) }  // the attacker's own pace: retry a full socket
            }
            ended.add(1)
        }
        // In the thick of it: the socket is full and the attacker keeps offering.
        _ = waitUntil(.seconds(10)) { pushed.total > 0 || ended.total > 0 }
        let during = rig.unwind(["status"])
        attack.join()
        let cost = try watch.finish()
        // Still being answered when the attack ended: the flood arrived behind a waiting request.
        let stillWaiting = attacker.readLine(within: .zero) == nil
        #expect(stillWaiting)
        let pushedBack = sent.total < 4 << 20
        #expect(pushedBack, "the attacker got \(sent.total) bytes into the socket")
        record("bytes streamed behind a request being answered", cost, during, stillWaiting && pushedBack,
               "\(sent.total / 1024) KB sent before the socket pushed back")
    }

    /// As many connections as the socket has slots, all of this uid (the maintainer's own: the
    /// hardest case to tell apart), each sending a byte of a request now and then, and one that
    /// says nothing at all.
    @Test func tricklersAndIdlersDoNotLockMaintainersOut() throws {
        let rig = try MaintenanceRig(controlDeadlines: Self.deadlines)
        let path = try #require(rig.host.server?.path)
        let watch = try AttackWatch(rig)
        let request = Array(try ControlEnvelope(.status).encodedLine().dropLast())
        let clock = ContinuousClock()
        let start = clock.now
        var tricklers: [RawConnection] = []
        for _ in 0..<ControlLimits.maximumClients {
            let c = try RawConnection(path)
            _ = c.offer([request[0]])
            tricklers.append(c)
        }
        let idler = try RawConnection(path)
        let all = tricklers
        let attack = Background(for: .seconds(3)) { end in
            var k = 1
            while ContinuousClock.now < end {
                usleep(400_000)  // the tricklers' own pace: a byte each now and then
                for t in all { _ = t.offer([request[k % request.count]]) }
                k += 1
            }
        }
        // Every trickler and the idler is connected (each connect returned): the status's
        // connection comes behind them, while the attack goes on.
        let during = rig.unwind(["status"])
        // Each is closed, told why, within its deadline (and a few passes); the idler after
        // the idle deadline.
        let end = start + Self.deadlines.idle + .seconds(1)
        var answers: [String] = []
        var closed = 0
        for c in tricklers + [idler] {
            let (gone, text) = c.waitForClose(until: end)
            if gone { closed += 1 }
            answers.append(text)
        }
        attack.join()
        let cost = try watch.finish()
        let allClosed = closed == tricklers.count + 1
        #expect(allClosed, "\(closed) of \(tricklers.count + 1) closed by the device")
        let made = answers.filter { $0.contains("closed to make room for another command") }.count
        let late = answers.filter { $0.contains("did not arrive whole within 1.5 s") }.count
        // Eight above the share, one more for `unwind status`, the rest too slow.
        #expect(made + late == tricklers.count, "\(answers)")
        #expect(made >= ControlLimits.maximumClients - ControlLimits.maximumClientsPerUser + 1, "\(answers)")
        record("slow and idle connections filling every slot", cost, during, allClosed && made + late == tricklers.count,
               "\(made) closed to make room, \(late) for a request not whole in time, the idle one \(closed > tricklers.count ? "closed" : "kept")")
    }

    /// Twenty `unwind alerts test` within a second, each on a connection of its own.
    @Test func twentyTestMessagesInASecond() throws {
        let rig = try MaintenanceRig(controlDeadlines: Self.deadlines)
        let path = try #require(rig.host.server?.path)
        #expect(rig.wait { rig.status()?.modem?.link == "ready" })
        let set = rig.unwind(["alerts", "set", "1", "--name", "Mum", "--number", "+447700900123", "--message", "Call me"])
        #expect(set.status == 0, "\(set)")
        let watch = try AttackWatch(rig)
        let request = try ControlEnvelope(.testAlert(slot: 1, waitSeconds: 10)).encodedLine()
        let answers = Answers(), sent = Tally()
        let attackers = (0..<20).map { i in
            Background(for: .zero) { _ in
                usleep(UInt32(i) * 50_000)  // the attackers' own pace: twenty within a second
                guard let c = try? RawConnection(path), c.offer(request) == request.count else { return }
                sent.add(1)
                let line = c.readLine(within: .seconds(12)) ?? "no answer"
                answers.lines.withLock { $0[i] = line }
            }
        }
        // The status is asked in the middle of the attack: half the requests are in.
        _ = rig.wait(.seconds(10)) { sent.total >= 10 }
        let during = rig.unwind(["status"])
        for a in attackers { a.join() }
        let cli = rig.unwind(["alerts", "test", "1", "--wait", "5"])
        #expect(rig.wait(.seconds(2)) { !rig.modemSim.delivered.isEmpty })
        usleep(500_000)  // an observation window: any other message would go out in it
        let cost = try watch.finish()
        let lines = answers.lines.withLock { $0 }.sorted { $0.key < $1.key }.map(\.value)
        let responses = lines.map { try? JSONDecoder().decode(ControlResponse.self, from: Data($0.utf8)) }
        let sentOne = responses.filter { $0?.code == 0 && $0?.message?.contains("test message sent to Mum") == true }.count == 1
        let toldWhen = responses.filter { $0?.code == 1 && $0?.message?.contains("try again in") == true }.count == 19
        #expect(sentOne && toldWhen, "\(lines)")
        let delivered = rig.modemSim.delivered
        let oneSMS = delivered == [SimulatedSMS(number: "+447700900123", text: "[TEST] Call me", parts: 1)]
        #expect(oneSMS, "\(delivered.count) messages reached the modem")
        // The command says when, in one line.
        expectFailure(cli, 1, "the device sends at most one every 30 s; try again in ")
        record("twenty test messages in a second", cost, during, sentOne && toldWhen && oneSMS && cli.status == 1,
               "\(delivered.count) SMS reached the modem")
    }

    /// Floods of requests whose decoding is the client's choice: a
    /// megabyte nested a megabyte deep, one nested 600 deep, a megabyte of bytes that are not
    /// UTF-8, a megabyte mantra that decodes, and a request dripped three bytes at a time, from
    /// three connections at once for three seconds. Decoding runs off the loop's thread, and a
    /// line nested deeper than any request is refused before it is decoded at all. The attackers
    /// pause 10 ms between requests: they live in this process, and in a debug build on a busy
    /// two-core machine their own megabytes took the loop's CPU (the benchmark floods without
    /// pause in release: [../../Sources/README.md](../../Sources/README.md#benchmark)).
    @Test func nestedHugeAndDrippedRequests() throws {
        let rig = try MaintenanceRig(controlDeadlines: Self.deadlines)
        let path = try #require(rig.host.server?.path)
        let watch = try AttackWatch(rig)
        let megabyte = ControlLimits.maximumRequest - 1
        // Each with its newline, made once: the attackers share the test process with the loop,
        // and what they spend building bytes is CPU the loop does not get.
        // One form a statement, typed: Debian's Swift 6.2 gives up type-checking them as one
        // literal (the arm64 stage builds with it).
        let deep: [UInt8] = Array(repeating: UInt8(ascii: "["), count: megabyte)
        var nested: [UInt8] = Array(repeating: UInt8(ascii: "{"), count: 300)
        nested.append(contentsOf: Array(repeating: UInt8(ascii: "["), count: 300))
        let notUTF8: [UInt8] = (0..<megabyte).map { (i: Int) -> UInt8 in UInt8(truncatingIfNeeded: i &* 131 &+ 7) | 0x80 }
        var mantra: [UInt8] = Array("{\"version\":1,\"request\":{\"addMantra\":{\"text\":\"".utf8)
        mantra.append(contentsOf: Array(repeating: UInt8(ascii: "a"), count: megabyte - 64))
        mantra.append(contentsOf: Array("\"}}}".utf8))
        let forms: [[UInt8]] = [deep, nested, notUTF8, mantra].map { $0 + [0x0A] }
        let answers = Answers(), sent = Tally()
        let attackers = (0..<2).map { i in
            Background(for: .seconds(3)) { end in
                var k = i
                while ContinuousClock.now < end {
                    guard let c = try? RawConnection(path) else { usleep(10_000); continue }
                    guard c.offerWhole(forms[k % forms.count], until: end + .seconds(5)) else { continue }
                    sent.add(1)
                    let line = c.readLine(within: .seconds(5)) ?? "no answer"
                    answers.lines.withLock { $0[$0.count] = line }
                    k += 1
                    usleep(10_000)
                }
            }
        }
        let dripper = Background(for: .seconds(3)) { end in
            let request = (try? ControlEnvelope(.status).encodedLine()) ?? []
            while ContinuousClock.now < end {
                guard let c = try? RawConnection(path) else { continue }
                var at = 0
                while at < request.count {
                    _ = c.offer(Array(request[at..<min(at + 3, request.count)]))
                    at += 3
                    usleep(5_000)  // the dripper's own pace
                }
                if let line = c.readLine(within: .seconds(5)) { answers.lines.withLock { $0[$0.count] = line } }
            }
        }
        // The status is asked once the attack is under way: a first hostile line offered whole.
        _ = rig.wait(.seconds(10)) { sent.total > 0 }
        let during = rig.unwind(["status"])
        for a in attackers + [dripper] { a.join() }
        let cost = try watch.finish()
        let lines = answers.lines.withLock { Array($0.values) }
        let tooDeep = lines.filter { $0.contains("nested deeper than \(RequestDecoder.maximumNesting) levels") }.count
        let notRequests = lines.filter { $0.contains("not a control request") }.count
        let statuses = lines.filter { $0.contains("\"status\"") }.count
        // Every nested one refused as such, and each kind answered at least once.
        let answered = tooDeep > 0 && notRequests > tooDeep && statuses > 0 && !lines.contains("no answer")
        #expect(answered, "\(sent.total) sent; \(tooDeep) too deep, \(notRequests) not requests, \(statuses) statuses: \(lines.prefix(5))")
        record("nested, megabyte and dripped requests", cost, during, answered,
               "\(sent.total) hostile requests and \(statuses) dripped ones answered, \(tooDeep) refused as nested too deep")
    }

    /// Last (a serialized suite runs in source order): what the attacks above came to.
    @Test func summary() {
        let outcomes = hostileOutcomes.withLock { $0 }
        let survived = outcomes.filter { $0.survived }.count
        print("hostile socket: \(outcomes.count) attacks tried, \(survived) survived"
              + outcomes.filter { !$0.survived }.map { "; failed: \($0.attack)" }.joined())
        #expect(survived == outcomes.count)
    }

    // MARK: What every attack must leave intact

    /// Missed frame deadlines an attack may cost: none beyond what a busy two-core machine
    /// costs anyway (`FrameDeadlineCost.missedAllowed`: the time the loop's thread waited for a
    /// CPU is the machine's, not the attack's).
    static func missedAllowed(_ cost: AttackWatch.Cost) -> Int {
        FrameDeadlineCost.missedAllowed(drawn: cost.framesDrawn, missed: cost.framesMissed, starved: cost.starved)
    }

    func record(_ attack: String, _ cost: AttackWatch.Cost, _ during: UnwindRun.Result, _ own: Bool, _ detail: String,
                sourceLocation: SourceLocation = #_sourceLocation) {
        // Frame deadlines are a real-time figure: under an emulator (TestMachine.emulated) only
        // what the attack does to the device's answers and memory is checked.
        let frames = TestMachine.emulated || cost.framesMissed <= Self.missedAllowed(cost)
        let memory = cost.growth <= Self.memoryBound
        let maintainer = during.status == 0 && during.stdout.contains("Device:    running")
        #expect(frames, "\(cost.framesMissed) frames missed, \(cost.framesDrawn) drawn, \(Self.missedAllowed(cost)) allowed",
                sourceLocation: sourceLocation)
        #expect(memory, "resident memory grew by \(cost.growth >> 20) MB", sourceLocation: sourceLocation)
        #expect(maintainer, "unwind status during the attack: \(during)", sourceLocation: sourceLocation)
        let survived = frames && memory && maintainer && own
        print("hostile socket: \(attack): \(cost.framesDrawn) frames drawn, \(cost.framesMissed) missed, "
              + "resident memory \(cost.growth >= 0 ? "+" : "")\(String(format: "%.1f", Double(cost.growth) / 1_048_576)) MB, "
              + "\(String(format: "%.1f", cost.seconds)) s (the loop waited \(cost.starved.nanoseconds / 1_000_000) ms for a CPU); "
              + "\(detail): \(survived ? "survived" : "FAILED")")
        hostileOutcomes.withLock { $0.append((attack, survived)) }
    }
}

private let hostileOutcomes = Mutex<[(attack: String, survived: Bool)]>([])
