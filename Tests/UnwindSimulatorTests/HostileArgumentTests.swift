#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import UnwindTestSupport
import UnwindMaintenance
import UnwindSimulatedHardware
import UnwindCore
import UnwindRuntime
import UnwindModem
import UnwindSimulator

/// Command-line arguments that are not clean UTF-8 text: refused with the argument and the byte
/// named, nothing saved.
@Suite(.serialized) struct HostileArgumentTests {
    /// Runs `unwind` with these exact bytes as its arguments: Foundation's Process takes
    /// Strings, and a String cannot hold bytes that are not UTF-8.
    static func spawn(_ arguments: [[UInt8]]) -> UnwindRun.Result {
        let out = UnwindRun.temporaryFile("out"), err = UnwindRun.temporaryFile("err")
        defer {
            unlink(out)
            unlink(err)
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, out, O_WRONLY | O_TRUNC, 0)
        posix_spawn_file_actions_addopen(&actions, 2, err, O_WRONLY | O_TRUNC, 0)
        let executable = UnwindRun.executable
        let argv: [UnsafeMutablePointer<CChar>?] = ([Array(executable.utf8)] + arguments).map { bytes in
            let p = UnsafeMutablePointer<CChar>.allocate(capacity: bytes.count + 1)
            for (i, b) in bytes.enumerated() { p[i] = CChar(bitPattern: b) }
            p[bytes.count] = 0
            return p
        } + [nil]
        defer { for p in argv { p?.deallocate() } }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, executable, &actions, nil, argv, environ)
        guard rc == 0 else { return UnwindRun.Result(status: -1, stdout: "", stderr: "posix_spawn: \(rc)") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let exited = status & 0x7F == 0
        return UnwindRun.Result(status: exited ? (status >> 8) & 0xFF : -1, stdout: readText(out) ?? "", stderr: readText(err) ?? "")
    }

    static func bytes(_ parts: [String]) -> [[UInt8]] { parts.map { Array($0.utf8) } }

    /// Arguments whose bytes are not UTF-8: (arguments, the words of the refusal).
    static let invalidUTF8: [([[UInt8]], String)] = [
        (bytes(["alerts", "set", "1", "--name"]) + [Array("Mu".utf8) + [0xFF] + Array("m".utf8)] + bytes(["--number", "123", "--message", "Call"]),
         "argument 5 \"Mu\u{FFFD}m\" (the value of --name) is not UTF-8 text: byte 3 is 0xFF"),
        (bytes(["alerts", "set", "1", "--name", "Mum", "--number", "123", "--message"]) + [Array("Caf".utf8) + [0xE9]],
         "(the value of --message) is not UTF-8 text: byte 4 is 0xE9"),
        (bytes(["alerts", "set", "1", "--number", "123", "--message=Call"]) + [] + [Array("--name=Ren".utf8) + [0xC3]],
         "argument 7 \"--name=Ren\u{FFFD}\" is not UTF-8 text: byte 11 is 0xC3"),
        (bytes(["mantras", "add"]) + [[0xED, 0xA0, 0x80]], "argument 3 \"\u{FFFD}\u{FFFD}\u{FFFD}\" is not UTF-8 text: byte 1 is 0xED"),
    ]

    /// Text the validation refuses, whichever way it arrives: (arguments, words).
    static let refused: [([String], String)] = [
        (["alerts", "set", "1", "--name", "Mum\u{202E}", "--number", "123", "--message", "Call"],
         "name: character 4 is a right-to-left override (U+202E), which changes the direction text is shown in"),
        (["alerts", "set", "1", "--name", "Mum", "--number", "123", "--message", "Call \u{2067}me\u{2069}"],
         "message: character 6 is a right-to-left isolate (U+2067)"),
        (["alerts", "set", "1", "--name", "\u{200F}Mum", "--number", "123", "--message", "Call"], "name: character 1 is a right-to-left mark"),
        (["alerts", "set", "1", "--name", "Mum", "--number", "123", "--message", "Call\u{061C}"], "an Arabic letter mark (U+061C)"),
        (["alerts", "set", "1", "--name", "Mu\u{9B}m", "--number", "123", "--message", "Call"], "name: character 3 is a control character (U+009B)"),
        (["alerts", "set", "1", "--name", "Mu\u{7F}m", "--number", "123", "--message", "Call"], "name: character 3 is DEL (U+007F)"),
        (["alerts", "set", "1", "--name", "Mum", "--number", "123", "--message", "Call\u{85}me"], "message: character 5 is a control character (U+0085)"),
        (["alerts", "set", "1", "--name", "Mum", "--number", "123", "--message", "\u{1B}]0;x\u{07}"], "message: character 1 is ESC (U+001B)"),
        (["alerts", "set", "1", "--name", "Mum", "--number", "123", "--message", "Call \u{FFFD}"], "message: character 6 is the replacement character (U+FFFD)"),
        (["mantras", "add", "I am \u{202E}safe."], "the display cannot show the character U+202E"),
        (["mantras", "add", "Breathe\u{1B}[2J"], "control characters (found U+001B)"),
    ]

