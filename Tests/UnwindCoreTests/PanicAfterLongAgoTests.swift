import Testing
@testable import UnwindCore

/// A PANIC while alerts asked for long ago are still not out (no network for hours, the device
/// off with them in its outbox) is a new call for help: what is left of the old ones is
/// cancelled and new alerts go. Within `LateAlerts.lateAfter` it is a repeat: nothing twice.
@Suite("PANIC while alerts from long ago are not out")
struct PanicAfterLongAgoTests {
    var core = DeviceCore()
    var effects: [Effect] = []
    static let t0: Int64 = 1_800_000_000

    init() throws {
        core.alertSlotsChanged([
            .ready(try AlertSlot(name: "Mum", number: "+15551234567", message: "Having a panic attack, please call")),
            .empty,
            .ready(try AlertSlot(name: "Sam", number: "5557654321", message: "Please come over")),
        ])
    }

    func at(_ s: Double) -> Moment { Moment(.seconds(s), wall: WallTime(secondsSinceEpoch: Self.t0 + Int64(s))) }

    var sent: [[AlertRequest]] { effects.compactMap { if case .sendAlerts(let r) = $0 { r } else { nil } } }
    var cancelled: [[Int]] { effects.compactMap { if case .cancelAlerts(let s) = $0 { s } else { nil } } }

    mutating func resume(queuedSecondsAgo age: Int64) throws {
        let mum = AlertProgress(slot: 0, name: "Mum", number: try PhoneNumber("+15551234567"), delivery: .queued)
        let sam = AlertProgress(slot: 2, name: "Sam", number: try PhoneNumber("5557654321"), delivery: .retrying("no network"))
        core.apply(.alertsResumed([mum, sam], purpose: .panic, queuedAt: WallTime(secondsSinceEpoch: Self.t0 - age)),
                   at: at(0), effects: &effects)
    }

    mutating func armPanic(at s: Double) {
        core.apply(.button(.down(.panic)), at: at(s), effects: &effects)
        core.apply(.tick, at: at(s + 1.5), effects: &effects)
    }

    @Test mutating func anHourLaterTheOldAreCancelledAndNewOnesGo() throws {
        try resume(queuedSecondsAgo: 3_600)
        armPanic(at: 1)
        #expect(cancelled == [[0, 2]])
        #expect(sent.map { $0.map(\.slot) } == [[0, 2]])
        #expect(core.state.panic.progress.map(\.delivery) == [.queued, .queued])
        #expect(core.state.panic.notice != .alreadySending)
    }

    @Test mutating func fiveMinutesLaterItIsARepeat() throws {
        try resume(queuedSecondsAgo: 300)
        armPanic(at: 1)
        #expect(cancelled.isEmpty)
        #expect(sent.isEmpty)
        #expect(core.state.panic.notice == .alreadySending)
    }
}
