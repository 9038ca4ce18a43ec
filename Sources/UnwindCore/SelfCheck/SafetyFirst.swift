/// PHQ-9 item 9 answered above "Not at all": before the total, at once, the counselling line —
/// SELECT calls it (the alert page's call, through the modem), holding SELECT shows its website
/// as the alert page's QR code — and, when an alert slot is set, the offer to tell the alert
/// contacts: RIGHT asks "Tell your contacts?", and only SELECT there sends, by PANIC's own
/// path (every ready slot's message, the same status screen). Nothing is sent without that
/// SELECT. PAGE goes on to the results. No motor: nothing here should alarm.
extension DeviceCore {
    mutating func handleSafety(_ gesture: ButtonGesture, _ step: SafetyStep, at now: Moment, effects: inout [Effect]) {
        var s = step
        switch s.stage {
        case .offer:
            switch gesture {
            case .short(.select): callOrHangUpCounselling(at: now, effects: &effects)
            case .long(.select) where state.panic.websiteCode != nil:
                swallowPress(.select)
                s.stage = .code
            case .down(.right) where state.panic.hasAContact:
                swallowPress(.right)
                s.stage = .confirmTelling
            case .down(.page):
                swallowPress(.page)
                return show(.result(step.outcome), at: now)
            default: return
            }
        case .code:
            guard case .down(let b) = gesture else { return }
            swallowPress(b)
            s.stage = .offer
        case .confirmTelling:
            guard case .down(let b) = gesture else { return }
            swallowPress(b)
            guard b == .select else {
                s.stage = .offer
                break
            }
            // PANIC's path: the status screen takes over, as after PANIC.
            state.overlay = .none
            return sendEveryAlert(at: now, effects: &effects)
        }
        state.overlay = .selfCheck(.safety(s))
    }
}

extension Overlay {
    /// The safety screen shows the counselling website's QR code (drawn as the alert page's).
    public var showsCounsellingCode: Bool {
        if case .selfCheck(.safety(let s)) = self { return s.stage == .code }
        return false
    }
}