    func expectNothingSaved(_ run: (([String]) -> UnwindRun.Result), raw: ([[UInt8]]) -> UnwindRun.Result, directory: String) {
        let before = stateSnapshot(directory)
        for (arguments, words) in Self.invalidUTF8 {
            let r = raw(arguments)
            expectFailure(r, 2, words)
            #expect(r.stderr.contains("set the terminal or script to UTF-8"))
        }
        for (arguments, words) in Self.refused {
            let r = run(arguments)
            expectFailure(r, 2, words)
            #expect(!r.stderr.unicodeScalars.contains { $0 != "\n" && TextSafety.isTerminalControl($0) }, "\(r)")
        }
        #expect(stateSnapshot(directory) == before)
    }

    /// What was typed decomposed ("e" and a combining accent) is stored composed.
    func expectStoredInNFC(_ run: (([String]) -> UnwindRun.Result), file: (String) -> String?) {
        let r = run(["alerts", "set", "2", "--name", "Rene\u{301}", "--number", "+15550100", "--message", "Cafe\u{301} at 8?"])
        #expect(r.status == 0, "\(r)")
        #expect(file("alert02.txt").map { Array($0.utf8) } == Array("Ren\u{E9}\n+15550100\nCaf\u{E9} at 8?\n".utf8))
        #expect(r.stdout.contains("encoding: GSM-7"), "NFC keeps é in GSM-7: \(r)")
        let m = run(["mantras", "add", "Cafe\u{301} time."])
        #expect(m.status == 0, "\(m)")
        #expect(file("mantras.txt").map { $0.hasSuffix("Caf\u{E9} time.\n") } == true)
    }

    @Test func withTheDeviceRunning() throws {
        let rig = try MaintenanceRig()
        let raw: ([[UInt8]]) -> UnwindRun.Result = { Self.spawn($0 + Self.bytes(["--state", rig.directory])) }
        expectNothingSaved({ rig.unwind($0) }, raw: raw, directory: rig.directory)
        expectStoredInNFC({ rig.unwind($0) }, file: rig.file)
        #expect(rig.modemSim.submitCount == 0)
    }

    @Test func withNoDeviceRunning() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let raw: ([[UInt8]]) -> UnwindRun.Result = { Self.spawn($0 + Self.bytes(["--state", dir])) }
        expectNothingSaved({ UnwindRun.run($0 + ["--state", dir]) }, raw: raw, directory: dir)
        expectStoredInNFC({ UnwindRun.run($0 + ["--state", dir]) }, file: { readText(dir + "/" + $0) })
    }

    /// The device applies the same rules to a request that did not come from `unwind` (any
    /// member of the group can write to the socket).
    @Test func theDeviceChecksWhatComesThroughTheSocket() throws {
        let rig = try MaintenanceRig()
        let socket = ControlSocket.simulator(stateDirectory: rig.directory)
        let before = stateSnapshot(rig.directory)
        for (name, message) in [("Mum\u{202E}", "Call"), ("Mum", "Call\u{2066}"), ("Mu\u{1B}m", "Call"), ("Mu\u{FFFD}", "Call")] {
            let r = try ControlClient.request(.setAlert(slot: 1, name: name, number: "123", message: message), path: socket)
            #expect(r.code == 2, "\(r)")
        }
        let mantra = try ControlClient.request(.addMantra(text: "Tab\there"), path: socket)
        #expect(mantra.code == 2, "\(mantra)")
        #expect(stateSnapshot(rig.directory) == before)

        let saved = try ControlClient.request(.setAlert(slot: 3, name: "Zoe\u{308}", number: "123", message: "Hi"), path: socket)
        #expect(saved.code == 0, "\(saved)")
        #expect(rig.file("alert03.txt").map { Array($0.utf8) } == Array("Zo\u{EB}\n123\nHi\n".utf8))
        let added = try ControlClient.request(.addMantra(text: "Nai\u{308}ve."), path: socket)
        #expect(added.code == 0, "\(added)")
        #expect(rig.file("mantras.txt").map { $0.hasSuffix("Na\u{EF}ve.\n") } == true)
    }
}
