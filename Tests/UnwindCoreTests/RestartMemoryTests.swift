import Testing
@testable import UnwindCore

/// A restart at every step of the escalation ladder and of the daily check-in, on simulated time:
/// the device is rebuilt from what it last asked to write (`escalation.txt`, `checkIn.txt`, as
/// the state directory would hold them) with its monotonic clock starting over and the wall clock
/// going on. What the network sees — every dial, every alert — is counted across both runs.
@Suite struct RestartMemoryTests {
    static let midnight: Int64 = CivilDate.day(year: 2026, month: 11, day: 22) * 86_400
    static let mum = "+17785551234", sam = "6045557654"

    /// One device across restarts: its files, its clocks, what it asked the network for.
    struct Device {
        var settings: DeviceSettings
        var core: DeviceCore
        var files: [StateFile: String] = [:]
        /// Added to the wall second to get the core's instant: a new boot starts the monotonic clock anew.
        var bootOffset: Double = 0
        /// (wall second, number) of every dial; every alert request with its wall second.
        var dials: [(at: Double, number: String)] = []
        var alerts: [(at: Double, request: AlertRequest)] = []
        var hangUps = 0

        static func slots() throws -> [AlertSlotState] {
            [.ready(try AlertSlot(name: "Mum", number: RestartMemoryTests.mum, message: "Having a panic attack, please call")),
             .empty,
             .ready(try AlertSlot(name: "Sam", number: RestartMemoryTests.sam, message: "Please come over"))]
        }

        init(settings: DeviceSettings) throws {
            self.settings = settings
            core = DeviceCore(settings: settings)
            core.alertSlotsChanged(try Self.slots())
        }

        func moment(_ wall: Double) -> Moment {
            Moment(.seconds(wall - bootOffset), wall: WallTime(secondsSinceEpoch: RestartMemoryTests.midnight + Int64(wall.rounded(.down))))
        }

        mutating func apply(_ e: DeviceEvent, _ wall: Double) {
            var effects: [Effect] = []
            core.apply(e, at: moment(wall), effects: &effects)
            for f in effects {
                switch f {
                case .save(let file, let text): files[file] = text
                case .dial(let n): dials.append((wall, n.text))
                case .hangUp: hangUps += 1
                case .sendAlerts(let r): alerts += r.map { (wall, $0) }
                default: break
                }
            }
        }

        /// Killed and started again at `wall`: a new core from the files (parsed as the device
        /// loads them), the monotonic clock from an arbitrary new origin. `resumeSent`: the
        /// outbox still holds the sent alerts (waiting for their status reports) and says so.
        mutating func restart(at wall: Double, resumeSent: Bool, queuedAt: Double = 0) throws {
            let checkIn = try CheckInFile.parseWithGrace(Array((files[.checkIn] ?? "").utf8))
            let escalation = try EscalationFile.parse(Array((files[.escalation] ?? "").utf8))
            core = DeviceCore(settings: settings, checkIn: checkIn.record, checkInGrace: checkIn.grace, escalation: escalation)
            core.alertSlotsChanged(try Self.slots())
            bootOffset = wall - 7   // the new boot's clock reads 7 s
            apply(.wallClockSynchronised(true), wall)
            if resumeSent, let e = escalation {
                let progress = e.contacts.filter { $0.delivery == .sent }.map {
                    AlertProgress(slot: $0.slot, name: $0.name, number: $0.number, delivery: .sent)
                }
                apply(.alertsResumed(progress, purpose: e.purpose,
                                     queuedAt: WallTime(secondsSinceEpoch: RestartMemoryTests.midnight + Int64(queuedAt))), wall)
            }
        }

        func dialCount(_ n: String) -> Int { dials.filter { $0.number == n }.count }
    }

    /// PANIC at 0, both alerts sent at 5 s; then ticks every `step` until `end`, with a restart at
    /// `restartAt` (nil: none) that takes `down` seconds.
    static func panicRun(restartAt: Double?, down: Double = 0, resumeSent: Bool = true, end: Double = 400,
                         settings: DeviceSettings = DeviceSettings(), answer: (slot: Int, at: Double)? = nil) throws -> Device {
        var d = try Device(settings: settings)
        d.apply(.wallClockSynchronised(true), 0)
        d.apply(.button(.down(.panic)), 0)
        d.apply(.tick, 1.5)
        d.apply(.alertDelivery(slot: 0, .sent), 5)
        d.apply(.alertDelivery(slot: 2, .sent), 5)
        var t = 5.5
        var restarted = restartAt == nil
        var off: ClosedRange<Double>?
        while t <= end {
            if !restarted, let r = restartAt, t >= r {
                restarted = true
                off = r...(r + down)
                t = r + down
                try d.restart(at: t, resumeSent: resumeSent)
            }
            if let a = answer, abs(t - a.at) < 0.25, d.core.state.panic.aftercare.ringing == a.slot {
                d.apply(.callAnswered, t)
            }
            if off.map({ !$0.contains(t) }) ?? true { d.apply(.tick, t) }
            t += 0.5
        }
        return d
    }

