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

/// Text from outside aimed at the maintainer: a configuration file that is not one, command
/// line arguments that are not clean UTF-8 text, and escape sequences from the modem or the
/// control socket on their way to a terminal.

// MARK: - The configuration file

@Suite(.serialized) struct HostileConfigurationTests {
    /// What a command must do with one form of the file.
    enum Outcome {
        /// Refused: exit status, words of the first line, how many lines in all.
        case refused(Int32, String, lines: Int = 1)
        /// Accepted: `config check` prints this; `run` goes on to the (missing) hardware.
        case accepted(String)
    }

    /// A motor line on a chip no machine has: a configuration `run` accepts stops at
    /// "cannot start" without touching this machine's GPIO.
    static let noChip = "gpio:\n  motor: unwind-test-no-such-chip:18\n"

    final class Files {
        let dir = temporaryDirectory("hostile-config")
        deinit { try? FileManager.default.removeItem(atPath: dir) }
        func path(_ name: String) -> String { dir + "/" + name }

        /// (file name, outcome)
        var cases: [(String, Outcome)] = []

        init() throws {
            func put(_ name: String, _ bytes: [UInt8], _ outcome: Outcome) {
                _ = FileManager.default.createFile(atPath: path(name), contents: Data(bytes))
                cases.append((name, outcome))
            }
            func put(_ name: String, _ text: String, _ outcome: Outcome) { put(name, Array(text.utf8), outcome) }

            #expect(mkfifo(path("fifo.conf"), 0o644) == 0)
            cases.append(("fifo.conf", .refused(2, "is a FIFO (named pipe), not a file")))
            try FileManager.default.createDirectory(atPath: path("directory.conf"), withIntermediateDirectories: false)
            cases.append(("directory.conf", .refused(2, "is a directory, not a file")))
            #expect(symlink("/dev/zero", path("zero.conf")) == 0)
            cases.append(("zero.conf", .refused(2, "is a character device, not a file")))
            #expect(symlink(path("nowhere.conf"), path("dangling.conf")) == 0)
            cases.append(("dangling.conf", .refused(1, "is a symbolic link to a file that does not exist")))

            put("latin1.conf", Array("display:\n  bus: 2\nstate_directory: /var/lib/caf".utf8) + [0xE9, 0x0A],
                .refused(2, "is not UTF-8 text: line 3, column 30 has the byte 0xE9; save it as UTF-8"))
            put("nul.conf", Array("display:\n  bus: 2".utf8) + [0] + Array("junk\n".utf8),
                .refused(2, "has a control character (U+0000) at line 2, column 9"))
            put("escape.conf", Array("\u{1B}]0;pwned\u{07}\u{1B}[31mdisplay:\n  bus: 2\n".utf8),
                .refused(2, "has a control character (U+001B) at line 1, column 1"))
            // An escape written the YAML way reaches the key itself: shown escaped.
            put("escaped-key.conf", "display:\n  bus: 2\n\"\\e[31mevil\": 1\n", .refused(2, "\\u001B[31mevil: unknown key"))
            // Not a configuration at all: its keys are not quoted.
            put("secret", "root:$6$SECRETHASH:19000:0:99999:7:::\ndaemon:*:19000:0:99999:7:::\n", .refused(2, "2 keys no setting has; is this an unwind configuration file?"))
            #expect(symlink(path("secret"), path("shadow-link.conf")) == 0)
            cases.append(("shadow-link.conf", .refused(2, "is a symbolic link (to ")))
            put("ten-megabytes.conf", "# " + String(repeating: "x", count: 10 << 20) + "\n",
                .refused(2, "is 10485763 bytes; a configuration file is at most 262144 bytes (256 KiB)"))
            // 60,000 keys, one a line: too big to be a configuration.
            put("keys-lines.conf", (0..<60_000).map { "key\($0): \($0)\n" }.joined(),
                .refused(2, "a configuration file is at most 262144 bytes"))
            // 60,000 keys that fit in the limit: one line, at once (the per-key suggestions
            // took a minute).
            put("keys-flow.conf", "{" + HostileConfigurationTests.shortKeys(60_000).joined(separator: ",") + "}\n",
                .refused(2, "60000 keys no setting has; is this an unwind configuration file?"))
            put("keys-in-a-section.conf", "display: {" + HostileConfigurationTests.shortKeys(60_000).joined(separator: ",") + "}\n",
                // One of the 60,000 is "bus", which display has.
                .refused(2, "59999 keys no setting has (display.aaa, display.aab, display.aac …)"))
            put("duplicate-keys.conf", "display:\n" + String(repeating: "  bus: 1\n", count: 20_000),
                .refused(2, "line 2, column 3: the section starting here has bus more than once; give each key once"))
            put("nested-lists.conf", "display: " + String(repeating: "[", count: 5000) + String(repeating: "]", count: 5000) + "\n",
                .refused(2, "not valid YAML: nested more than 1000 levels deep"))
            put("nested-maps.conf", "display: " + String(repeating: "{a: ", count: 5000) + "1" + String(repeating: "}", count: 5000) + "\n",
                .refused(2, "not valid YAML: nested more than 1000 levels deep"))
            // Billion laughs: nine levels of nine aliases, 9^9 "lol"s if anything expanded them.
            var laughs = "lol:\n  a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n"
            let names = ["a", "b", "c", "d", "e", "f", "g", "h", "i"]
            for (previous, name) in zip(names, names.dropFirst()) {
                laughs += "  \(name): &\(name) [" + Array(repeating: "*\(previous)", count: 9).joined(separator: ",") + "]\n"
            }
            put("laughs.conf", laughs, .refused(2, "1 key no setting has; is this an unwind configuration file?"))
            put("laughs-as-a-value.conf", laughs + "display:\n  bus: *i\n",
                .refused(2, "display.bus: expected a single value, not a list or section", lines: 2))
            put("not-yaml.conf", "display: [unclosed\n", .refused(2, "not valid YAML"))

            // Two top-level keys: libyaml alone would take the mark for indentation of the first.
            put("bom.conf", [0xEF, 0xBB, 0xBF] + Array((HostileConfigurationTests.noChip + "display:\n  bus: 2\n").utf8), .accepted("/dev/i2c-2 at 0x3c"))
            put("crlf.conf", (HostileConfigurationTests.noChip + "display:\n  bus: 2\n  height: 32\n").replacingOccurrences(of: "\n", with: "\r\n"),
                .accepted("/dev/i2c-2 at 0x3c, 128x32"))
            put("empty.conf", "", .accepted("/dev/i2c-1 at 0x3c, 128x64"))
            put("target.conf", HostileConfigurationTests.noChip + "display:\n  bus: 3\n", .accepted("/dev/i2c-3"))
            // A link is followed: /etc/unwind is root's, and a link there is root's choice.
            #expect(symlink(path("target.conf"), path("link.conf")) == 0)
            cases.append(("link.conf", .accepted("/dev/i2c-3")))
        }
    }

