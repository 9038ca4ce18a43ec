import Testing
import UnwindCore
import UnwindModem

/// The AT engine alone: bytes and instants in, bytes and events out. No tty.
@Suite("AT engine")
struct ATEngineTests {
    struct Driver {
        var engine = ATEngine(settings: ATEngine.Settings(drain: .milliseconds(50), resultGrace: .milliseconds(100)))
        var now = Instant.zero
        var written: [UInt8] = []
        var events: [ATEvent] = []

        mutating func start(_ c: ATCommand, timeout: Duration = .milliseconds(300), prompt: Duration = .milliseconds(200)) {
            engine.start(ATRequest(c, timeout: timeout, promptTimeout: prompt), at: now)
            engine.takeOutput(into: &written)
        }

        mutating func feed(_ s: String) { feed(Array(s.utf8)) }

        mutating func feed(_ bytes: [UInt8]) {
            engine.receive(bytes, at: now, into: &events)
            engine.takeOutput(into: &written)
        }

        mutating func advance(_ d: Duration) {
            now = now + d
            engine.advance(to: now, into: &events)
            engine.takeOutput(into: &written)
        }

        var completions: [ATResponse] {
            events.compactMap { if case .completed(_, let r) = $0 { return r }; return nil }
        }

        var unsolicited: [UnsolicitedCode] {
            events.compactMap { if case .unsolicited(let u) = $0 { return u }; return nil }
        }
    }

    func pdu() throws -> SMSSubmitPDU {
        try SMSPDU.encode("Help", to: PhoneNumber("+15550100001"), reference: 1)[0]
    }

    /// +CDS and +CMT carry their PDU on the next line: taken with them even in the middle of
    /// another command's answer (a +CMGR's PDU line must not be confused with it, nor it with the
    /// answer); a header whose next line is no PDU stands alone.
    @Test func inlinePDUsAreTakenWithTheirHeader() {
        var d = Driver()
        d.start(.readMessage(StoreIndex(3)!))
        d.feed("\r\n+CMGR: 0,,5\r\n+CDS: 25\r\n0006170B915155100000F16210102143650062101021436500\r\n0004ABCD\r\nOK\r\n")
        #expect(d.completions == [ATResponse(.ok, lines: ["+CMGR: 0,,5", "0004ABCD"])])
        #expect(d.unsolicited == [.statusReportPDU(header: "+CDS: 25", pdu: "0006170B915155100000F16210102143650062101021436500")])
        d.events.removeAll()
        d.feed("\r\n+CMT: ,12\r\n0004AA\r\n\r\n+CDS: 25\r\nRING\r\n")
        #expect(d.unsolicited == [.messagePDU(header: "+CMT: ,12", pdu: "0004AA"), .other("+CDS: 25"), .ring])
    }

    /// Line noise glued to the prompt and to result codes: the prompt is found at
    /// the end of the noise and the PDU written once; the results are read behind theirs.
    @Test(arguments: [[0xFF, 0xFE], [0x00, 0x13, 0xF0], [0xE0, 0x80]] as [[UInt8]])
    func noiseGluedToThePromptAndToResultCodes(_ noise: [UInt8]) throws {
        // Joined by a function, not a `+` chain: Debian's Swift 6.2.3 gives up type-checking
        // long chains of array concatenations (the arm64 stage builds with it).
        func bytes(_ pieces: [UInt8]...) -> [UInt8] { pieces.flatMap { $0 } }
        var d = Driver()
        let p = try pdu()
        d.start(.submit(p))
        // Printable garbage too: no line a modem sends ends in "> ".
        d.feed(bytes(noise, Array("x#@".utf8), noise, Array("> ".utf8)))
        #expect(render(d.written).hasSuffix(p.hexString + "<^Z>"), "the prompt was not found: \(render(d.written))")
        d.feed(bytes([0x0D, 0x0A], noise, Array("+CMGS: 7\r\n".utf8), noise, Array("OK\r\n".utf8)))
        #expect(d.completions.map(\.outcome) == [.submitted(messageReference: 7)])
        d.events.removeAll()
        d.start(.attention)
        d.feed(bytes([0x0D, 0x0A], noise, Array("OK\r\n".utf8)))
        #expect(d.completions.map(\.outcome) == [.ok])
        d.events.removeAll()
        // Outside a submit's wait, "> " after noise is no prompt of ours: nothing is written.
        let before = d.written.count
        d.feed([0xFF] + Array("> ".utf8))
        #expect(d.written.count == before)
    }

