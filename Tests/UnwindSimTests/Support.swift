import Foundation

/// A fresh directory under the system's temporary directory, removed by the caller.
func temporaryDirectory(_ name: String = #function) -> String {
    let safe = name.filter { $0.isLetter || $0.isNumber }
    let path = NSTemporaryDirectory() + "unwind-test-\(safe)-\(UUID().uuidString.prefix(8))"
    try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}

func readText(_ path: String) -> String? { try? String(contentsOfFile: path, encoding: .utf8) }
