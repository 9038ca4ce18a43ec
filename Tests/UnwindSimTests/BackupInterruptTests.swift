import Foundation
import Glibc
import Testing

/// `unwind backup` interrupted in the middle (Ctrl-C during the fsync, the SSH link dropping)
/// leaves nothing behind: not the archive, and not a hidden copy of it — a backup holds the
/// contacts' numbers. The command is stalled in fsync(2) by strace's fault injection and
/// interrupted there.
@Suite(.serialized) struct BackupInterruptTests {
    static let strace = "/usr/bin/strace"

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: strace), "strace is installed by deploy/dev-deps.sh"),
          arguments: [SIGINT, SIGTERM, SIGKILL])
    func anInterruptedBackupLeavesNothing(_ signal: Int32) throws {
        let state = temporaryDirectory()
        let out = temporaryDirectory()
        defer { for d in [state, out] { try? FileManager.default.removeItem(atPath: d) } }
        let set = UnwindRun.run(["alerts", "set", "1", "--name", "Mum", "--number", "+17785551234",
                                 "--message", "Having a panic attack, please call", "--state", state])
        #expect(set.status == 0, "\(set)")
        // Spawned with SIGINT/SIGTERM unblocked and at their defaults, as from a shell: the test
        // runner blocks them, and a child inherits its mask through exec.
        let tracer = try Self.spawn(Self.strace, ["-f", "-o", "/dev/null", "-e", "trace=fsync",
                                                  "-e", "inject=fsync:delay_enter=4000000",
                                                  UnwindRun.executable, "backup", "--state", state, out + "/backup.tar"])
        defer { kill(tracer, SIGKILL); var st: Int32 = 0; waitpid(tracer, &st, 0) }
        // The command is the tracer's child; wait until it is stalled in its fsync.
        var child: pid_t = 0
        for _ in 0..<200 where child == 0 {
            usleep(10_000)
            let kids = (try? String(contentsOfFile: "/proc/\(tracer)/task/\(tracer)/children", encoding: .utf8)) ?? ""
            child = pid_t(kids.split(separator: " ").first ?? "") ?? 0
        }
        #expect(child > 0, "the backup command did not start under strace")
        usleep(1_500_000)
        // While the bytes are being made durable they have no name in the directory at all.
        #expect((try? FileManager.default.contentsOfDirectory(atPath: out)) == [], "a name appeared before the archive was whole")
        if child > 0 { kill(child, signal) }
        let clock = ContinuousClock()
        let end = clock.now + .seconds(15)
        var status: Int32 = 0
        var done = false
        while !done && clock.now < end {
            done = waitpid(tracer, &status, WNOHANG) == tracer
            if !done { usleep(20_000) }
        }
        #expect(done)
        let left = (try? FileManager.default.contentsOfDirectory(atPath: out)) ?? []
        #expect(left.isEmpty, "an interrupted backup left \(left) behind")
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
