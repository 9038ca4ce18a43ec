#if canImport(Glibc)
import Glibc
#endif
import UnwindLinuxHardware

/// What the last system update did, as an imaged card keeps it (deploy/image's slot keeper writes
/// it on the data partition): "updated to X …", or "the update to X did not come up; back on Y …"
/// with why. A plain install keeps none, and then status says nothing about updates.
enum SystemUpdateRecord {
    static let defaultPath = "/data/system/update.txt"
    /// The record is a line or two; anything bigger is not one.
    static let limit = 4096

    /// The record's lines joined into one (at most four), nil when there is no record, or why it
    /// could not be read: status says that instead of nothing, since an update's outcome is what
    /// the maintainer asked for.
    static func read(_ path: String) -> String? {
        let bytes: [UInt8]
        do { bytes = try NamedFile.read(path, limit: limit) } catch {
            switch error {
            case .missing: return nil
            case .danglingLink: return "the update record \(path) is a link to nothing"
            case .unreadable(let e): return "the update record \(path) cannot be read: \(String(cString: strerror(e)))"
            case .notARegularFile(let kind): return "the update record \(path) is \(kind), not a record"
            case .tooLarge(let size): return "the update record \(path) is \(size) bytes, not a record (at most \(limit))"
            }
        }
        let lines = String(decoding: bytes, as: UTF8.self)
            .split(whereSeparator: \.isNewline)
            .map { line -> String in String(line.drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed()) }
            .filter { !$0.isEmpty }
        return lines.isEmpty ? nil : lines.prefix(4).joined(separator: "; ")
    }
}
