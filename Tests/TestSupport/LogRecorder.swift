import Logging
import Synchronization

/// Keeps every log message a logger made: for "logs once" checks, and for a failed expectation
/// to say what the code under test logged (its cause), where a quiet logger shows only the effect.
public final class LogRecorder: Sendable {
    private let messages = Mutex<[(Logger.Level, String)]>([])

    public init() {}

    public var all: [(Logger.Level, String)] { messages.withLock { $0 } }

    public func count(_ level: Logger.Level, containing text: String) -> Int {
        all.filter { $0.0 == level && $0.1.contains(text) }.count
    }

    /// Every message, one a line, with its level: a failed expectation's comment.
    public var text: String {
        let lines = all.map { "\($0.0): \($0.1)" }
        return lines.isEmpty ? "(nothing logged)" : "logged:\n" + lines.joined(separator: "\n")
    }

    struct Handler: LogHandler {
        let recorder: LogRecorder
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) {
            let text = event.message.description
            recorder.messages.withLock { $0.append((event.level, text)) }
        }
    }

    public func logger(_ label: String = "unwind.test") -> Logger {
        Logger(label: label) { _ in Handler(recorder: self) }
    }
}
