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

/// A configuration file that is not one, aimed at the maintainer: refused in one clear line by
/// every command that reads it, nothing of it raw on the terminal.
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
