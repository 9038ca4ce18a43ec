import Synchronization
import SystemPackage

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A `StateStore` over one real directory, each file replaced by write-to-temp, fsync, rename,
/// fsync the directory: after a killed process or a power cut the name holds either the complete
/// old bytes or the complete new bytes.
///
/// Temporary files are `.<name>.tmp-<pid>-<counter>` in the same directory (so the rename never
/// crosses a file system); a process killed mid-write leaves one behind, and the next
/// `DirectoryStore` on the directory removes it. That cleanup assumes one writer per directory:
/// don't open a second store on a directory while another process is writing to it.
///
/// System calls interrupted by a signal (EINTR) are retried, except `close`, which on Linux
/// releases the descriptor even when interrupted.
public final class DirectoryStore: StateStore {
    /// The directory, as given to `init`.
    public let directory: String
    /// `read` refuses files larger than this and `replace` refuses to write them (EFBIG).
    public let maximumFileSize: Int
    private let root: FilePath

    /// Process-wide, so two stores on the same directory in one process never pick the same
    /// temporary name.
    private static let temporaryCounter = Mutex<UInt64>(0)

    /// Opens the store, creating `directory` (one level, mode 0750 before the umask) if it is
    /// missing, and removes temporary files a killed writer left behind.
    ///
    /// C calls: `mkdir`; when it created the directory, `open`/`fsync`/`close` on the parent;
    /// otherwise `stat` to check it is a directory; then `opendir`/`readdir`/`closedir` and
    /// `unlink` for each stale `.<name>.tmp-<pid>-<counter>` file (failures to unlink are ignored).
    public init(directory: String, maximumFileSize: Int = 1 << 20) throws(StoreError) {
        guard !directory.isEmpty, !directory.utf8.contains(0) else {
            throw StoreError(operation: "open store", path: directory, errno: EINVAL,
                             message: "not a usable directory path")
        }
        precondition(maximumFileSize >= 0, "maximumFileSize must not be negative")
        self.directory = directory
        self.maximumFileSize = maximumFileSize
        self.root = FilePath(directory)
        try Self.makeDirectory(root)
        try Self.removeStaleTemporaries(in: root)
    }