    /// "aaa", "aab", … then four letters: `count` distinct keys, short enough for 60,000 of
    /// them to stay under the size limit. Not `sms`, a section of the file: given a
    /// value it is told apart, as a section given a value.
    static func shortKeys(_ count: Int) -> [String] {
        let letters = Array("abcdefghijklmnopqrstuvwxyz0123456789")
        var keys: [String] = []
        for length in 3...4 {
            var index = [Int](repeating: 0, count: length)
            while keys.count < count {
                let key = String(index.map { letters[$0] })
                if key != "sms" { keys.append(key) }
                var k = length - 1
                while k >= 0 {
                    index[k] += 1
                    if index[k] < letters.count { break }
                    index[k] = 0
                    k -= 1
                }
                if k < 0 { break }
            }
        }
        return keys
    }

    /// The command's result and how long it took.
    static func timed(_ arguments: [String]) -> (UnwindRun.Result, Duration) {
        let clock = ContinuousClock()
        let start = clock.now
        let r = UnwindRun.run(arguments)
        return (r, clock.now - start)
    }

    static func expectRefused(_ r: UnwindRun.Result, _ took: Duration, _ code: Int32, _ words: String, lines: Int,
                              sourceLocation: SourceLocation = #_sourceLocation) {
        if lines == 1 {
            expectFailure(r, code, words, sourceLocation: sourceLocation)
        } else {
            #expect(r.status == code, "\(r)", sourceLocation: sourceLocation)
            #expect(r.stderrLines.count == lines, "\(r)", sourceLocation: sourceLocation)
            #expect(r.stderrLines.allSatisfy { $0.hasPrefix("unwind: ") }, "\(r)", sourceLocation: sourceLocation)
            #expect(r.stderr.contains(words), "'\(words)' expected in: \(r)", sourceLocation: sourceLocation)
        }
        // A file that is not a configuration is never quoted (the shadow-like one's hash).
        #expect(!r.stderr.contains("SECRET"), "\(r)", sourceLocation: sourceLocation)
        // Whatever the file held, nothing reaches the terminal raw.
        #expect(!r.stderr.unicodeScalars.contains { $0 != "\n" && TextSafety.isTerminalControl($0) }, "\(r)",
                sourceLocation: sourceLocation)
        // Well inside the systemd unit's 30 s start timeout, even for a debug build on a busy machine
        // (an emulator's seconds are not a board's: TestMachine.emulated).
        #expect(TestMachine.emulated || took < .seconds(10), "took \(took): \(r)", sourceLocation: sourceLocation)
    }

    @Test func configCheckRefusesEachHostileFormInOneClearLine() throws {
        let files = try Files()
        for (name, outcome) in files.cases {
            let (r, took) = Self.timed(["config", "check", "--config", files.path(name)])
            switch outcome {
            case .refused(let code, let words, let lines):
                Self.expectRefused(r, took, code, words, lines: lines)
            case .accepted(let words):
                #expect(r.status == 0, "\(name): \(r)")
                #expect(r.stdout.hasPrefix(files.path(name) + " is valid"), "\(name): \(r)")
                #expect(r.stdout.contains(words), "\(name): '\(words)' expected in \(r)")
            }
        }
    }

    /// `run` reads the file the same way, and refuses before it touches anything.
    @Test func runRefusesEachHostileFormBeforeTheHardware() throws {
        let files = try Files()
        let stateDirectory = temporaryDirectory("hostile-run-state")
        defer { try? FileManager.default.removeItem(atPath: stateDirectory) }
        let socket = stateDirectory + "/control.sock"
        for (name, outcome) in files.cases {
            switch outcome {
            case .refused(let code, let words, let lines):
                let (r, took) = Self.timed(["run", "--config", files.path(name), "--socket", socket])
                Self.expectRefused(r, took, code, words, lines: lines)
            case .accepted:
                // The empty file means every default, gpiochip0 among them: only where there is none.
                if name == "empty.conf" && FileManager.default.fileExists(atPath: "/dev/gpiochip0") { continue }
                let (r, _) = Self.timed(["run", "--config", files.path(name), "--socket", socket])
                expectFailure(r, 1, "cannot start")
            }
        }
        #expect(!FileManager.default.fileExists(atPath: socket))
    }

    /// Every maintainer's command reads `--config` the same way (with `--state` given the file
    /// is not needed, and a bad one does not matter).
    @Test func maintenanceCommandsReadTheFileTheSameWay() throws {
        let files = try Files()
        expectFailure(UnwindRun.run(["mantras", "list", "--config", files.path("fifo.conf")]), 2, "is a FIFO (named pipe)")
        expectFailure(UnwindRun.run(["alerts", "list", "--config", files.path("latin1.conf")]), 2, "is not UTF-8 text")
        expectFailure(UnwindRun.run(["stats", "--config", files.path("keys-flow.conf")]), 2,
                      "60000 keys no setting has; is this an unwind configuration file? (deploy/unwind.conf in the source lists every key); run 'unwind config check'")
    }
}

