#if canImport(Glibc)
import Glibc
#endif
import UnwindRuntime
import UnwindCore
import UnwindLinuxHardware

/// Reading the configuration file: the one path `unwind run`, `unwind config check` and every
/// maintainer's command take, so all three accept and refuse the same files with the same
/// words.
///
/// What it guards against: a FIFO, a directory or a device given as the file (a read would
/// block, or never end, or — for some devices — do something: such a file is never opened),
/// a file too large to be a configuration, bytes that are not UTF-8 text, and characters
/// YAML does not allow. Each refusal is one line that names the file and says what to do.
/// A symbolic link is followed: the file under /etc/unwind is root's, and a link there is
/// the administrator's choice.
public enum ConfigurationFile {
    /// Far more than every key with a comment each (the documented file is under 10 KB); the
    /// systemd unit gives the daemon 30 s to start, and a file this size parses in well under one.
    public static let maximumSize = 256 * 1024

    public enum Failure: Error, Equatable, Sendable, CustomStringConvertible {
        /// The file cannot be opened or read (permissions, I/O): exit status 1.
        case unreadable(path: String, reason: String)
        /// A directory, FIFO, socket or device: exit status 2.
        case notARegularFile(path: String, kind: String)
        case tooLarge(path: String, size: Int)
        /// Bytes that are not UTF-8: 1-based line and column (in characters) of the first one.
        case notUTF8(path: String, line: Int, column: Int, byte: UInt8)
        /// A control character YAML does not allow (NUL, ESC, …): where, and which.
        case controlCharacter(path: String, line: Int, column: Int, scalar: UInt32)
        /// Parsed, and wrong: every problem, one per key.
        case invalid(ConfigErrors)

        /// Whether the words quote what the file holds (a value, a line of it, a character of it).
        var quotesTheFile: Bool {
            switch self {
            case .unreadable, .notARegularFile, .tooLarge: false
            case .notUTF8, .controlCharacter, .invalid: true
            }
        }

        /// 1: the file could not be read; 2: it was read and is not a configuration.
        public var exitCode: Int32 {
            if case .unreadable = self { return 1 }
            return 2
        }

        /// What to print, one line each (the path first), most often a single line.
        public var lines: [String] {
            if let said = throughALink { return [said] }
            if case .invalid(let errors) = self { return errors.problems.map { "\(errors.path): \($0)" } }
            return [description]
        }

        /// The path the person gave.
        var path: String {
            switch self {
            case .unreadable(let path, _), .notARegularFile(let path, _), .tooLarge(let path, _), .notUTF8(let path, _, _, _),
                 .controlCharacter(let path, _, _, _):
                path
            case .invalid(let errors): errors.path
            }
        }

        /// A file reached through a symbolic link may be any file at all, one the person reading
        /// this may read and the link's owner may not: what would quote it is said without it.
        var throughALink: String? {
            guard quotesTheFile else { return nil }
            var info = stat()
            guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFLNK else { return nil }
            var target = [CChar](repeating: 0, count: 4096)
            let n = readlink(path, &target, target.count - 1)
            let to = n > 0 ? " (to \(TextSafety.oneLine(String(decoding: target[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self), limit: 200)))" : ""
            return "the configuration \(path) is a symbolic link\(to), and the file it reaches is not a valid configuration; "
                + "nothing of that file is shown here: check it by its own path"
        }

        public var description: String {
            if let said = throughALink { return said }
            switch self {
            case .unreadable(let path, let reason):
                return "cannot read the configuration \(path): \(reason)"
            case .notARegularFile(let path, let kind):
                return "the configuration \(path) is \(kind), not a file; give the path of the YAML file itself (default \(DeviceConfiguration.defaultPath))"
            case .tooLarge(let path, let size):
                return "the configuration \(path) is \(size) bytes; a configuration file is at most \(maximumSize) bytes (256 KiB) — is it the right file?"
            case .notUTF8(let path, let line, let column, let byte):
                return "the configuration \(path) is not UTF-8 text: line \(line), column \(column) has the byte 0x\(hex2(byte)); save it as UTF-8"
            case .controlCharacter(let path, let line, let column, let scalar):
                return "the configuration \(path) has a control character (\(TextSafety.code(scalar))) at line \(line), column \(column), which YAML does not allow; remove it (write tabs as spaces)"
            case .invalid(let errors):
                let n = errors.problems.count
                return "\(errors.path) is not valid (\(n) problem\(n == 1 ? "" : "s")): " + (errors.problems.first.map { "\($0)" } ?? "")
            }
        }
    }