    // MARK: The ladder

    @Test func theReferenceLadderRingsEachContactOnce() throws {
        let d = try Self.panicRun(restartAt: nil)
        #expect(d.dials.map(\.number) == [Self.mum, Self.sam])
        #expect(d.dials.map(\.at) == [181.5, 209.5])
        #expect(d.files[.escalation]?.contains("phase ended rounds-done") == true)
    }

    /// A restart at every half second of the episode, with and without the outbox still holding
    /// the alerts, and with 0 or 20 s off: each contact is rung once, at the moment the ladder
    /// would have rung them (plus the time the device was off), never from the start again.
    @Test(arguments: [(0.0, true), (0.0, false), (20.0, true)])
    func aRestartAtEveryStepOfTheLadder(down: Double, resumeSent: Bool) throws {
        let reference = try Self.panicRun(restartAt: nil).dials
        var tried = 0
        for r in stride(from: 2.0, through: 300, by: 0.5) {
            let d = try Self.panicRun(restartAt: r, down: down, resumeSent: resumeSent)
            tried += 1
            #expect(d.dialCount(Self.mum) == 1 && d.dialCount(Self.sam) == 1, "restart at \(r): \(d.dials)")
            for (k, dial) in d.dials.enumerated() where k < reference.count {
                let due = reference[k].at
                // Due while the device was off: at its restart; otherwise on time (to the tick).
                // A later call never comes sooner after the one before than it would have.
                var expected = due < r ? due : (due <= r + down ? r + down : due)
                if k > 0 { expected = max(expected, d.dials[k - 1].at + reference[k].at - reference[k - 1].at) }
                let late = dial.at - expected
                // Times are kept to the wall clock's second.
                #expect(late >= -1 && late <= 3.5, "restart at \(r) (\(down) s off): dial \(k + 1) at \(dial.at), due \(expected)")
            }
        }
        print("ladder restarts: \(tried) restarts tried (\(down) s off, outbox \(resumeSent ? "resuming" : "empty")), each contact rung once")
    }

    @Test(arguments: [300.0, 3600.0, 86_400.0])
    func restartedAfterTheLadderFinishedRingsNobody(at r: Double) throws {
        var d = try Self.panicRun(restartAt: nil, end: 290)
        #expect(d.dials.count == 2)
        try d.restart(at: r, resumeSent: true)
        for t in stride(from: r, through: r + 600, by: 1) { d.apply(.tick, t) }
        #expect(d.dials.count == 2)
        #expect(d.core.state.panic.aftercare.escalation == .ended(.roundsDone))
        #expect(d.core.state.panic.progress.map(\.delivery) == [.sent, .sent])
        #expect(d.core.state.panic.aftercare.calls.map(\.outcome) == [.unanswered, .unanswered])
    }

    /// "I'm OK now" survives a restart: not offered again, the ladder stays ended.
    @Test func theAllClearIsRemembered() throws {
        var d = try Self.panicRun(restartAt: nil, end: 20)
        d.apply(.button(.down(.select)), 21)
        d.apply(.button(.long(.select)), 22)
        d.apply(.button(.down(.select)), 23)
        #expect(d.core.state.panic.aftercare.allClearSent)
        #expect(d.alerts.filter { $0.request.purpose == .allClear }.count == 2)
        try d.restart(at: 30, resumeSent: true)
        for t in stride(from: 30.0, through: 400, by: 1) { d.apply(.tick, t) }
        #expect(d.core.state.panic.aftercare.allClearSent)
        #expect(d.core.state.panic.aftercare.allClear.map(\.slot) == [0, 2])
        #expect(d.core.state.panic.aftercare.escalation == .ended(.allClear))
        #expect(d.dials.isEmpty)
        d.apply(.button(.long(.select)), 401)
        #expect(!d.core.state.panic.aftercare.confirmingAllClear)
    }

    /// Alerts in the outbox newer than the episode `escalation.txt` kept (killed between the
    /// outbox's write and the file's): their ladder starts from its wait, not as the old one ended.
    @Test func alertsNewerThanTheFileStartTheirOwnLadder() throws {
        var d = try Self.panicRun(restartAt: nil, end: 290)
        try d.restart(at: 1000, resumeSent: true, queuedAt: 995)
        for t in stride(from: 1000.0, through: 1300, by: 0.5) { d.apply(.tick, t) }
        #expect(d.dials.map(\.at).filter { $0 >= 1000 } == [1180, 1208])
    }

