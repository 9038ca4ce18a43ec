import UnwindCore

/// The rules of the maintainer's edits of "How am I doing?" (the coping cards, the weekly
/// reminder), shared by the running device and the files edited with the device stopped: the
/// same checks as a mantra's, in the same words.
extension MaintenanceEdits {
    /// A card as a command gave it, in NFC (the form it is checked and stored in).
    public static func card(concern: String, answer: String) -> CopingCard {
        CopingCard(concern: TextSafety.nfc(concern), answer: TextSafety.nfc(answer))
    }

    /// A new card for a list of `count`: each text 1–160 characters the display can draw, no
    /// control character, no space at either end; at most `CopingCardsFile.maximumCount` cards.
    public static func checkCard(_ card: CopingCard, count: Int) throws(ControlFailure) {
        if let p = CopingCardsFile.problem(with: card) { throw .input("card: \(p)") }
        if count >= CopingCardsFile.maximumCount {
            throw .input("card: the list already has \(count) cards; at most \(CopingCardsFile.maximumCount)")
        }
    }

    /// Card `number` (1-based) of a list of `count`; returns the 0-based index.
    public static func cardIndex(_ number: Int, count: Int) throws(ControlFailure) -> Int {
        guard count > 0 else { throw .input("card \(number): there are no coping cards") }
        guard (1...count).contains(number) else {
            throw .input("card \(number): there is no such card; the list has \(count) (1 to \(count))")
        }
        return number - 1
    }

    /// The card the command saw, when it gave one.
    public static func expectedCard(concern: String?, answer: String?) -> CopingCard? {
        guard let concern, let answer else { return nil }
        return CopingCard(concern: concern, answer: answer)
    }

    public static func cardsChanged(_ number: Int) -> ControlFailure {
        .failed("the cards changed while the command ran; nothing deleted — run 'unwind cards list' and try again (card \(number))")
    }

    public static func selfCheckReminder(_ line: String) throws(ControlFailure) -> ReminderSchedule {
        do { return try SelfCheckReminderFile.parse(line: line) } catch {
            throw .input("self-check reminder \"\(line)\": \(SelfCheckReminderFile.expected)")
        }
    }
}
