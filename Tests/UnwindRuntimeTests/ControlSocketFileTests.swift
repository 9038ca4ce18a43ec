#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization
import Testing
import UnwindTestSupport
import UnwindMaintenance
import UnwindCore
@testable import UnwindRuntime

/// The control socket's file: there with its mode and group from the moment it appears, and
/// made without touching the process's umask (setting it around `bind` once left a test's
/// directory, made by another thread at that moment, unsearchable).
@Suite("The control socket's file") struct ControlSocketFileTests {
    static func startServer(_ path: String) throws -> ControlServer {
        try ControlServer(path: path, stateDirectory: (path as NSString).deletingLastPathComponent, logger: quietLogger(),
                          now: WallTime(secondsSinceEpoch: 0))
    }

    /// The umask as the kernel holds it for the whole process, read without changing it.
    static func umaskNow() -> String? {
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        return status.split(separator: "\n").first { $0.hasPrefix("Umask:") }
            .map { $0.dropFirst("Umask:".count).trimmingCharacters(in: .whitespaces) }
    }

    /// A directory whose group is not this process's (the maintainer group on the device).
    static func groupsDirectory() -> (directory: String, group: gid_t) {
        let directory = temporaryDirectory()
        let group: gid_t = geteuid() == 0 ? 65534 : getegid()
        if geteuid() == 0 { chown(directory, uid_t.max, group) }
        return (directory, group)
    }

    /// Another thread reads the umask, and the socket's file whenever there is one, all the time
    /// servers start one after another: the umask is never anything but the process's own, and
    /// the socket never there but with mode 0660 and the directory's group.
    @Test func startingAServerLeavesTheUmaskAlone() throws {
        let (directory, group) = Self.groupsDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/control.sock"
        let original = try #require(Self.umaskNow())
        let done = Atomic<Bool>(false)
        let reads = Atomic<Int>(0)
        let umasks = Mutex<Set<String>>([])
        let sockets = Mutex<Set<String>>([])
        let finished = DispatchSemaphore(value: 0)
        let watcher = Thread {
            while !done.load(ordering: .acquiring) {
                if let now = Self.umaskNow() { _ = umasks.withLock { $0.insert(now) } }
                var info = stat()
                if lstat(path, &info) == 0 {
                    let seen = "mode \(String(info.st_mode & 0o7777, radix: 8)) group \(info.st_gid)"
                    _ = sockets.withLock { $0.insert(seen) }
                }
                reads.add(1, ordering: .relaxed)
            }
            finished.signal()
        }
        watcher.start()
        // Starts go on until the watcher has looked throughout many of them, however the busy
        // machine schedules it.
        var starts = 0
        while starts < 300 || reads.load(ordering: .relaxed) < 3000, starts < 100_000 {
            try Self.startServer(path).close()
            starts += 1
        }
        done.store(true, ordering: .releasing)
        finished.wait()
        let sawUmasks = umasks.withLock { $0 }, sawSockets = sockets.withLock { $0 }
        #expect(sawUmasks == [original], "the umask was \(sawUmasks) during \(starts) starts; it is \(original)")
        #expect(sawSockets.isSubset(of: ["mode 660 group \(group)"]), "the socket was seen as \(sawSockets)")
    }

    @Test func theSocketIsTheGroupsAndNothingIsLeftBeside() throws {
        let (directory, group) = Self.groupsDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/control.sock"
        let server = try Self.startServer(path)
        var info = stat()
        #expect(lstat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFSOCK)
        #expect(info.st_mode & 0o7777 == 0o660, "the socket is \(String(info.st_mode & 0o7777, radix: 8))")
        #expect(info.st_gid == group && info.st_nlink == 1)
        // The private directory it was bound in is gone.
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory) == ["control.sock"])
        #expect(ControlClient.answers(path))
        // A second server leaves the first's socket alone, and nothing of its own.
        #expect(throws: ControlFailure.self) { try Self.startServer(path) }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory) == ["control.sock"])
        #expect(ControlClient.answers(path))
        server.close()
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory).isEmpty)
    }

    /// The socket is bound through its private directory's descriptor: a path as long as a
    /// UNIX socket's can be still works, though the private directory's name is longer.
    @Test func theLongestPathStillWorks() throws {
        let root = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let longest = MemoryLayout.size(ofValue: sockaddr_un().sun_path) - 1
        let name = "control.sock"
        let directory = root + "/" + String(repeating: "d", count: longest - root.utf8.count - 2 - name.count)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let path = directory + "/" + name
        #expect(path.utf8.count == longest)
        let server = try Self.startServer(path)
        #expect(ControlClient.answers(path))
        server.close()
        #expect(throws: ControlFailure.self) { try Self.startServer(path + "x") }
    }
}
