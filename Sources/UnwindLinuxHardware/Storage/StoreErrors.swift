import UnwindSeams
import SystemPackage

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

// MARK: - Errors

func storeError(_ operation: String, _ path: FilePath, _ code: Errno,
                _ detail: String? = nil) -> StoreError {
    StoreError(operation: operation, path: path.string, errno: code.rawValue,
               message: detail.map { "\(code.description): \($0)" } ?? code.description)
}

/// swift-system throws untyped errors that are always `Errno`; anything else becomes EIO.
func errnoResult<R>(_ body: () throws -> R) -> Result<R, Errno> {
    do {
        return .success(try body())
    } catch let code as Errno {
        return .failure(code)
    } catch {
        return .failure(.ioError)
    }
}

func check<R>(_ operation: String, _ path: FilePath,
                      _ body: () throws -> R) throws(StoreError) -> R {
    switch errnoResult(body) {
    case .success(let value): return value
    case .failure(let code): throw storeError(operation, path, code)
    }
}

/// A C call swift-system does not wrap (`operation` names it), called again on EINTR
/// (`valueOrErrno`); its other failures as the store's error.
@discardableResult
func systemCall(_ operation: String, _ path: FilePath, _ call: () -> Int32) throws(StoreError) -> Int32 {
    do {
        return try valueOrErrno(call)
    } catch {
        throw storeError(operation, path, error)
    }
}

extension DirectoryStore {
    /// The outbox's directory: one small file per message (64 KiB is far beyond any alert).
    public static func outbox(at directory: String) throws(StoreError) -> DirectoryStore {
        try DirectoryStore(directory: directory, maximumFileSize: 64 * 1024)
    }
}
