import UnwindDevices
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
/// **No link is ever followed.** The service user can write the state directory, and the
/// maintainer's commands run as root: a `mantras.txt -> /etc/shadow` planted there must not make
/// root read, copy, truncate or chown anything outside it. So the directory is opened once
/// (`O_DIRECTORY|O_NOFOLLOW`) and every file is reached relative to that descriptor (`openat`
/// with `O_NOFOLLOW`, `renameat`, `unlinkat`, `fstatat` without following); anything that is not
/// a regular file is refused with an error naming it; ownership is given with `fchown` on the
/// open temporary file, before it gets its name, so no path can be swapped in between.
///
/// Temporary files are `.<name>.tmp-<pid>-<counter>` in the same directory (so the rename never
/// crosses a file system); a process killed mid-write leaves one behind, and the next
/// `DirectoryStore` on the directory removes it when its writer is gone.
///
/// `replaceAll` changes several files as one (a restore): it stages them in `.txn-<pid>-<counter>/`
/// and commits by creating `.commit` there; the next `DirectoryStore` on the directory finishes a
/// committed transaction whose writer died, or throws an uncommitted one away. Either the whole
/// old or the whole new set of files, whatever step a kill lands on.
///
/// System calls interrupted by a signal (EINTR) are retried, except `close`, which on Linux
/// releases the descriptor even when interrupted.
public final class DirectoryStore: ListableStore {
    /// Who owns the files this store writes.
    public enum Ownership: Sendable {
        /// The process's user (the daemon, a simulator, a test).
        case process
        /// The directory's owner and group, when the process runs as root and the directory is
        /// not root's: a maintainer's `sudo unwind …` must leave files the service user can
        /// still read and replace.
        case directoryOwner
    }

    /// The directory, as given to `init`.
    public let directory: String
    /// `read` refuses files larger than this and `replace` refuses to write them (EFBIG).
    public let maximumFileSize: Int
    private let root: FilePath
    private let directoryFD: Int32
    private let owner: (uid: uid_t, gid: gid_t)?
    /// Called with a step's name before each step of `replaceAll` and of its recovery: how the
    /// tests kill a writer at every step.
    private let transactionStep: (@Sendable (String) -> Void)?
    private let problems = Mutex<[String]>([])

    /// Process-wide, so two stores on the same directory in one process never pick the same
    /// temporary name.
    private static let temporaryCounter = Mutex<UInt64>(0)
    /// A dot-name, so it is never taken for a staged state file.
    static let commitMarker = ".commit"

    /// Opens the store, creating `directory` (one level, mode 0750 before the umask) if it is
    /// missing, finishes or rolls back a transaction a killed writer left, and removes temporary
    /// files a killed writer left behind.
    ///
    /// C calls: `mkdir`; when it created the directory, `open`/`fsync`/`close` on the parent;
    /// `open` (O_RDONLY|O_DIRECTORY|O_NOFOLLOW|O_CLOEXEC) on the directory, kept until deinit;
    /// then `fdopendir`/`readdir`/`closedir`, and `renameat`/`unlinkat` for what was left behind.
    public init(directory: String, maximumFileSize: Int = 1 << 20, ownership: Ownership = .process,
                transactionStep: (@Sendable (String) -> Void)? = nil) throws(StoreError) {
        guard !directory.isEmpty, !directory.utf8.contains(0) else {
            throw StoreError(operation: "open store", path: directory, errno: EINVAL,
                             message: "not a usable directory path")
        }
        self.directory = directory
        self.maximumFileSize = max(0, maximumFileSize)
        self.root = FilePath(directory)
        self.transactionStep = transactionStep
        try Self.makeDirectory(root)
        let fd = retryingOnInterrupt { open(directory, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) }
        if fd < 0 {
            let code = Errno(rawValue: errno)
            throw storeError("open store", root, code, code == .tooManySymbolicLinkLevels || code == .notDirectory
                             ? "a symbolic link or not a directory; the state directory must be a real directory" : nil)
        }
        directoryFD = fd
        var info = stat()
        if ownership == .directoryOwner, geteuid() == 0, fstat(fd, &info) == 0, info.st_uid != 0 || info.st_gid != 0 {
            owner = (info.st_uid, info.st_gid)
        } else {
            owner = nil
        }
        do throws(StoreError) {
            try recoverLeftovers()
        } catch {
            close(fd)
            throw error
        }
    }

