/// What is under a name a write is about to replace, when the device could not have used it: it
/// is moved aside as `<name>.corrupt-<suffix>` first (`quarantine`: a rename, so a FIFO or a
/// huge file is never read into memory or opened blocking), the way the device keeps a corrupt
/// file it finds at start. One rule for every writer: the running device's, a maintainer's
/// command on the files, the inbox taking a backup's replies.
extension StateStore {
    /// Moves aside what is under `name` when it cannot be read (a FIFO, a directory, a link,
    /// too large, a second name, unreadable), when the service user cannot read it, or when
    /// `problem` finds its bytes unusable; returns what was done, in the words the maintainer
    /// reads ("the old alert03.txt (not a valid alert03.txt) was kept as alert03.txt.corrupt-…"),
    /// or nil when nothing needed keeping (no file, or a good one). Throws when it cannot be
    /// moved: the caller then writes nothing, rather than destroy the bytes.
    public func keepAside(_ name: String, suffix: String,
                          problem: ([UInt8]) -> String?) throws(KeepAsideFailure) -> String? {
        let why: String
        do {
            guard let bytes = try read(name) else { return nil }
            if let who = serviceUserCannotRead(name) {
                why = "not readable by \(who), the device's user"
            } else if let p = problem(bytes) {
                why = p
            } else {
                return nil
            }
        } catch {
            why = error.message
        }
        do {
            let moved = try quarantine(name, suffix: suffix)
            return "the old \(name) (\(why)) was kept as \(moved)"
        } catch {
            throw KeepAsideFailure(name: name, why: why, error: error)
        }
    }
}

/// A file the device could not use that could not be moved aside either: it is left as it is,
/// and nothing is written over it.
public struct KeepAsideFailure: Error, Equatable, CustomStringConvertible {
    public var name: String
    public var why: String
    public var error: StoreError

    public var description: String { "\(name) is \(why) and cannot be moved aside (\(error))" }
}
