#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Logging

// What every suite needs and used to copy: scratch directories and quiet loggers. One test
// process (all suites run in one) keeps every scratch directory under one root, removed when
// it exits; a killed run's root is removed by the next run once its pid is gone.

/// This process's scratch root, `<tmp>/unwind-tests-<pid>/`.
public let scratchRoot: String = {
    let tmp = NSTemporaryDirectory(), prefix = "unwind-tests-"
    for name in (try? FileManager.default.contentsOfDirectory(atPath: tmp)) ?? [] where name.hasPrefix(prefix) {
        guard let pid = Int32(name.dropFirst(prefix.count)), pid != getpid() else { continue }
        if kill(pid, 0) != 0 && errno == ESRCH { try? FileManager.default.removeItem(atPath: tmp + name) }
    }
    let root = tmp + prefix + "\(getpid())/"
    try? FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
    // A capture-free C function: the path is rebuilt from the same pid at exit.
    atexit { try? FileManager.default.removeItem(atPath: NSTemporaryDirectory() + "unwind-tests-\(getpid())") }
    return root
}()

/// A fresh directory under the scratch root, named after the test (removed at exit at the latest).
public func temporaryDirectory(_ name: String = #function) -> String {
    let safe = name.filter { $0.isLetter || $0.isNumber }.prefix(40)
    let path = scratchRoot + "\(safe)-\(UUID().uuidString.prefix(8))"
    try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}

/// A fresh directory removed, with everything in it, when the value goes away.
public final class ScratchDirectory {
    public let path: String

    public init(_ name: String = #function) {
        path = temporaryDirectory(name)
    }

    deinit {
        // A test may have taken its own permissions away to provoke EACCES.
        chmod(path, 0o700)
        try? FileManager.default.removeItem(atPath: path)
    }

    /// Names in the directory (or in `subdirectory` of it), sorted, hidden ones included.
    public func entries(_ subdirectory: String? = nil) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: subdirectory.map { path + "/" + $0 } ?? path).sorted()
    }
}

/// A file's text, or nil when it cannot be read.
public func readText(_ path: String) -> String? { try? String(contentsOfFile: path, encoding: .utf8) }

/// What is at `path` itself (`S_IFREG`, `S_IFDIR`, `S_IFLNK`, `S_IFIFO`…), a link not followed;
/// 0 when nothing is there.
public func fileType(_ path: String) -> mode_t {
    var info = stat()
    guard lstat(path, &info) == 0 else { return 0 }
    return info.st_mode & S_IFMT
}

/// A logger that says nothing — unless `UNWIND_TEST_LOG` is set, then everything.
public func quietLogger(_ label: String = "unwind.test") -> Logger {
    var l = Logger(label: label)
    l.logLevel = ProcessInfo.processInfo.environment["UNWIND_TEST_LOG"] != nil ? .trace : .critical
    return l
}