    /// The file's bytes, or nil when it does not exist (ENOENT).
    ///
    /// C calls: `open` (O_RDONLY|O_NONBLOCK|O_CLOEXEC; O_NONBLOCK only so a FIFO under the name
    /// cannot hang us, it means nothing for regular files), `fstat`, `read` until end of file,
    /// `close`.
    /// Throws EISDIR for a directory, EINVAL for anything else that is not a regular file, and
    /// EFBIG when the file is larger than `maximumFileSize`.
    public func read(_ name: String) throws(StoreError) -> [UInt8]? {
        let path = try self.path(of: name, for: "read")
        let fd: FileDescriptor
        switch errnoResult({ try FileDescriptor.open(path, .readOnly, options: [.nonBlocking, .closeOnExec]) }) {
        case .success(let opened): fd = opened
        case .failure(.noSuchFileOrDirectory): return nil
        case .failure(let e): throw storeError("open", path, e)
        }
        defer { _ = try? fd.close() }  // read-only: nothing to lose

        var info = stat()
        try retryingInterrupts("fstat", path) { fstat(fd.rawValue, &info) }
        switch info.st_mode & mode_t(S_IFMT) {
        case mode_t(S_IFREG): break
        case mode_t(S_IFDIR): throw storeError("read", path, .isDirectory)
        default: throw storeError("read", path, .invalidArgument, "not a regular file")
        }
        let limit = maximumFileSize
        guard info.st_size <= Int64(limit) else {
            throw storeError("read", path, .fileTooLarge,
                             "\(info.st_size) bytes, more than the \(limit) allowed")
        }

        var bytes: [UInt8] = []
        bytes.reserveCapacity(Int(info.st_size))
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let count = try check("read", path) {
                try chunk.withUnsafeMutableBytes { try fd.read(into: $0) }  // retries EINTR
            }
            if count == 0 { return bytes }
            // The file may have grown since fstat; never hold more than the limit.
            guard bytes.count + count <= limit else {
                throw storeError("read", path, .fileTooLarge, "more than the \(limit) bytes allowed")
            }
            bytes.append(contentsOf: chunk[..<count])
        }
    }

    /// Atomically replaces (or creates) the file with `bytes`, durable on return.
    ///
    /// C calls: `open` (O_CREAT|O_EXCL|O_WRONLY|O_CLOEXEC, 0640) on `.<name>.tmp-<pid>-<counter>`,
    /// `write` until every byte is out (short writes continue where they stopped), `fsync`,
    /// `close`, `rename` onto `name`, then `open`/`fsync`/`close` on the directory. If anything
    /// up to the rename fails, `unlink` removes the temporary file and the old content stays.
    /// A failure of the final directory `fsync` is thrown too: the new content is in place
    /// but not known to be durable.
    public func replace(_ name: String, with bytes: [UInt8]) throws(StoreError) {
        let target = try path(of: name, for: "replace")
        guard bytes.count <= maximumFileSize else {
            throw storeError("replace", target, .fileTooLarge,
                             "\(bytes.count) bytes, more than the \(maximumFileSize) allowed")
        }

        let (temporary, fd) = try createTemporary(for: name)
        do throws(StoreError) {
            try writeAll(bytes, to: fd, temporary)
            try retryingInterrupts("fsync", temporary) { fsync(fd.rawValue) }
        } catch {
            _ = try? fd.close()
            removeQuietly(temporary)
            throw error
        }
        do throws(StoreError) {
            // No retry: on Linux the descriptor is gone whatever close returns.
            try check("close", temporary) { try fd.close() }
            try retryingInterrupts("rename", temporary) {
                temporary.withCString { from in target.withCString { to in rename(from, to) } }
            }
        } catch {
            removeQuietly(temporary)
            throw error
        }
        try syncDirectory()
    }

    /// Moves a file that failed to parse out of the way as `<name>.corrupt-<suffix>`, or
    /// `<name>.corrupt-<suffix>-1`, `-2` … when that name is taken, and returns the new name.
    ///
    /// C calls: `lstat` on each candidate name until one is free, `rename`, then
    /// `open`/`fsync`/`close` on the directory. Not atomic against another process creating the
    /// same candidate name between the `lstat` and the `rename` (one writer per directory).
    public func quarantine(_ name: String, suffix: String) throws(StoreError) -> String {
        let source = try path(of: name, for: "quarantine")
        guard !suffix.contains("/"), !suffix.utf8.contains(0) else {
            throw storeError("quarantine", source, .invalidArgument,
                             "suffix \(String(reflecting: suffix)) is not part of a plain file name")
        }
        let base = "\(name).corrupt-\(suffix)"
        for attempt in 0..<10_000 {
            let candidate = attempt == 0 ? base : "\(base)-\(attempt)"
            let target = root.appending(candidate)
            if try exists(target) { continue }
            try retryingInterrupts("rename", source) {
                source.withCString { from in target.withCString { to in rename(from, to) } }
            }
            try syncDirectory()
            return candidate
        }
        throw storeError("quarantine", root.appending(base), .fileExists, "no free quarantine name")
    }

    // MARK: - Names

    /// A plain file name: not empty, no "/", no NUL, not starting with "." (which also keeps
    /// ".", ".." and our own temporary files out).
    static func isPlainName(_ name: String) -> Bool {
        !name.isEmpty && !name.hasPrefix(".") && !name.contains("/") && !name.utf8.contains(0)
    }

    /// Whether `entry` is `.<plain name>.tmp-<digits>-<digits>`, as `replace` creates.
    static func isTemporaryName(_ entry: String) -> Bool {
        let bytes = Array(entry.utf8)
        let marker = Array(".tmp-".utf8)
        guard bytes.first == UInt8(ascii: "."), bytes.count > marker.count + 1 else { return false }
        // The last ".tmp-", since the name itself may contain one.
        guard let at = stride(from: bytes.count - marker.count, through: 1, by: -1).first(where: {
            bytes[$0..<$0 + marker.count].elementsEqual(marker)
        }) else { return false }
        let name = String(decoding: bytes[1..<at], as: UTF8.self)
        let tail = bytes[(at + marker.count)...].split(separator: UInt8(ascii: "-"),
                                                      omittingEmptySubsequences: false)
        return isPlainName(name) && tail.count == 2
            && tail.allSatisfy { !$0.isEmpty && $0.allSatisfy { (0x30...0x39).contains($0) } }
    }

    private func path(of name: String, for operation: String) throws(StoreError) -> FilePath {
        guard Self.isPlainName(name) else {
            throw StoreError(operation: operation, path: name, errno: EINVAL,
                             message: "\(String(reflecting: name)) is not a plain file name")
        }
        return root.appending(name)
    }

    // MARK: - Steps

    /// `open` with O_CREAT|O_EXCL; on EEXIST (a leftover with our pid) the next counter is tried.
    private func createTemporary(for name: String) throws(StoreError) -> (FilePath, FileDescriptor) {
        let pid = getpid()
        var attempts = 0
        while true {
            let counter = Self.temporaryCounter.withLock { value in
                defer { value &+= 1 }
                return value
            }
            let temporary = root.appending(".\(name).tmp-\(pid)-\(counter)")
            let result = errnoResult {
                try FileDescriptor.open(
                    temporary, .writeOnly, options: [.create, .exclusiveCreate, .closeOnExec],
                    permissions: FilePermissions(rawValue: 0o640))  // retries EINTR
            }
            switch result {
            case .success(let fd):
                return (temporary, fd)
            case .failure(.fileExists) where attempts < 16:
                attempts += 1
            case .failure(let e):
                throw storeError("create", temporary, e)
            }
        }
    }

    private func writeAll(_ bytes: [UInt8], to fd: FileDescriptor, _ path: FilePath) throws(StoreError) {
        let result: Result<Void, StoreError> = bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let rest = UnsafeRawBufferPointer(rebasing: buffer[offset...])
                switch errnoResult({ try fd.write(rest) }) {  // retries EINTR
                case .success(0):
                    return .failure(storeError("write", path, .ioError, "write made no progress"))
                case .success(let written):
                    offset += written  // a short write continues from here
                case .failure(let e):
                    return .failure(storeError("write", path, e))
                }
            }
            return .success(())
        }
        try result.get()
    }

    /// C calls: `open` (O_RDONLY|O_DIRECTORY|O_CLOEXEC), `fsync`, `close`.
    private func syncDirectory() throws(StoreError) {
        try Self.sync(directory: root)
    }

    private static func sync(directory: FilePath) throws(StoreError) {
        let fd = try check("open directory", directory) {
            try FileDescriptor.open(directory, .readOnly, options: [.directory, .closeOnExec])
        }
        defer { _ = try? fd.close() }
        try retryingInterrupts("fsync directory", directory) { fsync(fd.rawValue) }
    }

    /// `lstat`: true when something exists at `path`, false on ENOENT.
    private func exists(_ path: FilePath) throws(StoreError) -> Bool {
        var info = stat()
        while true {
            if path.withCString({ lstat($0, &info) }) == 0 { return true }
            let code = Errno(rawValue: errno)
            switch code {
            case .interrupted: continue
            case .noSuchFileOrDirectory: return false
            default: throw storeError("lstat", path, code)
            }
        }
    }

    private func removeQuietly(_ path: FilePath) {
        while path.withCString({ unlink($0) }) == -1 && errno == EINTR {}
    }

    private static func makeDirectory(_ path: FilePath) throws(StoreError) {
        while true {
            if path.withCString({ mkdir($0, 0o750) }) == 0 {
                // Make the new directory's own entry durable.
                var parent = path.removingLastComponent()
                if parent.isEmpty { parent = "." }
                try sync(directory: parent)
                return
            }
            let code = Errno(rawValue: errno)
            switch code {
            case .interrupted:
                continue
            case .fileExists:
                var info = stat()
                try retryingInterrupts("stat", path) { path.withCString { stat($0, &info) } }
                guard info.st_mode & mode_t(S_IFMT) == mode_t(S_IFDIR) else {
                    throw storeError("open store", path, .notDirectory)
                }
                return
            default:
                throw storeError("mkdir", path, code)
            }
        }
    }

    /// Whether the process whose pid a temporary name carries still runs (`kill(pid, 0)`).
    static func writerIsAlive(_ entry: String) -> Bool {
        // `.<name>.tmp-<pid>-<counter>`: the pid is the second field from the end.
        let fields = entry.split(separator: "-", omittingEmptySubsequences: false)
        guard fields.count >= 3, let pid = pid_t(fields[fields.count - 2]), pid > 0 else { return false }
        if pid == getpid() { return false }
        return kill(pid, 0) == 0 || errno == EPERM
    }

    private static func removeStaleTemporaries(in path: FilePath) throws(StoreError) {
        guard let stream = path.withCString({ opendir($0) }) else {
            throw storeError("opendir", path, Errno(rawValue: errno))
        }
        var stale: [String] = []
        while true {
            errno = 0
            guard let entry = readdir(stream) else {
                let code = errno
                closedir(stream)
                if code != 0 { throw storeError("readdir", path, Errno(rawValue: code)) }
                break
            }
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(validating: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            // A maintainer's command and the daemon share the directory: only a temporary file
            // whose writer is gone is stale; a live writer's is about to be renamed.
            if let name, isTemporaryName(name), !writerIsAlive(name) { stale.append(name) }
        }
        for name in stale {
            let file = path.appending(name)
            while file.withCString({ unlink($0) }) == -1 && errno == EINTR {}
        }
    }
}

// MARK: - Errors

private func storeError(_ operation: String, _ path: FilePath, _ code: Errno,
                        _ detail: String? = nil) -> StoreError {
    StoreError(operation: operation, path: path.string, errno: code.rawValue,
               message: detail.map { "\(code.description): \($0)" } ?? code.description)
}

/// swift-system throws untyped errors that are always `Errno`; anything else becomes EIO.
private func errnoResult<R>(_ body: () throws -> R) -> Result<R, Errno> {
    do {
        return .success(try body())
    } catch let code as Errno {
        return .failure(code)
    } catch {
        return .failure(.ioError)
    }
}

private func check<R>(_ operation: String, _ path: FilePath,
                      _ body: () throws -> R) throws(StoreError) -> R {
    switch errnoResult(body) {
    case .success(let value): return value
    case .failure(let code): throw storeError(operation, path, code)
    }
}

/// For C calls swift-system does not wrap: retries while the call fails with EINTR.
private func retryingInterrupts(_ operation: String, _ path: FilePath,
                                _ call: () -> Int32) throws(StoreError) {
    while call() == -1 {
        let code = Errno(rawValue: errno)
        if code != .interrupted { throw storeError(operation, path, code) }
    }
}
