import Testing
@testable import UnwindCore

/// `selfChecks.txt`, `moods.txt`, `copingCards.txt` and `selfCheckReminder.txt`: byte for byte
/// round trips, and a table of hostile forms each refused with its reason (never a trap), what
/// is salvaged of a broken file.
@Suite struct SelfCheckFileTests {
    static func b(_ s: String) -> [UInt8] { Array(s.utf8) }

    @Test func selfChecksRoundTripByteForByte() throws {
        let text = "1767225600 gad7 1201320 9\n1767312000 phq9 012101213 11\n1767398400 gad2 21 3\n1767398400 phq2 00 0\n"
        let results = try SelfChecksFile.parse(Self.b(text))
        #expect(results.count == 4)
        #expect(results[0] == SelfCheckResult(taken: WallTime(secondsSinceEpoch: 1_767_225_600), instrument: .gad7, answers: [1, 2, 0, 1, 3, 2, 0]))
        #expect(results[1].needsSafetyStep && results[1].total == 11)
        #expect(SelfChecksFile.format(results) == text)
        #expect(try SelfChecksFile.parse([]) == [])
    }

    static let hostileSelfChecks: [String] = [
        "1767225600 gad7 1201320 8\n",          // the total disagrees with the answers
        "1767225600 gad7 120132 8\n",           // six answers for seven items
        "1767225600 gad7 1201324 13\n",         // an answer of 4
        "1767225600 gad9 1201320 9\n",          // no such instrument
        "-1767225600 gad7 1201320 9\n",         // a sign
        "99999999999999999999 gad7 1201320 9\n",   // beyond Int64
        "1767225600  gad7 1201320 9\n",         // two spaces
        "1767225600 gad7 1201320 9 \n",         // a trailing space
        "1767225600 gad7 1201320 9\r\n",        // CRLF
        "\u{FEFF}1767225600 gad7 1201320 9\n",  // a byte-order mark
        "1767225600 GAD7 1201320 9\n",          // upper case
        "1767225600 gad7 1201320 09\n",         // a leading zero in the total
        "1767225600 gad7 ١٢٠١٣٢٠ 9\n",          // Arabic-Indic digits
        "1767225600 gad7 1201320 9\n\n",        // a blank line
        "1767225600\tgad7\t1201320\t9\n",       // tabs
    ]

    @Test(arguments: hostileSelfChecks) func hostileSelfCheckLinesAreRefused(_ text: String) {
        #expect(throws: SelfChecksFile.Problem.self) { try SelfChecksFile.parse(Self.b(text)) }
    }

    @Test func aBrokenSelfCheckFileKeepsItsGoodLinesAndAHugeOneItsNewest() throws {
        let text = "1767225600 gad7 1201320 9\ngarbage\n1767312000 phq2 11 2\n"
        #expect(throws: SelfChecksFile.Problem.malformed(line: 2)) { try SelfChecksFile.parse(Self.b(text)) }
        #expect(SelfChecksFile.salvage(Self.b(text)).map(\.instrument) == [.gad7, .phq2])
        let huge = String(repeating: "1767225600 gad2 00 0\n", count: 2000) + "1767312000 phq2 33 6\n"
        #expect(throws: SelfChecksFile.Problem.tooLarge(huge.utf8.count)) { try SelfChecksFile.parse(Self.b(huge)) }
        let kept = SelfChecksFile.salvage(Self.b(huge))
        #expect(kept.count == SelfChecksFile.capacity && kept.last?.total == 6)
        // More lines than the device keeps (and within the size): the newest.
        let many = String(repeating: "1767225600 gad2 00 0\n", count: SelfChecksFile.capacity) + "1767312000 phq2 33 6\n"
        #expect(try SelfChecksFile.parse(Self.b(many)).last?.total == 6)
    }

    @Test func moodsRoundTripOneADayInOrder() throws {
        let text = "2026-11-20 4\n2026-11-21 2\n2026-12-01 5\n"
        let moods = try MoodsFile.parse(Self.b(text))
        #expect(moods.map(\.mood) == [4, 2, 5] && moods[0].day == CivilDate.day(year: 2026, month: 11, day: 20))
        #expect(MoodsFile.format(moods) == text)
        var list = moods
        list.recording(MoodEntry(day: moods[1].day, mood: 3))      // the same day again: replaced
        list.recording(MoodEntry(day: moods[1].day + 1, mood: 1))  // a day between: in its place
        #expect(list.map(\.mood) == [4, 3, 1, 5])
    }

    static let hostileMoods: [String] = [
        "2026-11-21 4\n2026-11-20 4\n",   // out of order
        "2026-11-20 4\n2026-11-20 5\n",   // a day twice
        "2026-11-20 0\n", "2026-11-20 6\n", "2026-11-20 -1\n", "2026-11-20 44\n",
        "2026-02-30 3\n",                  // no such day
        "26-11-20 3\n", "2026-11-20 3 extra\n", "2026-11-20 3\r\n", "\u{FEFF}2026-11-20 3\n", "2026-11-20  3\n",
    ]