    // MARK: An answered call

    /// Mum picks up the ladder's call: she is ANSWERED, nobody else is rung, her call is not cut
    /// at the ring time, and a restart keeps it that way.
    @Test func anAnsweredCallEndsTheLadder() throws {
        var d = try Self.panicRun(restartAt: nil, end: 185, answer: (0, 184))
        #expect(d.core.state.panic.aftercare.escalation == .ended(.answered))
        #expect(d.core.state.panic.progress.first?.answeredCall == true)
        #expect(d.core.state.panic.aftercare.calls.map(\.outcome) == [.answered])
        let hangUps = d.hangUps
        for t in stride(from: 185.0, through: 400, by: 0.5) { d.apply(.tick, t) }
        #expect(d.dials.map(\.number) == [Self.mum] && d.hangUps == hangUps)
        // She hangs up: that is her call's end, not the person's counselling call.
        d.apply(.callChanged(active: false), 300)
        #expect(!d.core.state.panic.callActive)
        try d.restart(at: 500, resumeSent: true)
        for t in stride(from: 500.0, through: 900, by: 1) { d.apply(.tick, t) }
        #expect(d.dials.count == 1)
        #expect(d.core.state.panic.progress.first?.answeredCall == true)
        #expect(d.core.state.panic.aftercare.escalation == .ended(.answered))
    }

    /// Answered or not is the modem's word only for the ladder's own call: the person's call to
    /// the counselling line being answered changes nothing.
    @Test func theCounsellingCallAnsweredIsNotALadderAnswer() throws {
        var d = try Device(settings: DeviceSettings())
        d.apply(.callAnswered, 1)
        #expect(d.core.state.panic.aftercare.escalation == .idle && d.files[.escalation] == nil)
    }

    // MARK: The check-in

    static func checkInSettings() -> DeviceSettings {
        var s = DeviceSettings()
        s.checkIn.deadline = 9 * 60
        return s
    }

    /// Ticks once a second from 08:59 to 09:40 with a restart at `restartAt`; the check-in's
    /// alerts go once, at 09:30 (the grace period counted from 09:00, not from the restart).
    static func checkInRun(restartAt: Double?, down: Double = 0) throws -> Device {
        var d = try Device(settings: checkInSettings())
        d.apply(.wallClockSynchronised(true), 8 * 3600)
        var t = 8.0 * 3600 + 59 * 60
        var restarted = restartAt == nil
        while t <= 9 * 3600 + 40 * 60 {
            if !restarted, let r = restartAt, t >= r {
                restarted = true
                t = r + down
                try d.restart(at: t, resumeSent: false)
            }
            d.apply(.tick, t)
            t += 1
        }
        return d
    }

    @Test func aRestartAtEveryMinuteOfTheGracePeriod() throws {
        var tried = 0
        let first: Double = 8 * 3600 + 59 * 60 - 30, last: Double = 9 * 3600 + 35 * 60
        for r in stride(from: first, through: last, by: 60.0) {
            for down: Double in [0, 45] {
                let d = try Self.checkInRun(restartAt: r, down: down)
                tried += 1
                let checkIns = d.alerts.filter { $0.request.purpose == AlertPurpose.checkIn }
                let slots = checkIns.map { $0.request.slot }, times = checkIns.map { $0.at }
                #expect(slots == [0, 2], "restart at \(r - 8 * 3600) s after 08:00 (\(down) s off): \(times)")
                let due = 9.0 * 3600 + 30 * 60
                // Off over the deadline: the grace period starts when the device can remind.
                let deadline = 9.0 * 3600
                let expected = r < deadline && r + down > deadline ? r + down + 1800 : r <= due ? max(due, r + down) : due
                #expect(times.allSatisfy { $0 == expected }, "restart at \(r): sent at \(times)")
            }
        }
        print("check-in restarts: \(tried) restarts tried, the check-in's alerts went once each time, at 09:30")
    }

    /// A grace period that ended more than a day before the start is not acted on.
    @Test func aStaleGracePeriodSendsNothing() throws {
        var d = try Device(settings: Self.checkInSettings())
        // One sum per statement: Debian's Swift 6.2 gives up type-checking the whole line.
        let due: Int64 = Self.midnight - 2 * 86_400 + 9 * 3600 + 1800
        d.files[.checkIn] = "2026-11-19 confirmed\nreminding 2026-11-20 \(due)\n"
        try d.restart(at: 7 * 3600, resumeSent: false)
        for t in stride(from: 7.0 * 3600, through: 7 * 3600 + 60, by: 1) { d.apply(.tick, t) }
        #expect(d.alerts.isEmpty)
        #expect(d.files[.checkIn] == "2026-11-19 confirmed\n")
    }

