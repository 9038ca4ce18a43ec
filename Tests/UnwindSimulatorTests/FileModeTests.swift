#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing

/// Files that show contacts' numbers and messages (or name the device's socket) are kept from
/// other users whatever the umask, and whatever mode an earlier run left on them.
@Suite("File modes whatever the umask", .serialized)
struct FileModeTests {
    static func mode(_ path: String) -> mode_t {
        var info = stat()
        return lstat(path, &info) == 0 ? info.st_mode & 0o7777 : 0o7777
    }

    @Test func theHeadlessSimulatorsOutputIsNotWorldReadable() throws {
        let root = temporaryDirectory("modes")
        defer { try? FileManager.default.removeItem(atPath: root) }
        let state = root + "/state", out = root + "/out", script = root + "/script.txt"
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true)
        try Data("Mum\n+15550000001\nPlease call\n".utf8).write(to: URL(fileURLWithPath: state + "/alert01.txt"))
        try Data("0.5 PANIC hold 1.7\n4 end\n".utf8).write(to: URL(fileURLWithPath: script))
        // What an earlier run under umask 0 would have left.
        #expect(FileManager.default.createFile(atPath: out + "/alerts.log", contents: Data("old\n".utf8), attributes: [.posixPermissions: 0o666]))
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/sh")
        p.arguments = ["-c", "umask 0; exec \"$0\" sim --headless \"$1\" --state \"$2\" --out \"$3\" --no-frames",
                       UnwindRun.executable, script, state, out]
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        try p.run()
        p.waitUntilExit()
        #expect(p.terminationStatus == 0)
        #expect(readText(out + "/alerts.log")?.contains("+15550000001") == true)
        #expect(Self.mode(out + "/alerts.log") == 0o600, "alerts.log is \(String(Self.mode(out + "/alerts.log"), radix: 8))")
        for name in try FileManager.default.contentsOfDirectory(atPath: out) {
            #expect(Self.mode(out + "/" + name) & 0o007 == 0, "\(name) is \(String(Self.mode(out + "/" + name), radix: 8))")
        }
        // What the device made (alert01.txt is the test's own, left as it was).
        for name in try FileManager.default.contentsOfDirectory(atPath: state) where !name.hasPrefix(".") && name != "alert01.txt" {
            let m = Self.mode(state + "/" + name)
            #expect(m & 0o007 == 0, "\(name) is \(String(m, radix: 8))")
        }
    }

    /// `.daemon` names the socket, `sim.log` the maintainer's requests: 0640 while the simulator
    /// runs, even when an older version left them 0666.
    @Test func thePresenceFileIsTheGroupsOnly() throws {
        let state = temporaryDirectory("presence")
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true)
        #expect(FileManager.default.createFile(atPath: state + "/.daemon", contents: nil, attributes: [.posixPermissions: 0o666]))
        #expect(FileManager.default.createFile(atPath: state + "/sim.log", contents: nil, attributes: [.posixPermissions: 0o666]))
        let sim = try SimulatorOnTerminal(state: state)
        #expect(sim.waitUntilReady(), "the simulator did not come up: \(sim.text.suffix(600))")
        for name in [".daemon", "sim.log"] {
            #expect(Self.mode(state + "/" + name) == 0o640, "\(name) is \(String(Self.mode(state + "/" + name), radix: 8))")
        }
        kill(sim.process.processIdentifier, SIGTERM)
        #expect(sim.exitStatus() == 0)
    }
}
