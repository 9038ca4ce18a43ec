#if canImport(Glibc)
import Glibc
#endif
import UnwindMaintenance
import UnwindCore
import UnwindModem

/// The maintainer's requests that reach a real phone or the modem itself: a test message, a
/// technician's AT command, the start-up check. Each answers later, when the modem has.
extension MaintenanceDesk {
    func modemOrFail() throws(ControlFailure) -> GSMModem {
        guard let modem = device.modem else {
            throw .failed("this device runs without a modem (a simulation with scripted alerts); nothing to ask")
        }
        return modem
    }

    func testAlert(slot: Int, wait: Duration, at now: Moment) throws(ControlFailure) -> ControlReply {
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

    func technician(_ command: TechnicianCommand, _ modem: GSMModem, at now: Moment) -> ControlReply {
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
            return ControlResponse(.failed("the modem did not run \(command.text) in time (\(DeviceStatus.link(modem.status.link)); SIM \(modem.status.sim)); nothing was sent"))
        }
        return .later(until: now.instant + .seconds(15), poll: check, cancel: { modem.cancelTechnician(ticket) })
    }

    func modemCheck(_ modem: GSMModem, at now: Moment) -> ControlReply {
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
                steps.append(ModemStepReport(command: commands[i], outcome: "not run: the modem is \(DeviceStatus.link(modem.status.link))",
                                             lines: [], ok: false))
            }
            let failed = steps.filter { !$0.ok }.count
            var r = ControlResponse(code: failed == 0 ? 0 : 1,
                                    message: failed == 0 ? nil : "\(failed) of \(steps.count) start-up steps failed")
            r.steps = steps
            r.status = self.status(at: now)
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

}