    /// Help was due while the device was off (less than a day ago): it goes at the start.
    @Test func aGracePeriodThatRanOutWhileOffSendsAtStart() throws {
        var d = try Device(settings: Self.checkInSettings())
        let due: Int64 = Self.midnight + 9 * 3600 + 1800
        d.files[.checkIn] = "reminding 2026-11-22 \(due)\n"
        try d.restart(at: 11 * 3600, resumeSent: false)
        d.apply(.tick, 11 * 3600)
        #expect(d.alerts.map(\.request.purpose) == [.checkIn, .checkIn])
        #expect(d.files[.checkIn] == "2026-11-22 missed\n")
    }

    // MARK: The file

    @Test func escalationFileRoundTrips() throws {
        var d = try Self.panicRun(restartAt: nil, end: 200)
        let text = try #require(d.files[.escalation])
        let r = try #require(try EscalationFile.parse(Array(text.utf8)))
        #expect(EscalationFile.format(r) == text)
        #expect(r.purpose == .panic && r.round == 1 && r.calls.count == 1 && r.contacts.count == 2)
        d.apply(.tick, 201)
        #expect(try EscalationFile.parse([]) == nil)
    }

    /// Every way the file can be wrong is a thrown problem, never a trap.
    @Test func hostileEscalationFiles() throws {
        let good = try #require(Self.panicRun(restartAt: nil, end: 200).files[.escalation])
        var cases: [String] = [
            "garbage", "unwind-escalation 2\nend\n", "unwind-escalation 1\nend\n", good.replacingOccurrences(of: "end\n", with: ""),
            good + "end\n", String(good.dropLast()), good.replacingOccurrences(of: "\n", with: "\r\n"), "\u{FEFF}" + good,
            good.replacingOccurrences(of: "purpose panic", with: "purpose test"),
            good.replacingOccurrences(of: "round 1", with: "round 99999999999999999999"),
            good.replacingOccurrences(of: "round 1", with: "round -1"),
            good.replacingOccurrences(of: "phase ringing 1", with: "phase ringing 9"),
            good.replacingOccurrences(of: "phase ringing 1", with: "phase ringing 0"),
            good.replacingOccurrences(of: "phase ringing 1 ", with: "phase ringing 1 99999999999999999999999"),
            good.replacingOccurrences(of: "contact 1 +17785551234", with: "contact 1 +1778555;ATD"),
            good.replacingOccurrences(of: "contact 1 +17785551234", with: "contact 6 +17785551234"),
            good.replacingOccurrences(of: " Mum\n", with: " \u{202E}Mum\n"),
            good.replacingOccurrences(of: " Mum\n", with: " " + String(repeating: "M", count: 41) + "\n"),
            good.replacingOccurrences(of: "contact 3", with: "contact 1"),
            good.replacingOccurrences(of: "sent", with: "sentt"),
            good.replacingOccurrences(of: "to-ring", with: "to-ring 1,2,3,4,5,1,2"),
            good.replacingOccurrences(of: "started ", with: "started -"),
            good.replacingOccurrences(of: "all-clear no", with: "all-clear maybe"),
            good + String(repeating: "call 1 1 1 unanswered\n", count: 70),
            String(repeating: "x", count: 20_000),
        ]
        cases.append(good.replacingOccurrences(of: "end\n", with: "call 1 1 1767225600 unanswered\nfollow-up 1 sent\nfollow-up 1 sent\nend\n"))
        for c in cases {
            #expect(throws: EscalationFile.Problem.self, "\(c.prefix(80).debugDescription)") { try EscalationFile.parse(Array(c.utf8)) }
        }
        #expect(throws: EscalationFile.Problem.self) { try EscalationFile.parse([0xFF, 0xFE, 0x0A]) }
        print("hostile escalation files: \(cases.count + 1) tried, each refused with a reason")
    }

    @Test func checkInFileKeepsTheGracePeriod() throws {
        let text = "2026-11-21 confirmed\nreminding 2026-11-22 1795340000\n"
        let parsed = try CheckInFile.parseWithGrace(Array(text.utf8))
        #expect(CheckInFile.format(parsed.record, grace: parsed.grace) == text)
        #expect(try CheckInFile.parse(Array(text.utf8)) == parsed.record)
        for bad in ["reminding 2026-11-22\n", "reminding 2026-11-22 x\n", "reminding 2026-13-22 1\n",
                    "reminding 2026-11-22 1\nreminding 2026-11-22 1\n", "reminding 2026-11-22 1\n2026-11-21 confirmed\n",
                    "reminding 2026-11-22 99999999999999999999\n"] {
            #expect(throws: CheckInFile.Problem.self, "\(bad.debugDescription)") { try CheckInFile.parseWithGrace(Array(bad.utf8)) }
        }
    }
}
