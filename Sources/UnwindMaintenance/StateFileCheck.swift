#if canImport(Glibc)
import Glibc
#endif
import UnwindCore
import UnwindSeams

/// Whether the device could use a state file's bytes, judged by the parser it loads the file
/// with; and, before a change replaces files, keeping aside what it could not use. Shared by
/// the running device's writer and a maintainer's command editing the files itself, so both
/// keep the same files in the same words.
public enum StateFileCheck {
    /// Why the device could not load `bytes` as the state file `name`; nil when it could (or
    /// the name is not one the device parses).
    public static func problem(_ name: String, _ bytes: [UInt8]) -> String? {
        // Each parser's own verdict (an empty slot or check-in parses as "none", not as a failure).
        func parses(_ parse: ([UInt8]) throws -> Void) -> Bool {
            do { try parse(bytes); return true } catch { return false }
        }
        let parsed: Bool
        switch name {
        case TotalTimeFile.name: parsed = parses { _ = try TotalTimeFile.parse($0) }
        case SessionHistoryFile.name: parsed = parses { _ = try SessionHistoryFile.parse($0) }
        case MantrasFile.name: parsed = parses { _ = try MantrasFile.parse($0) }
        // A schedule with a problem is one the device sets aside too (`loadReminder`).
        case RemindersFile.name: parsed = parses { if try RemindersFile.parse($0).problem != nil { throw RemindersFile.Problem.malformed("") } }
        case PatternsFile.name: parsed = parses { _ = try PatternsFile.parse($0) }
        case BreathingChoiceFile.name: parsed = bytes.isEmpty || parses { _ = try BreathingChoiceFile.parse($0) }
        case CheckInFile.name: parsed = parses { _ = try CheckInFile.parseWithGrace($0) }
        case AlertTestFile.name: parsed = parses { _ = try AlertTestFile.parse($0) }
        case EscalationFile.name: parsed = parses { _ = try EscalationFile.parse($0) }
        case StatusTextsFile.name: parsed = parses { _ = try StatusTextsFile.parse($0) }
        case SetupResultFile.name: parsed = parses { _ = try SetupResultFile.parse($0) }
        case SelfChecksFile.name: parsed = parses { _ = try SelfChecksFile.parse($0) }
        case MoodsFile.name: parsed = parses { _ = try MoodsFile.parse($0) }
        case CopingCardsFile.name: parsed = parses { _ = try CopingCardsFile.parse($0) }
        case SelfCheckReminderFile.name: parsed = parses { _ = try SelfCheckReminderFile.parse($0) }
        case _ where AlertSlotFile.names.contains(name): parsed = parses { _ = try AlertSlotFile.parse($0) }
        default: parsed = true
        }
        return parsed ? nil : "not a valid \(name)"
    }

    /// Before `names` are replaced in `store`: each that the device could not have loaded — too
    /// large, a FIFO, a link, a directory, a second name, a file the service user cannot read,
    /// bytes that do not parse — is moved aside as `<name>.corrupt-<time>`, as the device does
    /// at start, so a change never destroys what was there. Returns a line for each, for the
    /// answer; throws when one cannot be moved (the caller then writes nothing).
    public static func keepAside(_ names: [String], in store: StateStore) throws(ControlFailure) -> [String] {
        var kept: [String] = []
        for name in names {
            do {
                if let line = try store.keepAside(name, suffix: "\(time(nil))", problem: { problem(name, $0) }) { kept.append(line) }
            } catch {
                throw .failed("\(error)")
            }
        }
        return kept
    }
}
