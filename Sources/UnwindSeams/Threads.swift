#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CLinuxSystem
import SystemPackage

// A thread of its own and a condition to wait on, on POSIX threads: what Foundation's Thread
// and NSCondition gave, without the whole of Foundation (and its ICU) in the executable.
// Work that must never wait for a pool (the display's writes, a simulated modem's line)
// runs on such a thread, not on Dispatch's.

/// The calling thread's id: its directory under /proc/self/task (readlink(2) of
/// /proc/thread-self; glibc's gettid(2) wrapper is not visible to Swift). 0 when unreadable.
public func currentThreadID() -> pid_t {
    var buffer = [CChar](repeating: 0, count: 64)
    let n = readlink("/proc/thread-self", &buffer, buffer.count - 1)
    guard n > 0 else { return 0 }
    return pid_t(String(decoding: buffer[..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self).split(separator: "/").last ?? "") ?? 0
}

/// Runs `body` on a new detached thread named `name` (at most 15 bytes show in ps and top).
public func startThread(name: String, _ body: @escaping @Sendable () -> Void) {
    final class Start {
        let name: String
        let body: @Sendable () -> Void
        init(name: String, body: @escaping @Sendable () -> Void) {
            self.name = name
            self.body = body
        }
    }
    let start = Unmanaged.passRetained(Start(name: name, body: body)).toOpaque()
    var thread = pthread_t()
    let r = pthread_create(&thread, nil, { argument in
        let start = Unmanaged<Start>.fromOpaque(argument!).takeRetainedValue()
        _ = unwind_name_thread(start.name)
        start.body()
        return nil
    }, start)
    // Only a machine out of threads or memory refuses, and the device cannot run without it.
    precondition(r == 0, "cannot start the thread \(name): error \(r)")
    pthread_detach(thread)
}

/// A lock with a condition to wait for, as NSCondition: `wait` is called with the lock held.
public final class ThreadCondition: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    public init() {
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(condition, nil)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    public func lock() { pthread_mutex_lock(mutex) }
    public func unlock() { pthread_mutex_unlock(mutex) }
    /// Releases the lock until `signal`, then holds it again (spurious wake-ups included: wait
    /// in a loop on the condition itself).
    public func wait() { pthread_cond_wait(condition, mutex) }
    public func signal() { pthread_cond_signal(condition) }
}

/// Puts the calling thread ahead of every ordinary one: SCHED_FIFO at `priority`
/// (sched_setscheduler(2) on the thread itself), with SCHED_RESET_ON_FORK, so a thread or process
/// it starts afterwards is ordinary again. Without CAP_SYS_NICE the kernel grants it only up to
/// RLIMIT_RTPRIO (a unit's LimitRTPRIO=); EPERM otherwise. A real-time thread that never sleeps
/// still leaves the CPUs 5 % of each second (sched_rt_runtime_us), so the kernel's own work goes on.
public func runThisThreadAhead(priority: Int32) throws(Errno) {
    var parameter = sched_param()
    parameter.sched_priority = priority
    // SCHED_RESET_ON_FORK (sched.h, with _GNU_SOURCE) is not in Glibc's Swift module.
    let resetOnFork: Int32 = 0x4000_0000
    _ = try valueOrErrno { sched_setscheduler(0, SCHED_FIFO | resetOnFork, &parameter) }
}
