#if canImport(Glibc)
import Glibc
#endif
import Foundation
import UnwindControl
import UnwindCore
import UnwindModem

/// The running device's answers to the maintainer's requests. Every change is made to the
/// core, as a button's would be, and saved by the device itself (one writer, so the person's
/// edits on the device and the maintainer's never overwrite each other); the answer waits for
/// the write to reach the card. Nothing here blocks: slow things (the card, the modem) answer
/// through `ControlReply.later`.
extension DeviceLoop: ControlHandling {
    /// How long a change may wait for the card before the command is told it failed.
    static let writeTimeout: Duration = .seconds(30)

    func handleControl(_ request: ControlRequest, from peer: ControlServer.Peer, at now: Moment) -> ControlReply {
        if request != .status && request != .screen {
            logger.notice("control: \(peer) asks: \(Self.summary(request))")
        }
        do {
            return try answer(request, at: now)
        } catch {
            return .now(ControlResponse(error))
        }
    }

    static func summary(_ r: ControlRequest) -> String {
        switch r {
        case .restore(let files): "restore (\(files.count) files)"
        default: "\(r)"
        }
    }

    private func answer(_ request: ControlRequest, at now: Moment) throws(ControlFailure) -> ControlReply {
        switch request {
        case .status:
            var r = ControlResponse.done()
            r.status = statusReport(at: now)
            return .now(r)

        case .screen:
            var r = ControlResponse.done()
            r.screen = ScreenReport(width: framebuffer.width, height: framebuffer.height, bytes: Data(framebuffer.bytes),
                                    asleep: core.state.display.asleep, page: "\(core.state.page)")
            return .now(r)

        case .addMantra(let given):
            let text = MaintenanceEdits.mantraText(given)
            try MaintenanceEdits.checkMantra(text, count: core.state.mantras.count)
            let before = persistence.writesAsked
            if case .mantra(let problem)? = maintain(.addMantra(text)) { throw .input("mantra: \(problem)") }
            let shown = core.state.overlay == .confirmDelete ? "the person is deciding about another one on the device" : "shown on the device now"
            return afterWrites(before, now, "added mantra \(core.state.mantras.count): \"\(text)\" (\(shown))")

        case .deleteMantra(let number, let expected):
            let items = core.state.mantras.items
            let index = try MaintenanceEdits.mantraIndex(number, count: items.count)
            let before = persistence.writesAsked
            guard maintain(.deleteMantra(index: index, expected: expected)) == nil else {
                throw MaintenanceEdits.listChanged(number, items)
            }
            return afterWrites(before, now, "deleted mantra \(number): \"\(items[index])\"; \(items.count - 1) left")

        case .resetMantras:
            let shipped = DeviceContent.shippedMantras(in: control?.contentDirectory ?? DeviceContent.directory())
            guard !shipped.isEmpty else { throw .failed("the shipped mantras cannot be read from \(control?.contentDirectory ?? "the content directory")") }
            let before = persistence.writesAsked
            maintain(.setMantras(shipped, current: 0))
            return afterWrites(before, now, "the \(shipped.count) shipped mantras are back; the person's own were replaced")

        case .setReminder(let line):
            let schedule = try MaintenanceEdits.reminder(line)
            let before = persistence.writesAsked
            maintain(.setReminder(schedule))
            return afterWrites(before, now, "reminder: \(RemindersFile.line(schedule))")

        case .setAlert(let slot, let name, let number, let message):
            let index = try MaintenanceEdits.slotIndex(slot)
            let alert = try MaintenanceEdits.mergedAlert(core.state.panic.slots[index], slot: slot, name: name,
                                                         number: number, message: message)
            let before = persistence.writesAsked
            maintain(.setAlertSlot(slot, alert))
            var reply = ControlResponse.done("slot \(slot) saved")
            reply.alert = MaintenanceEdits.report(slot: slot, alert)
            return afterWrites(before, now, reply)

        case .clearAlert(let slot):
            let index = try MaintenanceEdits.slotIndex(slot)
            let wasEmpty = core.state.panic.slots[index] == .empty
            let before = persistence.writesAsked
            maintain(.setAlertSlot(slot, nil))
            return afterWrites(before, now, wasEmpty ? "slot \(slot) was already empty" : "slot \(slot) cleared")

        case .testAlert(let slot, let waitSeconds):
            return try testAlert(slot: slot, wait: .seconds(max(1, min(600, waitSeconds))), at: now)

        case .resetStatistics:
            let before = persistence.writesAsked
            maintain(.replaceStatistics(totals: .zero, history: []))
            return afterWrites(before, now, "breathing statistics reset to zero")

        case .restore(let files):
            let bytes = files.mapValues { [UInt8]($0) }
            let state = try MaintenanceEdits.restorable(bytes)
            let before = persistence.writesAsked
            // All nine files as one change first: a kill mid-restore leaves the old state or the
            // new one, never a mix. The core's own saves that follow write the same state again.
            persistence.saveAll((StateArchive.stateFiles + StateArchive.optionalFiles).compactMap { n in bytes[n].map { (name: n, bytes: $0) } })
            maintain(.restore(totals: state.totals, history: state.history, mantras: state.mantras,
                              reminder: state.reminder, alertSlots: state.alertSlots))
            if let patterns = state.patterns { maintain(.setCustomPatterns(patterns)) }
            if let choice = state.choice, let c = choice { maintain(.setBreathingChoice(c)) }
            return afterWrites(before, now, MaintenanceEdits.restoredMessage(state))

        case .modemCheck:
            let modem = try modemOrFail()
            return modemCheck(modem, at: now)

        case .modemCommand(let text):
            let command: TechnicianCommand
            do { command = try TechnicianCommand(text) } catch { throw .input(error.reason) }
            let modem = try modemOrFail()
            return technician(command, modem, at: now)

        case .motorTest:
            maintain(.motorTest)
            return .now(.done("the device pulses its motor 3 times (0.3 s each) now"))

        case .addPattern(let name, let words):
            let offered = core.state.breathing.presets
            let p = try MaintenanceEdits.newPattern(name: name, words: words, existing: offered)
            let before = persistence.writesAsked
            maintain(.setCustomPatterns(offered.filter(\.isCustom) + [p]))
            return afterWrites(before, now, "added pattern \(MaintenanceEdits.describe(p)); offered on the breathing page now")

        case .removePattern(let name):
            let remaining = try MaintenanceEdits.removingPattern(name, from: core.state.breathing.presets)
            let wasChosen = core.state.breathing.preset.name == name
            let before = persistence.writesAsked
            maintain(.setCustomPatterns(remaining))
            return afterWrites(before, now, "removed pattern \(name)" + (wasChosen ? "; the page now offers \(core.state.breathing.preset.name)" : ""))
        }
    }