// MARK: - Command-line arguments

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

// MARK: - What the commands print

@Suite(.serialized) struct TerminalOutputTests {
    /// An operator name no network should send: a terminal title, a colour, a screen clear
    /// through C1's CSI, and a right-to-left override. The AT engine drops C0 and DEL from
    /// every line it reads; C1 and the bidi controls are text to it, and reach the commands.
    static let hostileOperator = "Evil\u{1B}]0;pwned\u{07}\u{1B}[31mNet\u{9B}2J\u{202E}lrt"
    static let keptOperator = "Evil]0;pwned[31mNet\u{9B}2J\u{202E}lrt"
    static let escapedOperator = "Evil]0;pwned[31mNet\\u009B2J\\u202Elrt"

    static func expectNoTerminalControls(_ r: UnwindRun.Result, sourceLocation: SourceLocation = #_sourceLocation) {
        for (stream, text) in [("stdout", r.stdout), ("stderr", r.stderr)] {
            let raw = text.unicodeScalars.filter { $0 != "\n" && TextSafety.isTerminalControl($0) }
            #expect(raw.isEmpty, "\(stream) carries \(raw.map { TextSafety.code($0.value) }): \(r)", sourceLocation: sourceLocation)
        }
    }

    @Test func theModemsOperatorNameReachesTheTerminalEscaped() throws {
        var script = ModemScript()
        script.cops = "+COPS: 0,0,\"\(Self.hostileOperator)\",7"
        let rig = try MaintenanceRig(modemScript: script)
        #expect(rig.wait { rig.status()?.modem?.operatorName != nil })

        let status = rig.unwind(["status"])
        #expect(status.status == 0, "\(status)")
        Self.expectNoTerminalControls(status)
        #expect(status.stdout.contains("; operator \(Self.escapedOperator)"), "\(status)")

        // JSON: the same escapes are JSON's own, so the report decodes to what the modem said.
        let json = rig.unwind(["status", "--json"])
        Self.expectNoTerminalControls(json)
        let decoded = try JSONDecoder().decode(StatusReport.self, from: Data(json.stdout.utf8))
        #expect(decoded.modem?.operatorName == Self.keptOperator)

        let check = rig.unwind(["modem", "check"])
        Self.expectNoTerminalControls(check)
        #expect(check.stdout.contains("operator \(Self.escapedOperator)"), "\(check)")
        let at = rig.unwind(["modem", "at", "AT+COPS?"])
        Self.expectNoTerminalControls(at)
        #expect(at.stdout.contains(Self.escapedOperator), "\(at)")
    }