    @Test(arguments: hostileMoods) func hostileMoodLinesAreRefused(_ text: String) {
        #expect(throws: MoodsFile.Problem.self) { try MoodsFile.parse(Self.b(text)) }
    }

    @Test func aBrokenMoodFileIsSalvagedInDayOrder() {
        let text = "2026-11-21 4\nnonsense\n2026-11-20 2\n2026-11-21 5\n"
        let kept = MoodsFile.salvage(Self.b(text))
        #expect(kept.map(\.mood) == [2, 5])
        #expect(kept.map(\.day) == [CivilDate.day(year: 2026, month: 11, day: 20), CivilDate.day(year: 2026, month: 11, day: 21)])
    }

    @Test func copingCardsRoundTripAndKeepTheMantrasRules() throws {
        let text = "I will panic at the dentist.\tI have sat through it before, and I can breathe through it.\nNobody likes me.\tTwo friends called this week.\n"
        let cards = try CopingCardsFile.parse(Self.b(text))
        #expect(cards.count == 2 && cards[1] == CopingCard(concern: "Nobody likes me.", answer: "Two friends called this week."))
        #expect(CopingCardsFile.format(cards) == text)
        #expect(try CopingCardsFile.parse([]) == [])
        #expect(CopingCardsFile.problem(with: CopingCard(concern: "", answer: "a"))?.description == "the concern cannot be empty")
        #expect(CopingCardsFile.problem(with: CopingCard(concern: "a", answer: String(repeating: "x", count: 161)))?.description
            == "the answer has at most 160 characters; this one has 161")
        #expect(CopingCardsFile.problem(with: CopingCard(concern: "a\u{1B}[2J", answer: "b"))?.description
            == "the concern cannot contain control characters (found U+001B)")
        #expect(CopingCardsFile.problem(with: CopingCard(concern: "a", answer: "🙂"))?.description == "the display cannot show the character U+1F642")
        #expect(CopingCardsFile.problem(with: CopingCard(concern: " a", answer: "b"))?.description == "the concern cannot start or end with a space")
        #expect(CopingCardsFile.problem(with: CopingCard(concern: "Café", answer: "Déjà vu")) == nil)
    }

    static let hostileCards: [String] = [
        "no tab here\n", "a\tb\tc\n", "\tanswer\n", "concern\t\n", "concern\tanswer\r\n", "\u{FEFF}concern\tanswer\n",
        "concern \tanswer\n", "concern\t" + String(repeating: "x", count: 161) + "\n", "concern\t\u{202E}reversed\n",
        "concern\tanswer\n\n",
    ]

    @Test(arguments: hostileCards) func hostileCardLinesAreRefused(_ text: String) {
        #expect(throws: CopingCardsFile.Problem.self) { try CopingCardsFile.parse(Self.b(text)) }
    }

    @Test func cardFilesBeyondTheLimitsAreRefusedAndSalvaged() {
        let line = "concern\tanswer\n"
        let many = String(repeating: line, count: CopingCardsFile.maximumCount + 1)
        #expect(throws: CopingCardsFile.Problem.tooMany(CopingCardsFile.maximumCount + 1)) { try CopingCardsFile.parse(Self.b(many)) }
        #expect(CopingCardsFile.salvage(Self.b(many)).count == CopingCardsFile.maximumCount)
        #expect(CopingCardsFile.salvage([0xFF, 0x09, 0x41, 0x0A] + Self.b(line)) == [CopingCard(concern: "concern", answer: "answer")])
        #expect(throws: CopingCardsFile.Problem.notUTF8(line: 1)) { try CopingCardsFile.parse([0xFF, 0x09, 0x41, 0x0A]) }
    }

    @Test func theSelfCheckReminderIsNeverOrWeekly() throws {
        #expect(try SelfCheckReminderFile.parse(Self.b("never\n")) == .never)
        #expect(try SelfCheckReminderFile.parse(Self.b("weekly sun 18:00\n")) == .weekly(.sunday, hour: 18, minute: 0))
        #expect(SelfCheckReminderFile.format(.weekly(.monday, hour: 9, minute: 5)) == "weekly mon 09:05\n")
        for bad in ["daily 21:30\n", "hourly :15\n", "", "weekly sun 24:00\n", "weekly sun 18:00\r\n", String(repeating: "x", count: 100)] {
            #expect(throws: SelfCheckReminderFile.Problem.self) { try SelfCheckReminderFile.parse(Self.b(bad)) }
        }
        #expect(throws: SelfCheckReminderFile.Problem.unreadable(SelfCheckReminderFile.expected)) {
            try SelfCheckReminderFile.parse(line: "daily 21:30")
        }
    }
}
