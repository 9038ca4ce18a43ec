import UnwindCore
import UnwindSeams

/// Anything besides buttons, motor and frames that the loop wakes for and services on each
/// pass: the reminder alarm, the modem, the control socket, the stop signals. One shape for all
/// of them, so the loop's pass is one list: what to watch, when next, and one step each.
public protocol LoopParticipant: AnyObject {
    /// Descriptors whose readiness should wake the loop (read every pass; keep it allocation-free).
    var pollDescriptors: [Int32] { get }
    /// When it needs a pass even if none of its descriptors is readable (nil: only on those).
    var nextDeadline: Instant? { get }
    /// Does what is due; hands what happened to the core through `loop.apply`.
    func service(_ loop: DeviceLoop, at now: Moment)
}

/// The reminders' wall clock as a participant: its synchronisation (checked once a second), the
/// alarm going off, the clock being set; then the alarm armed for whatever the core now wants.
final class ReminderAlarm: LoopParticipant {
    let alarm: WallClockAlarm
    /// The due time the alarm is armed for, and whether that arming still stands.
    var armedDue: WallTime?
    var armedValid = false
    var nextSyncCheck: Instant?
    private var descriptors: [Int32] = []

    init(_ alarm: WallClockAlarm) {
        self.alarm = alarm
        if let fd = alarm.pollDescriptor { descriptors = [fd] }
    }

    var pollDescriptors: [Int32] { descriptors }
    var nextDeadline: Instant? { nil }

    func service(_ loop: DeviceLoop, at now: Moment) {
        if nextSyncCheck.map({ now.instant >= $0 }) ?? true {
            nextSyncCheck = now.instant + .seconds(1)
            loop.apply(.wallClockSynchronised(alarm.clockIsSynchronised()), at: now)
        }
        switch alarm.poll() {
        case .fired(let due):
            loop.statistics.alarmsFired += 1
            armedValid = false
            loop.apply(.reminderDue(due), at: now)
        case .clockChanged:
            loop.statistics.clockChanges += 1
            armedValid = false
            loop.apply(.wallClockChanged, at: now)
        case .none:
            break
        }
        // One alarm for both reminders (the mantra's, the weekly self-check's): the first due.
        let due = loop.core.state.nextReminderDue
        if !armedValid || due != armedDue {
            // A failed arming is reported once; it is tried again when the due time changes.
            armedDue = due
            armedValid = true
            do { try alarm.arm(due) } catch { loop.report(error) }
        }
    }

    func disarm() { try? alarm.arm(nil) }
}

/// The panic path as a participant: the modem's news becomes what the person sees and feels.
final class AlertNews: LoopParticipant {
    let link: AlertLink
    private var updates: [AlertLinkUpdate] = []

    init(_ link: AlertLink) {
        self.link = link
        updates.reserveCapacity(16)
    }

    var pollDescriptors: [Int32] { link.pollDescriptors }
    var nextDeadline: Instant? { link.nextDeadline }

    func service(_ loop: DeviceLoop, at now: Moment) {
        updates.removeAll(keepingCapacity: true)
        link.step(at: now, into: &updates)
        for u in updates {
            switch u {
            case .resumed(let progress, let purpose, let queuedAt): loop.apply(.alertsResumed(progress, purpose: purpose, queuedAt: queuedAt), at: now)
            case .delivery(let slot, let d): loop.apply(.alertDelivery(slot: slot, d), at: now)
            case .mayHaveReached(let slot): loop.apply(.alertMayHaveReached(slot: slot), at: now)
            case .call(let active): loop.apply(.callChanged(active: active), at: now)
            case .callAnswered: loop.apply(.callAnswered, at: now)
            case .followUp(let slot, let purpose, let d): loop.apply(.followUpDelivery(slot: slot, purpose: purpose, d), at: now)
            case .reply(let reply): loop.apply(.replyReceived(reply), at: now)
            case .readiness(let r): loop.apply(.alertReadiness(r), at: now)
            case .signal(let rssi): loop.apply(.modemSignal(rssi), at: now)
            case .textOutcome(let token, let outcome): loop.apply(.deviceTextOutcome(token: token, outcome), at: now)
            }
        }
    }
}

/// The maintainer's control socket as a participant: serviced on every pass without blocking.
final class ControlService: LoopParticipant {
    let server: ControlServer
    let desk: MaintenanceDesk
    init(_ server: ControlServer, desk: MaintenanceDesk) { self.server = server; self.desk = desk }
    var pollDescriptors: [Int32] { server.pollDescriptors }
    var nextDeadline: Instant? { nil }
    func service(_ loop: DeviceLoop, at now: Moment) { server.service(desk, at: loop.clock.now()) }
}
