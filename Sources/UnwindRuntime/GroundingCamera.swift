import UnwindMaintenance
import UnwindSeams
#if canImport(Glibc)
import Glibc
#endif
import Dispatch
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Logging
import SystemPackage
import UnwindCore

/// The optional camera command of the grounding exercise, as configured, e.g.
/// `rpicam-still -n -t 1 --width 640 --height 480 -o {path}`.
///
/// The text is split into words at spaces and tabs (a word may be quoted with '…' or "…" to
/// hold spaces; nothing else is special: no variables, no globbing, no shell). `{path}` in any
/// word is replaced by the file to write. The program is found on PATH and started directly
/// with posix_spawnp, never through a shell.
public struct CaptureCommand: Equatable, Sendable {
    public let arguments: [String]

    public struct Problem: Error, Equatable, CustomStringConvertible {
        public var message: String
        public var description: String { "capture command: \(message)" }
    }

    public init(_ text: String) throws(Problem) {
        var words = [String]()
        var word = ""
        var inWord = false
        var quote: Character?
        for c in text {
            if let q = quote {
                if c == q { quote = nil } else { word.append(c) }
            } else if c == "'" || c == "\"" {
                quote = c
                inWord = true
            } else if c == " " || c == "\t" {
                if inWord { words.append(word); word = ""; inWord = false }
            } else if c.isNewline || (c.asciiValue.map { $0 < 0x20 || $0 == 0x7F } ?? false) {
                throw Problem(message: "control characters are not allowed")
            } else {
                word.append(c)
                inWord = true
            }
        }
        if quote != nil { throw Problem(message: "a quote is not closed") }
        if inWord { words.append(word) }
        guard !words.isEmpty else { throw Problem(message: "empty") }
        guard words.dropFirst().contains(where: { $0.contains("{path}") }) else {
            throw Problem(message: "no {path} argument: the command must be told where to write the photo")
        }
        arguments = words
    }

    /// The argument vector for one photo.
    public func arguments(writing path: String) -> [String] {
        arguments.map { $0.replacing("{path}", with: path) }
    }
}

/// Runs the capture command for the grounding exercise and keeps its photos only as long as the
/// spec allows: in a private directory (mkdtemp, mode 0700) under the temporary directory,
/// named `00.JPG` … `44.JPG`, deleted when the exercise is completed or retried and when the
/// daemon exits (`close`). A directory left by a daemon that died is removed at the next start.
///
/// Captures run one at a time on a background queue (or inline, for the simulator), each with
/// a time limit; a command that fails or hangs is logged and the capture still counts.
public final class GroundingCamera: @unchecked Sendable {
    public static let directoryPrefix = "unwind-grounding-"

    public let command: CaptureCommand
    let base: String
    let timeout: Duration
    let logger: Logger
    let queue: DispatchQueue?
    /// The private directory, while there is one (background queue only).
    private var current: String?
    private var failures = 0

    /// - Parameters:
    ///   - temporaryDirectory: where the private directory is made (default `$TMPDIR` or /tmp).
    ///   - inBackground: run captures on a queue (the device) or inline (the simulator, tests).
    public init(command: CaptureCommand, temporaryDirectory: String? = nil, timeout: Duration = .seconds(10),
                logger: Logger, inBackground: Bool) {
        self.command = command
        var b = temporaryDirectory ?? ProcessInfo.processInfo.environment["TMPDIR"] ?? "/tmp"
        while b.count > 1 && b.hasSuffix("/") { b.removeLast() }
        self.base = b
        self.timeout = timeout
        self.logger = logger
        self.queue = inBackground ? DispatchQueue(label: "unwind.grounding-camera") : nil
        removeStaleDirectories()
    }

    /// The private directory now in use, if any (for tests and logs).
    public var directory: String? { sync { current } }

    /// Takes photo `index` as `NN.JPG`.
    public func capture(_ index: Int) { run { $0.take(index) } }

    /// Deletes photo `index` (its capture was undone).
    public func discard(_ index: Int) {
        run { me in
            guard let dir = me.current else { return }
            unlink(dir + "/" + GroundingCamera.fileName(index))
        }
    }

    /// Deletes every photo and the directory (the exercise was completed or retried).
    public func deleteAll() { run { $0.removeCurrent() } }

    /// Waits for the captures asked for, then deletes everything: the daemon is stopping.
    public func close() {
        deleteAll()
        sync { () }
    }

    /// Waits for the captures asked for.
    public func flush() { sync { () } }

    public static func fileName(_ index: Int) -> String {
        (index < 10 ? "0" : "") + String(index) + ".JPG"
    }

    // MARK: Work (on the queue)

