import Testing
@testable import UnwindCore

/// Nothing of "How am I doing?" leaves the device by SMS: a contact's STATUS answer and the
/// maintainer's texts are the same, byte for byte, whether or not the person has self-checks,
/// moods and cards (a PHQ-9 item 9 among them), and whether or not one is on the screen.
@Suite struct SelfCheckPrivacyTests {
    static let midnight: Int64 = CivilDate.day(year: 2026, month: 11, day: 22) * 86_400
    static let mum = "+17785551234"

    static var records: SelfCheckRecords {
        SelfCheckRecords(
            results: [SelfCheckResult(taken: WallTime(secondsSinceEpoch: midnight - 86_400), instrument: .phq9, answers: [3, 3, 2, 2, 1, 1, 2, 2, 2]),
                      SelfCheckResult(taken: WallTime(secondsSinceEpoch: midnight - 3600), instrument: .gad7, answers: [3, 3, 3, 3, 3, 3, 3])],
            moods: [MoodEntry(day: CivilDate.day(year: 2026, month: 11, day: 21), mood: 1)],
            cards: [CopingCard(concern: "I am a burden.", answer: "My sister said she loves our calls.")],
            reminder: .weekly(.sunday, hour: 18, minute: 0))
    }

    func at(_ s: Double) -> Moment { Moment(.seconds(s), wall: WallTime(secondsSinceEpoch: Self.midnight + Int64(s))) }

    /// A device, with or without the page's records, a person in the middle of a PHQ-9 or not,
    /// texted STATUS by a contact and failing its display for an hour (the maintainer's text).
    func textsSent(records: SelfCheckRecords, answering: Bool) throws -> [String] {
        var s = DeviceSettings()
        s.statusTexts.maintainer = try PhoneNumber("+15550001111")
        var core = DeviceCore(settings: s, selfCheck: records)
        core.alertSlotsChanged([.ready(try AlertSlot(name: "Mum", number: Self.mum, message: "Please call me"))])
        var effects: [Effect] = []
        core.apply(.wallClockSynchronised(true), at: at(0), effects: &effects)
        if answering {
            core.state.page = .howAmIDoing
            core.state.selfCheck.entry = .moodCheck
            for b in [Button.select, .right, .right, .right] { core.apply(.button(.down(b)), at: at(1), effects: &effects) }
        }
        core.apply(.replyReceived(IncomingReply(id: "r1", from: Self.mum, text: "STATUS")), at: at(60), effects: &effects)
        core.apply(.deviceProblem(.display, failing: true), at: at(61), effects: &effects)
        var t = 62.0
        while t < 62 + 2 * 3600 { core.apply(.tick, at: at(t), effects: &effects); t += 30 }
        return effects.compactMap { if case .sendText(let d) = $0 { "\(d.message.number.text): \(d.message.message)" } else { nil } }
    }

    @Test func theStatusAnswerAndTheMaintainersTextsSayNothingOfIt() throws {
        let without = try textsSent(records: SelfCheckRecords(), answering: false)
        let with = try textsSent(records: Self.records, answering: true)
        #expect(without.count == 2, "a STATUS answer and the maintainer's text: \(without)")
        #expect(with == without)
        for text in with {
            for word in ["PHQ", "GAD", "mood", "Mood", "burden", "sister", "card", "check", "anxi", "depress", "How am I"] {
                #expect(!text.contains(word), "\(word) in \(text)")
            }
        }
    }
}
