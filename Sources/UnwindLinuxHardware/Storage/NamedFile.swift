#if canImport(Glibc)
import Glibc
#endif
import SystemPackage
import UnwindSeams

/// A file a person names on the command line or in the unit (the configuration, a backup to
/// restore, a vCard): read whole, with every way it can be wrong told apart, and never opened
/// when it is not a regular file — opening a FIFO blocks, and opening some devices acts (a
/// watchdog starts counting, a modem line rises). A symbolic link is followed: the path is the
/// person's own choice, unlike a name inside the state directory (see `DirectoryStore`).
public enum NamedFile {
    public enum Problem: Error, Equatable, Sendable {
        /// No file there.
        case missing
        /// A link to a file that does not exist: a mistake to show, not a missing file.
        case danglingLink
        /// `stat`, `open` or `read` failed with this errno.
        case unreadable(Int32)
        /// What it is instead ("a directory", "a FIFO (named pipe)" …).
        case notARegularFile(String)
        /// Its size in bytes, over the limit.
        case tooLarge(Int)
    }

    /// The file's bytes, at most `limit` of them.
    ///
    /// C calls: `stat` (and `lstat` for a missing target), `open` (O_RDONLY|O_NOCTTY|O_NONBLOCK|
    /// O_CLOEXEC), `fstat`, `read` until end of file (called again on EINTR), `close`.
    public static func read(_ path: String, limit: Int) throws(Problem) -> [UInt8] {
        var info = stat()
        if stat(path, &info) != 0 {
            let e = errno
            if e == ENOENT { throw lstat(path, &info) == 0 ? .danglingLink : .missing }
            throw .unreadable(e)
        }
        if let kind = kind(info.st_mode) { throw .notARegularFile(kind) }
        if Int(info.st_size) > limit { throw .tooLarge(Int(info.st_size)) }
        // O_NONBLOCK: should the path have been swapped for a FIFO since stat, open still
        // returns at once, and fstat below refuses it.
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)
        if fd < 0 { throw .unreadable(errno) }
        defer { close(fd) }
        if fstat(fd, &info) != 0 { throw .unreadable(errno) }
        if let kind = kind(info.st_mode) { throw .notARegularFile(kind) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let n: Int
            do {
                n = try valueOrErrno { chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) } }
            } catch {
                throw .unreadable(error.rawValue)
            }
            if n == 0 { return bytes }
            bytes += chunk[0..<n]
            // The file may have grown since fstat.
            if bytes.count > limit { throw .tooLarge(bytes.count) }
        }
    }

    /// What a mode is when it is not a regular file; nil for a regular file.
    public static func kind(_ mode: mode_t) -> String? {
        switch mode & S_IFMT {
        case S_IFREG: nil
        case S_IFDIR: "a directory"
        case S_IFIFO: "a FIFO (named pipe)"
        case S_IFSOCK: "a socket"
        case S_IFCHR: "a character device"
        case S_IFBLK: "a block device"
        default: "not a regular file"
        }
    }
}
