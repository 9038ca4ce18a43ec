import Testing
import UnwindCore
@testable import UnwindModem

/// The modem's policies on their own: no line, no engine, no clock — a state, an answer and an
/// instant in, the next command and the requests to the others out.
@Suite("Modem policies on their own")
struct PolicyTests {
    static let mum = try! PhoneNumber("+15550100001")

    static func context(at seconds: Int64 = 100) -> PolicyContext {
        var c = PolicyContext(status: ModemStatus(port: "test"), random: AnyRandom(SeededRandom(seed: 1)))
        c.now = Instant(nanoseconds: seconds * 1_000_000_000)
        return c
    }

    static func entry(_ k: Int, _ message: String = "Please call me.") -> OutboxEntry {
        OutboxEntry(id: MessageID("alert-\(k)"), created: WallTime(secondsSinceEpoch: 1), sequence: k, slot: k,
                    alert: try! AlertSlot(name: "C\(k)", number: "+1555010000\(k)", message: message), reference: UInt16(k))
    }

    // MARK: The error table

    @Test func theSubmitErrorTable() {
        func cms(_ n: Int, centre: Bool = false) -> SubmitVerdict? {
            SubmitVerdict.submit(.cmsError(ATErrorCode("\(n)")), to: Self.mum, serviceCentreConfigured: centre)
        }
        #expect(cms(1) == SubmitVerdict(.unassignedNumber(Self.mum)))
        #expect(cms(1)?.problem.isPermanent == true, "only an unassigned number stops a message")
        #expect(cms(330, centre: true) == SubmitVerdict(.noServiceCentre(configured: true), atOnce: true, .setServiceCentre))
        #expect(cms(330) == SubmitVerdict(.noServiceCentre(configured: false), .serviceCentreMissing))
        for n in 310...316 { #expect(cms(n) == SubmitVerdict(.sim(code: n), .checkSIMAgain)) }
        #expect(cms(500) == SubmitVerdict(.modem("+CMS ERROR: 500"), .countTowardsRestart))
        for n in [2, 38, 42, 127, 331, 332, 512, 513, 514] { #expect(cms(n) == SubmitVerdict(.network(code: n)), "\(n)") }
        for n in [0, 128, 300, 304, 317, 329, 333, 499, 501, 511, 515] { #expect(cms(n) == SubmitVerdict(.rejected(code: n)), "\(n)") }
        #expect(SubmitVerdict.submit(.cmsError(ATErrorCode("SMSC address unknown")), to: Self.mum, serviceCentreConfigured: true)
                == SubmitVerdict(.modem("+CMS ERROR: SMSC address unknown"), .countTowardsRestart), "a text code is the modem's")

        func submit(_ o: ATOutcome) -> SubmitVerdict? { SubmitVerdict.submit(o, to: Self.mum, serviceCentreConfigured: false) }
        #expect(submit(.submitted(messageReference: 7)) == nil)
        #expect(submit(.abandoned) == nil)
        #expect(submit(.promptTimedOut) == SubmitVerdict(.noPrompt, atOnce: true, .resynchroniseAfterSubmit))
        #expect(submit(.timedOut(afterPrompt: false)) == SubmitVerdict(.noPrompt, atOnce: true, .resynchroniseAfterSubmit))
        // The PDU went out and nothing of its own came back: in doubt, never sent.
        #expect(submit(.timedOut(afterPrompt: true)) == SubmitVerdict(.noConfirmation, atOnce: true, .resynchroniseInDoubt))
        #expect(submit(.ok) == SubmitVerdict(.noConfirmation, atOnce: true, .resynchroniseInDoubt))
        #expect(submit(.error) == SubmitVerdict(.modem("ERROR"), .countTowardsRestart))
        #expect(submit(.cmeError(ATErrorCode("100"))) == SubmitVerdict(.modem("+CME ERROR: 100"), .countTowardsRestart))
        #expect(submit(.callEnded("NO CARRIER")) == SubmitVerdict(.modem("NO CARRIER"), .countTowardsRestart))

        #expect(SubmitVerdict.pduMode(.ok) == nil && SubmitVerdict.pduMode(.abandoned) == nil)
        #expect(SubmitVerdict.pduMode(.timedOut(afterPrompt: false)) == SubmitVerdict(.modem("no answer to AT+CMGF=0"), .resynchronise))
        #expect(SubmitVerdict.pduMode(.error) == SubmitVerdict(.modem("AT+CMGF=0 answered error"), .checkSIMAgain))
    }

    // MARK: Delivery

    /// On the card before the command: the attempt is saved first, then AT+CMGF=0, then the part
    /// with the first attempt's shorter confirmation timeout.
    @Test func theJournalIsWrittenBeforeTheFirstCommand() throws {
        var ctx = Self.context()
        var d = Delivery(configuration: ModemConfiguration(), logger: quietLogger())
        d.track(Self.entry(1), journaled: true)
        let (request, job) = try #require(d.next(heldUntil: nil, &ctx))
        #expect(request.command == .pduMode && job == .pduMode(MessageID("alert-1")))
        guard case .journal(.save(let saved))? = ctx.requests.first else { Issue.record("\(ctx.requests)"); return }
        #expect(saved.attempts == 1)
        ctx.requests.removeAll()
        d.completed(job, ATResponse(.ok), abandonedBecause: nil, &ctx)
        let (submit, _) = try #require(d.next(heldUntil: nil, &ctx))
        #expect(submit.command.isSubmit && submit.timeout == .seconds(20), "first submit timeout: 20 s, not the modem's 60")
    }

    @Test func aTestMessageIsNeverJournaled() throws {
        var ctx = Self.context()
        var d = Delivery(configuration: ModemConfiguration(), logger: quietLogger())
        d.track(Self.entry(1), journaled: false)
        _ = try #require(d.next(heldUntil: nil, &ctx))
        #expect(!ctx.requests.contains { if case .journal(.save) = $0 { true } else { false } })
    }

    /// A message in doubt goes to the back: every other contact's first attempt goes before its
    /// second. A confirmation inside its doubt window credits nobody.
    @Test func leastTriedFirstAndTheDoubtWindow() throws {
        var ctx = Self.context()
        var d = Delivery(configuration: ModemConfiguration(), logger: quietLogger())
        for k in 1...3 { d.track(Self.entry(k), journaled: true, at: ctx.now) }

        func attempt(_ outcome: ATOutcome) throws -> MessageID {
            let (_, mode) = try #require(d.next(heldUntil: nil, &ctx))
            d.completed(mode, ATResponse(.ok), abandonedBecause: nil, &ctx)
            let (_, part) = try #require(d.next(heldUntil: nil, &ctx))
            d.pduWritten(mode.message, at: ctx.now)
            d.completed(part, ATResponse(outcome), abandonedBecause: nil, &ctx)
            return mode.message
        }
        // Contact 1: the PDU went out, no confirmation. Retried at once — but after the others.
        #expect(try attempt(.timedOut(afterPrompt: true)) == MessageID("alert-1"))
        #expect(ctx.requests.contains(.resynchronise(afterSubmit: true)))
        let window = ctx.now + ModemTimeouts().submit
        // Contact 2's +CMGS comes inside contact 1's window: it may be contact 1's late answer.
        ctx.now = ctx.now + .seconds(1)
        #expect(try attempt(.submitted(messageReference: 9)) == MessageID("alert-2"))
        #expect(d.message(MessageID("alert-2"))?.state == .retrying(.noConfirmation, next: window))
        // Contact 3 still gets its first attempt before anyone's second.
        #expect(try attempt(.cmsError(ATErrorCode("38"))) == MessageID("alert-3"))
        // Past the windows (contact 2's own answer, too, may come until a second after contact
        // 1's), a confirmation counts again.
        ctx.now = window + .seconds(1)
        let next = try #require(d.next(heldUntil: nil, &ctx))
        #expect(next.1 == .pduMode(MessageID("alert-1")), "contact 1 (retried at once) before the backoffs")
        d.completed(next.1, ATResponse(.ok), abandonedBecause: nil, &ctx)
        let (_, part) = try #require(d.next(heldUntil: nil, &ctx))
        d.completed(part, ATResponse(.submitted(messageReference: 10)), abandonedBecause: nil, &ctx)
        if case .sent = d.message(MessageID("alert-1"))?.state {} else { Issue.record("\(String(describing: d.message(MessageID("alert-1"))))") }
        #expect(ctx.requests.contains { if case .accepted(let e, _) = $0 { e.id == MessageID("alert-1") && e.references == [10] } else { false } })
    }

    @Test func modemErrorsInARowAskForARestart() throws {
        var ctx = Self.context()
        var d = Delivery(configuration: ModemConfiguration(), logger: quietLogger())
        d.track(Self.entry(1), journaled: true, at: ctx.now)
        for k in 1...3 {
            ctx.now = ctx.now + .seconds(120)  // past any backoff
            let (_, mode) = try #require(d.next(heldUntil: nil, &ctx))
            d.completed(mode, ATResponse(.ok), abandonedBecause: nil, &ctx)
            let (_, part) = try #require(d.next(heldUntil: nil, &ctx))
            ctx.requests.removeAll()
            d.completed(part, ATResponse(.cmsError(ATErrorCode("500"))), abandonedBecause: nil, &ctx)
            #expect(ctx.requests.contains(.restartModem) == (k == 3), "after \(k)")
        }
    }

    // MARK: Bring-up

    /// The configured PIN is entered once; after a refusal it is never sent again (three wrong
    /// PINs lock a SIM), and the SIM is asked about again later.
    @Test func aRefusedPinIsNeverSentAgain() throws {
        var config = ModemConfiguration()
        config.simPIN = SIMPin("1234")
        var ctx = Self.context()
        var refresh = StatusRefresh(configuration: config, logger: quietLogger())
        var b = BringUp(configuration: config, portName: "test", logger: quietLogger())
        b.beginSync(fullInit: true, &ctx)
        #expect(ctx.requests == [.escape(carriageReturn: true)])
        func answer(_ expected: ATCommand, _ r: ATResponse) {
            guard case .send(let request, let job) = b.next(&ctx, &refresh), request.command == expected else {
                Issue.record("expected \(expected.logged)")
                return
            }
            b.completed(job, request.command, r, &ctx, &refresh)
        }
        answer(.attention, ATResponse(.ok))
        answer(.echoOff, ATResponse(.ok))
        answer(.numericErrors, ATResponse(.ok))
        answer(.pinStatus, ATResponse(.ok, lines: ["+CPIN: SIM PIN"]))
        answer(.enterPIN(SIMPin("1234")!), ATResponse(.cmeError(ATErrorCode("16"))))
        #expect(ctx.status.sim == BringUp.pinRefusedState)
        answer(.pinStatus, ATResponse(.ok, lines: ["+CPIN: SIM PIN"]))
        #expect(b.next(&ctx, &refresh) == .hold, "waits; no second PIN")
        #expect(b.isWaitingForSIM)
        ctx.now = ctx.now + ModemTimeouts().simProblemRetry
        guard case .send(let again, _) = b.next(&ctx, &refresh) else { Issue.record("not asked again"); return }
        #expect(again.command == .pinStatus)
    }

    // MARK: Status refresh

    @Test func aModemChangedByHandAsksForTheHeal() {
        var config = ModemConfiguration()
        config.serviceCentre = try! PhoneNumber("+15550009999")
        var ctx = Self.context()
        var r = StatusRefresh(configuration: config, logger: quietLogger())
        r.read(.operatorName, ATResponse(.ok, lines: ["+COPS: 1,0,\"Other\""]), &ctx)
        r.checkServiceCentre(ATResponse(.ok, lines: ["+CSCA: \"+15550001111\",145"]), &ctx)
        #expect(r.nextHeal()?.0.command == .automaticOperator)
        #expect(r.nextHeal()?.0.command == .setServiceCentre(try! PhoneNumber("+15550009999")))
        #expect(r.nextHeal() == nil)
    }

    /// A brown-out repeats its warning many times a second: logged once a minute at most.
    @Test func powerWarningsAreRateLimited() {
        var ctx = Self.context()
        var r = StatusRefresh(configuration: ModemConfiguration(), logger: quietLogger())
        let first = ctx.now
        r.powerWarning("UNDER-VOLTAGE WARNNING", &ctx)
        ctx.now = first + .seconds(59)
        r.powerWarning("UNDER-VOLTAGE WARNNING", &ctx)
        #expect(r.lastPowerWarning == first)
        ctx.now = first + .seconds(60)
        r.powerWarning("UNDER-VOLTAGE WARNNING", &ctx)
        #expect(r.lastPowerWarning == first + .seconds(60))
        #expect(ctx.status.lastProblem == "modem power: UNDER-VOLTAGE WARNNING")
    }

    // MARK: Calls

    @Test func aDialNotYetOnTheLineIsDroppedByAHangUp() {
        var ctx = Self.context()
        var c = Calls(timeouts: ModemTimeouts())
        c.dial(Self.mum, at: ctx.now, &ctx)
        c.hangUp(dialInFlight: false, &ctx)
        #expect(c.state == .ended("cancelled") && c.next(at: ctx.now) == nil)
        c.dial(Self.mum, at: ctx.now, &ctx)
        #expect(c.next(at: ctx.now)?.0.command == .dial(Self.mum))
        c.hangUp(dialInFlight: true, &ctx)
        #expect(c.state == .hangingUp && c.next(at: ctx.now)?.0.command == .hangUp)
        #expect(ctx.events == [.callChanged(.dialling(Self.mum)), .callChanged(.ended("cancelled")),
                               .callChanged(.dialling(Self.mum)), .callChanged(.hangingUp)])
    }

