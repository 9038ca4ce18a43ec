#if canImport(Glibc)
import Glibc
#endif
import Logging
import UnwindCore
import UnwindSeams

/// Log lines for the systemd journal: `<N>` in front of each line gives its priority (sd-daemon(3)
/// prefixes; the unit keeps `SyslogLevelPrefix=yes`), so `journalctl -p err -u unwind` finds the
/// errors. The journal adds the time itself. Outside systemd ($JOURNAL_STREAM unset) swift-log's
/// usual stream handler is used instead.
public struct JournalLogHandler: LogHandler {
    public var logLevel: Logger.Level = .info
    public var metadata: Logger.Metadata = [:]
    let label: String

    public init(label: String) { self.label = label }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public static func priority(_ level: Logger.Level) -> Int {
        switch level {
        case .trace, .debug: 7
        case .info: 6
        case .notice: 5
        case .warning: 4
        case .error: 3
        case .critical: 2
        }
    }

    public func log(event: LogEvent) {
        var all = metadata
        if let extra = event.metadata { all.merge(extra) { $1 } }
        var text = "<\(Self.priority(event.level))>"
        if !all.isEmpty { text += all.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ") + " " }
        // One journal entry per line, and no terminal control from outside text (a file name, a
        // modem's answer) reaching `journalctl -f`: line breaks and controls are escaped.
        var message = event.message.description
        if let error = event.error { message += " (error: \(error))" }
        text += TextSafety.escaped(message) + "\n"
        // One write(2) per line, so lines from the loop and the display thread never interleave.
        var line = text
        // A log line that cannot be written is dropped: there is nowhere left to say so.
        line.withUTF8 { b in try? writingAll(UnsafeRawBufferPointer(b)) { write(STDERR_FILENO, $0.baseAddress, $0.count) } }
    }

    /// Bootstraps swift-log for the daemon: journal priorities under systemd, plain lines otherwise.
    public static func bootstrap(environment: [String: String]) {
        if environment["JOURNAL_STREAM"] != nil {
            LoggingSystem.bootstrap { JournalLogHandler(label: $0) }
        } else {
            LoggingSystem.bootstrap { StreamLogHandler.standardError(label: $0) }
        }
    }
}

/// Escapes what a message carries from outside (file names, a modem's answers) before another
/// handler writes it: a log line can neither forge a second line nor send a terminal escape.
public struct EscapingLogHandler: LogHandler {
    var base: LogHandler

    public init(_ base: LogHandler) { self.base = base }

    public var logLevel: Logger.Level {
        get { base.logLevel }
        set { base.logLevel = newValue }
    }

    public var metadata: Logger.Metadata {
        get { base.metadata }
        set { base.metadata = newValue }
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { base[metadataKey: key] }
        set { base[metadataKey: key] = newValue }
    }

    public func log(event: LogEvent) {
        var escaped = event
        escaped.message = "\(TextSafety.escaped(event.message.description))"
        base.log(event: escaped)
    }
}
