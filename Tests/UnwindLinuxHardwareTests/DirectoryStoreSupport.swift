import UnwindSeams
import Foundation
import Testing
import UnwindTestSupport
import UnwindLinuxHardware
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

// What the DirectoryStore tests share: the store-writer child and its self-describing content,
// errno and permission helpers.

// MARK: - Content written by store-writer

/// What store-writer writes, asked of the binary itself (`store-writer --content A|B`), so the
/// test and the child can never disagree about it.
func storeWriterContent(_ tag: String) throws -> [UInt8] {
    let child = try Child(try storeWriterPath(), ["--content", tag])
    let bytes = Array(child.readAll().utf8)
    guard selfDescribedTag(bytes) == tag else {
        throw TestSetupError(description: "store-writer --content \(tag) printed \(bytes.count) bytes that do not describe themselves")
    }
    return bytes
}

func fnv1a64(_ bytes: some Sequence<UInt8>) -> UInt64 {
    var hash: UInt64 = 0xcbf2_9ce4_8422_2325
    for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
    return hash
}

/// "A" or "B" when the bytes carry a well-formed header whose length and checksum match.
func selfDescribedTag(_ bytes: [UInt8]) -> String? {
    guard let newline = bytes.firstIndex(of: UInt8(ascii: "\n")) else { return nil }
    let fields = String(decoding: bytes[..<newline], as: UTF8.self).split(separator: " ")
    guard fields.count == 3, fields[0] == "A" || fields[0] == "B",
          Int(fields[1]) == bytes.count,
          UInt64(fields[2], radix: 16) == fnv1a64(bytes[(newline + 1)...]) else { return nil }
    return String(fields[0])
}

func describe(_ bytes: [UInt8]?) -> String {
    guard let bytes else { return "missing" }
    let head = String(decoding: bytes.prefix(24), as: UTF8.self)
    return "\(bytes.count) bytes starting \(String(reflecting: head)), self-described as \(selfDescribedTag(bytes) ?? "nothing valid")"
}

// MARK: - Helpers

/// The errno of the StoreError `body` throws, nil if it throws nothing, -1 for any other error.
func storeErrno(_ body: () throws -> Void) -> Int32? {
    do {
        try body()
        return nil
    } catch let error as StoreError {
        return error.errno
    } catch {
        return -1
    }
}

func permissions(of path: String) throws -> mode_t {
    var info = stat()
    guard stat(path, &info) == 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
    return info.st_mode & 0o7777
}

/// Whether chmod 0500 on a directory stops this process from creating files in it (not so for root).
func permissionsAreEnforced() -> Bool {
    let dir = ScratchDirectory()
    guard chmod(dir.path, 0o500) == 0 else { return true }
    defer { chmod(dir.path, 0o700) }
    let fd = open(dir.path + "/probe", O_CREAT | O_WRONLY | O_CLOEXEC, 0o600)
    if fd >= 0 {
        close(fd)
        return false
    }
    return true
}

private func systemRead(_ fd: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
    read(fd, buffer, count)
}

/// SplitMix64: small, seedable, good enough for test data.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9e37_79b9_7f4a_7c15
        var z = state
        z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
        z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
        return z ^ (z >> 31)
    }
}

struct TestSetupError: Error, CustomStringConvertible {
    var description: String
}

/// The `store-writer` executable SwiftPM builds beside the test binary (`.build*/debug/`).
func storeWriterPath() throws -> String {
    var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
    let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
    guard length > 0 else {
        throw TestSetupError(description: "cannot resolve /proc/self/exe (errno \(errno)); the kill test needs Linux")
    }
    let executable = String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    let directory = executable[..<(executable.lastIndex(of: "/") ?? executable.startIndex)]
    let writer = "\(directory)/store-writer"
    guard access(writer, X_OK) == 0 else {
        throw TestSetupError(description: """
            store-writer not found at \(writer) (beside the test binary \(executable)); \
            build it with `swift build --product store-writer` using the same scratch path
            """)
    }
    return writer
}

/// A child process spawned with posix_spawn, its stdout on a pipe.
final class Child {
    enum Status: Equatable, CustomStringConvertible {
        case exited(Int32)
        case signalled(Int32)
        var description: String {
            switch self {
            case .exited(let code): "exited with \(code)"
            case .signalled(let signal): "killed by signal \(signal)"
            }
        }
    }

    let pid: pid_t
    private let output: Int32
    private var buffered: [UInt8] = []
    private var reaped = false

    init(_ path: String, _ arguments: [String]) throws {
        var fds: [Int32] = [-1, -1]
        // pipe2 is not visible from Swift's Glibc; the window before FD_CLOEXEC only risks
        // another test's child holding our write end (a later EOF), never a wrong result.
        guard pipe(&fds) == 0 else { throw TestSetupError(description: "pipe: errno \(errno)") }
        _ = fcntl(fds[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(fds[1], F_SETFD, FD_CLOEXEC)
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, fds[1], 1)  // dup2 clears CLOEXEC on 1
        let argv: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid = pid_t()
        let result = posix_spawn(&pid, path, &actions, nil, argv, environ)
        close(fds[1])
        guard result == 0 else {
            close(fds[0])
            throw TestSetupError(description: "posix_spawn \(path): errno \(result)")
        }
        self.pid = pid
        self.output = fds[0]
    }

    deinit {
        if !reaped { _ = killAndWait() }
        close(output)
    }

    /// Reads stdout until a line equal to `line` arrives; false on end of file or timeout.
    func waitForLine(_ line: String, timeout: Duration) -> Bool {
        let deadline = ContinuousClock.now + timeout
        let wanted = Array((line + "\n").utf8)
        while true {
            if let range = buffered.firstRange(of: wanted), range.lowerBound == 0
                || buffered[range.lowerBound - 1] == UInt8(ascii: "\n") {
                return true
            }
            let left = deadline - ContinuousClock.now
            guard left > .zero else { return false }
            var poller = pollfd(fd: output, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, Int32(left.components.seconds * 1000 + 1))
            if ready < 0 && errno == EINTR { continue }
            guard ready > 0, readSome() else { return false }
        }
    }

    /// Everything the child writes to stdout until it closes it.
    func readAll() -> String {
        while readSome() {}
        return String(decoding: buffered, as: UTF8.self)
    }

    /// Appends what one read returns; false at end of file or on error.
    private func readSome() -> Bool {
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = chunk.withUnsafeMutableBytes { systemRead(output, $0.baseAddress, $0.count) }
            if count > 0 {
                buffered += chunk[..<count]
                return true
            }
            if count < 0 && errno == EINTR { continue }
            return false
        }
    }

    func killAndWait() -> Status {
        kill(pid, SIGKILL)
        return wait()
    }

    func wait() -> Status {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        reaped = true
        let signal = status & 0x7f
        return signal == 0 ? .exited((status >> 8) & 0xff) : .signalled(signal)
    }
}
