import UnwindCore
import UnwindMaintenance

/// Who gets a connection slot when the socket or a user's share is full.
extension ControlServer {
    /// What the slot policy needs to know about a connection.
    struct Occupant: Equatable {
        var uid: UInt32
        var busy: Bool
        /// Nil: already closing (the first to go).
        var idleSince: Instant?
    }

    enum Admission: Equatable {
        case room
        /// Close `occupants[index]` first.
        case closing(Int)
        case refused
    }

    /// Where a newcomer from `uid` goes (see the type's comment): room if there is some; else
    /// the longest-idle connection not in the middle of a request, of its own uid when that uid
    /// is at its share, else of the uid holding the most connections (the next most if all of
    /// those are busy); refused when there is none.
    static func admission(of uid: UInt32, among occupants: [Occupant]) -> Admission {
        var held: [UInt32: Int] = [:]
        for o in occupants { held[o.uid, default: 0] += 1 }
        let mine = held[uid] ?? 0
        if mine < ControlLimits.maximumClientsPerUser && occupants.count < ControlLimits.maximumClients { return .room }
        var best: Int?
        // Which to close first: one already closing; then one of the uid holding the most (when
        // the newcomer's own uid is at its share, only its own are candidates); then the one
        // idle the longest.
        func better(_ i: Int, than j: Int) -> Bool {
            let a = occupants[i], b = occupants[j]
            if (a.idleSince == nil) != (b.idleSince == nil) { return a.idleSince == nil }
            if held[a.uid] != held[b.uid] { return (held[a.uid] ?? 0) > (held[b.uid] ?? 0) }
            guard let x = a.idleSince, let y = b.idleSince else { return false }
            return x < y
        }
        for i in occupants.indices where !occupants[i].busy {
            if mine >= ControlLimits.maximumClientsPerUser && occupants[i].uid != uid { continue }
            if best.map({ better(i, than: $0) }) ?? true { best = i }
        }
        return best.map { .closing($0) } ?? .refused
    }
}
