import UnwindSeams
import SystemPackage

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

// Who owns and who can read what a store holds: the service user's view of a file, and a
// subdirectory made with the store's owner.
extension DirectoryStore {
    /// The directory's owner (the service user) when the file's mode keeps it out; nil when it
    /// can read it, when nothing is there, or when the directory is root's (root reads all).
    ///
    /// C calls: `fstatat` (AT_SYMLINK_NOFOLLOW) on the file, `fstat` on the directory.
    public func serviceUserCannotRead(_ name: String) -> UInt32? {
        guard Self.isPlainName(name) else { return nil }
        var file = stat(), dir = stat()
        guard fstatat(directoryFD, name, &file, AT_SYMLINK_NOFOLLOW) == 0, fstat(directoryFD, &dir) == 0,
              dir.st_uid != 0 else { return nil }
        let readable = if file.st_uid == dir.st_uid { file.st_mode & 0o400 != 0 }
            else if file.st_gid == dir.st_gid { file.st_mode & 0o040 != 0 }
            else { file.st_mode & 0o004 != 0 }
        return readable ? nil : dir.st_uid
    }

    /// A store on the directory `name` in this one (a maintainer's restore of `replies/`),
    /// made (mode 0750) when missing and then given this store's owner, so a root command never
    /// leaves a directory the service user cannot write (the device would set it aside). A link
    /// or anything else under the name is refused (`openat` with O_NOFOLLOW|O_DIRECTORY).
    ///
    /// C calls: `mkdirat`; `openat` (O_RDONLY|O_DIRECTORY|O_NOFOLLOW|O_CLOEXEC), `fchown` when it
    /// was made here, `fsync` on this directory, `close`; then a new store on its path.
    public func subdirectory(_ name: String, maximumFileSize: Int) throws(StoreError) -> DirectoryStore {
        let path = try path(of: name, for: "open directory")
        let made = mkdirat(directoryFD, name, 0o750) == 0
        let e = errno
        if !made && e != EEXIST { throw storeError("mkdir", path, Errno(rawValue: e)) }
        let fd = try systemCall("open directory", path) { openat(directoryFD, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) }
        defer { close(fd) }
        if made {
            if let owner { _ = try systemCall("fchown", path) { fchown(fd, owner.uid, owner.gid) } }
            _ = try systemCall("fsync directory", root) { fsync(directoryFD) }
        }
        return try DirectoryStore(directory: directory + "/" + name, maximumFileSize: maximumFileSize,
                                  ownership: owner == nil ? .process : .directoryOwner)
    }
}
