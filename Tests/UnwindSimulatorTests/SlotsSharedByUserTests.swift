import Testing
import UnwindMaintenance
import UnwindCore
@testable import UnwindRuntime

/// Who gets a slot on the control socket when it, or one user's share of it, is full
/// (`ControlServer.admission`).
@Suite struct SlotsSharedByUserTests {
    /// The slot policy on its own: one uid never takes the last slots from another, and what
    /// is closed for a newcomer is idle, never a request in progress.
    @Test func slotsAreSharedByUser() {
        typealias O = ControlServer.Occupant
        let t = { (s: Int64) in Instant(nanoseconds: s * 1_000_000_000) }
        let share = ControlLimits.maximumClientsPerUser, all = ControlLimits.maximumClients
        // Room while there is some.
        #expect(ControlServer.admission(of: 7, among: []) == .room)
        let attacker = (0..<share).map { O(uid: 666, busy: false, idleSince: t(Int64($0))) }
        #expect(ControlServer.admission(of: 1000, among: attacker) == .room)
        // A uid at its share displaces its own longest-idle connection, whoever else is there.
        #expect(ControlServer.admission(of: 666, among: attacker) == .closing(0))
        var mixed = attacker + [O(uid: 1000, busy: false, idleSince: t(-50))]
        #expect(ControlServer.admission(of: 666, among: mixed) == .closing(0))
        // …never one in the middle of a request; with all of them busy it is refused.
        let busy = (0..<share).map { O(uid: 666, busy: true, idleSince: t(Int64($0))) }
        #expect(ControlServer.admission(of: 666, among: busy) == .refused)
        #expect(ControlServer.admission(of: 1000, among: busy) == .room)
        // A full socket: the uid holding the most gives up its longest-idle one, even when
        // another's has been idle longer…
        mixed = attacker + (0..<(all - share - 1)).map { O(uid: 1000, busy: false, idleSince: t(-100 + Int64($0))) }
            + [O(uid: 1001, busy: false, idleSince: t(-200))]
        #expect(mixed.count == all)
        #expect(ControlServer.admission(of: 1002, among: mixed) == .closing(0))
        // …and if all of the largest holder's are busy, the next largest's.
        mixed = busy + (0..<(all - share - 1)).map { O(uid: 1000, busy: false, idleSince: t(-100 + Int64($0))) }
            + [O(uid: 1001, busy: false, idleSince: t(-200))]
        #expect(ControlServer.admission(of: 1002, among: mixed) == .closing(share))
        // One already closing goes first.
        mixed[all - 1] = O(uid: 1001, busy: false, idleSince: nil)
        #expect(ControlServer.admission(of: 1002, among: mixed) == .closing(all - 1))
    }
}