    @Test func echoOnAndOff() {
        var d = Driver()
        d.start(.attention)
        #expect(d.written == Array("AT\r".utf8))
        d.feed("AT\r\r\nOK\r\n")  // echo on
        #expect(d.completions == [ATResponse(.ok)])
        d.events.removeAll()
        d.start(.signalQuality)
        d.feed("\r\n+CSQ: 20,99\r\n\r\nOK\r\n")  // echo off
        #expect(d.completions == [ATResponse(.ok, lines: ["+CSQ: 20,99"])])
    }

    @Test func linesSplitAnywhereAndBareTerminators() {
        var d = Driver()
        d.start(.pinStatus)
        for b in Array("AT+CPIN?\r\r\n+CPIN: READY\n\nOK\r".utf8) { d.feed([b]) }
        #expect(d.completions == [ATResponse(.ok, lines: ["+CPIN: READY"])])
    }

    @Test func missingFinalOKTimesOutWithTheInformation() {
        var d = Driver()
        d.start(.pinStatus)
        d.feed("\r\n+CPIN: READY\r\n")
        d.advance(.milliseconds(299))
        #expect(d.completions.isEmpty)
        d.advance(.milliseconds(1))
        #expect(d.completions == [ATResponse(.timedOut(afterPrompt: false), lines: ["+CPIN: READY"])])
    }

    @Test func errorsAreFinalResults() {
        var d = Driver()
        d.start(.pinStatus)
        d.feed("\r\n+CME ERROR: 14\r\n")
        d.start(.echoOff)
        d.feed("\r\nERROR\r\n")
        d.start(.pinStatus)
        d.feed("\r\n+CME ERROR: SIM busy\r\n")
        #expect(d.completions.map(\.outcome) == [.cmeError(ATErrorCode("14")), .error, .cmeError(ATErrorCode("SIM busy"))])
        #expect(ATErrorCode("14").number == 14)
    }

    @Test func unsolicitedCodesInsideAReply() {
        var d = Driver()
        d.start(.registration(.cs))
        d.feed("\r\nRING\r\n\r\n+CMTI: \"SM\",3\r\n\r\n+CREG: 0,1\r\n\r\n+CEREG: 1,\"00C3\",\"0A1B\",7\r\n\r\nOK\r\n")
        #expect(d.completions == [ATResponse(.ok, lines: ["+CREG: 0,1"])])
        #expect(d.unsolicited == [.ring, .newMessage("+CMTI: \"SM\",3"), .registration(.eps, .home)])
    }

