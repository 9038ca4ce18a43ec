import Foundation

/// Every temporary file and directory of this test process lives under one directory, removed
/// when the process exits; a run that was killed leaves its directory to the next run, which
/// removes the directories of processes that no longer exist. Nothing piles up in /tmp.
let scratchRoot: String = ScratchRoot.make(prefix: "unwind-tests-")

enum ScratchRoot {
    static func make(prefix: String) -> String {
        let tmp = NSTemporaryDirectory()
        for name in (try? FileManager.default.contentsOfDirectory(atPath: tmp)) ?? [] where name.hasPrefix(prefix) {
            guard let pid = Int32(name.dropFirst(prefix.count)), pid != getpid() else { continue }
            if kill(pid, 0) != 0 && errno == ESRCH { try? FileManager.default.removeItem(atPath: tmp + name) }
        }
        let root = tmp + prefix + "\(getpid())/"
        try! FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        // A capture-free C function: the path is rebuilt from the same pid at exit.
        atexit {
            try? FileManager.default.removeItem(atPath: NSTemporaryDirectory() + "unwind-tests-\(getpid())")
        }
        return root
    }
}

/// A fresh directory under this process's scratch root (removed at exit at the latest).
func temporaryDirectory(_ name: String = #function) -> String {
    let safe = name.filter { $0.isLetter || $0.isNumber }.prefix(40)
    let path = scratchRoot + "\(safe)-\(UUID().uuidString.prefix(8))"
    try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}

func readText(_ path: String) -> String? { try? String(contentsOfFile: path, encoding: .utf8) }
