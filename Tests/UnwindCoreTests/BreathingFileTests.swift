import Testing
import UnwindCore

/// `breathing.txt`, `patterns.txt` and the extended `sessionHistory.txt`: round trips, and every
/// hostile form refused by the parser (the loader then sets the file aside and logs it).
@Suite struct BreathingFileTests {
    @Test func theChoiceRoundTrips() throws {
        for m in SessionLength.choices {
            let c = BreathingChoice(pattern: "resonance", minutes: m)
            #expect(try BreathingChoiceFile.parse(Array(BreathingChoiceFile.format(c).utf8)) == c)
        }
        #expect(BreathingChoiceFile.format(BreathingChoice(pattern: "calm", minutes: 10)) == "pattern calm\nlength 10\n")
        #expect(try BreathingChoiceFile.parse(Array("pattern calm".utf8)) == BreathingChoice(pattern: "calm", minutes: 0))
        #expect(try BreathingChoiceFile.parse(Array("length 5\npattern 478\n".utf8)) == BreathingChoice(pattern: "478", minutes: 5))
    }

    @Test(arguments: [
        "", "\n", "pattern\n", "pattern  calm\n", "pattern Calm\n", "pattern calm\npattern box\n", "pattern calm\nlength 7\n",
        "pattern calm\nlength -2\n", "pattern calm\nlength 0\n", "pattern calm\nlength 010\n", "pattern calm\r\nlength 5\r\n",
        "\u{FEFF}pattern calm\n", "pattern calm\ncolour blue\n", "length 5\n", "pattern calm\n\nlength 5\n",
        "pattern " + String(repeating: "x", count: 300) + "\n", "pattern ca\u{0}lm\n", "pattern c\u{E9}lm\n",
    ])
    func hostileChoicesAreRefused(_ text: String) {
        #expect(throws: BreathingChoiceFile.Problem.self) { try BreathingChoiceFile.parse(Array(text.utf8)) }
    }

    @Test func invalidUTF8ChoiceIsRefused() {
        #expect(throws: BreathingChoiceFile.Problem.self) { try BreathingChoiceFile.parse([0x70, 0x61, 0xFF, 0x0A]) }
    }

    @Test func theMaintainersPatternsRoundTrip() throws {
        let text = "evening 4,2,8,0\nslowing 4,0,6,0 from 11 over 180\ndouble 2+1,0,7,0\nres 4.4,0,6.5,0\n"
        let list = try PatternsFile.parse(Array(text.utf8))
        #expect(list.map(\.name) == ["evening", "slowing", "double", "res"])
        #expect(list.allSatisfy { $0.isCustom })
        #expect(PatternsFile.format(list) == text)
        #expect(PatternsFile.format(BreathingPreset.builtIn + list) == text)   // the shipped ones are never written
        #expect(try PatternsFile.parse([]) == [])
    }

    @Test(arguments: [
        "evening\n", "evening \n", " evening 4,4,4,4\n", "Evening 4,4,4,4\n", "box 4,4,4,4\n", "calm 4,0,6,0\n",
        "evening 4,4,4,4\nevening 4,4,4,0\n", "evening 4,4,4\n", "evening 0,4,4,4\n", "evening box\n",
        "evening 4,4,4,4 from 2 over 180\n", "abcdefghijk 4,4,4,4\n", "eve\tning 4,4,4,4\n", "evening 4,4,4,4\r\n",
        "e\u{1B}[2J 4,4,4,4\n", "evening\u{0} 4,4,4,4\n", "évening 4,4,4,4\n",
    ])
    func hostilePatternLinesAreRefused(_ text: String) {
        #expect(throws: PatternsFile.Problem.self) { try PatternsFile.parse(Array(text.utf8)) }
    }