    // MARK: Waiting for the card

    private func afterWrites(_ before: UInt64, _ now: Moment, _ message: String) -> ControlReply {
        afterWrites(before, now, ControlResponse.done(message))
    }

    /// Answers once the writes asked for since `before` are on the card (or failed).
    private func afterWrites(_ before: UInt64, _ now: Moment, _ response: ControlResponse) -> ControlReply {
        let barrier = persistence.barrier(after: before)
        var response = response
        if response.mantras == nil {
            response.mantras = MantrasReport(items: core.state.mantras.items,
                                              current: core.state.mantras.isEmpty ? 0 : core.state.mantras.current + 1)
        }
        let answer = response
        let check: (Moment, Bool) -> ControlResponse? = { _, expired in
            if barrier.isDone {
                // The core already acts on the change: say so, and that the card does not have it yet.
                if let f = barrier.failure { return ControlResponse(.failed("the device uses the change now, but it is not on the card: \(f)")) }
                return answer
            }
            return expired ? ControlResponse(.failed("the change is made but not yet on the card after \(Self.writeTimeout); see the journal")) : nil
        }
        if let r = check(now, false) { return .now(r) }
        return .later(until: now.instant + Self.writeTimeout, poll: check, cancel: {})
    }

    // MARK: The modem

    private func modemOrFail() throws(ControlFailure) -> GSMModem {
        guard let modem = alerts?.attachedModem else {
            throw .failed("this device runs without a modem (a simulation with scripted alerts); nothing to ask")
        }
        return modem
    }

