import CLinuxSystem
import Glibc
import Synchronization
import UnwindCore
import UnwindSeams

/// A GSM modem on the far end of a real pseudo-terminal (openpty), for the end-to-end tests and
/// the simulator: the scripted modem (`ScriptedModem`) behind a tty the device opens with its
/// real `SerialPort`, so termios, non-blocking reads and a vanishing USB device are the
/// kernel's own.
///
/// The device opens `path` (a symlink to the pty's slave, as `/dev/serial/by-id/…` is to a
/// USB tty). The simulator reads the master side: command lines, prompts, PDUs; what it records
/// is `SimulatedModem`'s. It can run on its own thread (`start`) or be stepped from a test
/// (`step`), on the real monotonic clock.
public final class ModemSimulator: SimulatedModem, Sendable {
    let state: Mutex<PseudoTerminalModem>
    let running = Atomic<Bool>(false)
    private let directory: String
    /// The directory is this simulator's own (made in /tmp) and goes when it does.
    private let ownsDirectory: Bool
    /// The stable path the device opens.
    public let path: String

    /// `directory`: where the link `ttyMODEM` is made (created if missing; the terminal
    /// simulator uses its state directory, so nothing of it is ever left in /tmp). Without one,
    /// a private `/tmp/unwind-modem-sim-<pid>-XXXXXX`, removed by `deinit` or at exit — and a
    /// process killed before either leaves one that the next simulator removes (its pid is gone).
    public init(script: ModemScript = ModemScript(), directory: String? = nil) throws(DeviceError) {
        if let directory {
            if mkdir(directory, 0o700) != 0 && errno != EEXIST {
                throw DeviceError(device: directory, operation: "mkdir", errno: errno)
            }
            self.directory = directory
            ownsDirectory = false
        } else {
            Self.removeAbandoned()
            var template = Array("/tmp/unwind-modem-sim-\(getpid())-XXXXXX".utf8CString)
            // mkdtemp(3) fills in the template it is given: the name is read while the buffer lives.
            let made = template.withUnsafeMutableBufferPointer { buffer -> String? in
                guard let base = buffer.baseAddress, let dir = mkdtemp(base) else { return nil }
                return String(cString: dir)
            }
            guard let made else {
                throw DeviceError(device: "modem simulator", operation: "mkdtemp", errno: errno)
            }
            self.directory = made
            ownsDirectory = true
            _ = Self.live.withLock { $0.insert(made) }
            Self.removeAtExit()
        }
        path = self.directory + "/ttyMODEM"
        var core = PseudoTerminalModem(modem: ScriptedModem(script: script), path: path)
        try core.plug()
        state = Mutex(core)
    }

    deinit {
        stop()
        state.withLock { $0.unplug() }
        if ownsDirectory {
            rmdir(directory)
            _ = Self.live.withLock { $0.remove(directory) }
        }
    }

    /// The directories of simulators still alive, for the exit handler.
    private static let live = Mutex<Set<String>>([])
    private static let exitHandler = Atomic<Bool>(false)

    private static func removeAtExit() {
        guard !exitHandler.exchange(true, ordering: .relaxed) else { return }
        atexit {
            for d in ModemSimulator.live.withLock({ $0 }) {
                unlink(d + "/ttyMODEM")
                rmdir(d)
            }
        }
    }

    /// `/tmp/unwind-modem-sim-<pid>-XXXXXX` of processes that no longer exist (killed before
    /// they could clean up): only the link was in it.
    static func removeAbandoned() {
        guard let d = opendir("/tmp") else { return }
        defer { closedir(d) }
        let prefix = "unwind-modem-sim-"
        while let e = readdir(d) {
            guard let name = directoryEntryName(e), name.hasPrefix(prefix) else { continue }
            let rest = name.dropFirst(prefix.count).split(separator: "-")
            guard rest.count == 2, let pid = Int32(rest[0]), pid > 0, pid != getpid() else { continue }
            var st = stat()
            guard lstat("/tmp/" + name, &st) == 0, st.st_uid == getuid(), kill(pid, 0) != 0, errno == ESRCH else { continue }
            unlink("/tmp/" + name + "/ttyMODEM")
            rmdir("/tmp/" + name)
        }
    }

    // MARK: Driving

    /// The master side, to poll (changes after `unplug` / `replug`; -1 while unplugged).
    public var descriptor: Int32 { state.withLock { $0.master } }

    /// Reads what arrived and writes what is due.
    public func step(now: Instant = monotonicNow()) {
        state.withLock { $0.step(now: now) }
    }

    /// When `step` has something to write next.
    public var nextDeadline: Instant? { state.withLock { $0.nextDeadline } }

