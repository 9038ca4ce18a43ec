import Logging
import UnwindSeams

/// The real-time loop's claim on the CPU. On a busy board (an update unpacking, a backup over
/// SSH, the journal, Wi-Fi on a Zero 2 W) an ordinary thread waits its turn behind the others, and
/// a frame or a motor corner 33 ms late is one the person feels; the loop's thread alone runs
/// ahead of them (SCHED_FIFO, low priority: above every ordinary thread, below the kernel's own
/// real-time threads), never the whole process: the daemon's writers, its display thread and the
/// modem's stay ordinary. The unit grants it (`LimitRTPRIO=`, deploy/unwind.service); `unwind
/// sim` without privileges runs at ordinary priority and says so once.
public enum LoopPriority {
    /// The priority asked for; deploy/unwind.service grants up to it (`LimitRTPRIO=10`).
    public static let realTime: Int32 = 10

    /// Asks for the calling thread (the one that runs the loop). True when granted; the log
    /// says once what it got.
    @discardableResult
    public static func request(_ priority: Int32 = realTime, logger: Logger) -> Bool {
        do {
            try runThisThreadAhead(priority: priority)
            logger.info("the loop runs ahead of ordinary threads (real-time priority \(priority), SCHED_FIFO)")
            return true
        } catch {
            logger.notice("""
                the loop runs at ordinary priority: real-time priority \(priority) was refused (\(error)); \
                a busy machine can make it miss frames (the unit grants it: LimitRTPRIO=\(priority))
                """)
            return false
        }
    }
}
