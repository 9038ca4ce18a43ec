#if canImport(Glibc)
import Glibc
#endif
import UnwindCore

/// Time zones from the system's tz database (Debian's tzdata: /usr/share/zoneinfo), read by
/// the core's TZif reader: what Foundation's TimeZone needs ICU for on Linux.
extension LocalTimeZone {
    public static let database = "/usr/share/zoneinfo"

    /// The zone an IANA name (`America/Vancouver`, `UTC`) names in `database`; nil when there
    /// is no such zone. A name is letters, digits and `/_-+`, never a path out of the database.
    public static func named(_ name: String, database: String = database) -> LocalTimeZone? {
        let parts = name.split(separator: "/", omittingEmptySubsequences: false)
        guard !name.isEmpty, name.utf8.count <= 255,
              parts.allSatisfy({ !$0.isEmpty && $0 != "." && $0 != ".." }),
              name.utf8.allSatisfy({ $0 < 0x80 && (isalnum(Int32($0)) != 0 || "/_-+".utf8.contains($0)) }) else { return nil }
        return file(database + "/" + name, name: name)
    }

    /// The board's zone, as the C library finds it: `TZ` when it names a zone of the database;
    /// else /etc/localtime, named by the database's name it links to (else /etc/timezone's
    /// line, else `localtime`); UTC when there is none.
    public static func system(environment tz: String? = getenv("TZ").map { String(cString: $0) },
                              localtime: String = "/etc/localtime", database: String = database) -> LocalTimeZone {
        if let tz, !tz.isEmpty {
            let name = tz.hasPrefix(":") ? String(tz.dropFirst()) : tz
            if name.hasPrefix("/") { return file(name, name: name) ?? .utc }
            return named(name, database: database) ?? .utc
        }
        var name = "localtime"
        var buffer = [CChar](repeating: 0, count: 4096)
        let n = readlink(localtime, &buffer, buffer.count - 1)
        if n > 0 {
            let target = String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            if let r = target.firstRange(of: "zoneinfo/") { name = String(target[r.upperBound...]) }
        } else if let line = try? NamedFile.read("/etc/timezone", limit: 256),
                  let text = String(validating: line, as: UTF8.self)?.trimmingSpaces, !text.isEmpty {
            name = text
        }
        return file(localtime, name: name) ?? .utc
    }

    /// Zone files are a few kilobytes; 1 MB is not one.
    private static func file(_ path: String, name: String) -> LocalTimeZone? {
        guard let bytes = try? NamedFile.read(path, limit: 1 << 20) else { return nil }
        return try? LocalTimeZone(name: name, tzif: bytes)
    }
}
