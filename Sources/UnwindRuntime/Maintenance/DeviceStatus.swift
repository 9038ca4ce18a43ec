#if canImport(Glibc)
import Glibc
#endif
import UnwindMaintenance
import UnwindCore
import UnwindModem

/// `unwind status`: the device's state in the maintainer's words.
enum DeviceStatus {
    /// The report from the core's state, the modem's and the loop's own figures: a pure
    /// function of what it is given (the pid aside), so a test can check it without a loop.
    static func report(_ s: DeviceState, settings: DeviceSettings, modem: GSMModem?, statistics: LoopStatistics,
                       server: ControlServer?, at now: Moment) -> StatusReport {
        let totals = s.breathing.totals(at: now.instant)
        let session: String
        switch s.breathing.session {
        case .ready: session = "ready (no session)"
        case .running(let c): session = "running for \(Self.clock((now.instant - c.start).wholeSeconds))"
        case .finished(let secs): session = "finished (last session \(Self.clock(secs)))"
        }
        var modemReport: StatusReport.Modem?
        var messages: [StatusReport.Message] = []
        if let m = modem {
            let st = m.status
            let registration = RegistrationDomain.allCases.compactMap { d in st.registration[d].map { "\(d.rawValue) \($0)" } }
            modemReport = StatusReport.Modem(
                port: st.port, link: Self.link(st.link), sim: st.sim.description,
                registration: registration.isEmpty ? "unknown" : registration.joined(separator: ", "),
                signal: st.signal?.description ?? "unknown", operatorName: st.operatorName, serviceCentre: st.serviceCentre,
                lastProblem: st.lastProblem, restarts: st.restarts, call: Self.call(m.call))
            messages = m.messages.map { msg in
                StatusReport.Message(id: msg.id.rawValue, slot: msg.slot, contact: msg.contactName, state: Self.describe(msg.state),
                                     attempts: msg.attempts, lastProblem: msg.lastProblem?.description)
            }
        }
        let pending = messages.filter { !["sent", "delivered", "cancelled"].contains($0.state) && !$0.state.hasPrefix("failed") }.count
        let failed = messages.filter { $0.state.hasPrefix("failed") }.count
        var report = StatusReport(
            pid: getpid(), startedAt: server?.startedAt.secondsSinceEpoch ?? 0, now: now.wall.secondsSinceEpoch,
            stateDirectory: server?.stateDirectory ?? "", page: "\(s.page)", overlay: Self.overlay(s.overlay),
            session: session, display: s.display.asleep ? "asleep" : "on", displayHealth: server?.displayHealth?(),
            totalSeconds: totals.totalSeconds, sessions: totals.count, shortestSeconds: totals.shortestSeconds,
            longestSeconds: totals.longestSeconds, mantraCount: s.mantras.count,
            currentMantra: s.mantras.isEmpty ? 0 : s.mantras.current + 1,
            reminder: RemindersFile.line(s.reminders.schedule), nextReminder: s.reminders.nextDue?.secondsSinceEpoch,
            alertSlots: s.panic.slots.map(Self.slot), modem: modemReport, outboxPending: pending, outboxFailed: failed,
            messages: messages, framesRendered: statistics.framesRendered, framesMissed: statistics.framesMissed,
            loopErrors: statistics.errors, recentErrors: server?.recentErrors?() ?? [])
        report.version = UnwindVersion.current
        report.sessionRunning = s.breathing.isRunning
        // A restart now would lose what follows the alerts (the calls due, the check-in's reminders).
        report.alertsPending = pending > 0 || s.panic.progress.contains { !$0.delivery.isFinished }
            || s.panic.aftercare.escalation.isActive || s.checkIn.sendsAt != nil
        report.help = Self.help(s, settings: settings, now: now)
        let minutes = s.breathing.minutes
        report.breathing = MaintenanceEdits.describe(s.breathing.preset)
            + (minutes > 0 ? "; sessions of \(minutes) min" : "; sessions open-ended")
        return report
    }

    static func clock(_ seconds: Int64) -> String {
        let h = seconds / 3600, m = seconds / 60 % 60, s = seconds % 60
        func two(_ v: Int64) -> String { v < 10 ? "0\(v)" : "\(v)" }
        return h > 0 ? "\(h):\(two(m)):\(two(s))" : "\(two(m)):\(two(s))"
    }

    static func overlay(_ o: Overlay) -> String {
        switch o {
        case .none: "none"
        case .help: "help"
        case .stats: "statistics"
        case .reminderSettings: "reminder settings"
        case .confirmDelete: "delete this mantra?"
        case .alertStatus: "alert status"
        case .counsellingCode: "counselling QR code"
        case .rating(let q): q.isBefore ? "check-in before a session" : "check-in after a session"
        // Which of the page's screens, never: what the person is answering stays on the device.
        case .selfCheck: "How am I doing?"
        }
    }

    static func slot(_ s: AlertSlotState) -> String {
        switch s {
        case .empty: "empty"
        case .ready(let a): "\(a.name) \(a.number.text)"
        case .needsAttention(let p): "needs attention: \(p)"
        }
    }

    static func link(_ l: ModemStatus.Link) -> String {
        switch l {
        case .closed(let why?): "not connected (\(why))"
        case .closed(nil): "not connected"
        case .starting: "starting"
        case .ready: "ready"
        case .resetting: "restarting"
        }
    }

    static func call(_ c: CallState) -> String {
        switch c {
        case .idle: "none"
        case .dialling(let n): "dialling \(n.text)"
        case .active(let n): "calling \(n.text) (not answered yet)"
        case .answered(let n): "in a call with \(n.text) (answered)"
        case .hangingUp: "hanging up"
        case .ended(let why): "ended (\(why))"
        case .failed(let why): "failed (\(why))"
        }
    }

    static func describe(_ s: MessageState) -> String {
        switch s {
        case .queued: "queued"
        case .sending: "sending"
        case .sent: "sent"
        case .delivered: "delivered"
        case .retrying(let p, _): "retrying (\(p))"
        case .failed(let p): "failed (\(p))"
        case .cancelled: "cancelled"
        }
    }
}
