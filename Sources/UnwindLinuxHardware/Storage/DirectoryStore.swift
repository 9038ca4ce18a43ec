import UnwindSeams
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
/// old or the whole new set of files, whatever step a kill lands on. Files outside the directory
/// can join the change (`OutsideFile`).
///
/// A system call a signal interrupts (EINTR) is called again (`valueOrErrno`, or swift-system's
/// own rule for the calls it wraps), except `close`, which on Linux releases the descriptor even
/// when interrupted.
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
    let root: FilePath
    let directoryFD: Int32
    let owner: (uid: uid_t, gid: gid_t)?
    /// Called with a step's name before each step of `replaceAll` and of its recovery: how the
    /// tests kill a writer at every step.
    private let transactionStep: (@Sendable (String) -> Void)?
    let problems = Mutex<[String]>([])

    /// Process-wide, so two stores on the same directory in one process never pick the same
    /// temporary name.
    private static let temporaryCounter = Mutex<UInt64>(0)
    /// Dot-names, so they are never taken for staged state files.
    static let commitMarker = ".commit"
    static let outsideManifest = ".outside"

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
        let fd: Int32
        do {
            fd = try valueOrErrno { open(directory, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) }
        } catch {
            throw storeError("open store", root, error, error == .tooManySymbolicLinkLevels || error == .notDirectory
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
        let raw: Int32
        do {
            raw = try valueOrErrno { openat(directoryFD, name, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC) }
        } catch {
            if error == .noSuchFileOrDirectory { return nil }
            throw storeError("open", path, error, error == .tooManySymbolicLinkLevels ? Self.linkRefusal : nil)
        }
        let fd = FileDescriptor(rawValue: raw)
        defer { _ = try? fd.close() }  // read-only: nothing to lose

        var info = stat()
        try systemCall("fstat", path) { fstat(fd.rawValue, &info) }
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
            try systemCall("rename", target) { renameat(directoryFD, temporary, directoryFD, name) }
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
        try replaceAll(files, outside: [])
    }

    /// `replaceAll`, with files outside the directory in the same change (`OutsideFile`): each
    /// is staged beside its target before the commit and renamed onto it first when the
    /// transaction is finished, by this writer or by the next store opened by the same user.
    public func replaceAll(_ files: [(name: String, bytes: [UInt8])], outside: [OutsideFile]) throws(StoreError) {
        for f in files {
            let path = try path(of: f.name, for: "replace")
            try checkSize(f.bytes, path)
        }
        let counter = Self.nextCounter()
        let staging = ".txn-\(getpid())-\(counter)"
        let stagingPath = root.appending(staging)
        let staged = try outside.map { o throws(StoreError) in try o.staged(as: "\(getpid())-\(counter)") }
        step("stage")
        try systemCall("mkdir", stagingPath) { mkdirat(directoryFD, staging, 0o700) }
        let stagingFD: Int32
        do {
            stagingFD = try valueOrErrno { openat(directoryFD, staging, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) }
        } catch {
            _ = unlinkat(directoryFD, staging, AT_REMOVEDIR)
            throw storeError("open", stagingPath, error)
        }
        defer { close(stagingFD) }
        do throws(StoreError) {
            // A root command killed mid-way must leave a staging directory the daemon can
            // finish; one with files outside stays this user's, for this user alone to finish.
            if let owner, outside.isEmpty {
                try systemCall("fchown", stagingPath) { fchown(stagingFD, owner.uid, owner.gid) }
            }
            if !outside.isEmpty {
                step("outside")
                // This user's, as the staging directory: only this user may act on the list.
                _ = try writeTemporary(OutsideFile.manifest(staged, outside), for: Self.outsideManifest, in: stagingFD, stagingPath,
                                       named: Self.outsideManifest, ownersFile: false)
                try systemCall("fsync directory", stagingPath) { fsync(stagingFD) }
                for (o, path) in zip(outside, staged) {
                    step("stage \(o.path)")
                    try o.write(to: path)
                }
            }
            for f in files {
                step("write \(f.name)")
                let temporary = try writeTemporary(f.bytes, for: f.name, in: stagingFD, stagingPath)
                try systemCall("rename", stagingPath.appending(f.name)) {
                    renameat(stagingFD, temporary, stagingFD, f.name)
                }
            }
            try systemCall("fsync directory", stagingPath) { fsync(stagingFD) }
            step("commit")
            _ = try writeTemporary([], for: Self.commitMarker, in: stagingFD, stagingPath, named: Self.commitMarker)
            try systemCall("fsync directory", stagingPath) { fsync(stagingFD) }
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
            try systemCall("rename", source) { renameat(directoryFD, name, directoryFD, candidate) }
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
        do {
            _ = try valueOrErrno { unlinkat(directoryFD, name, 0) }
        } catch {
            if error == .noSuchFileOrDirectory { return }
            throw storeError("unlink", path, error)
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

    func path(of name: String, for operation: String) throws(StoreError) -> FilePath {
        guard Self.isPlainName(name) else {
            throw StoreError(operation: operation, path: name, errno: EINVAL,
                             message: "\(String(reflecting: name)) is not a plain file name")
        }
        return root.appending(name)
    }

    static func nextCounter() -> UInt64 {
        temporaryCounter.withLock { value in
            defer { value &+= 1 }
            return value
        }
    }

    func step(_ name: String) { transactionStep?(name) }

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
    func writeTemporary(_ bytes: [UInt8], for name: String, in dirFD: Int32, _ dirPath: FilePath,
                                named: String? = nil, ownersFile: Bool = true) throws(StoreError) -> String {
        var attempts = 0
        var temporary: String
        var raw: Int32
        while true {
            temporary = named ?? ".\(name).tmp-\(getpid())-\(Self.nextCounter())"
            do {
                raw = try valueOrErrno { openat(dirFD, temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o640) }
                break
            } catch {
                if error == .fileExists, named == nil, attempts < 16 {
                    attempts += 1  // a leftover with our pid: the next counter
                    continue
                }
                throw storeError("create", dirPath.appending(temporary), error)
            }
        }
        let fd = FileDescriptor(rawValue: raw)
        let path = dirPath.appending(temporary)
        do throws(StoreError) {
            try writeAll(bytes, to: fd, path)
            if let owner, ownersFile {
                try systemCall("fchown", path) { fchown(raw, owner.uid, owner.gid) }
            }
            try systemCall("fsync", path) { fsync(raw) }
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

    /// What opening the store found and could not repair (an unfinishable journal), for the log.
    public var recoveryProblems: [String] { problems.withLock { $0 } }

    func syncDirectory() throws(StoreError) {
        try systemCall("fsync directory", root) { fsync(directoryFD) }
    }

    /// `fstatat` without following: true when something exists under `name`, false on ENOENT.
    func exists(_ name: String) throws(StoreError) -> Bool {
        var info = stat()
        do {
            _ = try valueOrErrno { fstatat(directoryFD, name, &info, AT_SYMLINK_NOFOLLOW) }
            return true
        } catch {
            if error == .noSuchFileOrDirectory { return false }
            throw storeError("lstat", root.appending(name), error)
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
        do {
            _ = try valueOrErrno { path.withCString { mkdir($0, 0o750) } }
        } catch {
            if error == .fileExists { return }  // the O_DIRECTORY|O_NOFOLLOW open says whether it is usable
            throw storeError("mkdir", path, error)
        }
        // Make the new directory's own entry durable.
        var parent = path.removingLastComponent()
        if parent.isEmpty { parent = "." }
        let fd = try systemCall("open directory", parent) { open(parent.string, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        defer { close(fd) }
        try systemCall("fsync directory", parent) { fsync(fd) }
    }
}
