import Foundation
import Testing
import UnwindCore
import UnwindModem

/// The outbox's own times (when a message was made, when each attempt failed) at Int64's ends
/// and their neighbours: read as written within the calendar's range, refused in one line
/// beyond it, never a trap.
@Suite struct OutboxTimesTests {
    static let edge = WallTime.calendarRange.upperBound
    static let ends: [Int64] = [.min, .min + 1, -edge - 1, -edge, -1, 0, 1, edge, edge + 1, .max - 1, .max]
    static let good = Outbox.format(OutboxEntry(id: MessageID("a"), created: WallTime(secondsSinceEpoch: 1), sequence: 1, slot: 1,
                                                alert: alert(), reference: 1))

    @Test(arguments: ends)
    func anAttemptsTimeIsReadOrRefused(_ t: Int64) {
        let text = Self.good + "attempt \(t) network error 38\n"
        let entry = try? Outbox.parse(Array(text.utf8), id: MessageID("a"))
        if WallTime.calendarRange.contains(t) {
            #expect(entry?.history.map(\.at.secondsSinceEpoch) == [t])
        } else {
            #expect(entry == nil)
        }
    }

    @Test(arguments: ends)
    func aCreationTimeIsReadOrRefused(_ t: Int64) {
        let text = Self.good.replacingOccurrences(of: "created 1\n", with: "created \(t)\n")
        let entry = try? Outbox.parse(Array(text.utf8), id: MessageID("a"))
        if (0...Self.edge).contains(t) {
            #expect(entry?.created.secondsSinceEpoch == t)
        } else {
            #expect(entry == nil)
        }
    }
}
