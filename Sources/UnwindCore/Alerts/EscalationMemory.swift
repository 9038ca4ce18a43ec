/// What follows the alerts, kept across a restart (`escalation.txt`): a device restarted after
/// its ladder finished rings nobody again, one restarted while waiting keeps its deadline, one
/// restarted mid-ladder goes on with the next contact, and "I'm OK now" is not offered twice.

/// What of the episode `escalation.txt` holds, as last saved: compared after every event, so
/// every change is saved whichever path made it (cheap: the arrays are compared by identity first).
struct EscalationMark: Equatable, Sendable {
    var purpose: AlertPurpose?
    var startedWall: WallTime?
    var escalation: EscalationPhase
    var round: Int
    var toRing: [Int]
    var calls: [EscalationCall]
    var allClearSent: Bool
    var allClear: [AlertProgress]
    var progress: [AlertProgress]

    init(_ p: PanicState) {
        purpose = p.aftercare.purpose
        startedWall = p.aftercare.startedWall
        escalation = p.aftercare.escalation
        round = p.aftercare.round
        toRing = p.aftercare.toRing
        calls = p.aftercare.calls
        allClearSent = p.aftercare.allClearSent
        allClear = p.aftercare.allClear
        progress = p.progress
    }
}

extension DeviceCore {
    /// The episode as `escalation.txt` keeps it (nil: no alerts since the device started).
    func escalationRecord(at now: Moment) -> EscalationRecord? {
        let a = state.panic.aftercare
        guard let purpose = a.purpose else { return nil }
        func wall(_ t: Instant) -> WallTime {
            // Rounded up: a deadline kept a fraction late is never one kept early.
            let ns = (t - now.instant).nanoseconds
            let s = ns >= 0 ? (ns + 999_999_999) / 1_000_000_000 : -((-ns) / 1_000_000_000)
            return WallTime(secondsSinceEpoch: now.wall.secondsSinceEpoch + s)
        }
        let phase: EscalationRecord.Phase = switch a.escalation {
        case .idle: .idle
        case .waiting(let t): .waiting(until: wall(t))
        case .ringing(let slot, let since): .ringing(slot: slot, since: wall(since))
        case .between(let t): .between(next: wall(t))
        case .ended(let why): .ended(why)
        }
        return EscalationRecord(
            purpose: purpose, started: a.startedWall ?? a.startedAt.map(wall) ?? now.wall, phase: phase, round: a.round,
            toRing: a.toRing, allClearSent: a.allClearSent,
            contacts: state.panic.progress.map {
                .init(slot: $0.slot, name: $0.name, number: $0.number, delivery: $0.delivery,
                      acknowledged: $0.acknowledged && !$0.answeredCall, mayHaveReached: $0.mayHaveReached)
            },
            calls: a.calls.map { .init(slot: $0.slot, round: $0.round, at: wall($0.at), outcome: $0.outcome) },
            followUps: a.allClear.map { (slot: $0.slot, delivery: $0.delivery) })
    }

    /// After every event: the episode saved when it changed.
    mutating func saveEscalationIfChanged(at now: Moment, effects: inout [Effect]) {
        let mark = EscalationMark(state.panic)
        if let saved = savedEscalation, saved == mark { return }
        savedEscalation = mark
        effects.append(.save(.escalation, EscalationFile.format(escalationRecord(at: now))))
    }