    /// Whatever answers on the socket, every field of the status is printed escaped.
    @Test func aHostileAnswerOnTheSocketIsPrintedEscaped() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let evil = "x\u{1B}[2J\u{9B}31m\u{202E}\ny"
        let evilJSON = "x\\u001b[2J\u{9B}31m\u{202E}\\ny"
        let text = """
            {"pid":1,"startedAt":0,"now":60,"stateDirectory":"\(evilJSON)","page":"\(evilJSON)","overlay":"\(evilJSON)",
             "session":"\(evilJSON)","display":"\(evilJSON)","displayHealth":"\(evilJSON)","totalSeconds":0,"sessions":0,
             "shortestSeconds":0,"longestSeconds":0,"mantraCount":0,"currentMantra":0,"reminder":"\(evilJSON)",
             "alertSlots":["\(evilJSON)"],"modem":{"port":"\(evilJSON)","link":"\(evilJSON)","sim":"\(evilJSON)",
             "registration":"\(evilJSON)","signal":"\(evilJSON)","operatorName":"\(evilJSON)","serviceCentre":"\(evilJSON)",
             "lastProblem":"\(evilJSON)","restarts":0,"call":"\(evilJSON)"},"outboxPending":1,"outboxFailed":0,
             "messages":[{"id":"\(evilJSON)","contact":"\(evilJSON)","state":"\(evilJSON)","attempts":1}],
             "framesRendered":0,"framesMissed":0,"loopErrors":0,"recentErrors":["\(evilJSON)","\(evilJSON)"]}
            """
        var answer = ControlResponse.done("\(evil)")
        answer.status = try JSONDecoder().decode(StatusReport.self, from: Data(text.utf8))
        #expect(answer.status?.recentErrors.first == evil)
        let server = try FakeDevice(path: dir + "/evil.sock", answer: answer)
        defer { server.stop() }