    deinit { close(directoryFD) }

    /// The file's bytes, or nil when it does not exist (ENOENT).
    ///
    /// C calls: `openat` (O_RDONLY|O_NONBLOCK|O_NOFOLLOW|O_CLOEXEC; O_NONBLOCK only so a FIFO
    /// under the name cannot hang us), `fstat`, `read` until end of file, `close`.
    /// Throws ELOOP for a symbolic link, EISDIR for a directory, EINVAL for anything else that
    /// is not a regular file, and EFBIG when the file is larger than `maximumFileSize`.
    public func read(_ name: String) throws(StoreError) -> [UInt8]? {
        let path = try self.path(of: name, for: "read")
        let raw = retryingOnInterrupt { openat(directoryFD, name, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC) }
        if raw < 0 {
            let code = Errno(rawValue: errno)
            if code == .noSuchFileOrDirectory { return nil }
            throw storeError("open", path, code, code == .tooManySymbolicLinkLevels ? Self.linkRefusal : nil)
        }
        let fd = FileDescriptor(rawValue: raw)
        defer { _ = try? fd.close() }  // read-only: nothing to lose

        var info = stat()
        try retryingInterrupts("fstat", path) { fstat(fd.rawValue, &info) }
        try Self.requireRegular(info, "read", path)
        // A second name of someone else's file (a hard link made where protected_hardlinks is
        // off) is refused like a symbolic link: root must not read it into a state file.
        guard info.st_nlink <= 1 else {
            throw storeError("read", path, .tooManyLinks, "a file with \(info.st_nlink) names (a hard link); a state file has one")
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

    /// Atomically replaces (or creates) the file with `bytes`, durable on return. Whatever is
    /// under the name — a link, a file — is replaced by a new regular file, never written through.
    ///
    /// C calls: `openat` (O_CREAT|O_EXCL|O_WRONLY|O_NOFOLLOW|O_CLOEXEC, 0640) on
    /// `.<name>.tmp-<pid>-<counter>`, `write` until every byte is out, `fchown` (`.directoryOwner`
    /// as root), `fsync`, `close`, `renameat` onto `name`, then `fsync` on the directory. If
    /// anything up to the rename fails, `unlinkat` removes the temporary file and the old content
    /// stays. A failure of the final directory `fsync` is thrown too: the new content is in place
    /// but not known to be durable.
    public func replace(_ name: String, with bytes: [UInt8]) throws(StoreError) {
        let target = try path(of: name, for: "replace")
        try checkSize(bytes, target)
        let temporary = try writeTemporary(bytes, for: name, in: directoryFD, root)
        do throws(StoreError) {
            try retryingInterrupts("rename", target) { renameat(directoryFD, temporary, directoryFD, name) }
        } catch {
            _ = unlinkat(directoryFD, temporary, 0)
            throw error
        }
        try syncDirectory()
    }

    /// Replaces every file in `files` as one change: after a kill or a power cut at any step the
    /// directory holds all the old files or (once the next store on it has finished the job) all
    /// the new ones. Durable on return.
    ///
    /// Steps: `mkdirat` `.txn-<pid>-<counter>` (0700); each file written, `fchown`ed and fsynced
    /// there; `fsync` it; `.commit` created and the directories fsynced — the point of no return;
    /// each file `renameat` onto its name; `fsync` the directory; `.commit` and the staging
    /// directory removed.
    public func replaceAll(_ files: [(name: String, bytes: [UInt8])]) throws(StoreError) {
        for f in files {
            let path = try path(of: f.name, for: "replace")
            try checkSize(f.bytes, path)
        }
        let staging = ".txn-\(getpid())-\(Self.nextCounter())"
        let stagingPath = root.appending(staging)
        step("stage")
        try retryingInterrupts("mkdir", stagingPath) { mkdirat(directoryFD, staging, 0o700) }
        let stagingFD = retryingOnInterrupt { openat(directoryFD, staging, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) }
        if stagingFD < 0 {
            let code = Errno(rawValue: errno)
            _ = unlinkat(directoryFD, staging, AT_REMOVEDIR)
            throw storeError("open", stagingPath, code)
        }
        defer { close(stagingFD) }
        do throws(StoreError) {
            // A root command killed mid-way must leave a staging directory the daemon can finish.
            if let owner {
                try retryingInterrupts("fchown", stagingPath) { fchown(stagingFD, owner.uid, owner.gid) }
            }
            for f in files {
                step("write \(f.name)")
                let temporary = try writeTemporary(f.bytes, for: f.name, in: stagingFD, stagingPath)
                try retryingInterrupts("rename", stagingPath.appending(f.name)) {
                    renameat(stagingFD, temporary, stagingFD, f.name)
                }
            }
            try retryingInterrupts("fsync directory", stagingPath) { fsync(stagingFD) }
            step("commit")
            _ = try writeTemporary([], for: Self.commitMarker, in: stagingFD, stagingPath, named: Self.commitMarker)
            try retryingInterrupts("fsync directory", stagingPath) { fsync(stagingFD) }
        } catch {
            Self.discard(staging, stagingFD: stagingFD, in: directoryFD)
            throw error
        }
        try finishCommitted(staging, stagingFD: stagingFD)
    }

    /// Moves a file that failed to parse out of the way as `<name>.corrupt-<suffix>`, or
    /// `<name>.corrupt-<suffix>-1`, `-2` … when that name is taken, and returns the new name.
    ///
    /// C calls: `fstatat` (AT_SYMLINK_NOFOLLOW) on each candidate name until one is free,
    /// `renameat`, then `fsync` on the directory.
    public func quarantine(_ name: String, suffix: String) throws(StoreError) -> String {
        let source = try path(of: name, for: "quarantine")
        guard !suffix.contains("/"), !suffix.utf8.contains(0) else {
            throw storeError("quarantine", source, .invalidArgument,
                             "suffix \(String(reflecting: suffix)) is not part of a plain file name")
        }
        let base = "\(name).corrupt-\(suffix)"
        for attempt in 0..<10_000 {
            let candidate = attempt == 0 ? base : "\(base)-\(attempt)"
            if try exists(candidate) { continue }
            try retryingInterrupts("rename", source) { renameat(directoryFD, name, directoryFD, candidate) }
            try syncDirectory()
            return candidate
        }
        throw storeError("quarantine", root.appending(base), .fileExists, "no free quarantine name")
    }

    /// The plain names in the directory (any order); dot-files (temporaries, locks) left out.
    ///
    /// C calls: `dup`, `fdopendir`, `readdir`, `closedir`.
    public func names() throws(StoreError) -> [String] {
        try entries().filter(Self.isPlainName)
    }

    /// Removes the file, durable on return; a missing file is not an error.
    ///
    /// C calls: `unlinkat`, then `fsync` on the directory.
    public func remove(_ name: String) throws(StoreError) {
        let path = try path(of: name, for: "remove")
        while unlinkat(directoryFD, name, 0) != 0 {
            let code = Errno(rawValue: errno)
            if code == .interrupted { continue }
            if code == .noSuchFileOrDirectory { return }
            throw storeError("unlink", path, code)
        }
        try syncDirectory()
    }

    // MARK: - Names

    static let linkRefusal = "a symbolic link; state files must be regular files, and links are never followed (remove it)"

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
        return isPlainName(name) && isPidCounter(bytes[(at + marker.count)...])
    }

    /// Whether `entry` is `.txn-<digits>-<digits>`, as `replaceAll` creates.
    static func isTransactionName(_ entry: String) -> Bool {
        let bytes = Array(entry.utf8)
        let marker = Array(".txn-".utf8)
        return bytes.starts(with: marker) && isPidCounter(bytes[marker.count...])
    }

    private static func isPidCounter(_ tail: ArraySlice<UInt8>) -> Bool {
        let fields = tail.split(separator: UInt8(ascii: "-"), omittingEmptySubsequences: false)
        return fields.count == 2 && fields.allSatisfy { !$0.isEmpty && $0.allSatisfy { (0x30...0x39).contains($0) } }
    }

    private func path(of name: String, for operation: String) throws(StoreError) -> FilePath {
        guard Self.isPlainName(name) else {
            throw StoreError(operation: operation, path: name, errno: EINVAL,
                             message: "\(String(reflecting: name)) is not a plain file name")
        }
        return root.appending(name)
    }

    private static func nextCounter() -> UInt64 {
        temporaryCounter.withLock { value in
            defer { value &+= 1 }
            return value
        }
    }

    private func step(_ name: String) { transactionStep?(name) }

    // MARK: - Steps

    private func checkSize(_ bytes: [UInt8], _ path: FilePath) throws(StoreError) {
        guard bytes.count <= maximumFileSize else {
            throw storeError("replace", path, .fileTooLarge,
                             "\(bytes.count) bytes, more than the \(maximumFileSize) allowed")
        }
    }

    /// Creates a new file in `directoryFD` holding `bytes`, owned as this store's files are, on
    /// the card (fsynced) and closed; returns its name. `named`: that exact name (O_EXCL), not a
    /// fresh temporary one.
    private func writeTemporary(_ bytes: [UInt8], for name: String, in dirFD: Int32, _ dirPath: FilePath,
                                named: String? = nil) throws(StoreError) -> String {
        var attempts = 0
        var temporary: String
        var raw: Int32
        while true {
            temporary = named ?? ".\(name).tmp-\(getpid())-\(Self.nextCounter())"
            raw = retryingOnInterrupt {
                openat(dirFD, temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o640)
            }
            if raw >= 0 { break }
            let code = Errno(rawValue: errno)
            if code == .fileExists, named == nil, attempts < 16 {
                attempts += 1  // a leftover with our pid: the next counter
                continue
            }
            throw storeError("create", dirPath.appending(temporary), code)
        }
        let fd = FileDescriptor(rawValue: raw)
        let path = dirPath.appending(temporary)
        do throws(StoreError) {
            try writeAll(bytes, to: fd, path)
            if let owner {
                try retryingInterrupts("fchown", path) { fchown(raw, owner.uid, owner.gid) }
            }
            try retryingInterrupts("fsync", path) { fsync(raw) }
        } catch {
            _ = try? fd.close()
            _ = unlinkat(dirFD, temporary, 0)
            throw error
        }
        do throws(StoreError) {
            // No retry: on Linux the descriptor is gone whatever close returns.
            try check("close", path) { try fd.close() }
        } catch {
            _ = unlinkat(dirFD, temporary, 0)
            throw error
        }
        return temporary
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

    /// The committed transaction's files onto their names, then the staging directory removed.
    /// Safe to run again after a kill: a file already moved is simply no longer staged.
    private func finishCommitted(_ staging: String, stagingFD: Int32) throws(StoreError) {
        let stagingPath = root.appending(staging)
        for name in try Self.entries(of: stagingFD, stagingPath) where Self.isPlainName(name) {
            step("rename \(name)")
            try retryingInterrupts("rename", stagingPath.appending(name)) {
                renameat(stagingFD, name, directoryFD, name)
            }
        }
        step("sync")
        try syncDirectory()
        step("clean")
        Self.discard(staging, stagingFD: stagingFD, in: directoryFD)
        try syncDirectory()
    }

    /// Everything in a staging directory removed, then the directory (errors ignored: a
    /// leftover is finished or discarded again by the next store).
    private static func discard(_ staging: String, stagingFD: Int32, in directoryFD: Int32) {
        for name in (try? entries(of: stagingFD, FilePath(staging))) ?? [] where name != "." && name != ".." {
            _ = unlinkat(stagingFD, name, 0)
        }
        _ = unlinkat(directoryFD, staging, AT_REMOVEDIR)
    }

    /// Finishes or discards transactions whose writer died, and removes dead writers' temporaries.
    private func recoverLeftovers() throws(StoreError) {
        for entry in try entries() {
            if Self.isTemporaryName(entry), !Self.writerIsAlive(entry) {
                // A maintainer's command and the daemon share the directory: only a temporary
                // file whose writer is gone is stale; a live writer's is about to be renamed.
                _ = unlinkat(directoryFD, entry, 0)
            } else if Self.isTransactionName(entry), !Self.writerIsAlive(entry) {
                let fd = retryingOnInterrupt { openat(directoryFD, entry, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) }
                guard fd >= 0 else { continue }  // not ours (a link, a file): left alone
                defer { close(fd) }
                var info = stat()
                guard fstatat(fd, Self.commitMarker, &info, AT_SYMLINK_NOFOLLOW) == 0 else {
                    Self.discard(entry, stagingFD: fd, in: directoryFD)
                    continue
                }
                // A journal that cannot be finished (planted, or damaged: something in it that is
                // not a plain file, a rename that fails) must not keep the device from starting:
                // it is set aside whole, untouched, and said.
                do throws(StoreError) {
                    let staged = try Self.entries(of: fd, root.appending(entry)).filter(Self.isPlainName)
                    for name in staged {
                        var one = stat()
                        guard fstatat(fd, name, &one, AT_SYMLINK_NOFOLLOW) == 0, one.st_mode & S_IFMT == S_IFREG else {
                            throw storeError("finish", root.appending(entry).appending(name), .invalidArgument, "not a regular file")
                        }
                    }
                    try finishCommitted(entry, stagingFD: fd)
                } catch {
                    let aside = entry + ".unfinished"
                    _ = renameat(directoryFD, entry, directoryFD, aside)
                    problems.withLock { $0.append("an interrupted restore could not be finished (\(error)); set aside as \(aside), the state files are as they were found") }
                }
            }
        }
    }

    /// What opening the store found and could not repair (an unfinishable journal), for the log.
    public var recoveryProblems: [String] { problems.withLock { $0 } }

    private func entries() throws(StoreError) -> [String] {
        try Self.entries(of: directoryFD, root)
    }

    private static func entries(of fd: Int32, _ path: FilePath) throws(StoreError) -> [String] {
        let copy = dup(fd)
        guard copy >= 0, let stream = fdopendir(copy) else {
            let code = Errno(rawValue: errno)
            throw storeError("opendir", path, code)
        }
        defer { closedir(stream) }
        rewinddir(stream)  // the copy shares the position with earlier listings
        var out: [String] = []
        while true {
            errno = 0
            guard let entry = readdir(stream) else {
                if errno != 0 { throw storeError("readdir", path, Errno(rawValue: errno)) }
                return out
            }
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(validating: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if let name, name != ".", name != ".." { out.append(name) }
        }
    }

    private func syncDirectory() throws(StoreError) {
        try retryingInterrupts("fsync directory", root) { fsync(directoryFD) }
    }

    /// `fstatat` without following: true when something exists under `name`, false on ENOENT.
    private func exists(_ name: String) throws(StoreError) -> Bool {
        var info = stat()
        while true {
            if fstatat(directoryFD, name, &info, AT_SYMLINK_NOFOLLOW) == 0 { return true }
            let code = Errno(rawValue: errno)
            switch code {
            case .interrupted: continue
            case .noSuchFileOrDirectory: return false
            default: throw storeError("lstat", root.appending(name), code)
            }
        }
    }

    static func requireRegular(_ info: stat, _ operation: String, _ path: FilePath) throws(StoreError) {
        switch info.st_mode & mode_t(S_IFMT) {
        case mode_t(S_IFREG): return
        case mode_t(S_IFDIR): throw storeError(operation, path, .isDirectory, "a directory; a state file must be a regular file")
        case mode_t(S_IFIFO): throw storeError(operation, path, .invalidArgument, "a FIFO; a state file must be a regular file")
        default: throw storeError(operation, path, .invalidArgument, "not a regular file")
        }
    }

    private static func makeDirectory(_ path: FilePath) throws(StoreError) {
        while true {
            if path.withCString({ mkdir($0, 0o750) }) == 0 {
                // Make the new directory's own entry durable.
                var parent = path.removingLastComponent()
                if parent.isEmpty { parent = "." }
                let fd = retryingOnInterrupt { open(parent.string, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
                if fd < 0 { throw storeError("open directory", parent, Errno(rawValue: errno)) }
                defer { close(fd) }
                try retryingInterrupts("fsync directory", parent) { fsync(fd) }
                return
            }
            let code = Errno(rawValue: errno)
            switch code {
            case .interrupted: continue
            case .fileExists: return  // the O_DIRECTORY|O_NOFOLLOW open says whether it is usable
            default: throw storeError("mkdir", path, code)
            }
        }
    }

    /// Whether the process whose pid a temporary or staging name carries still runs (`kill(pid, 0)`).
    static func writerIsAlive(_ entry: String) -> Bool {
        // `.<name>.tmp-<pid>-<counter>` / `.txn-<pid>-<counter>`: the pid is the second field from the end.
        let fields = entry.split(separator: "-", omittingEmptySubsequences: false)
        guard fields.count >= 3, let pid = pid_t(fields[fields.count - 2]), pid > 0 else { return false }
        if pid == getpid() { return false }
        return kill(pid, 0) == 0 || errno == EPERM
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

extension DirectoryStore {
    /// The outbox's directory: one small file per message (64 KiB is far beyond any alert).
    public static func outbox(at directory: String) throws(StoreError) -> DirectoryStore {
        try DirectoryStore(directory: directory, maximumFileSize: 64 * 1024)
    }
}