    /// Runs on its own thread until `stop`.
    public func start() {
        guard !running.exchange(true, ordering: .acquiringAndReleasing) else { return }
        startThread(name: "unwind.modem") { [self] in
            while running.load(ordering: .acquiring) {
                let now = monotonicNow()
                let (fd, next) = state.withLock { core -> (Int32, Instant?) in
                    core.step(now: now)
                    return (core.master, core.nextDeadline)
                }
                var timeout: Int32 = 5
                if let next { timeout = Int32(max(0, min(5, (next - now).nanoseconds / 1_000_000))) }
                var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                if fd >= 0 { _ = poll(&p, 1, timeout) } else { usleep(UInt32(timeout) * 1000) }
            }
        }
    }

    /// Ends the thread (it notices within 5 ms).
    public func stop() {
        if running.exchange(false, ordering: .acquiringAndReleasing) { usleep(10_000) }
    }

    // MARK: Scripting

    public func withScriptedModem<R: Sendable>(_ body: (inout ScriptedModem) -> R) -> R {
        state.withLock { body(&$0.modem) }
    }

    /// Sends lines at `now` (framed CR LF … CR LF), e.g. an unsolicited code at a chosen moment.
    public func inject(_ lines: [String], now: Instant) {
        state.withLock { $0.modem.send(lines, at: now) }
    }

    public func inject(_ lines: [String]) { inject(lines, now: monotonicNow()) }

    /// Restarts at `now`: forgets ATE0 and everything in flight, prints the boot messages.
    public func restart(now: Instant) { state.withLock { $0.modem.restart(at: now) } }

    public func restart() { restart(now: monotonicNow()) }

    /// The USB modem goes away: the pty is closed and the path removed.
    public func unplug() { state.withLock { $0.unplug() } }

    /// …and comes back at `now` (at the same path, a fresh pty, booting).
    public func replug(now: Instant) throws(DeviceError) {
        try state.withLock { core throws(DeviceError) in
            try core.plug()
            core.modem.restart(at: now)
        }
    }

    public func replug() throws(DeviceError) { try replug(now: monotonicNow()) }

    public var modemNow: Instant { monotonicNow() }
}

/// The scripted modem and the pty it answers on; all of it lives under the simulator's lock.
struct PseudoTerminalModem: Sendable {
    var modem: ScriptedModem
    let path: String
    var master: Int32 = -1
    var slave: Int32 = -1

    var nextDeadline: Instant? { modem.nextDeadline }

    mutating func plug() throws(DeviceError) {
        var m: Int32 = -1, s: Int32 = -1
        var t = termios()
        cfmakeraw(&t)
        if openpty(&m, &s, nil, &t, nil) != 0 {
            throw DeviceError(device: "modem simulator", operation: "openpty", errno: errno)
        }
        _ = fcntl(m, F_SETFL, fcntl(m, F_GETFL) | O_NONBLOCK)
        _ = fcntl(m, F_SETFD, FD_CLOEXEC)
        _ = fcntl(s, F_SETFD, FD_CLOEXEC)
        var name = [CChar](repeating: 0, count: 128)
        if ttyname_r(s, &name, name.count) != 0 {
            close(m); close(s)
            throw DeviceError(device: "modem simulator", operation: "ttyname_r", errno: errno)
        }
        unlink(path)
        if symlink(name, path) != 0 {
            close(m); close(s)
            throw DeviceError(device: "modem simulator", operation: "symlink \(path)", errno: errno)
        }
        master = m
        slave = s  // held open so the master never reads EIO while the device reopens
        modem.plugged()
    }

    mutating func unplug() {
        if master >= 0 { close(master) }
        if slave >= 0 { close(slave) }
        master = -1
        slave = -1
        unlink(path)
        modem.unplugged()
    }

    /// Reads what the device wrote, runs the modem's timers, writes what is due.
    mutating func step(now: Instant) {
        guard master >= 0 else { return }
        var buf = [UInt8](repeating: 0, count: 4096)
        // Until EAGAIN (EIO only while no slave is open, which never happens here).
        while let n = try? valueOrErrno({ buf.withUnsafeMutableBytes { read(master, $0.baseAddress, $0.count) } }), n > 0 {
            modem.receive(buf[0..<n], at: now)
        }
        modem.advance(to: now)
        let due = modem.takeOutput(dueBy: now)
        var off = 0
        while off < due.count {
            let n = (try? valueOrErrno { due[off...].withUnsafeBytes { write(master, $0.baseAddress, $0.count) } }) ?? 0
            if n <= 0 {
                // The pty buffer is full (the device is not reading): keep the rest for later.
                modem.putBack(due[off...], at: now)
                break
            }
            off += n
        }
    }
}

/// clock_gettime(CLOCK_MONOTONIC): the time base `LinuxClock` gives the device, so a simulator
/// on a real pseudo-terminal and the modem code under test agree on every deadline.
public func monotonicNow() -> Instant {
    var t = timespec()
    clock_gettime(CLOCK_MONOTONIC, &t)
    return Instant(nanoseconds: Int64(t.tv_sec) * 1_000_000_000 + Int64(t.tv_nsec))
}
