public enum StatusAnswer {
    /// The answer, at most one SMS of 160 characters: the device's name, whether a PANIC would
    /// go out now and if not why, the signal, the last monthly test, and what else is wrong.
    /// Nothing about the person's sessions, moods or other contacts.
    /// `limit`: the characters one SMS holds (160, or 70 in UCS-2); what else is wrong is left
    /// out to fit it, and, with `cut`, the rest cut at it.
    public static func text(name: String, readiness: AlertReadiness?, notReadySince: WallTime?, signal: Int?,
                            lastTest: AlertTestRecord?, problems: [DeviceProblem], now: WallTime, zone: LocalTimeZone,
                            limit: Int = AlertSlot.messageLimit, cut: Bool = true) -> String {
        var head = "\(name): "
        if let r = readiness {
            if r.isReady {
                head += "a PANIC would go out now."
            } else {
                let why = r.problems.map(words).joined(separator: ", ")
                head += "a PANIC would NOT go out now: \(why)"
                if let since = notReadySince { head += " since " + clockText(since, now: now, zone: zone) }
                head += "."
            }
        } else {
            head += "the modem is still starting."
        }
        var tail = " Signal: \(signalWords(signal))."
        if let t = lastTest {
            tail += " Last test \(dateText(t.at, zone: zone)): \(t.outcome.word)."
        } else {
            tail += " No test yet."
        }
        var extra = problems.map(\.words)
        // The news first; what else is wrong as far as one SMS holds it.
        while true {
            let also = extra.isEmpty ? "" : " Also: " + extra.joined(separator: "; ") + "."
            let s = head + tail + also
            if s.count <= limit || extra.isEmpty { return cut ? String(s.prefix(limit)) : s }
            extra.removeLast()
        }
    }

    /// A readiness problem in the contact's words.
    static func words(_ p: AlertReadiness.Problem) -> String {
        switch p {
        case .noModem: "no modem"
        case .modemSilent: "modem not answering"
        case .sim(let why):
            why.contains("PUK") ? "SIM locked (needs its PUK)"
                : why.contains("PIN") ? "SIM asks for its PIN"
                : why.contains("no SIM") ? "no SIM card" : "SIM not working"
        case .notRegistered: "no mobile network"
        case .weakSignal: "signal too weak"
        case .noServiceCentre: "no message centre number"
        case .serviceCentreRefused: "the network refuses the message centre"
        }
    }

    /// `+CSQ` rssi in words (99: the modem does not know).
    static func signalWords(_ rssi: Int?) -> String {
        guard let r = rssi, (0...31).contains(r) else { return "unknown" }
        switch r {
        case 0...1: return "none"
        case 2...9: return "weak"
        case 10...14: return "fair"
        case 15...19: return "good"
        default: return "strong"
        }
    }

    /// "14:05" today, "2 Mar 14:05" before.
    static func clockText(_ t: WallTime, now: WallTime, zone: LocalTimeZone) -> String {
        let (day, second) = CivilDate.local(t.secondsSinceEpoch, in: zone)
        let minute = Int(second / 60)
        let hm = "\(minute / 60 < 10 ? "0" : "")\(minute / 60):\(minute % 60 < 10 ? "0" : "")\(minute % 60)"
        if day == CivilDate.local(now.secondsSinceEpoch, in: zone).day { return hm }
        return dateText(t, zone: zone) + " " + hm
    }

    /// "2 Mar".
    static func dateText(_ t: WallTime, zone: LocalTimeZone) -> String {
        let date = CivilDate.civil(ofDay: CivilDate.local(t.secondsSinceEpoch, in: zone).day)
        return "\(date.day) \(CivilDate.monthAbbreviations[Int(date.month) - 1])"
    }

    /// The maintainer's text about a problem, or its end.
    public static func maintainerText(name: String, problem: DeviceProblem, since: WallTime?, recovered: Bool,
                                      now: WallTime, zone: LocalTimeZone) -> String {
        if recovered { return "\(name) is fine again: \(problem.fixedWords)." }
        var s = "\(name) needs attention: \(problem.words)"
        if let since { s += " since " + clockText(since, now: now, zone: zone) }
        return s + "."
    }
}