    /// The first event after start: what `escalation.txt` kept becomes the episode, its wall
    /// times the loop's instants. A ladder whose deadline passed while the device was off acts
    /// at this tick (a call that was ringing is hung up and the next contact rung); one that had
    /// ended stays ended.
    mutating func adoptRestoredEscalation(at now: Moment, effects: inout [Effect]) {
        guard let r = restoredEscalation else { return }
        restoredEscalation = nil
        func instant(_ w: WallTime) -> Instant {
            // A clock far off (a record from years ago, a wall clock not yet set) is clamped: a
            // wait is never longer than it was configured, nothing lies before the loop's origin.
            let d = max(-86_400 * 365, min(86_400, w.secondsSinceEpoch - now.wall.secondsSinceEpoch))
            return now.instant + .seconds(d)
        }
        var a = Aftercare()
        a.purpose = r.purpose
        a.startedWall = r.started
        a.startedAt = instant(r.started)
        a.round = r.round
        a.toRing = r.toRing
        a.allClearSent = r.allClearSent
        // The call being rung may still be up (or picked up since): the modem looks for it before
        // anything this tick does to it.
        if case .ringing = r.phase { effects.append(.followCallLeftUp) }
        switch r.phase {
        case .idle: a.escalation = .idle
        case .waiting(let t): a.escalation = .waiting(until: min(instant(t), now.instant + settings.panic.escalateAfter))
        case .ringing(let slot, let since): a.escalation = .ringing(slot: slot, since: instant(since))
        case .between(let t): a.escalation = .between(next: min(instant(t), now.instant + Self.callGap))
        case .ended(let why): a.escalation = .ended(why)
        }
        // Calls switched off since: a ladder under way ends rather than ringing on.
        if a.escalation.isActive, settings.panic.escalateAfter == .zero || settings.panic.callRounds == 0 {
            a.escalation = .ended(.stopped)
        }
        let answered = Set(r.calls.filter { $0.outcome == .answered }.map(\.slot))
        let progress = r.contacts.map { c in
            var p = AlertProgress(slot: c.slot, name: c.name, number: c.number, delivery: c.delivery,
                                  acknowledged: c.acknowledged || answered.contains(c.slot), mayHaveReached: c.mayHaveReached)
            p.answeredCall = answered.contains(c.slot)
            return p
        }
        a.calls = r.calls.map { c in
            EscalationCall(slot: c.slot, name: progress.first { $0.slot == c.slot }?.name ?? "slot \(c.slot + 1)",
                           round: c.round, at: instant(c.at), outcome: c.outcome)
        }
        a.allClear = r.followUps.compactMap { f in
            guard let c = progress.first(where: { $0.slot == f.slot }) else { return nil }
            return AlertProgress(slot: f.slot, name: c.name, number: c.number, delivery: f.delivery)
        }
        for p in progress where p.delivery == .delivered && p.slot >= 0 && p.slot < 8 { a.deliveredTold |= 1 << UInt8(p.slot) }
        a.replies = state.panic.aftercare.replies
        state.panic.aftercare = a
        state.panic.progress = progress
        state.panic.allSentSignalled = progress.allSatisfy { $0.delivery == .sent || $0.delivery == .delivered }
        // What the file says is what is on the card: nothing to write until something changes.
        savedEscalation = EscalationMark(state.panic)
        if a.escalation.isActive {
            state.overlay = .alertStatus
            effects.append(.log("escalation resumed after a restart: \(Self.describe(a.escalation, at: now)), round \(a.round) of \(settings.panic.callRounds), \(a.calls.count) call(s) made"))
        }
    }

    /// A backup's episode, through `MaintenanceChange.restoreEscalation`.
    mutating func restoreEscalation(_ record: EscalationRecord?, at now: Moment, effects: inout [Effect]) {
        let going = state.panic.aftercare.escalation.isActive || state.panic.progress.contains { !$0.delivery.isFinished }
            || state.panic.sendingAt != nil
        if going {
            effects.append(.log("restore: the device's own alerts are going on; its escalation is kept, not the backup's"))
            savedEscalation = nil  // written again as it stands, over what the restore put there
            return
        }
        guard let record else {
            state.panic.aftercare = Aftercare()
            state.panic.progress = []
            savedEscalation = nil
            effects.append(.save(.escalation, ""))
            return
        }
        restoredEscalation = record.restored
        adoptRestoredEscalation(at: now, effects: &effects)
        savedEscalation = nil
    }

    static func describe(_ e: EscalationPhase, at now: Moment) -> String {
        switch e {
        case .idle: "idle"
        case .waiting(let t): "calls start in \(max(0, (t - now.instant).nanoseconds / 1_000_000_000)) s"
        case .ringing(let slot, _): "slot \(slot + 1) was being rung"
        case .between: "between calls"
        case .ended(let why): "ended (\(why.word))"
        }
    }
}
