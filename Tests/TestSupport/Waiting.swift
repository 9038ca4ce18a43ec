#if canImport(Glibc)
import Glibc
#endif
import Foundation
// The thread ids the tests watch are the ones the device's code reads.
@_exported import func UnwindSeams.currentThreadID

// Waiting for another process, or for a condition, by looking at the thing itself (a file, a
// line it wrote, its state in /proc) — never by sleeping for a time a slow or busy machine may
// not meet. The limit only ever fails a test; on a fast machine nothing waits for it.

/// Looks at `condition` until it holds or `limit` has passed; whether it held. `interval` is
/// only how often it is looked at.
public func waitUntil(_ limit: Duration = .seconds(30), every interval: Duration = .milliseconds(10),
                      _ condition: () throws -> Bool) rethrows -> Bool {
    let clock = ContinuousClock()
    let end = clock.now + limit
    while true {
        if try condition() { return true }
        if clock.now >= end { return false }
        let (seconds, attoseconds) = interval.components
        usleep(useconds_t(seconds * 1_000_000 + attoseconds / 1_000_000_000_000))
    }
}

/// The state letter of /proc/PID/stat (R running, S sleeping, D disk, T stopped, t traced, Z
/// zombie …); nil once there is no such process.
public func processState(_ pid: pid_t) -> Character? {
    guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
          let close = stat.lastIndex(of: ")") else { return nil }
    // "PID (COMM) S …": COMM may hold spaces and parentheses, the last ")" ends it.
    return stat[stat.index(after: close)...].first { $0 != " " }
}

/// Whether the process has ended (a zombie not yet reaped, or gone).
public func processHasEnded(_ pid: pid_t) -> Bool {
    let state = processState(pid)
    return state == nil || state == "Z" || state == "X"
}

/// The system call a blocked or stopped process is in (the number /proc/PID/syscall begins
/// with); nil while it runs in user space, or once it is gone.
public func currentSystemCall(_ pid: pid_t) -> Int? {
    guard let text = try? String(contentsOfFile: "/proc/\(pid)/syscall", encoding: .utf8) else { return nil }
    return Int(text.split(separator: " ").first.map(String.init)?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "")
}

/// Whether every thread of `pid` is traced by `tracer` (TracerPid in /proc/PID/task/*/status):
/// a tracer attached with `strace -f -p` sees each system call from then on.
public func isTraced(_ pid: pid_t, by tracer: pid_t) -> Bool {
    let threads = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
    return !threads.isEmpty && threads.allSatisfy { thread in
        let status = (try? String(contentsOfFile: "/proc/\(pid)/task/\(thread)/status", encoding: .utf8)) ?? ""
        return status.split(separator: "\n").contains { $0 == "TracerPid:\t\(tracer)" }
    }
}

/// The children of a process (/proc/PID/task/PID/children).
public func childProcesses(_ pid: pid_t) -> [pid_t] {
    let text = (try? String(contentsOfFile: "/proc/\(pid)/task/\(pid)/children", encoding: .utf8)) ?? ""
    return text.split(separator: " ").compactMap { pid_t($0) }
}

/// The program a process runs (/proc/PID/exe), nil once it is gone.
public func processExecutable(_ pid: pid_t) -> String? {
    var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
    let n = readlink("/proc/\(pid)/exe", &buffer, buffer.count - 1)
    guard n > 0 else { return nil }
    return String(decoding: buffer[..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

/// waitpid(2) with WNOHANG until `pid` (a child of this process) has exited or `limit` has
/// passed; its wait status, or nil when it is still running.
public func waitForExit(_ pid: pid_t, within limit: Duration = .seconds(30)) -> Int32? {
    var status: Int32 = 0
    var reaped = false
    _ = waitUntil(limit, every: .milliseconds(5)) {
        reaped = waitpid(pid, &status, WNOHANG) == pid
        return reaped
    }
    return reaped ? status : nil
}

/// fsync(2)'s number on this machine's architecture, as /proc/PID/syscall reports it.
public var fsyncSystemCallNumber: Int {
    #if arch(x86_64)
    return 74
    #elseif arch(arm64)
    return 82
    #elseif arch(arm)
    return 118
    #elseif arch(i386)
    return 118
    #else
    #error("fsync's system call number on this architecture")
    #endif
}

/// How many of this process's descriptors are open on `path` (/proc/self/fd): another thread
/// has opened a file (a lock it is about to wait for) when the count goes up.
public func descriptors(onto path: String) -> Int {
    let resolved = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
    let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
    return fds.filter { fd in
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let n = readlink("/proc/self/fd/\(fd)", &buffer, buffer.count - 1)
        guard n > 0 else { return false }
        let target = String(decoding: buffer[..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return target == path || target == resolved
    }.count
}
