import Logging
import Synchronization
import UnwindLinuxHardware
import UnwindRender

/// GNU Unifont from the system (Debian's `unifont` package, a dependency of the unwind package):
/// what the screen falls back to for a reply or a mantra in a script the built-in fonts lack.
/// Read once a process (the daemon starts one device; a test run assembles hundreds), parsed
/// into an immutable `Unifont` the renderer only looks glyphs up in. Without it the device runs
/// the same and draws those characters as stand-in boxes; the assembly says why in the log.
public enum SystemFonts {
    /// Debian's file is 3.7 MB; a file over this is not it.
    public static let limit = 16 << 20

    /// Why the file could not be used, as the log says it.
    public enum Failure: Error, Equatable, Sendable, CustomStringConvertible {
        case file(String, NamedFile.Problem)
        case format(String, Unifont.Problem)

        public var description: String {
            switch self {
            case .file(let path, .missing):
                "\(path) is missing (Debian package unifont): characters the built-in fonts lack are drawn as boxes"
            case .file(let path, let problem):
                "\(path) cannot be read (\(Self.say(problem))): characters the built-in fonts lack are drawn as boxes"
            case .format(let path, let problem):
                "\(path) is not a Unifont hex file (\(problem)): characters the built-in fonts lack are drawn as boxes"
            }
        }

        static func say(_ p: NamedFile.Problem) -> String {
            switch p {
            case .missing: "missing"
            case .danglingLink: "a link to a file that does not exist"
            case .unreadable(let e): "errno \(e)"
            case .notARegularFile(let kind): "it is \(kind)"
            case .tooLarge(let size): "\(size) bytes, more than a Unifont file holds"
            }
        }
    }

    /// The Unifont at `path`, read and parsed.
    public static func read(_ path: String, limit: Int = limit) -> Result<Unifont, Failure> {
        let bytes: [UInt8]
        do { bytes = try NamedFile.read(path, limit: limit) } catch { return .failure(.file(path, error)) }
        do { return .success(try Unifont(hex: bytes)) } catch { return .failure(.format(path, error)) }
    }

    private static let loaded = Mutex<[String: Result<Unifont, Failure>]>([:])

    /// The fonts for a device: Unifont from `path` (nil: none asked for), read at its first use
    /// in this process. A failure is logged, once for each device assembled.
    public static func fonts(unifont path: String?, logger: Logger) -> Fonts {
        guard let path else { return .builtIn }
        let result = loaded.withLock { cache in
            if let known = cache[path] { return known }
            let r = read(path)
            cache[path] = r
            return r
        }
        switch result {
        case .success(let unifont): return Fonts(unifont: unifont)
        case .failure(let failure):
            logger.error("\(failure)")
            return .builtIn
        }
    }
}
