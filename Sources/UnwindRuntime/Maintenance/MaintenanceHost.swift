#if canImport(Glibc)
import Glibc
#endif
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Logging
import SystemPackage
import UnwindMaintenance
import UnwindCore

/// What a device (the daemon, either simulator) sets up so the maintainer's commands can find
/// it and reach it, in an order that leaves no gap for a command to edit the files behind its
/// back:
///
/// 1. claim the state directory (`.daemon`, see `DaemonPresence`) and say where the socket is;
/// 2. listen on the control socket (a command that connects now waits in the backlog until the
///    loop runs);
/// 3. load the state files holding the state lock (`loading`), so a command that was editing
///    the files when the device started finishes first and its change is what gets loaded.
///
/// From then on commands go through the socket, and the device is the only writer.
///
/// Another device on the same state directory stops this one from starting (two would fight
/// over the files and the hardware). A control socket that cannot be made does not: the device
/// runs without it (the panic path matters more than the maintainer's commands), says why in
/// its log, and a command is told that the device runs but does not answer.
public final class MaintenanceHost {
    public let presence: DaemonPresence
    /// Nil when the socket could not be made (`socketProblem` says why).
    public let server: ControlServer?
    public let socketProblem: String?
    public let lock: StateLock
    let logger: Logger

    /// - Parameter controlDeadlines: the device's unless a test shortens them to watch them act.
    public init(stateDirectory: String, socketPath: String, contentDirectory: String? = nil, logger: Logger,
                now: WallTime, recentLog: RecentLog? = nil, controlDeadlines: ControlServer.Deadlines = .device) throws(ControlFailure) {
        Self.setAsideUnusableDotFiles(stateDirectory, now: now, logger: logger)
        presence = try DaemonPresence(stateDirectory: stateDirectory, socketPath: socketPath)
        do {
            server = try ControlServer(path: socketPath, stateDirectory: stateDirectory, contentDirectory: contentDirectory,
                                       logger: logger, now: now, deadlines: controlDeadlines)
            socketProblem = nil
        } catch {
            logger.error("the maintainer's commands cannot reach this device: \(error)")
            server = nil
            socketProblem = error.message
        }
        if let recentLog { server?.recentErrors = { recentLog.lines } }
        lock = StateLock(stateDirectory: stateDirectory)
        self.logger = logger
    }

    /// Runs `body` (the loading of the state files) holding the state lock when it can be had
    /// within `wait` (a command editing the files finishes first). When it cannot — anyone in
    /// the group can hold the lock, or plant something under its name — the files are loaded
    /// anyway: each is replaced atomically, so what is read is whole, and a device that does
    /// not start is a panic button that does not work.
    public func loading<T>(wait: Duration = .seconds(10), _ body: () -> T) -> T {
        let held: StateLock.Held
        do { held = try lock.acquire(timeout: wait) } catch {
            logger.error("loading the state files without the state lock: \(error.message)")
            return body()
        }
        defer { held.release() }
        return body()
    }

    /// Socket closed and removed, state directory released. After the loop's shutdown (its
    /// last saves) so no command edits the files while the device still writes them.
    public func close() {
        server?.close()
        presence.release()
    }

    /// The device must start whatever was planted under its own dot-files (`.daemon`, `.lock`):
    /// a link, a directory, a second name, or a file it may not read and write (mode 000: it
    /// could not start on such a `.daemon`, and could save nothing behind such a `.lock`) is
    /// moved aside (renaming never follows a link) and the file made anew.
    public static func setAsideUnusableDotFiles(_ stateDirectory: String, now: WallTime, logger: Logger) {
        for name in [DaemonPresence.fileName, StateLock.fileName] {
            if let moved = setAsideIfNotPlain(stateDirectory + "/" + name, now: now) {
                logger.error("\(name) in \(stateDirectory) was not a plain file this device may read and write; moved aside as \(moved)")
            }
        }
    }

    /// `lstat`, and `rename` to `<path>.corrupt-<time>` when it is anything but a regular file
    /// with one name that this process may read and write; the new name, or nil when nothing was
    /// moved.
    private static func setAsideIfNotPlain(_ path: String, now: WallTime) -> String? {
        var info = stat()
        guard lstat(path, &info) == 0,
              info.st_mode & S_IFMT != S_IFREG || info.st_nlink != 1 || access(path, R_OK | W_OK) != 0 else { return nil }
        let aside = "\(path).corrupt-\(now.secondsSinceEpoch)"
        return rename(path, aside) == 0 ? FilePath(aside).lastComponent?.string : nil
    }
}
