#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Where the control socket is: shared by the daemon that listens and the commands that ask.
public enum ControlSocket {
    /// The simulators' socket: `<state dir>/control.sock`.
    public static func simulator(stateDirectory: String) -> String { stateDirectory + "/control.sock" }

    /// The daemon's socket: `$RUNTIME_DIRECTORY/control.sock` (systemd's `RuntimeDirectory=unwind`
    /// gives `/run/unwind`), else `/run/unwind/control.sock`.
    public static func daemon(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let dir = environment["RUNTIME_DIRECTORY"]?.split(separator: ":").first, !dir.isEmpty {
            return String(dir) + "/control.sock"
        }
        return "/run/unwind/control.sock"
    }
}