    /// The configuration in `path`; nil when there is no file there (every default applies,
    /// if the caller allows it).
    public static func load(_ path: String) throws(Failure) -> DeviceConfiguration? {
        guard let text = try readText(path) else { return nil }
        do { return try DeviceConfiguration.parse(text, path: path) } catch { throw .invalid(error) }
    }

    /// The file's text, checked to be a regular file of at most `maximumSize` bytes of UTF-8
    /// without control characters; nil when there is no such file.
    public static func readText(_ path: String) throws(Failure) -> String? {
        let bytes: [UInt8]
        do { bytes = try NamedFile.read(path, limit: maximumSize) } catch {
            switch error {
            case .missing: return nil
            case .danglingLink: throw .unreadable(path: path, reason: "it is a symbolic link to a file that does not exist")
            case .unreadable(let e): throw .unreadable(path: path, reason: reason(e))
            case .notARegularFile(let kind): throw .notARegularFile(path: path, kind: kind)
            case .tooLarge(let size): throw .tooLarge(path: path, size: size)
            }
        }
        return try decode(bytes, path: path)
    }

    /// `bytes` as text, or where the first byte that is not UTF-8, or the first character YAML
    /// refuses, is.
    static func decode(_ bytes: [UInt8], path: String) throws(Failure) -> String {
        guard let text = String(validating: bytes, as: UTF8.self) else {
            let offset = TextSafety.firstInvalidUTF8(bytes) ?? 0
            let (line, column) = position(of: offset, in: bytes)
            throw .notUTF8(path: path, line: line, column: column, byte: offset < bytes.count ? bytes[offset] : 0)
        }
        // YAML allows tab, line feed and carriage return, and NEL; libyaml's own error for the
        // others quotes the line raw, escape sequences and all.
        var line = 1, column = 0
        for s in text.unicodeScalars {
            column += 1
            if s == "\n" {
                line += 1
                column = 0
            } else if s.properties.generalCategory == .control && s != "\t" && s != "\r" && s != "\u{85}" {
                throw .controlCharacter(path: path, line: line, column: column, scalar: s.value)
            }
        }
        // A byte-order mark (Windows editors write one) would be taken by libyaml, told the
        // text is UTF-8, as one column of indentation on the first line: the second top-level
        // key would then be a syntax error.
        if text.unicodeScalars.first == "\u{FEFF}" { return String(text.unicodeScalars.dropFirst()) }
        return text
    }

    /// 1-based line and column (in characters) of the byte at `offset`.
    static func position(of offset: Int, in bytes: [UInt8]) -> (line: Int, column: Int) {
        let before = bytes[..<min(offset, bytes.count)]
        let lineStart = (before.lastIndex(of: UInt8(ascii: "\n")) ?? -1) + 1
        let line = before.reduce(1) { $1 == UInt8(ascii: "\n") ? $0 + 1 : $0 }
        // Counting the characters before it on its line (all valid UTF-8: it is the first that is not).
        let column = String(decoding: bytes[lineStart..<before.endIndex], as: UTF8.self).unicodeScalars.count + 1
        return (line, column)
    }

    static func reason(_ e: Int32) -> String {
        switch e {
        case EACCES, EPERM: "permission denied (run the command with sudo, or make the file readable by the service user)"
        default: String(cString: strerror(e))
        }
    }

    static func hex2(_ b: UInt8) -> String {
        let s = String(b, radix: 16, uppercase: true)
        return s.count < 2 ? "0" + s : s
    }
}