    private func testAlert(slot: Int, wait: Duration, at now: Moment) throws(ControlFailure) -> ControlReply {
        let index = try MaintenanceEdits.slotIndex(slot)
        let alert: AlertSlot
        switch core.state.panic.slots[index] {
        case .empty: throw .failed("slot \(slot) is empty: set it first (unwind alerts set \(slot) --name … --number … --message …)")
        case .needsAttention(let p): throw .failed("slot \(slot) needs attention (\(AlertSlotFile.name(slot: slot)): \(p)); set it again first")
        case .ready(let a): alert = a
        }
        let test = try MaintenanceEdits.testAlert(alert, slot: slot)
        let modem = try modemOrFail()
        // Device-wide, whoever asks and on whichever connection: each test reaches a real phone.
        if let last = lastTestMessage, now.instant - last < ControlLimits.testMessageInterval {
            let interval = ControlLimits.testMessageInterval.wholeSeconds
            let ago = (now.instant - last).wholeSeconds
            let left = interval - ago
            throw .failed("a test message went out \(ago) s ago and the device sends at most one every \(interval) s; try again in \(left) s")
        }
        let id = modem.sendTest(test, at: now)
        lastTestMessage = now.instant
        let to = "\(test.name) (\(test.number.text))"
        let check: (Moment, Bool) -> ControlResponse? = { _, expired in
            let state = modem.message(id)?.state
            switch state {
            case .sent?:
                var r = ControlResponse.done("test message sent to \(to): the network accepted it (\(test.encoding))")
                r.alert = MaintenanceEdits.report(slot: slot, test)
                return r
            case .failed(let p)?:
                return ControlResponse(.failed("test message to \(to) failed: \(p)"))
            case .cancelled?:
                return ControlResponse(.failed("test message to \(to) was cancelled"))
            default:
                guard expired else { return nil }
                var why = ""
                if case .retrying(let p, _)? = state { why = " (last attempt: \(p))" }
                // A test never outlives its wait: cancelled, never resent later.
                modem.cancel(id)
                return ControlResponse(.failed("test message to \(to) not confirmed within \(wait)\(why); cancelled (a test is never sent later)"))
            }
        }
        return .later(until: now.instant + wait, poll: check, cancel: { modem.cancel(id) })
    }

    private func technician(_ command: TechnicianCommand, _ modem: GSMModem, at now: Moment) -> ControlReply {
        let ticket = modem.runTechnician(command)
        let check: (Moment, Bool) -> ControlResponse? = { _, expired in
            if let result = modem.takeTechnicianResult(ticket) {
                let step = Self.step(result)
                var r = ControlResponse(code: step.ok ? 0 : 1, message: step.ok ? nil : "\(result.command): \(step.outcome)")
                r.steps = [step]
                return r
            }
            guard expired else { return nil }
            modem.cancelTechnician(ticket)
            return ControlResponse(.failed("the modem did not run \(command.text) in time (\(Self.link(modem.status.link)); SIM \(modem.status.sim)); nothing was sent"))
        }
        return .later(until: now.instant + .seconds(15), poll: check, cancel: { modem.cancelTechnician(ticket) })
    }

