import UnwindCore

/// "How am I doing?"'s files, loaded like the others: missing means none (and `never`); a file
/// that does not parse is moved aside and what can be read of it kept.
extension StatePersistence {
    public func loadSelfCheck(now: WallTime) -> SelfCheckRecords {
        let results = load(SelfChecksFile.name, now: now, empty: [], format: SelfChecksFile.format,
                           recover: SelfChecksFile.salvage) { bytes in try SelfChecksFile.parse(bytes) }
        let moods = load(MoodsFile.name, now: now, empty: [], format: MoodsFile.format,
                         recover: MoodsFile.salvage) { bytes in try MoodsFile.parse(bytes) }
        let cards = load(CopingCardsFile.name, now: now, empty: [], format: CopingCardsFile.format,
                         recover: CopingCardsFile.salvage) { bytes in try CopingCardsFile.parse(bytes) }
        let reminder = load(SelfCheckReminderFile.name, now: now, empty: .never, format: SelfCheckReminderFile.format) { bytes in
            try SelfCheckReminderFile.parse(bytes)
        }
        return SelfCheckRecords(results: results, moods: moods, cards: cards, reminder: reminder)
    }
}