    @Test func tooManyOrTooLargeAndWhatIsKept() {
        let lines = (0..<21).map { "p\($0) 4,4,4,4\n" }.joined()
        #expect(throws: PatternsFile.Problem.tooMany(21)) { try PatternsFile.parse(Array(lines.utf8)) }
        #expect(PatternsFile.salvage(Array(lines.utf8)).count == 20)
        let big = [UInt8](repeating: 0x61, count: PatternsFile.maximumSize + 1)
        #expect(throws: PatternsFile.Problem.tooLarge(PatternsFile.maximumSize + 1)) { try PatternsFile.parse(big) }
        // Salvage keeps the good lines of a damaged file and drops the rest.
        let damaged = "evening 4,2,8,0\n\u{FF}junk\nbox 4,4,4,4\nslow 4,0,6,0 from 11 over 180\nslow 4,4,4,4\n"
        #expect(PatternsFile.salvage(Array(damaged.utf8)).map(\.name) == ["evening", "slow"])
    }

    @Test func theHistoryRoundTripsWithAndWithoutRatings() throws {
        let records = [
            SessionRecord(started: WallTime(secondsSinceEpoch: 1_767_225_000), seconds: 60),
            SessionRecord(started: WallTime(secondsSinceEpoch: 1_767_225_100), seconds: 300, pattern: "calm"),
            SessionRecord(started: WallTime(secondsSinceEpoch: 1_767_225_500), seconds: 600, pattern: "sigh", before: 8, after: 3),
            SessionRecord(started: WallTime(secondsSinceEpoch: 1_767_226_200), seconds: 120, pattern: "478", before: 6),
            SessionRecord(started: WallTime(secondsSinceEpoch: 1_767_226_400), seconds: 120, pattern: "box", after: 0),
            SessionRecord(started: WallTime(secondsSinceEpoch: 1_767_226_600), seconds: 1200, pattern: "4.4-6.5", before: 10, after: 10),
        ]
        let text = SessionHistoryFile.format(records)
        #expect(text == """
            1767225000 60
            1767225100 300 calm
            1767225500 600 sigh 8 3
            1767226200 120 478 6 -
            1767226400 120 box - 0
            1767226600 1200 4.4-6.5 10 10

            """)
        #expect(try SessionHistoryFile.parse(Array(text.utf8)) == records)
        // A file written before patterns and ratings loads as it always did.
        let old = "1767225000 60\n1767225100 300\n"
        #expect(try SessionHistoryFile.parse(Array(old.utf8)) == Array(records.prefix(1)) + [SessionRecord(started: WallTime(secondsSinceEpoch: 1_767_225_100), seconds: 300)])
        #expect(SessionHistoryFile.format(try SessionHistoryFile.parse(Array(old.utf8))) == old)
    }

    @Test(arguments: [
        "1 60 calm 11 3\n", "1 60 calm 3\n", "1 60 calm 3 4 5\n", "1 60 calm - -\n", "1 60 Calm\n", "1 60 calm -1 3\n",
        "1 60 calm 03 4\n", "1 60 calm 3 x\n", "1 60  calm\n", "1 60 calm 3 4 \n", "1 60 \u{1B}[2J\n", "1 60 calm\u{0}\n",
        "1 60 abcdefghijk\n", "1 60 calm 3\u{2009}4\n",
    ])
    func hostileHistoryLinesAreRefused(_ text: String) {
        #expect(throws: SessionHistoryFile.Problem.self) { try SessionHistoryFile.parse(Array(text.utf8)) }
    }

    @Test func aDamagedHistoryKeepsItsGoodLines() {
        let text = "1 60\n2 x\n3 60 calm 11 2\n4 300 calm 7 3\n\u{FF}\u{FE}\n5 30 - 5 -\n"
        let kept = SessionHistoryFile.salvage(Array(text.utf8))
        #expect(kept.map(\.started.secondsSinceEpoch) == [1, 4, 5])
        #expect(kept[2] == SessionRecord(started: WallTime(secondsSinceEpoch: 5), seconds: 30, before: 5))
    }
}
