#if canImport(Glibc)
import Glibc
#endif
import Dispatch
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Synchronization
import UnwindMaintenance

/// Turns a request line into a request off the loop's thread.
///
/// Decoding JSON is the one piece of a request's handling whose cost the client chooses: a
/// 1 MB line, or one nested hundreds of levels deep, took the loop one to three frames when it
/// was decoded on the loop's thread. Here every line is decoded on a serial queue of its own;
/// the loop hands the line over, goes on drawing, and picks the outcome up on a later pass,
/// woken by a pipe the queue writes a byte to. A line nested deeper than any request is
/// (`maximumNesting`) is refused before the decoder sees it.
final class RequestDecoder: @unchecked Sendable {
    /// What became of a line.
    enum Outcome: Sendable {
        case request(ControlEnvelope)
        /// A restore, its archive's files already parsed with the device's parsers (the largest
        /// parse a request can ask for: a full mantras.txt is 321 KB).
        case restore(ControlEnvelope, Result<MaintenanceEdits.RestorableState, ControlFailure>)
        case notARequest
        case tooDeep
        /// A text far longer than any field it fills (`longestText`).
        case tooLong(String)
    }

    /// A line handed over, and its outcome once decoded.
    final class Job: Sendable {
        let line: [UInt8]
        private let outcome = Mutex<Outcome?>(nil)
        init(_ line: [UInt8]) { self.line = line }
        func finish(_ o: Outcome) { outcome.withLock { $0 = o } }
        /// The outcome, once there is one.
        var result: Outcome? { outcome.withLock { $0 } }
    }

    /// The deepest nesting of objects and arrays a request has is 4 (`restore`'s files); a
    /// line nested deeper than this is not a request, whatever else it holds.
    static let maximumNesting = 16

    private let queue = DispatchQueue(label: "unwind.control-decoder", qos: .utility)
    /// Readable when an outcome is ready: the loop polls it with the socket's descriptors.
    let wakeDescriptor: Int32
    private let wakeWriter: Int32
    /// How a line is decoded; a test puts a slower one in to show the loop does not wait for it.
    let decode: @Sendable ([UInt8]) -> Outcome
    /// A line this short is decoded on the loop's thread after all: a command's request (a few
    /// hundred bytes, nested 3 deep) decodes in microseconds, and the trip to the queue and back
    /// — two thread switches and a pass — cost more than that, request after request, when a
    /// client pipelines them. Its nesting is checked first, as on the queue.
    let inlineLimit: Int

    init(decode: @escaping @Sendable ([UInt8]) -> Outcome = RequestDecoder.decode, inlineLimit: Int = 4096) {
        self.inlineLimit = inlineLimit
        var ends: [Int32] = [-1, -1]
        if pipe(&ends) == 0 {
            for fd in ends {
                _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
                _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            }
        }
        wakeDescriptor = ends[0]
        wakeWriter = ends[1]
        self.decode = decode
    }

    /// Waits for the line being decoded, then closes the pipe (nothing can write to it after).
    func close() {
        queue.sync {}
        for fd in [wakeDescriptor, wakeWriter] where fd >= 0 { Glibc.close(fd) }
    }

    /// Hands `line` to the queue; its outcome appears in the job, and a byte in the pipe.
    func submit(_ line: [UInt8]) -> Job {
        let job = Job(line)
        queue.async { [decode, wakeWriter] in
            job.finish(decode(job.line))
            // A full pipe already wakes the loop: the byte not written is not missed.
            var one: UInt8 = 1
            _ = Glibc.write(wakeWriter, &one, 1)
        }
        return job
    }

    /// Empties the pipe (the loop's thread, before it looks at the jobs).
    func drainWakes() {
        var bytes = (UInt64(0), UInt64(0), UInt64(0), UInt64(0))
        while withUnsafeMutableBytes(of: &bytes, { Glibc.read(wakeDescriptor, $0.baseAddress, $0.count) }) > 0 {}
    }

    /// Far beyond any text a request carries (a mantra or an alert's message: 160 characters,
    /// at most a few bytes each, however decomposed). Checking a longer one — normalising it,
    /// walking its characters — would be the loop's work: it is refused here instead.
    static let longestText = 16 * 1024

    /// The device's decoding: nesting first (a linear scan), then Foundation's JSONDecoder, then
    /// the length of every text; a restore's files are parsed here too.
    @Sendable static func decode(_ line: [UInt8]) -> Outcome {
        guard nesting(of: line, exceeds: maximumNesting) == false else { return .tooDeep }
        guard let envelope = try? JSONDecoder().decode(ControlEnvelope.self, from: Data(line)) else { return .notARequest }
        if let field = overlong(envelope.request) { return .tooLong(field) }
        if case .restore(let files) = envelope.request {
            return .restore(envelope, Result { () throws(ControlFailure) in try MaintenanceEdits.restorable(files.mapValues { [UInt8]($0) }) })
        }
        return .request(envelope)
    }

    /// The first text field of `request` longer than `longestText` bytes.
    static func overlong(_ request: ControlRequest) -> String? {
        let texts: [(String, String?)]
        switch request {
        case .addMantra(let text): texts = [("mantra", text)]
        case .deleteMantra(_, let expected): texts = [("mantra", expected)]
        case .setReminder(let line): texts = [("reminder", line)]
        case .setAlert(_, let name, let number, let message): texts = [("name", name), ("number", number), ("message", message)]
        case .modemCommand(let command): texts = [("command", command)]
        case .addPattern(let name, let pattern): texts = [("name", name), ("pattern", pattern)]
        case .removePattern(let name): texts = [("name", name)]
        case .importSetup(let alerts, let screen):
            texts = alerts.flatMap { [("name", $0.name), ("number", $0.number), ("message", $0.message)] } + screen.map { ("screen", $0) }
        case .addCard(let concern, let answer): texts = [("concern", concern), ("answer", answer)]
        case .deleteCard(_, let concern, let answer): texts = [("concern", concern), ("answer", answer)]
        case .setSelfCheckReminder(let line): texts = [("reminder", line)]
        case .status, .screen, .resetMantras, .clearAlert, .testAlert, .resetStatistics, .restore, .modemCheck, .motorTest: texts = []
        }
        return texts.first { ($0.1?.utf8.count ?? 0) > longestText }?.0
    }

    /// Whether objects and arrays in `line` nest deeper than `limit` (brackets inside strings do
    /// not count). Never recursive, so no line can exhaust a stack here.
    static func nesting(of line: [UInt8], exceeds limit: Int) -> Bool {
        var depth = 0, inString = false, escaped = false
        for b in line {
            if inString {
                if escaped { escaped = false } else if b == 0x5C { escaped = true } else if b == 0x22 { inString = false }
                continue
            }
            switch b {
            case 0x22: inString = true
            case 0x7B, 0x5B:
                depth += 1
                if depth > limit { return true }
            case 0x7D, 0x5D: depth -= 1
            default: break
            }
        }
        return false
    }
}
