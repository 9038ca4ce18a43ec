/// What the maintainer changes of "How am I doing?" in a running device: the coping cards, the
/// weekly reminder, a restore. The results and the moods are the person's: the maintainer reads
/// them (the export) and restores them, and never edits them.
extension DeviceCore {
    /// A card at the end of the list, saved; the reason when it cannot be stored.
    mutating func addCopingCard(_ card: CopingCard, effects: inout [Effect]) -> String? {
        if let p = CopingCardsFile.problem(with: card) { return p.description }
        let cards = state.selfCheck.cards
        if cards.count >= CopingCardsFile.maximumCount {
            return "the list already has \(cards.count) cards; at most \(CopingCardsFile.maximumCount)"
        }
        setCopingCards(cards + [card], effects: &effects)
        return nil
    }

    /// Card `index` (0-based) deleted if it still reads `expected`; false, changing nothing, when
    /// the list no longer has it there.
    mutating func deleteCopingCard(at index: Int, expected: CopingCard?, effects: inout [Effect]) -> Bool {
        var cards = state.selfCheck.cards
        guard cards.indices.contains(index), expected == nil || cards[index] == expected else { return false }
        cards.remove(at: index)
        setCopingCards(cards, effects: &effects)
        return true
    }

    /// The list replaced and saved; a card on screen stays on screen where it can.
    mutating func setCopingCards(_ cards: [CopingCard], effects: inout [Effect]) {
        state.selfCheck.cards = Array(cards.prefix(CopingCardsFile.maximumCount))
        if case .selfCheck(.cards(var viewer)) = state.overlay {
            viewer.rewrap(state.selfCheck.cards)
            state.overlay = .selfCheck(.cards(viewer))
        }
        effects.append(.save(.copingCards, CopingCardsFile.format(state.selfCheck.cards)))
    }

    /// A restore: what the archive had replaces the device's own, and is saved again as it now
    /// stands. A self-check under way on the device goes on (its result is added when it ends).
    mutating func restoreSelfCheck(_ r: SelfCheckRestore, at now: Moment, effects: inout [Effect]) {
        if let results = r.results {
            state.selfCheck.results = Array(results.suffix(SelfChecksFile.capacity))
            effects.append(.save(.selfChecks, SelfChecksFile.format(state.selfCheck.results)))
        }
        if let moods = r.moods {
            state.selfCheck.moods = Array(moods.suffix(MoodsFile.capacity))
            effects.append(.save(.moods, MoodsFile.format(state.selfCheck.moods)))
        }
        if let cards = r.cards { setCopingCards(cards, effects: &effects) }
        if let reminder = r.reminder { setSelfCheckReminder(reminder, at: now, effects: &effects) }
        refreshSelfCheckSummary(today: today(now))
    }
}
