import SystemPackage
import UnwindSeams

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A directory the device keeps inside its state directory (the outbox, replies, the terminal
/// simulator's modem link). The service user can write the state directory, and a card can be
/// damaged: under such a name there may be a file, a FIFO, a link (to /etc/shadow, to a
/// directory elsewhere, to nothing) or a directory the device cannot open. The device must start
/// anyway — a device that exits has no panic path at all — so whatever is there is renamed
/// `<name>.corrupt-<suffix>` (a rename never follows a link and keeps every byte for
/// inspection, as the state files are set aside) and a new directory takes the name.
public enum OwnedDirectory {
    /// Errors that say nothing about what is under the name (the process is out of descriptors
    /// or memory): moving a good outbox aside for them would hide its messages for nothing.
    static let passing: Set<Int32> = [EMFILE, ENFILE, ENOMEM, EINTR, EAGAIN]

    /// What was under the name and where it went.
    public struct SetAside: Sendable, Equatable, CustomStringConvertible {
        public var name: String
        /// "a regular file", "a symbolic link", "a directory this device cannot use", …
        public var was: String
        /// Its new name, beside it in the state directory.
        public var movedTo: String
        public var description: String { "\(name) was \(was); moved aside as \(movedTo) and a new \(name) made" }
    }

    /// Sets aside whatever is under `name` in `stateDirectory` unless it is a real directory
    /// this process can list, enter and write (a link to one does not count). Nil when nothing
    /// was moved (nothing there, or a usable directory).
    ///
    /// C calls: `open` (O_DIRECTORY|O_NOFOLLOW) on the state directory, `fstatat`
    /// (AT_SYMLINK_NOFOLLOW), `faccessat` (AT_EACCESS), `renameat`, `fsync` on the state directory.
    public static func claim(_ name: String, in stateDirectory: String, suffix: String) throws(StoreError) -> SetAside? {
        try withStateDirectory(stateDirectory) { (fd: Int32) throws(StoreError) -> SetAside? in
            var info = stat()
            if fstatat(fd, name, &info, AT_SYMLINK_NOFOLLOW) != 0 { return nil }
            if info.st_mode & mode_t(S_IFMT) == mode_t(S_IFDIR),
               faccessat(fd, name, R_OK | W_OK | X_OK, AT_EACCESS | AT_SYMLINK_NOFOLLOW) == 0 {
                return nil
            }
            return try setAside(name, info, dirFD: fd, stateDirectory, suffix: suffix)
        }
    }

    static func kind(_ info: stat) -> String {
        switch info.st_mode & mode_t(S_IFMT) {
        case mode_t(S_IFREG): "a regular file"
        case mode_t(S_IFLNK): "a symbolic link"
        case mode_t(S_IFIFO): "a FIFO"
        case mode_t(S_IFSOCK): "a socket"
        case mode_t(S_IFCHR), mode_t(S_IFBLK): "a device node"
        case mode_t(S_IFDIR): "a directory this device cannot list, enter and write (mode \(String(info.st_mode & 0o7777, radix: 8)), owner \(info.st_uid))"
        default: "not a directory"
        }
    }

    /// Opens the directory as a store; when that fails because of what is under the name (not
    /// for want of descriptors or memory), sets it aside and opens a new one. `setAside` is the
    /// name it was moved to.
    public static func open(_ name: String, in stateDirectory: String, maximumFileSize: Int,
                            suffix: String) throws(StoreError) -> (store: DirectoryStore, setAside: SetAside?) {
        let path = stateDirectory + "/" + name
        var moved = try claim(name, in: stateDirectory, suffix: suffix)
        do {
            return (try DirectoryStore(directory: path, maximumFileSize: maximumFileSize), moved)
        } catch {
            // A directory that looked usable and still cannot be opened as a store (a journal
            // in it that cannot be cleared, a race with whoever planted it): the same remedy.
            guard moved == nil, !passing.contains(error.errno) else { throw error }
            moved = try withStateDirectory(stateDirectory) { (fd: Int32) throws(StoreError) -> SetAside? in
                var info = stat()
                guard fstatat(fd, name, &info, AT_SYMLINK_NOFOLLOW) == 0 else { return nil }
                var aside = try setAside(name, info, dirFD: fd, stateDirectory, suffix: suffix)
                aside.was = "a directory that cannot be opened as a store (\(error))"
                return aside
            }
            guard moved != nil else { throw error }
            return (try DirectoryStore(directory: path, maximumFileSize: maximumFileSize), moved)
        }
    }

    private static func withStateDirectory<T>(_ stateDirectory: String,
                                              _ body: (Int32) throws(StoreError) -> T) throws(StoreError) -> T {
        let fd: Int32
        do {
            fd = try valueOrErrno { openDirectory(stateDirectory) }
        } catch {
            throw storeError("open store", FilePath(stateDirectory), error)
        }
        defer { close(fd) }
        return try body(fd)
    }

    private static func setAside(_ name: String, _ info: stat, dirFD: Int32, _ stateDirectory: String,
                                 suffix: String) throws(StoreError) -> SetAside {
        let base = "\(name).corrupt-\(suffix)"
        for attempt in 0..<10_000 {
            let candidate = attempt == 0 ? base : "\(base)-\(attempt)"
            var taken = stat()
            if fstatat(dirFD, candidate, &taken, AT_SYMLINK_NOFOLLOW) == 0 { continue }
            try systemCall("rename", FilePath(stateDirectory).appending(name)) { renameat(dirFD, name, dirFD, candidate) }
            try systemCall("fsync directory", FilePath(stateDirectory)) { fsync(dirFD) }
            return SetAside(name: name, was: kind(info), movedTo: candidate)
        }
        throw storeError("set aside", FilePath(stateDirectory).appending(base), .fileExists, "no free name")
    }
}

private func openDirectory(_ path: String) -> Int32 {
    open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
}