    @Test func bootAndPowerCodesAreRecognisedWhenIdle() {
        var d = Driver()
        d.feed("\r\nRDY\r\n\r\n+CFUN: 1\r\n\r\n+CPIN: READY\r\n\r\nCall Ready\r\n\r\nSMS Ready\r\n\r\nUNDER-VOLTAGE WARNNING\r\nNORMAL POWER DOWN\r\n")
        #expect(d.unsolicited == [.boot("RDY"), .other("+CFUN: 1"), .simStatus("+CPIN: READY"), .boot("Call Ready"),
                                  .boot("SMS Ready"), .power("UNDER-VOLTAGE WARNNING"), .power("NORMAL POWER DOWN")])
        d.feed("\r\n+QIND: SMS DONE\r\n\r\nSMS DONE\r\n\r\nPB DONE\r\n^RSSI: 12\r\n+CDSI: \"SM\",2\r\n")
        #expect(d.unsolicited.suffix(5) == [.boot("+QIND: SMS DONE"), .boot("SMS DONE"), .boot("PB DONE"),
                                            .signal("^RSSI: 12"), .statusReport("+CDSI: \"SM\",2")])
    }

    /// The whole submit: nothing but AT+CMGS until "> ", then exactly the PDU and Ctrl-Z, with
    /// unsolicited codes between the prompt and +CMGS.
    @Test func submitWritesThePDUOnlyAfterThePrompt() throws {
        var d = Driver()
        let p = try pdu()
        d.start(.submit(p), timeout: .seconds(1))
        #expect(d.written == Array("AT+CMGS=\(p.tpduLength)\r".utf8))
        d.feed("AT+CMGS=\(p.tpduLength)\r\r\n")  // echo
        d.advance(.milliseconds(150))
        d.feed(">")
        #expect(d.written == Array("AT+CMGS=\(p.tpduLength)\r".utf8), "half a prompt is no prompt")
        d.feed(" ")
        #expect(d.written == Array("AT+CMGS=\(p.tpduLength)\r".utf8) + p.hex + [0x1A])
        #expect(d.events.contains(.promptAnswered(.submit(p))))
        d.feed("\r\n+CMTI: \"SM\",4\r\n\r\nRING\r\n")
        d.feed(p.hexString + "\u{1A}")  // echo of the PDU
        d.feed("\r\n+CMGS: 17\r\n\r\nOK\r\n")
        #expect(d.completions == [ATResponse(.submitted(messageReference: 17))])
        #expect(d.unsolicited == [.newMessage("+CMTI: \"SM\",4"), .ring])
    }

    @Test func noPromptWritesEscapeAndNothingElse() throws {
        var d = Driver()
        let p = try pdu()
        d.start(.submit(p))
        d.advance(.milliseconds(200))
        #expect(d.completions == [ATResponse(.promptTimedOut)])
        #expect(d.written == Array("AT+CMGS=\(p.tpduLength)\r\u{1B}".utf8))
        #expect(!d.engine.isIdle, "draining")
        d.advance(.milliseconds(50))
        #expect(d.engine.isIdle)
    }

    /// A prompt that arrives after the timeout is closed with ESC — never typed into.
    @Test func latePromptIsClosedNotFilled() throws {
        var d = Driver()
        let p = try pdu()
        d.start(.submit(p))
        d.advance(.milliseconds(200))
        d.feed("\r\n> ")
        #expect(d.events.contains(.strayPrompt))
        #expect(d.written == Array("AT+CMGS=\(p.tpduLength)\r\u{1B}\u{1B}".utf8))
        d.advance(.milliseconds(60))
        // A prompt that opens while the next command is in flight: that command was typed into
        // it; ESC discards it and the command is abandoned.
        d.start(.attention)
        d.feed("\r\n> ")
        #expect(d.completions.last == ATResponse(.abandoned))
        #expect(d.written.suffix(4) == Array("AT\r\u{1B}".utf8))
        #expect(!d.written.contains(0x1A))
    }

    @Test func errorBeforeThePromptWritesNoPDU() throws {
        var d = Driver()
        let p = try pdu()
        d.start(.submit(p))
        d.feed("\r\n+CMS ERROR: 500\r\n")
        #expect(d.completions == [ATResponse(.cmsError(ATErrorCode("500")))])
        d.feed("\r\n> ")  // and a prompt after that is stray
        #expect(!d.written.contains(0x1A))
    }

    @Test func resultsAfterThePDU() throws {
        let p = try pdu()
        var d = Driver()
        d.start(.submit(p))
        d.feed("> ")
        d.feed("\r\n+CMGS: 3\r\n")  // no OK: sent all the same, after the grace period
        d.advance(.milliseconds(100))
        #expect(d.completions == [ATResponse(.submitted(messageReference: 3))])

        var e = Driver()
        e.start(.submit(p), timeout: .milliseconds(400))
        e.feed("> ")
        e.advance(.milliseconds(400))  // nothing: in doubt
        #expect(e.completions == [ATResponse(.timedOut(afterPrompt: true))])

        var f = Driver()
        f.start(.submit(p))
        f.feed("> ")
        f.feed("\r\nOK\r\n")  // OK without +CMGS is not "sent"
        #expect(f.completions == [ATResponse(.ok)])

        var g = Driver()
        g.start(.submit(p))
        g.feed("> \r\n+CMS ERROR: 38\r\n")
        #expect(g.completions == [ATResponse(.cmsError(ATErrorCode("38")))])
    }

    @Test func escapeAbandonsAndDrains() {
        var d = Driver()
        d.start(.operatorName)
        d.engine.escape(at: d.now, carriageReturn: true, into: &d.events)
        d.engine.takeOutput(into: &d.written)
        #expect(d.completions == [ATResponse(.abandoned)])
        d.feed("\r\nOK\r\n\r\nRDY\r\n")  // the late answer is dropped; the boot message is not
        #expect(d.completions.count == 1)
        #expect(d.unsolicited == [.boot("RDY")])
        #expect(d.written == Array("AT+COPS?\r\u{1B}\r".utf8))
    }

    @Test func overlongLinesAndNoiseAreDropped() {
        var d = Driver()
        d.start(.attention)
        d.feed(Array(repeating: 0x55, count: 5000) + [0x0D, 0x0A])
        d.feed([0x00, 0xFF, 0x0D, 0x0A])
        d.feed("\r\nOK\r\n")
        #expect(d.completions.map(\.outcome) == [.ok])
    }

    @Test func dialResults() throws {
        var d = Driver()
        d.start(.dial(try PhoneNumber("+17787824615")))
        #expect(d.written == Array("ATD+17787824615;\r".utf8))
        d.feed("\r\nBUSY\r\n")
        #expect(d.completions == [ATResponse(.callEnded("BUSY"))])
        d.feed("\r\nNO CARRIER\r\n")
        #expect(d.unsolicited == [.callEnded("NO CARRIER")])
    }

    @Test func registrationVariants() {
        #expect(RegistrationState.parseQuery("0,1") == .home)
        #expect(RegistrationState.parseQuery("2,5,\"00C3\",\"0A1B\",7") == .roaming)
        #expect(RegistrationState.parseQuery("2,5,00C3,0A1B") == .roaming)
        #expect(RegistrationState.parseQuery("1") == .home)
        #expect(RegistrationState.parseQuery("0,6") == .smsOnly(roaming: false))
        #expect(RegistrationState.parseQuery("0,7,\"1A2B\",\"01C2D3E4\",7,,,\"00100100\",\"01011111\"") == .smsOnly(roaming: true))
        #expect(RegistrationState.parseQuery(" 0 , 2 ") == .searching)
        #expect(RegistrationState.parseQuery("1,\"00C3\",\"0A1B\"") == .home)
        #expect(RegistrationState.parseQuery("") == nil)
        #expect(RegistrationState(stat: 6).isRegistered && RegistrationState(stat: 7).isRegistered)
        #expect(!RegistrationState(stat: 2).isRegistered && !RegistrationState(stat: 3).isRegistered)
    }
}

/// A modem flooding the line (94 MB of garbage during a wait would grow the daemon past its
/// 128 MB): the lines kept for the command in flight are capped.
@Suite("AT engine: a flooding modem")
struct ATEngineFloodTests {
    @Test func aFloodOfLinesKeepsAtMostTheCap() {
        var engine = ATEngine()
        var events: [ATEvent] = []
        engine.start(ATRequest(.signalQuality, timeout: .seconds(1)), at: .zero)
        let garbage = Array(String(repeating: "G", count: 900).appending("\r\n").utf8)
        for _ in 0..<5_000 { engine.receive(garbage, at: .zero, into: &events) }
        engine.receive(Array("+CSQ: 21,99\r\nOK\r\n".utf8), at: .zero, into: &events)
        guard case .completed(_, let response)? = events.last else {
            Issue.record("no completion: \(events.suffix(2))")
            return
        }
        #expect(response.outcome == .ok)
        #expect(response.lines.count <= ATEngine.maximumLinesKept + 1)
        #expect(response.value("+CSQ:") == "21,99", "the answer itself survives the noise")
    }
}
