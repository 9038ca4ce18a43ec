import Foundation
import Glibc
import Synchronization
import Testing
import UnwindCore
import UnwindSeams
import UnwindModem
import UnwindSimulatedHardware

/// The outbox written on a queue of its own: PANIC's journal writes never
/// run on the thread that asks for them (the loop's), and still no AT command for an alert goes
/// out before its file is on the card, nor is it ever reported sent before. A card that holds
/// its writes (`HeldStore`) stands in for a slow SD card: were the writes on the asking
/// thread, the scenario would stop at the first `send`.
@Suite("The outbox's background writer") struct OutboxWriterTests {
    /// Ready, five alerts asked for while the card holds every write: seconds of the modem's
    /// time pass with no submit, each alert "queued"; the card lets go and all five go out.
    @Test func noAlertLeavesBeforeItsWriteLands() throws {
        let clock = SimulatedTime()
        let sim = SimulatedModemLine(clock: clock)
        let store = HeldStore()
        let modem = GSMModem(port: sim, outbox: Outbox(storage: store, writer: .inBackground()), configuration: testConfiguration(),
                             logger: quietLogger())
        #expect(run(modem, clock, for: .seconds(5)) { modem.status.link == .ready })
        store.hold()
        var ids: [MessageID] = []
        for k in 1...5 { ids.append(modem.send(alert("Contact \(k)", "+1555010000\(k)", "Help \(k)"), slot: k, at: clock.now())) }
        // Held: the modem's time goes on, the alerts wait for the card.
        #expect(store.waiting(atLeast: 1))
        _ = run(modem, clock, for: .seconds(3))
        #expect(sim.submitCount == 0)
        #expect(sim.prompts.isEmpty)
        #expect(ids.allSatisfy { modem.message($0)?.state == .queued }, "\(ids.map { modem.message($0)?.state as Any })")
        #expect(modem.outbox.writer.isWriting)
        store.release()
        // Once the card has them, they go; the clock moves only while no write is under way.
        // Done when the last one is sent and its file says so: the modem is idle as soon as it
        // is sent, and that write may still be on its way (on a busy machine, it was).
        #expect(waitUntil(.seconds(30)) {
            modem.step(at: clock.now())
            if !modem.outbox.writer.isWriting { clock.advance(by: .milliseconds(1)) }
            return modem.isIdle && !modem.outbox.writer.isWriting
        })
        #expect(Set(sim.delivered.map(\.number)) == Set((1...5).map { "+1555010000\($0)" }))
        #expect(store.writers.allSatisfy { $0 != pthread_self() }, "a write ran on the thread that asked for it")
        // On the card as sent (kept while their status reports may come), in the writer's order.
        let files = store.stored.compactMap { try? store.read($0) }.map { String(decoding: $0, as: UTF8.self) }
        #expect(files.count == 5 && files.allSatisfy { $0.contains("\nsent ") }, "\(files)")
    }

    /// Stopping the device waits for the writes on their way: a PANIC just before a SIGTERM is
    /// on the card after it.
    @Test func closingWaitsForTheCard() throws {
        let clock = SimulatedTime()
        let store = HeldStore()
        let modem = GSMModem(port: SimulatedModemLine(clock: clock), outbox: Outbox(storage: store, writer: .inBackground()),
                             configuration: testConfiguration(), logger: quietLogger())
        store.hold()
        for k in 1...5 { modem.send(alert("Contact \(k)", "+1555010000\(k)", "Help \(k)"), slot: k, at: clock.now()) }
        #expect(store.waiting(atLeast: 1))
        // Let go from elsewhere once close is waiting for the writer.
        let release = Thread { [store] in
            _ = waitUntil(.seconds(30)) { store.closeMayWait }
            store.release()
        }
        release.start()
        store.closeMayWait = true
        modem.close()
        #expect(store.stored.count == 5)
    }

    /// The writer's first write failing is told as a failure at once would be: sent anyway, and
    /// the person learns it was not saved.
    @Test func aFailedBackgroundWriteIsTold() throws {
        let clock = SimulatedTime()
        let sim = SimulatedModemLine(clock: clock)
        let modem = GSMModem(port: sim, outbox: Outbox(storage: FailingStorage(), writer: .inBackground()),
                             configuration: testConfiguration(), logger: quietLogger())
        let id = modem.send(alert(), slot: 1, at: clock.now())
        #expect(waitUntil(.seconds(30)) {
            modem.step(at: clock.now())
            return !modem.outbox.writer.isWriting
        })
        #expect(modem.message(id)?.journaled == false)
        if case .notJournaled(let why)? = modem.message(id)?.lastProblem { #expect(why.contains("No space left")) } else {
            Issue.record("the person must learn the alert was not saved")
        }
        #expect(run(modem, clock, for: .seconds(5)) { sim.delivered.count == 1 })
    }

    /// Steps the modem every simulated millisecond until `done`, at most `limit`.
    func run(_ modem: GSMModem, _ clock: SimulatedTime, for limit: Duration, until done: () -> Bool = { false }) -> Bool {
        let end = clock.now().instant + limit
        while clock.now().instant < end {
            modem.step(at: clock.now())
            if done() { return true }
            clock.advance(by: .milliseconds(1))
        }
        return done()
    }
}

/// Files in memory whose writes can be held (a slow card), and who wrote them.
final class HeldStore: ListableStore, @unchecked Sendable {
    private let files = Mutex<[String: [UInt8]]>([:])
    private let gate = Mutex<Bool>(false)
    private let blocked = Atomic<Int>(0)
    private let threads = Mutex<[pthread_t]>([])
    private let flag = Atomic<Bool>(false)

    func hold() { gate.withLock { $0 = true } }
    func release() { gate.withLock { $0 = false } }
    /// Waits (up to 30 s) until a write is being held.
    func waiting(atLeast n: Int) -> Bool { waitUntil(.seconds(30)) { blocked.load(ordering: .relaxed) >= n } }
    var writers: [pthread_t] { threads.withLock { $0 } }
    var stored: [String] { files.withLock { Array($0.keys) } }
    var closeMayWait: Bool {
        get { flag.load(ordering: .relaxed) }
        set { flag.store(newValue, ordering: .relaxed) }
    }

    private func pass() {
        threads.withLock { $0.append(pthread_self()) }
        if gate.withLock({ $0 }) {
            blocked.add(1, ordering: .relaxed)
            _ = waitUntil(.seconds(60), every: .milliseconds(1)) { !gate.withLock { $0 } }
        }
    }

    func read(_ name: String) throws(StoreError) -> [UInt8]? { files.withLock { $0[name] } }
    func replace(_ name: String, with bytes: [UInt8]) throws(StoreError) {
        pass()
        files.withLock { $0[name] = bytes }
    }
    func replaceAll(_ new: [(name: String, bytes: [UInt8])]) throws(StoreError) {
        pass()
        files.withLock { for f in new { $0[f.name] = f.bytes } }
    }
    func quarantine(_ name: String, suffix: String) throws(StoreError) -> String { name }
    var recoveryProblems: [String] { [] }
    func names() throws(StoreError) -> [String] { stored }
    func remove(_ name: String) throws(StoreError) {
        pass()
        _ = files.withLock { $0.removeValue(forKey: name) }
    }
}