        let status = UnwindRun.run(["status", "--state", dir, "--socket", server.path])
        #expect(status.status == 0, "\(status)")
        Self.expectNoTerminalControls(status)
        let shown = "x\\u001B[2J\\u009B31m\\u202E\\u000Ay"
        for label in ["state in ", "Session:   ", "operator ", "last problem: ", "call: ", "  "] {
            #expect(status.stdout.contains(label + shown), "'\(label)' in \(status)")
        }
        // One line per field: a line feed inside a field does not start a line of its own.
        #expect(!status.stdout.split(separator: "\n").contains { $0.hasPrefix("y") }, "\(status)")

        let json = UnwindRun.run(["status", "--json", "--state", dir, "--socket", server.path])
        Self.expectNoTerminalControls(json)
        #expect(try JSONDecoder().decode(StatusReport.self, from: Data(json.stdout.utf8)) == answer.status)

        // A failure's words from the socket, on standard error.
        var failure = ControlResponse(code: 1, message: evil)
        failure.status = answer.status
        server.answer = failure
        let failed = UnwindRun.run(["alerts", "clear", "1", "--state", dir, "--socket", server.path])
        expectFailure(failed, 1, "unwind: " + shown)
        Self.expectNoTerminalControls(failed)
    }
}

/// A control socket that answers every request with one fixed response.
final class FakeDevice: @unchecked Sendable {
    let path: String
    private let fd: Int32
    private let lock = NSLock()
    private var _answer: ControlResponse
    private var stopped = false
    private let done = DispatchSemaphore(value: 0)

    var answer: ControlResponse {
        get { lock.withLock { _answer } }
        set { lock.withLock { _answer = newValue } }
    }

    init(path: String, answer: ControlResponse) throws {
        self.path = path
        _answer = answer
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var a = sockaddr_un()
        a.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &a.sun_path) { $0.copyBytes(from: Array(path.utf8) + [0]) }
        let bound = withUnsafePointer(to: &a) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0, listen(fd, 8) == 0 else { throw ControlFailure.failed("fake device: cannot listen on \(path)") }
        Thread { [self] in serve() }.start()
    }

    private func serve() {
        defer { done.signal() }
        while true {
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            if lock.withLock({ stopped }) { return }
            guard poll(&p, 1, 50) > 0 else { continue }
            let client = accept(fd, nil, nil)
            if client < 0 { continue }
            // One request line, one answer line; a probe that only connects gets nothing.
            var line: [UInt8] = []
            var byte: UInt8 = 0
            while read(client, &byte, 1) == 1 {
                if byte == 0x0A { break }
                line.append(byte)
            }
            if !line.isEmpty {
                let out = answer.encodedLine()
                _ = out.withUnsafeBytes { write(client, $0.baseAddress, $0.count) }
            }
            close(client)
        }
    }

    func stop() {
        lock.withLock { stopped = true }
        done.wait()
        close(fd)
        unlink(path)
    }
}
