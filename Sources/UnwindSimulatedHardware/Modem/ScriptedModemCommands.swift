#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import UnwindCore

/// The command lines the simulated modem knows, answered as a healthy SIM800/SIM7600 would
/// unless the script says otherwise. A line it does not know is a violation: the device must
/// never send anything it did not mean to.
extension ScriptedModem {
    mutating func command(_ bytes: [UInt8], startedAt: Instant, at now: Instant) {
        if bytes.isEmpty { return }
        let text = String(decoding: bytes, as: UTF8.self)
        commands.append(text)
        if bytes.contains(where: { $0 < 0x20 || $0 == 0x7F }) {
            violations.append("control character in the command line \(text.debugDescription)")
        }
        if let list = script.replies[text] {
            let k = replyCursor[text, default: 0]
            if k < list.count {
                replyCursor[text] = k + 1
                send(list[k], at: now)
                return
            }
        }
        let upper = text.uppercased()
        switch upper {
        case "AT", "AT+CMEE=1", "AT+CMEE=2", "ATE1":
            if upper == "ATE1" { echo = true }
            ok(now)
        case "ATE0":
            echo = false
            ok(now)
        case "AT+CPIN?":
            if let _ = script.simPIN, !simUnlocked {
                send([wrongPINs >= 3 ? "+CPIN: SIM PUK" : "+CPIN: SIM PIN", "OK"], at: now)
            } else {
                send(["+CPIN: READY", "OK"], at: now)
            }
        case _ where upper.hasPrefix("AT+CPIN=") && script.simPIN != nil:
            let given = String(text.dropFirst("AT+CPIN=".count)).replacing("\"", with: "")
            if wrongPINs < 3 && given == script.simPIN {
                simUnlocked = true
                ok(now)
            } else {
                wrongPINs += 1
                send(["+CME ERROR: 16"], at: now)
            }
        case "AT+CREG?", "AT+CGREG?", "AT+CEREG?":
            let answer = upper == "AT+CREG?" ? script.creg : upper == "AT+CGREG?" ? script.cgreg : script.cereg
            if let a = answer { send([a, "OK"], at: now) } else { send(["ERROR"], at: now) }
        case "AT+CSQ":
            send([script.csq, "OK"], at: now)
        case "AT+COPS?":
            send([script.cops, "OK"], at: now)
        case "AT+COPS=0":
            // Automatic selection: registered again (a modem someone deregistered by hand).
            script.cops = "+COPS: 0,0,\"Unwind Mobile\",7"
            script.creg = script.creg.map { _ in "+CREG: 0,1" }
            ok(now)
        case "AT+CSCA?":
            if let set = serviceCentre {
                send(["+CSCA: " + set.dropFirst("AT+CSCA=".count), "OK"], at: now)
            } else {
                send([script.csca, "OK"], at: now)
            }
        case "AT+CMGF=0":
            pduMode = true
            ok(now)
        case "AT+CMGF=1":
            pduMode = false
            ok(now)
        case "ATH":
            calls.append("ATH")
            callNumber = nil
            callEnds = nil
            callAnswers = nil
            callPickedUp = false
            ok(now)
        case "AT+CLCC":
            guard script.listsCalls else { return send(["ERROR"], at: now) }
            if let lines = script.callList {
                send(lines + ["OK"], at: now)
            } else if let n = callNumber {
                // stat 0 active once picked up, 3 alerting before; voice, not multiparty.
                let stat = callPickedUp || callAnswers.map({ now >= $0 }) == true ? 0 : 3
                send(["+CLCC: 1,0,\(stat),0,0,\"\(n)\",\(n.hasPrefix("+") ? 145 : 129)", "OK"], at: now)
            } else {
                ok(now)
            }
        case "AT+CFUN=1,1":
            ok(now)
            restart(at: now + .milliseconds(5), keepingOutput: true)
        default:
            if upper.hasPrefix("AT+CMGS="), let n = Int(upper.dropFirst(8)) {
                cmgs(length: n, startedAt: startedAt, at: now)
            } else if upper.hasPrefix("AT+CSCA=\"") && Self.isServiceCentre(text) {
                serviceCentre = text
                ok(now)
            } else if upper.hasPrefix("ATD") && Self.isDial(text) {
                calls.append(text)
                dial(String(text.dropFirst(3).dropLast()), at: now)
            } else if messageCommand(text, at: now) {
                return
            } else {
                violations.append("unknown command line \(text.debugDescription)")
                send(["ERROR"], at: now)
            }
        }
    }

    static func isServiceCentre(_ s: String) -> Bool {
        // AT+CSCA="<+digits>",<145|129>
        let body = s.dropFirst(9)
        guard let q = body.firstIndex(of: "\"") else { return false }
        let number = body[..<q], rest = body[body.index(after: q)...]
        return (try? PhoneNumber(String(number))) != nil && (rest == ",145" || rest == ",129")
    }

    static func isDial(_ s: String) -> Bool {
        guard s.hasSuffix(";") else { return false }
        return (try? PhoneNumber(String(s.dropFirst(3).dropLast()))) != nil
    }
}
