import Testing
@testable import UnwindCore

@Suite struct TotalTimeFileTests {
    func parse(_ s: String) throws(TotalTimeFile.Problem) -> BreathingTotals { try TotalTimeFile.parse(Array(s.utf8)) }

    @Test func formatIsTheSpecsSixLines() {
        let t = BreathingTotals(totalSeconds: 3 * 3600 + 25 * 60 + 7, shortestSeconds: 45, longestSeconds: 1800, count: 12)
        #expect(TotalTimeFile.format(t) == "7\n25\n3\n45\n1800\n12\n")
        #expect(TotalTimeFile.format(.zero) == "0\n0\n0\n0\n0\n0\n")
    }

    @Test(arguments: ["7\n25\n3\n45\n1800\n12\n", "0\n0\n0\n0\n0\n0\n", "59\n59\n99999\n1\n359999\n100000\n"])
    func roundTripByteForByte(_ text: String) throws {
        #expect(TotalTimeFile.format(try parse(text)) == text)
    }

    @Test func lastNewlineIsOptional() throws {
        #expect(try parse("1\n0\n0\n1\n1\n1") == BreathingTotals(totalSeconds: 1, shortestSeconds: 1, longestSeconds: 1, count: 1))
    }

    @Test(arguments: [
        ("", TotalTimeFile.Problem.empty),
        ("7\n25\n3\n", .lineCount(3)),                          // truncated
        ("7\n25\n3\n45\n1800\n12\n\n", .lineCount(7)),          // blank line
        ("7\n25\n3\n45\n1800\n12\n13\n", .lineCount(7)),
        ("7\n 25\n3\n45\n1800\n12\n", .notANumber(line: 2)),    // a space
        ("7\n25\n3\n-1\n1800\n12\n", .notANumber(line: 4)),
        ("7\n25\n\n45\n1800\n12\n", .notANumber(line: 3)),
        ("7\r\n25\n3\n45\n1800\n12\n", .notANumber(line: 1)),
        ("60\n0\n0\n0\n0\n0\n", .outOfRange(line: 1)),
        ("0\n60\n0\n0\n0\n0\n", .outOfRange(line: 2)),
        ("0\n0\n1\n0\n0\n0\n", .inconsistent("times recorded but no sessions")),
        ("0\n1\n0\n50\n40\n2\n", .inconsistent("shortest session is longer than the longest")),
        ("0\n1\n0\n50\n400\n2\n", .inconsistent("longest session is longer than the total")),
        ("0\n0\n0\n0\n0\n9999999999999\n", .notANumber(line: 6)),
    ])
    func corruptInputsAreRejected(_ text: String, _ problem: TotalTimeFile.Problem) {
        #expect(throws: problem) { try parse(text) }
    }

    @Test func oversizedInputIsRejectedUnread() {
        let big = [UInt8](repeating: UInt8(ascii: "1"), count: 1 << 20)
        #expect(throws: TotalTimeFile.Problem.tooLarge(1 << 20)) { try TotalTimeFile.parse(big) }
    }

    @Test func binaryGarbageIsRejected() {
        #expect(throws: TotalTimeFile.Problem.self) { try TotalTimeFile.parse([0, 0xFF, 10, 3, 10, 10, 10, 10]) }
    }

    @Test func statisticsArithmetic() {
        var t = BreathingTotals.zero
        t = t.adding(session: 0)            // too short to count
        #expect(t == .zero)
        t = t.adding(session: 120)
        t = t.adding(session: 30)
        t = t.adding(session: 601)
        #expect(t == BreathingTotals(totalSeconds: 751, shortestSeconds: 30, longestSeconds: 601, count: 3))
        #expect(t.averageSeconds == 250) // 750.33 rounds to 250
        #expect(BreathingTotals.zero.averageSeconds == 0)
    }

    @Test func sessionHistoryRoundTrip() throws {
        let records = [SessionRecord(started: WallTime(secondsSinceEpoch: 1_767_225_600), seconds: 300),
                       SessionRecord(started: WallTime(secondsSinceEpoch: 1_767_312_000), seconds: 45)]
        let text = SessionHistoryFile.format(records)
        #expect(text == "1767225600 300\n1767312000 45\n")
        #expect(try SessionHistoryFile.parse(Array(text.utf8)) == records)
        #expect(throws: SessionHistoryFile.Problem.malformed(line: 2)) {
            try SessionHistoryFile.parse(Array("1 2\n3\n".utf8))
        }
        let many = (0..<150).map { SessionRecord(started: WallTime(secondsSinceEpoch: Int64($0)), seconds: 1) }
        #expect(try SessionHistoryFile.parse(Array(SessionHistoryFile.format(many).utf8)).count == SessionHistoryFile.capacity)
    }

    @Test func helpWrapFitsAndKeepsLineBreaks() {
        let lines = HelpLibrary.wrap("SELECT\nStart a session. While a session runs, SELECT stops it.\n\nsupercalifragilisticexpialidocious-and-more", columns: 16)
        #expect(lines.allSatisfy { $0.count <= 16 })
        #expect(lines.first == "SELECT")
        #expect(lines.contains(""))
        #expect(lines.joined(separator: " ").contains("Start a session."))
    }
}