    private func run(_ work: @escaping @Sendable (GroundingCamera) -> Void) {
        if let queue { queue.async { work(self) } } else { work(self) }
    }

    private func sync<T>(_ body: () -> T) -> T {
        if let queue { return queue.sync(execute: body) }
        return body()
    }

    private func take(_ index: Int) {
        guard let dir = ensureDirectory() else { return }
        let path = dir + "/" + Self.fileName(index)
        let outputPath = dir + "/capture-output.txt"
        let result = spawnAndWait(command.arguments(writing: path), output: outputPath)
        var output = ""
        if let o = try? String(contentsOfFile: outputPath, encoding: .utf8) { output = String(o.suffix(300)) }
        unlink(outputPath)
        let problem: String?
        switch result {
        case .exited(0):
            problem = access(path, F_OK) == 0 ? nil : "it exited normally but wrote no \(Self.fileName(index))"
        case .exited(let code): problem = "it exited with status \(code)"
        case .signalled(let s): problem = "it was killed by signal \(s)"
        case .timedOut: problem = "it did not finish within \(timeout) and was killed"
        case .notStarted(let e): problem = "it could not be started: \(describeErrno(e))"
        }
        if let problem {
            failures += 1
            let detail = output.isEmpty ? "" : "; it said: " + output.trimmingSpaces
            logger.warning("grounding capture \(index): the capture command failed (\(problem))\(detail); the capture still counts")
        }
    }

    private func ensureDirectory() -> String? {
        if let current { return current }
        var template = Array((base + "/" + Self.directoryPrefix + String(getpid()) + "-XXXXXX").utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        guard made != nil else {
            logger.error("grounding camera: cannot make a private directory in \(base): \(describeErrno(errno))")
            return nil
        }
        current = String(decoding: template.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return current
    }

    private func removeCurrent() {
        guard let dir = current else { return }
        current = nil
        removeTree(dir)
    }

    private func removeTree(_ dir: String) {
        do { try FileManager.default.removeItem(atPath: dir) } catch {
            logger.error("grounding camera: cannot delete \(dir): \(error)")
        }
    }

    /// Directories of daemons that are gone (killed before they could clean up).
    private func removeStaleDirectories() {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: base) else { return }
        for name in names where name.hasPrefix(Self.directoryPrefix) {
            let rest = name.dropFirst(Self.directoryPrefix.count)
            guard let dash = rest.firstIndex(of: "-"), let pid = Int32(rest[..<dash]), pid != getpid() else { continue }
            let path = base + "/" + name
            var st = stat()
            guard lstat(path, &st) == 0, st.st_uid == getuid(), (st.st_mode & S_IFMT) == S_IFDIR else { continue }
            if kill(pid, 0) == -1 && errno == ESRCH {
                logger.notice("grounding camera: removing \(path), left by a daemon that stopped without cleaning up")
                removeTree(path)
            }
        }
    }

    enum SpawnResult: Equatable {
        case exited(Int32)
        case signalled(Int32)
        case timedOut
        case notStarted(Int32)
    }

    /// posix_spawnp with the argument vector as given (no shell), stdin from /dev/null, stdout and
    /// stderr to `output`; waits up to `timeout`, then SIGKILL.
    private func spawnAndWait(_ argv: [String], output: String) -> SpawnResult {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)

        var cArgs: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) }
        cArgs.append(nil)
        defer { for p in cArgs { free(p) } }
        var pid: pid_t = 0
        let rc = cArgs.withUnsafeMutableBufferPointer { buf -> Int32 in
            // strdup fails only without memory: no photo then, not a crash.
            guard let file = buf[0], let base = buf.baseAddress, !buf.dropLast().contains(where: { $0 == nil }) else { return ENOMEM }
            return posix_spawnp(&pid, file, &actions, nil, base, environ)
        }
        if rc != 0 { return .notStarted(rc) }

        let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(timeout.nanoseconds)
        var status: Int32 = 0
        while true {
            let r: pid_t
            do throws(Errno) { r = try valueOrErrno { waitpid(pid, &status, WNOHANG) } } catch { return .notStarted(error.rawValue) }
            if r == pid { break }
            if DispatchTime.now().uptimeNanoseconds >= deadline {
                kill(pid, SIGKILL)
                _ = try? valueOrErrno { waitpid(pid, &status, 0) }
                return .timedOut
            }
            usleep(5_000)
        }
        // WIFEXITED / WEXITSTATUS / WTERMSIG, which Swift cannot import as macros.
        if status & 0x7F == 0 { return .exited((status >> 8) & 0xFF) }
        return .signalled(status & 0x7F)
    }
}