    private func modemCheck(_ modem: GSMModem, at now: Moment) -> ControlReply {
        let queued = modem.runStartupCheck()
        let tickets = queued.map(\.ticket)
        let commands = queued.map(\.command)
        final class Collected { var steps: [Int: ModemStepReport] = [:] }
        let collected = Collected()
        let check: (Moment, Bool) -> ControlResponse? = { _, expired in
            for (i, t) in tickets.enumerated() where collected.steps[i] == nil {
                if let r = modem.takeTechnicianResult(t) { collected.steps[i] = Self.step(r) }
            }
            guard collected.steps.count == tickets.count || expired else { return nil }
            var steps: [ModemStepReport] = []
            for (i, t) in tickets.enumerated() {
                if let s = collected.steps[i] { steps.append(s); continue }
                modem.cancelTechnician(t)
                steps.append(ModemStepReport(command: commands[i], outcome: "not run: the modem is \(Self.link(modem.status.link))",
                                             lines: [], ok: false))
            }
            let failed = steps.filter { !$0.ok }.count
            var r = ControlResponse(code: failed == 0 ? 0 : 1,
                                    message: failed == 0 ? nil : "\(failed) of \(steps.count) start-up steps failed")
            r.steps = steps
            r.status = self.statusReport(at: now)
            return r
        }
        return .later(until: now.instant + .seconds(40), poll: check, cancel: { for t in tickets { modem.cancelTechnician(t) } })
    }

    static func step(_ r: TechnicianResult) -> ModemStepReport {
        let outcome: String
        switch r.response.outcome {
        case .ok: outcome = "OK"
        case .error: outcome = "ERROR"
        case .cmeError(let c): outcome = "+CME ERROR: \(c)"
        case .cmsError(let c): outcome = "+CMS ERROR: \(c)"
        case .timedOut: outcome = "no answer"
        case .abandoned: outcome = "abandoned (the modem restarted or its line was lost)"
        case .submitted(let mr): outcome = "+CMGS: \(mr)"
        case .callEnded(let w): outcome = w
        case .promptTimedOut: outcome = "no prompt"
        }
        return ModemStepReport(command: r.command, outcome: outcome, lines: r.response.lines, ok: r.response.outcome.isOK)
    }

    // MARK: Status

    func statusReport(at now: Moment) -> StatusReport {
        let s = core.state
        let totals = s.breathing.totals(at: now.instant)
        let session: String
        switch s.breathing.session {
        case .ready: session = "ready (no session)"
        case .running(let c): session = "running for \(Self.clock((now.instant - c.start).wholeSeconds))"
        case .finished(let secs): session = "finished (last session \(Self.clock(secs)))"
        }
        var modemReport: StatusReport.Modem?
        var messages: [StatusReport.Message] = []
        if let m = alerts?.attachedModem {
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
            pid: getpid(), startedAt: control?.startedAt.secondsSinceEpoch ?? 0, now: now.wall.secondsSinceEpoch,
            stateDirectory: control?.stateDirectory ?? "", page: "\(s.page)", overlay: Self.overlay(s.overlay),
            session: session, display: s.display.asleep ? "asleep" : "on", displayHealth: control?.displayHealth?(),
            totalSeconds: totals.totalSeconds, sessions: totals.count, shortestSeconds: totals.shortestSeconds,
            longestSeconds: totals.longestSeconds, mantraCount: s.mantras.count,
            currentMantra: s.mantras.isEmpty ? 0 : s.mantras.current + 1,
            reminder: RemindersFile.line(s.reminders.schedule), nextReminder: s.reminders.nextDue?.secondsSinceEpoch,
            alertSlots: s.panic.slots.map(Self.slot), modem: modemReport, outboxPending: pending, outboxFailed: failed,
            messages: messages, framesRendered: statistics.framesRendered, framesMissed: statistics.framesMissed,
            loopErrors: statistics.errors, recentErrors: control?.recentErrors?() ?? [])
        report.version = UnwindVersion.current
        report.sessionRunning = s.breathing.isRunning
        // A restart now would lose what follows the alerts (the calls due, the check-in's reminders).
        report.alertsPending = pending > 0 || s.panic.progress.contains { !$0.delivery.isFinished }
            || s.panic.aftercare.escalation.isActive || s.checkIn.sendsAt != nil
        report.help = Self.help(s, settings: core.settings, now: now)
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
        case .active(let n): "in a call with \(n.text)"
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
