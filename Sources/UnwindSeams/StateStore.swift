import Synchronization
import SystemPackage

/// The SD card as the device sees it: a directory of small flat files, each replaced whole.
///
/// A `replace` either leaves the complete old content or the complete new content on the card,
/// whatever happens mid-way (a killed process, a power cut): never a torn file.
public protocol StateStore: AnyObject, Sendable {
    /// The file's bytes, or nil when it does not exist.
    func read(_ name: String) throws(StoreError) -> [UInt8]?
    /// Atomically replaces (or creates) the file with `bytes`, durable on return.
    func replace(_ name: String, with bytes: [UInt8]) throws(StoreError)
    /// Replaces several files as one change: whatever happens mid-way, all the old files or all
    /// the new ones (a restore).
    func replaceAll(_ files: [(name: String, bytes: [UInt8])]) throws(StoreError)
    /// Moves a file that failed to parse out of the way as `<name>.corrupt-<suffix>` so it can
    /// be inspected, and returns the new name.
    func quarantine(_ name: String, suffix: String) throws(StoreError) -> String
    /// What opening the store found and could not repair, for the log.
    var recoveryProblems: [String] { get }
    /// The service user (the directory's owner) when the file's mode keeps it out while this
    /// process, root, could read it; nil when it can read it, or nothing is there.
    func serviceUserCannotRead(_ name: String) -> UInt32?
}

extension StateStore {
    public func serviceUserCannotRead(_ name: String) -> UInt32? { nil }
}

/// A directory whose files the writer names and counts itself (the outbox: one file per
/// message), so it can also list them and remove one for good.
public protocol ListableStore: StateStore {
    /// The names of the files in the store (any order); names starting with "." (temporary
    /// files, journals) are left out.
    func names() throws(StoreError) -> [String]
    /// Removes the file, durable on return; removing a missing file is not an error.
    func remove(_ name: String) throws(StoreError)
}

/// A storage failure, with the operation, the file and the errno it came from.
public struct StoreError: Error, Equatable, CustomStringConvertible {
    public var operation: String
    public var path: String
    public var errno: Int32
    public var message: String

    public init(operation: String, path: String, errno: Int32, message: String) {
        self.operation = operation
        self.path = path
        self.errno = errno
        self.message = message
    }

    /// `errno` as swift-system's type.
    public var code: Errno { Errno(rawValue: errno) }

    public var description: String { "\(operation) \(path): \(message) (errno \(errno))" }
}

/// Files held in memory only: what the panic path journals into when its directory on the card
/// cannot be had at all (a read-only or failing card). Alerts still go out; a restart forgets
/// the unsent ones, which is why the device says so in its log.
public final class MemoryStore: ListableStore {
    private let files = Mutex<[String: [UInt8]]>([:])

    public init() {}

    public func read(_ name: String) throws(StoreError) -> [UInt8]? { files.withLock { $0[name] } }
    public func replace(_ name: String, with bytes: [UInt8]) throws(StoreError) { files.withLock { $0[name] = bytes } }
    public func replaceAll(_ new: [(name: String, bytes: [UInt8])]) throws(StoreError) {
        files.withLock { f in for n in new { f[n.name] = n.bytes } }
    }
    public func quarantine(_ name: String, suffix: String) throws(StoreError) -> String {
        let moved = "\(name).corrupt-\(suffix)"
        files.withLock { f in f[moved] = f.removeValue(forKey: name) }
        return moved
    }
    public var recoveryProblems: [String] { [] }
    public func serviceUserCannotRead(_ name: String) -> UInt32? { nil }
    public func names() throws(StoreError) -> [String] { files.withLock { Array($0.keys) }.filter { !$0.hasPrefix(".") } }
    public func remove(_ name: String) throws(StoreError) { _ = files.withLock { $0.removeValue(forKey: name) } }
}
