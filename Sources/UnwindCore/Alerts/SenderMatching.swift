extension AlertSlotState {
    /// Every slot (0-based) whose contact an SMS from `sender` may have come from.
    public static func slots(sending sender: String, in slots: [AlertSlotState], counselling: PhoneNumber?) -> [Int] {
        var known: [String] = []
        for s in slots { if case .ready(let a) = s, a.number.isInternational { known.append(a.number.digits) } }
        if let line = counselling, line.isInternational { known.append(line.digits) }
        return slots.indices.filter { i in
            if case .ready(let a) = slots[i] { a.number.isSameNumber(asSender: sender, known: known) } else { false }
        }
    }
}