    /// ATD's OK is not an answer: `AT+CLCC` every second tells ringing (stat 3) from picked up
    /// (stat 0), and a call gone from the list after it was answered is over.
    @Test func aDialledCallIsAskedAboutUntilItIsAnsweredAndEnds() {
        var ctx = Self.context()
        var c = Calls(timeouts: ModemTimeouts())
        c.dial(Self.mum, at: ctx.now, &ctx)
        _ = c.next(at: ctx.now)
        c.completed(.dial, ATResponse(.ok), &ctx)
        #expect(c.state == .active(Self.mum) && c.next(at: ctx.now) == nil)
        ctx.now = ctx.now + .seconds(1)
        #expect(c.next(at: ctx.now)?.0.command == .listCalls)
        c.completed(.listCalls, ATResponse(.ok, lines: ["+CLCC: 1,0,3,0,0,\"+17785550101\",145"]), &ctx)
        #expect(c.state == .active(Self.mum))
        ctx.now = ctx.now + .seconds(1)
        _ = c.next(at: ctx.now)
        c.completed(.listCalls, ATResponse(.ok, lines: ["+CLCC: 1,0,0,0,0,\"+17785550101\",145"]), &ctx)
        #expect(c.state == .answered(Self.mum))
        ctx.now = ctx.now + .seconds(1)
        _ = c.next(at: ctx.now)
        c.completed(.listCalls, ATResponse(.ok), &ctx)
        #expect(c.state == .ended("the other end hung up") && c.next(at: ctx.now + .seconds(5)) == nil)
    }

