#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import UnwindTestSupport
import UnwindMaintenance
import UnwindSimulatedHardware
import UnwindCore
import UnwindRuntime
import UnwindModem
import UnwindSimulator

/// Escape sequences from the modem or the control socket on their way to the maintainer's
/// terminal: printed escaped, never acted on.
@Suite(.serialized) struct TerminalOutputTests {
    /// An operator name no network should send: a terminal title, a colour, a screen clear
    /// through C1's CSI, and a right-to-left override. The AT engine drops C0 and DEL from
    /// every line it reads; C1 and the bidi controls are text to it, and reach the commands.
    static let hostileOperator = "Evil\u{1B}]0;pwned\u{07}\u{1B}[31mNet\u{9B}2J\u{202E}lrt"
    static let keptOperator = "Evil]0;pwned[31mNet\u{9B}2J\u{202E}lrt"
    static let escapedOperator = "Evil]0;pwned[31mNet\\u009B2J\\u202Elrt"

    static func expectNoTerminalControls(_ r: UnwindRun.Result, sourceLocation: SourceLocation = #_sourceLocation) {
        for (stream, text) in [("stdout", r.stdout), ("stderr", r.stderr)] {
            let raw = text.unicodeScalars.filter { $0 != "\n" && TextSafety.isTerminalControl($0) }
            #expect(raw.isEmpty, "\(stream) carries \(raw.map { TextSafety.code($0.value) }): \(r)", sourceLocation: sourceLocation)
        }
    }

    @Test func theModemsOperatorNameReachesTheTerminalEscaped() throws {
        var script = ModemScript()
        script.cops = "+COPS: 0,0,\"\(Self.hostileOperator)\",7"
        let rig = try MaintenanceRig(modemScript: script)
        #expect(rig.wait { rig.status()?.modem?.operatorName != nil })

        let status = rig.unwind(["status"])
        #expect(status.status == 0, "\(status)")
        Self.expectNoTerminalControls(status)
        #expect(status.stdout.contains("; operator \(Self.escapedOperator)"), "\(status)")

        // JSON: the same escapes are JSON's own, so the report decodes to what the modem said.
        let json = rig.unwind(["status", "--json"])
        Self.expectNoTerminalControls(json)
        let decoded = try JSONDecoder().decode(StatusReport.self, from: Data(json.stdout.utf8))
        #expect(decoded.modem?.operatorName == Self.keptOperator)

        let check = rig.unwind(["modem", "check"])
        Self.expectNoTerminalControls(check)
        #expect(check.stdout.contains("operator \(Self.escapedOperator)"), "\(check)")
        let at = rig.unwind(["modem", "at", "AT+COPS?"])
        Self.expectNoTerminalControls(at)
        #expect(at.stdout.contains(Self.escapedOperator), "\(at)")
    }

    /// Whatever answers on the socket, every field of the status is printed escaped.
    @Test func aHostileAnswerOnTheSocketIsPrintedEscaped() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let evil = "x\u{1B}[2J\u{9B}31m\u{202E}\ny"
        let evilJSON = "x\\u001b[2J\u{9B}31m\u{202E}\\ny"
        let text = """
            {"pid":1,"startedAt":0,"now":60,"stateDirectory":"\(evilJSON)","page":"\(evilJSON)","overlay":"\(evilJSON)",
             "session":"\(evilJSON)","display":"\(evilJSON)","displayHealth":"\(evilJSON)","totalSeconds":0,"sessions":0,
             "shortestSeconds":0,"longestSeconds":0,"mantraCount":0,"currentMantra":0,"reminder":"\(evilJSON)",
             "alertSlots":["\(evilJSON)"],"modem":{"port":"\(evilJSON)","link":"\(evilJSON)","sim":"\(evilJSON)",
             "registration":"\(evilJSON)","signal":"\(evilJSON)","operatorName":"\(evilJSON)","serviceCentre":"\(evilJSON)",
             "lastProblem":"\(evilJSON)","restarts":0,"call":"\(evilJSON)"},"outboxPending":1,"outboxFailed":0,
             "messages":[{"id":"\(evilJSON)","contact":"\(evilJSON)","state":"\(evilJSON)","attempts":1}],
             "framesRendered":0,"framesMissed":0,"loopErrors":0,"recentErrors":["\(evilJSON)","\(evilJSON)"]}
            """
        var answer = ControlResponse.done("\(evil)")
        answer.status = try JSONDecoder().decode(StatusReport.self, from: Data(text.utf8))
        #expect(answer.status?.recentErrors.first == evil)
        let server = try FakeDevice(path: dir + "/evil.sock", answer: answer)
        defer { server.stop() }

        let status = UnwindRun.run(["status", "--state", dir, "--socket", server.path])
        #expect(status.status == 0, "\(status)")
        Self.expectNoTerminalControls(status)
        let shown = "x\\u001B[2J\\u009B31m\\u202E\\u000Ay"
        for label in ["state in ", "Session:   ", "operator ", "last problem: ", "call: ", "  "] {
            #expect(status.stdout.contains(label + shown), "'\(label)' in \(status)")
        }
        // One line per field: a line feed inside a field does not start a line of its own.
        #expect(!status.stdout.split(separator: "\n").contains { $0.hasPrefix("y") }, "\(status)")

        let json = UnwindRun.run(["status", "--json", "--state", dir, "--socket", server.path])
        Self.expectNoTerminalControls(json)
        #expect(try JSONDecoder().decode(StatusReport.self, from: Data(json.stdout.utf8)) == answer.status)

        // A failure's words from the socket, on standard error.
        var failure = ControlResponse(code: 1, message: evil)
        failure.status = answer.status
        server.answer = failure
        let failed = UnwindRun.run(["alerts", "clear", "1", "--state", dir, "--socket", server.path])
        expectFailure(failed, 1, "unwind: " + shown)
        Self.expectNoTerminalControls(failed)
    }
}
