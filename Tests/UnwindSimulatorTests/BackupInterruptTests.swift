import Foundation
import Glibc
import Testing
import UnwindTestSupport

/// `unwind backup` interrupted in the middle (Ctrl-C during the fsync, the SSH link dropping)
/// leaves nothing behind: not the archive, and not a hidden copy of it — a backup holds the
/// contacts' numbers. The signal is delivered at the command's fsync(2) by strace's fault
/// injection, or sent from outside while strace holds the command in its fsync; the tests wait
/// for what the command does (its system call, its exit), never for a time.
@Suite(.serialized) struct BackupInterruptTests {
    static let strace = "/usr/bin/strace"
    static let names: [Int32: String] = [SIGINT: "SIGINT", SIGTERM: "SIGTERM", SIGKILL: "SIGKILL"]

    /// The signal arrives as the command enters fsync: fsync may finish, the name never comes.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: strace), "strace is installed by deploy/dev-deps.sh"),
          arguments: [SIGINT, SIGTERM, SIGKILL])
    func anInterruptedBackupLeavesNothing(_ signal: Int32) throws {
        let state = temporaryDirectory()
        let out = temporaryDirectory()
        let traceDirectory = temporaryDirectory()
        defer { for d in [state, out, traceDirectory] { try? FileManager.default.removeItem(atPath: d) } }
        let set = UnwindRun.run(["alerts", "set", "1", "--name", "Mum", "--number", "+17785551234",
                                 "--message", "Having a panic attack, please call", "--state", state])
        #expect(set.status == 0, "\(set)")
        let name = try #require(Self.names[signal])
        let trace = traceDirectory + "/trace"
        // Spawned with SIGINT/SIGTERM unblocked and at their defaults, as from a shell: the test
        // runner blocks them, and a child inherits its mask through exec.
        let tracer = try Self.spawn(Self.strace, ["-f", "-o", trace, "-e", "trace=fsync,linkat,rename,exit_group",
                                                  "-e", "inject=fsync:signal=\(name)",
                                                  UnwindRun.executable, "backup", "--state", state, out + "/backup.tar"])
        let status = waitForExit(tracer, within: .seconds(60))
        if status == nil { kill(tracer, SIGKILL); var st: Int32 = 0; waitpid(tracer, &st, 0) }
        #expect(status != nil, "strace and the backup did not end within 60 s")
        let log = readText(trace) ?? ""
        #expect(log.contains("fsync("), "the backup never reached its fsync:\n\(log)")
        #expect(log.contains("+++ killed by \(name)"), "the backup was not ended by \(name):\n\(log)")
        #expect(!log.contains("linkat(") && !log.contains("rename("), "the archive was named after the signal:\n\(log)")
        let left = (try? FileManager.default.contentsOfDirectory(atPath: out)) ?? []
        #expect(left.isEmpty, "an interrupted backup left \(left) behind")
    }

    /// Held in its fsync (strace delays the call), the archive has no name in the directory at
    /// all; killed there from outside, it leaves nothing.
    /// Not under an emulator: /proc/PID/syscall then shows qemu-user's own (host) system call,
    /// not the command's, so "held in fsync" cannot be read there (the strace-injected test
    /// above still runs).
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: strace), "strace is installed by deploy/dev-deps.sh"),
          .disabled(if: TestMachine.emulated, "under qemu-user /proc/PID/syscall is the emulator's"))
    func aBackupHeldInItsFsyncHasNoNameAndIsKilledWithoutTrace() throws {
        let state = temporaryDirectory()
        let out = temporaryDirectory()
        defer { for d in [state, out] { try? FileManager.default.removeItem(atPath: d) } }
        #expect(UnwindRun.run(["alerts", "set", "1", "--name", "Mum", "--number", "+17785551234",
                               "--message", "Having a panic attack, please call", "--state", state]).status == 0)
        // Longer than any test run: the fsync never ends by itself here.
        let tracer = try Self.spawn(Self.strace, ["-f", "-o", "/dev/null", "-e", "trace=fsync",
                                                  "-e", "inject=fsync:delay_enter=600000000",
                                                  UnwindRun.executable, "backup", "--state", state, out + "/backup.tar"])
        defer { kill(tracer, SIGKILL); var st: Int32 = 0; waitpid(tracer, &st, 0) }
        // The command is strace's child (strace forks short-lived children of its own to probe
        // the kernel first): the one running unwind that is in fsync.
        var command: pid_t = 0
        let held = waitUntil(.seconds(60)) {
            command = childProcesses(tracer).first {
                processExecutable($0)?.hasSuffix("/unwind") == true && currentSystemCall($0) == fsyncSystemCallNumber
            } ?? 0
            return command != 0
        }
        try #require(held, "the backup did not reach its fsync under strace within 60 s")
        // While the bytes are being made durable they have no name in the directory at all.
        #expect((try? FileManager.default.contentsOfDirectory(atPath: out)) == [], "a name appeared before the archive was whole")
        kill(command, SIGKILL)
        // A tracee held in a system-call stop dies of its SIGKILL once its tracer lets it go.
        kill(tracer, SIGKILL)
        #expect(waitUntil(.seconds(30)) { processHasEnded(command) }, "the backup outlived SIGKILL by 30 s")
        let left = (try? FileManager.default.contentsOfDirectory(atPath: out)) ?? []
        #expect(left.isEmpty, "a killed backup left \(left) behind")
    }

    /// posix_spawn with an empty signal mask and default dispositions; the pid.
    static func spawn(_ path: String, _ arguments: [String]) throws -> pid_t {
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t()
        sigemptyset(&none)
        var all = sigset_t()
        sigemptyset(&all)
        for s in [SIGINT, SIGTERM, SIGHUP, SIGPIPE] { sigaddset(&all, s) }
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for fd: Int32 in [0, 1, 2] { posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", fd == 0 ? O_RDONLY : O_WRONLY, 0) }
        let argv: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { strdup($0) } + [nil]
        defer { for a in argv { free(a) } }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, path, &actions, &attributes, argv, environ)
        guard rc == 0 else { throw POSIXError(POSIXErrorCode(rawValue: rc) ?? .EIO) }
        return pid
    }

    /// Uninterrupted, the same command writes the archive under its name and nothing else.
    @Test func aBackupThatFinishesLeavesOnlyTheArchive() throws {
        let state = temporaryDirectory()
        let out = temporaryDirectory()
        defer { for d in [state, out] { try? FileManager.default.removeItem(atPath: d) } }
        #expect(UnwindRun.run(["backup", "--state", state, out + "/b.tar"]).status == 0)
        #expect((try? FileManager.default.contentsOfDirectory(atPath: out)) == ["b.tar"])
        // --force replaces it, again leaving nothing else.
        #expect(UnwindRun.run(["backup", "--state", state, out + "/b.tar", "--force"]).status == 0)
        #expect((try? FileManager.default.contentsOfDirectory(atPath: out)) == ["b.tar"])
        #expect(UnwindRun.run(["backup", "--state", state, out + "/b.tar"]).status != 0, "replaced without --force")
    }
}
