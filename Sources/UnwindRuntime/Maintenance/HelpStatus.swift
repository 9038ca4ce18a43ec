import UnwindMaintenance
import UnwindCore

/// `unwind status`'s account of what followed the alerts, the check-in and readiness: the same
/// facts the person's screen shows, in the maintainer's words.
extension DeviceStatus {
    static func help(_ s: DeviceState, settings: DeviceSettings, now: Moment) -> StatusReport.Help {
        let a = s.panic.aftercare
        // Ready means a PANIC would reach someone: the modem able to send, and a contact to send to.
        let reachesSomeone = s.panic.hasAContact
        var readinessProblems = s.panic.readiness.current?.problems.map(\.description) ?? []
        if !reachesSomeone {
            readinessProblems.insert("no alert contacts are set, so a PANIC would reach nobody", at: 0)
            if s.panic.readiness.current == nil { readinessProblems.append("the modem's readiness is not known yet") }
        }
        let readiness: String
        switch s.panic.readiness.current {
        case _ where !reachesSomeone: readiness = "not ready"
        case nil: readiness = "unknown"
        case let r? where r.isReady: readiness = "ready"
        case .some: readiness = "not ready"
        }
        func contact(_ p: AlertProgress) -> StatusReport.Contact {
            let (state, detail) = Self.delivery(p.delivery)
            return StatusReport.Contact(slot: p.slot + 1, name: p.name, state: state, detail: detail, acknowledged: p.acknowledged)
        }
        func ago(_ t: Instant) -> String { "\((now.instant - t).nanoseconds / 1_000_000_000) s ago" }
        let escalation: String
        switch a.escalation {
        case .idle:
            escalation = settings.panic.escalateAfter > .zero && settings.panic.callRounds > 0 ? "idle" : "off"
        case .waiting(let until):
            escalation = "calls start in \(max(0, (until - now.instant).nanoseconds / 1_000_000_000)) s unless a contact replies"
        case .ringing(let slot, let since):
            escalation = "ringing slot \(slot + 1) for \((now.instant - since).nanoseconds / 1_000_000_000) s (round \(a.round) of \(settings.panic.callRounds))"
        case .between: escalation = "between calls (round \(a.round) of \(settings.panic.callRounds))"
        case .ended(let why):
            escalation = switch why {
            case .replied: "ended: a contact replied"
            case .answered: "ended: \(a.calls.last(where: { $0.outcome == .answered }).map { "slot \($0.slot + 1) (\($0.name))" } ?? "a contact") picked up the call"
            case .roundsDone: "ended: every round done"
            case .stopped: "ended: stopped by the person"
            case .restored: "ended: restored from a backup (a restore never rings anyone)"
            case .allClear: "ended: \"I'm OK now\" sent"
            }
        }
        let calls = a.calls.map { "slot \($0.slot + 1) (\($0.name)), round \($0.round), \(ago($0.at)), \($0.outcome.rawValue)" }
        let checkIn: String
        if let deadline = settings.checkIn.deadline {
            var parts = ["daily at \(DeviceCore.clock(deadline)), \(settings.checkIn.grace.nanoseconds / 60_000_000_000) min grace"]
            if let last = s.checkIn.last { parts.append("last: \(CivilDate.text(ofDay: last.day)) \(last.outcome.rawValue)") }
            if let at = s.checkIn.sendsAtClock { parts.append("reminding; help is sent at \(at)") }
            else if s.checkIn.showing { parts.append("prompt on screen") }
            if !s.reminders.clockTrusted { parts.append("waiting for a synchronised clock") }
            checkIn = parts.joined(separator: "; ")
        } else {
            checkIn = "off"
        }
        var monthly = settings.panic.monthlyTest ? "on" : "off"
        if let t = s.panic.readiness.lastTest {
            monthly += "; last: \(t.at.secondsSinceEpoch) (seconds since 1970) \(t.outcome.word)"
            if case .failed(let why) = t.outcome, !why.isEmpty { monthly += " (\(why))" }
        }
        return StatusReport.Help(
            readiness: readiness, readinessProblems: readinessProblems,
            alertsFor: a.purpose?.rawValue, contacts: s.panic.progress.map(contact),
            repliesShown: a.replies.count, escalation: escalation, calls: calls,
            allClear: a.allClear.map(contact), checkIn: checkIn, monthlyTest: monthly,
            replies: a.answers.map {
                StatusReport.Reply(slot: $0.slot + 1, name: $0.name, text: $0.text, at: $0.at.secondsSinceEpoch,
                                   secondsAgo: max(0, (now.instant - $0.instant).nanoseconds / 1_000_000_000))
            },
            readinessSince: s.panic.readiness.notReadySinceWall?.secondsSinceEpoch,
            problems: s.statusTexts.problems.map {
                StatusReport.Problem(name: $0.problem.rawValue, words: $0.problem.words, since: $0.since.secondsSinceEpoch)
            },
            statusRequests: s.statusTexts.requests.map {
                "\($0.at.secondsSinceEpoch) " + ($0.slot.map { "slot \($0 + 1)" } ?? "-") + ": \($0.outcome.words)"
            },
            textsSent: s.statusTexts.sent.map { r in
                let what = switch r.kind {
                case .answer(let slot): "STATUS answer to slot \(slot + 1)"
                case .problem(let p): "maintainer told: \(p.words)"
                case .recovered(let p): "maintainer told: \(p.fixedWords)"
                }
                return "\(r.at.secondsSinceEpoch) \(what)"
            })
    }

    static func delivery(_ d: AlertDelivery) -> (String, String?) {
        switch d {
        case .queued: ("queued", nil)
        case .sending: ("sending", nil)
        case .sent: ("sent", nil)
        case .delivered: ("delivered", nil)
        case .retrying(let why): ("retrying", why)
        case .failed(let why): ("failed", why)
        case .blocked(let why): ("blocked", why)
        case .cancelled: ("cancelled", nil)
        }
    }
}