    /// A modem without AT+CLCC: asked once, then the call goes on as it is (ringing or talking).
    @Test func aModemThatRefusesTheCallListIsNotAskedAgain() {
        var ctx = Self.context()
        var c = Calls(timeouts: ModemTimeouts())
        c.dial(Self.mum, at: ctx.now, &ctx)
        _ = c.next(at: ctx.now)
        c.completed(.dial, ATResponse(.ok), &ctx)
        ctx.now = ctx.now + .seconds(1)
        #expect(c.next(at: ctx.now)?.0.command == .listCalls)
        c.completed(.listCalls, ATResponse(.error), &ctx)
        #expect(c.state == .active(Self.mum) && c.next(at: ctx.now + .seconds(10)) == nil && c.deadline == nil)
    }

    /// Nothing a modem says in a call list crashes the parser or counts as "answered" unless it
    /// is a well-formed line of an outgoing voice call with stat 0.
    @Test func hostileCallListLines() {
        let notAnswered: [String] = [
            "+CLCC:", "+CLCC: ", "+CLCC: 1", "+CLCC: 1,0", "+CLCC: 1,0,0", "+CLCC: 1,0,0,0",
            "+CLCC: ,,,,", "+CLCC: 1,,0,0,0", "+CLCC: 1,0,,0,0",
            "+CLCC: 99999999999999999999999999,0,0,0,0", "+CLCC: 1,0,99999999999999999999,0,0",
            "+CLCC: 1,0,-0,0,0", "+CLCC: 1,0,+0,0,0", "+CLCC: 1,0,0x0,0,0", "+CLCC: 1,1,0,0,0",
            "+CLCC: 1,0,0,1,0", "+CLCC: 1,0,0,9,0", "+CLCC: 1,0,0,0,7", "+CLCC: \"1\",0,0,0,0",
            "+CLCC: 1,\"0\",0,0,0", "+CLCC: 1,0,\"0\",0,0", "+CLCC: 1;0;0;0;0", "+CLCC: \u{0}1,0,0,0,0",
            "+CLCC: 1,0,٠,0,0", "+CLCC: 1,0,0 0,0,0", "+CLCC: 1,0,6,0,0,\"+1\",145",
            String(repeating: "+CLCC: 1,0,3,0,0,", count: 2000), "+CLCC: " + String(repeating: ",", count: 10_000),
            "+CLCC: 1,0,3,0,0,\"" + String(repeating: "\"", count: 5000), "CLCC: 1,0,0,0,0", "+CLCC 1,0,0,0,0",
            "garbage \u{FF}\u{7F}\u{1B}[2J",
        ]
        for line in notAnswered {
            #expect(Calls.voiceCall(in: [line]) != .active, "\(line.prefix(60))")
        }
        let answered = ["+CLCC: 1,0,0,0,0", "+CLCC: 1,0,0,0,0,\"+17785550101\",145", "+CLCC:1,0,0,0,0,\"\",129,\"Mum\"",
                        "+CLCC:  2 , 0 , 0 , 0 , 0 ,\"a,b,c\",,,garbage"]
        for line in answered { #expect(Calls.voiceCall(in: [line]) == .active, "\(line)") }
        // An incoming call listed beside the device's own ringing one is not an answer.
        #expect(Calls.voiceCall(in: ["+CLCC: 1,0,3,0,0", "+CLCC: 2,1,0,0,0"]) == .notYetActive)
        print("hostile call lists: \(notAnswered.count + answered.count + 1) lines tried, none crashed, none misread")
    }
}
