#if canImport(Glibc)
import Glibc
#endif
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Logging
import Synchronization

/// The latest warnings and errors the device logged, for `unwind status` ("recent errors"):
/// a log handler that keeps the last `capacity` of them in memory, beside the journal.
public final class RecentLog: Sendable {
    public let capacity: Int
    private let entries = Mutex<[String]>([])

    public init(capacity: Int = 10) { self.capacity = capacity }

    /// Newest last, each "2026-01-05 21:30:00 error: …".
    public var lines: [String] { entries.withLock { $0 } }

    func record(_ level: Logger.Level, _ message: String, at date: Date) {
        let line = "\(Self.format(date)) \(level): \(message)"
        entries.withLock { e in
            e.append(line)
            if e.count > capacity { e.removeFirst(e.count - capacity) }
        }
    }

    static func format(_ d: Date) -> String {
        var t = time_t(d.timeIntervalSince1970)
        var parts = tm()
        localtime_r(&t, &parts)
        func two(_ v: Int32) -> String { v < 10 ? "0\(v)" : "\(v)" }
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday)) \(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))"
    }

    /// A handler that records warnings and worse here.
    public func handler(label: String) -> LogHandler { Handler(log: self) }

    /// A logger that writes through `base` (standard error by default; the journal handler under
    /// systemd) and also records warnings and errors here.
    public func logger(label: String, level: Logger.Level = .info,
                       base: @escaping @Sendable (String) -> LogHandler = { StreamLogHandler.standardError(label: $0) }) -> Logger {
        var l = Logger(label: label) { label in
            MultiplexLogHandler([base(label), self.handler(label: label)])
        }
        l.logLevel = level
        return l
    }

    struct Handler: LogHandler {
        let log: RecentLog
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .warning

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            guard event.level >= .warning else { return }
            log.record(event.level, event.message.description, at: Date())
        }
    }
}
