#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import SystemPackage
import Testing
import UnwindSeams

/// The loop's thread ahead of ordinary ones (`runThisThreadAhead`): granted, the thread alone is
/// SCHED_FIFO and a thread it starts afterwards is ordinary again (SCHED_RESET_ON_FORK); refused
/// (no CAP_SYS_NICE, RLIMIT_RTPRIO 0), an EPERM and nothing changed.
@Suite struct LoopThreadPriorityTests {
    struct Seen: Sendable, Equatable {
        var outcome: Int32 = -1      // 0 granted, else the errno
        var policy: Int32 = -1       // the thread's own, after asking
        var childPolicy: Int32 = -1  // a thread it started afterwards
    }

    @Test func onlyTheAskingThreadRunsAhead() {
        let seen = Mutex(Seen())
        let done = ThreadCondition()
        let finished = Atomic<Bool>(false)
        startThread(name: "unwind.test") {
            var s = Seen()
            do throws(Errno) {
                try runThisThreadAhead(priority: 1)
                s.outcome = 0
            } catch {
                s.outcome = error.rawValue
            }
            s.policy = sched_getscheduler(0)
            let child = Mutex<Int32>(-1)
            let childDone = Atomic<Bool>(false)
            startThread(name: "unwind.test2") {
                child.withLock { $0 = sched_getscheduler(0) }
                childDone.store(true, ordering: .releasing)
            }
            while !childDone.load(ordering: .acquiring) { usleep(1_000) }
            s.childPolicy = child.withLock { $0 }
            let result = s
            seen.withLock { $0 = result }
            done.lock(); finished.store(true, ordering: .releasing); done.signal(); done.unlock()
        }
        done.lock()
        while !finished.load(ordering: .acquiring) { done.wait() }
        done.unlock()
        let s = seen.withLock { $0 }
        #expect(s.outcome == 0 || s.outcome == EPERM)
        // The policy as sched_getscheduler gives it carries the reset flag when granted.
        let resetOnFork: Int32 = 0x4000_0000
        #expect(s.policy == (s.outcome == 0 ? SCHED_FIFO | resetOnFork : SCHED_OTHER))
        #expect(s.childPolicy == SCHED_OTHER)
        // The test's own thread was never touched.
        #expect(sched_getscheduler(0) == SCHED_OTHER)
    }
}
