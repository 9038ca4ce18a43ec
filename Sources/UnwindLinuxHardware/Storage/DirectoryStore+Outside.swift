import UnwindSeams
import SystemPackage

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A file outside a store's directory that one of its transactions replaces together with the
/// state files (`unwind setup import`: the configuration, Wi-Fi, the SSH key), so a kill leaves
/// all of them old or all new.
///
/// It is written beside its target as `.<name>.import-<pid>-<counter>` (the transaction's own
/// numbers) with its final owner and mode before the transaction commits, and listed in the
/// staging directory's `.outside`; finishing the transaction renames it onto its target first.
/// Only the user who made the transaction finishes or discards it (a transaction of root's is
/// left alone by the service user, who cannot open it, and one planted by another user is set
/// aside unfinished), so a planted list never makes anyone rename a file they did not stage.
public struct OutsideFile: Sendable, Equatable {
    /// Absolute.
    public var path: String
    public var bytes: [UInt8]
    public var mode: mode_t
    public var owner: uid_t?
    public var group: gid_t?

    /// A relative `path` is taken from the working directory, so the next store that finishes
    /// the transaction finds it wherever that store runs.
    public init(path: String, bytes: [UInt8], mode: mode_t, owner: uid_t? = nil, group: gid_t? = nil) {
        var absolute = path
        if !path.hasPrefix("/") {
            var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
            if let cwd = getcwd(&buffer, buffer.count) { absolute = String(cString: cwd) + "/" + path }
        }
        self.path = absolute
        self.bytes = bytes
        self.mode = mode
        self.owner = owner
        self.group = group
    }

    var directory: String { String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)]) }
    var name: String { String(path[path.index(after: path.lastIndex(of: "/") ?? path.startIndex)...]) }

    /// Where it is staged for the transaction `tag` (`<pid>-<counter>`).
    func staged(as tag: String) throws(StoreError) -> String {
        guard DirectoryStore.isPlainName(name), !path.contains("\n"), !path.utf8.contains(0) else {
            throw storeError("stage", FilePath(path), .invalidArgument, "not a path a transaction can replace")
        }
        return directory + "/." + name + ".import-" + tag
    }

    /// Writes the staged file: created (never through a link), every byte, its owner and mode,
    /// fsynced, and its directory fsynced.
    func write(to staged: String) throws(StoreError) {
        let path = FilePath(staged)
        unlink(staged)  // a leftover of a killed writer whose pid this process now has
        let fd = try systemCall("create", path) { open(staged, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600) }
        do throws(StoreError) {
            let failed: Errno? = bytes.withUnsafeBytes { b in
                do throws(Errno) {
                    try writingAll(b) { Glibc.write(fd, $0.baseAddress, $0.count) }
                    return nil
                } catch {
                    return error
                }
            }
            if let failed { throw storeError("write", path, failed) }
            if owner != nil || group != nil {
                try systemCall("fchown", path) { fchown(fd, owner ?? uid_t.max, group ?? gid_t.max) }
            }
            try systemCall("fchmod", path) { fchmod(fd, mode & 0o7777) }
            try systemCall("fsync", path) { fsync(fd) }
        } catch {
            close(fd)
            unlink(staged)
            throw error
        }
        close(fd)
        try Self.syncDirectory(of: staged)
    }

    /// The list in the staging directory: the staged path, then the target, one a line.
    static func manifest(_ staged: [String], _ outside: [OutsideFile]) -> [UInt8] {
        Array(zip(staged, outside).map { "\($0)\n\($1.path)\n" }.joined().utf8)
    }

    static func syncDirectory(of path: String) throws(StoreError) {
        var dir = String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)])
        if dir.isEmpty { dir = "/" }
        let fd = try systemCall("open directory", FilePath(dir)) { open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        defer { close(fd) }
        try systemCall("fsync directory", FilePath(dir)) { fsync(fd) }
    }
}

extension DirectoryStore {
    /// The (staged, target) pairs a staging directory lists; empty when it lists none. Only a
    /// staged name of the form `OutsideFile.staged` beside its own target is taken.
    static func outsideFiles(in stagingFD: Int32, _ stagingPath: FilePath) throws(StoreError) -> [(staged: String, target: String)] {
        let raw: Int32
        do {
            raw = try valueOrErrno { openat(stagingFD, outsideManifest, O_RDONLY | O_NOFOLLOW | O_CLOEXEC) }
        } catch {
            if error == .noSuchFileOrDirectory { return [] }
            throw storeError("open", stagingPath.appending(outsideManifest), error)
        }
        defer { close(raw) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while bytes.count <= 1 << 16 {
            let n = try systemCall("read", stagingPath.appending(outsideManifest)) { Int32(Glibc.read(raw, &chunk, chunk.count)) }
            if n == 0 { break }
            bytes += chunk[..<Int(n)]
        }
        let lines = bytes.split(separator: UInt8(ascii: "\n")).map { String(decoding: $0, as: UTF8.self) }
        guard lines.count % 2 == 0 else {
            throw storeError("finish", stagingPath.appending(outsideManifest), .invalidArgument, "a list of outside files cut short")
        }
        return try stride(from: 0, to: lines.count, by: 2).map { i throws(StoreError) in
            let (staged, target) = (lines[i], lines[i + 1])
            let file = OutsideFile(path: target, bytes: [], mode: 0)
            let tag = staged.split(separator: "-").suffix(2).joined(separator: "-")
            guard target.hasPrefix("/"), (try? file.staged(as: tag)) == staged else {
                throw storeError("finish", stagingPath.appending(outsideManifest), .invalidArgument, "\(staged) is not staged beside \(target)")
            }
            return (staged, target)
        }
    }

    /// Whether the staging directory may be finished or discarded by this process: one that
    /// lists outside files only by the user who made it.
    static func mayFinish(_ stagingFD: Int32) -> Bool {
        var info = stat()
        guard fstatat(stagingFD, outsideManifest, &info, AT_SYMLINK_NOFOLLOW) == 0 else { return true }
        var dir = stat()
        return fstat(stagingFD, &dir) == 0 && dir.st_uid == geteuid() && info.st_uid == geteuid()
    }

    /// Each staged outside file onto its target (one already moved is no longer there).
    func renameOutside(_ stagingFD: Int32, _ stagingPath: FilePath) throws(StoreError) {
        for (staged, target) in try Self.outsideFiles(in: stagingFD, stagingPath) {
            step("rename \(target)")
            if rename(staged, target) != 0 {
                let e = errno
                if e == ENOENT { continue }
                throw storeError("rename", FilePath(target), Errno(rawValue: e))
            }
            try OutsideFile.syncDirectory(of: target)
        }
    }

    /// The staged outside files of a transaction that never committed, removed.
    static func discardOutside(_ stagingFD: Int32, _ stagingPath: FilePath) {
        for (staged, _) in (try? outsideFiles(in: stagingFD, stagingPath)) ?? [] { unlink(staged) }
    }
}
