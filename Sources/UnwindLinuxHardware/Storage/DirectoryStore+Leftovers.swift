import UnwindSeams
import SystemPackage

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

// What a killed writer leaves in a store's directory, and how the next store on it finishes or
// discards it: temporary files of a `replace`, staging directories of a `replaceAll`.
extension DirectoryStore {
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

    fileprivate static func isPidCounter(_ tail: ArraySlice<UInt8>) -> Bool {
        let fields = tail.split(separator: UInt8(ascii: "-"), omittingEmptySubsequences: false)
        return fields.count == 2 && fields.allSatisfy { !$0.isEmpty && $0.allSatisfy { (0x30...0x39).contains($0) } }
    }

    /// The committed transaction's files onto their names, then the staging directory removed.
    /// Safe to run again after a kill: a file already moved is simply no longer staged.
    func finishCommitted(_ staging: String, stagingFD: Int32) throws(StoreError) {
        let stagingPath = root.appending(staging)
        try renameOutside(stagingFD, stagingPath)
        for name in try Self.entries(of: stagingFD, stagingPath) where Self.isPlainName(name) {
            step("rename \(name)")
            try systemCall("rename", stagingPath.appending(name)) {
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
    static func discard(_ staging: String, stagingFD: Int32, in directoryFD: Int32) {
        discardOutside(stagingFD, FilePath(staging))
        for name in (try? entries(of: stagingFD, FilePath(staging))) ?? [] where name != "." && name != ".." {
            _ = unlinkat(stagingFD, name, 0)
        }
        _ = unlinkat(directoryFD, staging, AT_REMOVEDIR)
    }

    /// Finishes or discards transactions whose writer died, and removes dead writers' temporaries.
    func recoverLeftovers() throws(StoreError) {
        for entry in try entries() {
            if Self.isTemporaryName(entry), !Self.writerIsAlive(entry) {
                // A maintainer's command and the daemon share the directory: only a temporary
                // file whose writer is gone is stale; a live writer's is about to be renamed.
                _ = unlinkat(directoryFD, entry, 0)
            } else if Self.isTransactionName(entry), !Self.writerIsAlive(entry) {
                guard let fd = try? valueOrErrno({ openat(directoryFD, entry, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) }) else {
                    continue  // not ours (a link, a file): left alone
                }
                defer { close(fd) }
                guard Self.mayFinish(fd) else {
                    let aside = entry + ".unfinished"
                    _ = renameat(directoryFD, entry, directoryFD, aside)
                    problems.withLock { $0.append("a change that also replaces files outside \(directory) was left by another user; set aside as \(aside), untouched: the state files are as they were found") }
                    continue
                }
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

    func entries() throws(StoreError) -> [String] {
        try Self.entries(of: directoryFD, root)
    }

    static func entries(of fd: Int32, _ path: FilePath) throws(StoreError) -> [String] {
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
            if let name = directoryEntryName(entry), name != ".", name != ".." { out.append(name) }
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
