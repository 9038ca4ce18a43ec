#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization
import Testing
import UnwindCore

/// Every state file × every corruption a card, an editor or a hostile local user can leave,
/// at start: the real `unwind` (the headless simulator: the same loop, core and store as the
/// daemon) runs as the unprivileged service user would, PANIC is pressed, and the test checks
/// that the device ran, that every other alert went out, that the log named the right file, and
/// that nothing readable was lost or read through a link.
@Suite("Hostile state files at start")
struct HostileStateFileTests {
    enum Corruption: String, CaseIterable, Sendable {
        case garbage, byteOrderMark, crlf, tooLong, empty, truncated, directory, fifo, symlink, unreadable, huge
    }

    struct Case: Sendable, CustomTestStringConvertible {
        var file: String
        var corruption: Corruption
        var testDescription: String { "\(file) as \(corruption)" }
    }

    static let secret = "SECRET shadow-like line, must never be copied\n"

    /// A valid state directory: every file with content the device accepts.
    static var baseline: [String: [UInt8]] {
        var files: [String: String] = [
            TotalTimeFile.name: "5\n10\n0\n60\n300\n4\n",
            SessionHistoryFile.name: "1767225000 60\n1767225100 300\n",
            MantrasFile.name: "Breathe in calm\nYou are safe here\n",
            RemindersFile.name: "daily 21:30\n",
            BreathingChoiceFile.name: "pattern calm\nlength 10\n",
            PatternsFile.name: "evening 4,2,8,0\nslowing 4,0,6,0 from 11 over 180\n",
            CheckInFile.name: "2026-11-22 confirmed\n",
            AlertTestFile.name: "1795000000 delivered\n",
            StatusTextsFile.name: "1795000000 answer 1\n1795000100 problem display\n",
            // A finished episode: the ladder rang both, nobody picked up.
            EscalationFile.name: """
                unwind-escalation 1
                purpose panic
                started 1767000000
                phase ended rounds-done
                round 1
                to-ring -
                all-clear no
                contact 1 +15550000001 sent - Contact 1
                contact 2 +15550000002 delivered replied Contact 2
                call 1 1 1767000180 unanswered
                end

                """,
            // How am I doing?: two self-checks (one with PHQ-9 item 9), three days' moods, a card, the reminder.
            SelfChecksFile.name: "1767225600 gad7 1201320 9\n1767312000 phq9 012101213 11\n",
            MoodsFile.name: "2026-11-20 4\n2026-11-21 2\n2026-11-22 5\n",
            CopingCardsFile.name: "I will panic at the dentist tomorrow.\tI can breathe.\n",
            SelfCheckReminderFile.name: "weekly sun 18:00\n",
        ]
        for slot in 1...AlertSlotFile.slotCount {
            files[AlertSlotFile.name(slot: slot)] = "Contact \(slot)\n+1555000000\(slot)\nHelp message \(slot)\n"
        }
        return files.mapValues { Array($0.utf8) }
    }

    /// State files a device may have, tried here but not part of the baseline: `setupResult.txt`
    /// is there only on an imaged card after its setup file was imported (and shown on the screen).
    static let alsoTried: [String: [UInt8]] = [
        SetupResultFile.name: Array("Setup: ready.\nContacts 1 and 2 are set up.\n".utf8),
    ]

    static func tooLong(_ file: String) -> [UInt8] {
        switch file {
        case SetupResultFile.name: Array(String(repeating: "Setup: fix line 9.\n", count: 300).utf8)
        case TotalTimeFile.name: Array("5\n3\n0\n60\n300\n99999999999999999999999999999\n".utf8)
        case SessionHistoryFile.name: Array("1767225000 999999999999999999999999999999\n".utf8)
        case MantrasFile.name: Array((String(repeating: "calm ", count: 40) + "\n").utf8)
        case RemindersFile.name: Array(("daily 21:30 " + String(repeating: "x", count: 300) + "\n").utf8)
        case BreathingChoiceFile.name: Array(("pattern " + String(repeating: "x", count: 300) + "\n").utf8)
        case PatternsFile.name: Array(("evening " + String(repeating: "4,", count: 300) + "4\n").utf8)
        case CheckInFile.name: Array(("2026-11-22 confirmed " + String(repeating: "x", count: 300) + "\n").utf8)
        case AlertTestFile.name: Array(("1795000000 failed " + String(repeating: "x", count: 600) + "\n").utf8)
        case StatusTextsFile.name: Array(String(repeating: "1795000000 answer 1\n", count: 300).utf8)
        case SelfChecksFile.name: Array("1767225600 gad7 1201320 999999999999999999999999\n".utf8)
        case MoodsFile.name: Array("2026-11-20 44444444444444444444444444444444\n".utf8)
        case CopingCardsFile.name: Array(("I worry.\t" + String(repeating: "x", count: 161) + "\n").utf8)
        case SelfCheckReminderFile.name: Array(("weekly sun 18:00 " + String(repeating: "x", count: 300) + "\n").utf8)
        case EscalationFile.name:
            Array(String(decoding: baseline[EscalationFile.name]!, as: UTF8.self)
                .replacingOccurrences(of: " Contact 1\n", with: " " + String(repeating: "N", count: 41) + "\n").utf8)
        default: Array((String(repeating: "N", count: 41) + "\n+15550000001\nHelp\n").utf8)
        }
    }

    static var cases: [Case] {
        let files = [TotalTimeFile.name, SessionHistoryFile.name, MantrasFile.name, RemindersFile.name,
                     BreathingChoiceFile.name, PatternsFile.name, CheckInFile.name, AlertTestFile.name,
                     StatusTextsFile.name, EscalationFile.name, SetupResultFile.name,
                     SelfChecksFile.name, MoodsFile.name, CopingCardsFile.name, SelfCheckReminderFile.name] + AlertSlotFile.names
        return files.flatMap { f in Corruption.allCases.map { Case(file: f, corruption: $0) } }
    }

    /// What a corruption leaves under the name. Regular-file corruptions return their bytes.
    static func corrupt(_ c: Case, in state: String, secretPath: String) throws -> [UInt8]? {
        let path = state + "/" + c.file
        let valid = baseline[c.file] ?? alsoTried[c.file] ?? []
        var bytes: [UInt8]?
        switch c.corruption {
        case .garbage:
            var g = SeededBytes(seed: UInt64(c.file.utf8.count))
            bytes = (0..<300).map { _ in g.next() }
        case .byteOrderMark: bytes = [0xEF, 0xBB, 0xBF] + valid
        case .crlf: bytes = Array(String(decoding: valid, as: UTF8.self).replacingOccurrences(of: "\n", with: "\r\n").utf8)
        case .tooLong: bytes = tooLong(c.file)
        case .empty: bytes = []
        case .truncated: bytes = Array(valid.prefix(valid.count / 2))
        case .unreadable: bytes = valid
        case .huge: bytes = [UInt8](repeating: UInt8(ascii: "7"), count: 2 << 20) + [0x0A]
        case .directory:
            unlink(path)
            try require(mkdir(path, 0o755) == 0)
            try require(FileManager.default.createFile(atPath: path + "/inside", contents: Data("kept".utf8)))
        case .fifo:
            unlink(path)
            try require(mkfifo(path, 0o644) == 0)
        case .symlink:
            unlink(path)
            try require(symlink(secretPath, path) == 0)
        }
        if let bytes { try Data(bytes).write(to: URL(fileURLWithPath: path)) }
        if c.corruption == .unreadable { try require(chmod(path, 0) == 0) }
        return bytes
    }

    /// Every case, two at a time (each is a child process), then one line: tried and survived.
    @Test func everyStateFileEveryCorruption() {
        let all = Self.cases
        let survived = runAttacks(all, Self.attack)
        print("hostile state files: \(all.count) attacks tried (\(Self.baseline.count + Self.alsoTried.count) files × \(Corruption.allCases.count) corruptions), \(survived) survived")
    }

    static func attack(_ c: Case, _ problems: inout [String]) throws {
        func check(_ ok: Bool, _ message: @autoclosure () -> String) { if !ok { problems.append(message()) } }
        let root = temporaryDirectory("hostile-\(c.file)-\(c.corruption)")
        defer { try? FileManager.default.removeItem(atPath: root) }
        let state = root + "/state", out = root + "/out"
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true)
        // Outside the state directory, readable by the service user: what a link must not reach.
        let secretPath = root + "/secret"
        try Data(Self.secret.utf8).write(to: URL(fileURLWithPath: secretPath))
        for (name, bytes) in Self.baseline { try Data(bytes).write(to: URL(fileURLWithPath: state + "/" + name)) }
        let written = try Self.corrupt(c, in: state, secretPath: secretPath)
        let script = root + "/script.txt"
        try Data("0.5 PANIC hold 1.7\n4 end\n".utf8).write(to: URL(fileURLWithPath: script))
        // The service user owns its state directory; root would read a mode-000 file anyway.
        try require(lchownTree(root, 65534, 65534))

        let r = UnwindRun.run(["sim", "--headless", script, "--state", state, "--out", out, "--no-frames"], user: .nobody)
        check(r.status == 0, "the device must run: \(r)")
        check(r.stdout.contains("simulated"), "\(r)")

        // PANIC sent every other alert; the broken slot never goes out.
        let sent = (readText(out + "/alerts.log") ?? "").split(separator: "\n").map(String.init)
        let sentSlots = Set(sent.compactMap { line in line.split(separator: " ").dropFirst(2).first.flatMap { Int($0) } })
        let target = AlertSlotFile.names.firstIndex(of: c.file).map { $0 + 1 }
        let expected = Set(1...AlertSlotFile.slotCount).subtracting(target.map { [$0] } ?? [])
        check(sentSlots == expected, "alerts sent: \(sent)")

        // The log names the file, and only that one.
        let lines = r.stderr.split(separator: "\n")
        // An empty history, mantra list, pattern list, choice or slot is valid; half a mantra list
        // is a shorter list; half of breathing.txt names a pattern that is not offered (the
        // default is used, quietly).
        let stillValid = c.corruption == .empty
            && ([SessionHistoryFile.name, MantrasFile.name, BreathingChoiceFile.name, PatternsFile.name,
                 CheckInFile.name, AlertTestFile.name, StatusTextsFile.name, EscalationFile.name,
                 SelfChecksFile.name, MoodsFile.name, CopingCardsFile.name].contains(c.file) || target != nil)
            || c.corruption == .truncated && [MantrasFile.name, SessionHistoryFile.name, BreathingChoiceFile.name].contains(c.file)
            // Any UTF-8 text is a result to show: half of it, a BOM or CR are shown as text.
            || c.file == SetupResultFile.name && [.empty, .truncated, .byteOrderMark, .crlf].contains(c.corruption)
        if !stillValid {
            check(lines.contains { $0.contains(c.file) }, "the log must name \(c.file): \(r.stderr)")
        }
        for other in Self.baseline.keys where other != c.file {
            check(!lines.contains { $0.contains(" \(other)") || $0.contains("(\(other)") || $0.contains("/\(other)") },
                    "the log names \(other) for a problem in \(c.file): \(r.stderr)")
        }

        // Nothing readable lost: the bytes (or the directory, the FIFO, the link) are still
        // under the name or beside it as `<name>.corrupt-<time>`.
        let entries = try FileManager.default.contentsOfDirectory(atPath: state)
        let candidates = entries.filter { $0 == c.file || $0.hasPrefix(c.file + ".corrupt-") }.map { state + "/" + $0 }
        switch c.corruption {
        case .directory:
            check(candidates.contains { readText($0 + "/inside") == "kept" }, "\(entries)")
        case .fifo:
            check(candidates.contains { fileType($0) == S_IFIFO }, "\(entries)")
        case .symlink:
            check(candidates.contains { fileType($0) == S_IFLNK }, "\(entries)")
        case .empty:
            break
        default:
            guard let original = written else { throw SetupFailure(description: "no bytes written") }
            check(candidates.contains { path in
                chmod(path, 0o600)  // root reads it back
                return FileManager.default.contents(atPath: path).map { [UInt8]($0) } == original
            }, "the original bytes of \(c.file) are gone: \(entries)")
        }
        // A link was never read through: the secret is where it was, and nowhere in the state.
        check(readText(secretPath) == Self.secret, "the secret changed")
        for e in entries where fileType(state + "/" + e) == S_IFREG {
            check(!(readText(state + "/" + e) ?? "").contains("SECRET"), "\(e) holds the secret")
        }
        // PANIC was pressed: what follows it is a new episode in escalation.txt (unless that name
        // is the one left alone, unreadable), one the device can load again.
        if c.file != EscalationFile.name || c.corruption != .unreadable {
            let episode = FileManager.default.contents(atPath: state + "/" + EscalationFile.name).map { [UInt8]($0) } ?? []
            let loaded = try? EscalationFile.parse(episode)
            check(loaded?.purpose == .panic && loaded?.started != WallTime(secondsSinceEpoch: 1_767_000_000),
                  "escalation.txt after PANIC: \(String(decoding: episode, as: UTF8.self))")
        }
        // The other state files are as they were.
        for (name, bytes) in Self.baseline where name != c.file && name != EscalationFile.name {
            check(FileManager.default.contents(atPath: state + "/" + name).map { [UInt8]($0) } == bytes,
                    "\(name) changed because \(c.file) was broken")
        }
    }
}

/// The directories the device keeps in its state directory (the outbox, replies), each replaced
/// by whatever a hostile local user or a damaged card can leave under its name: the real
/// headless start-up, as the service user, PANIC pressed. The device must start and send, set
/// the thing aside untouched, make a new directory, say so in its log and in `unwind status`,
/// and never write through a link.
@Suite("Hostile owned directories at start")
struct HostileOwnedDirectoryTests {
    enum Form: String, CaseIterable, Sendable {
        case regularFile, symlinkToFile, symlinkToDirectoryOutside, danglingSymlink, fifo
        /// Mode 000: only the unprivileged service user is kept out (root reads it anyway),
        /// which is why the device runs as nobody here.
        case modeZeroDirectory
        /// root's, 0755: the service user can list it but not write in it.
        case foreignDirectory
    }

    struct Case: Sendable, CustomTestStringConvertible {
        var directory: String
        var form: Form
        var testDescription: String { "\(directory) as \(form)" }
    }

    static let names = ["outbox", "replies"]
    static var cases: [Case] { names.flatMap { d in Form.allCases.map { Case(directory: d, form: $0) } } }

    @Test func everyOwnedDirectoryEveryForm() {
        let all = Self.cases
        let survived = runAttacks(all, Self.attack)
        print("hostile owned directories: \(all.count) attacks tried (\(Self.names.count) directories × \(Form.allCases.count) forms), \(survived) survived")
    }

    static func attack(_ c: Case, _ problems: inout [String]) throws {
        func check(_ ok: Bool, _ message: @autoclosure () -> String) { if !ok { problems.append(message()) } }
        let root = temporaryDirectory("owned-\(c.directory)-\(c.form)")
        defer {
            chmod(root + "/state", 0o755)
            for e in (try? FileManager.default.contentsOfDirectory(atPath: root + "/state")) ?? [] { chmod(root + "/state/" + e, 0o755) }
            try? FileManager.default.removeItem(atPath: root)
        }
        let state = root + "/state", out = root + "/out", outside = root + "/elsewhere"
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: outside, withIntermediateDirectories: true)
        let secretPath = root + "/secret"
        try Data(HostileStateFileTests.secret.utf8).write(to: URL(fileURLWithPath: secretPath))
        for (name, bytes) in HostileStateFileTests.baseline { try Data(bytes).write(to: URL(fileURLWithPath: state + "/" + name)) }
        let path = state + "/" + c.directory
        // An unsent alert where one belongs: it must be kept (set aside), never lost.
        let kept = "kept \(c.directory)\n"
        switch c.form {
        case .regularFile: try Data(kept.utf8).write(to: URL(fileURLWithPath: path))
        case .symlinkToFile: try require(symlink(secretPath, path) == 0)
        case .symlinkToDirectoryOutside: try require(symlink(outside, path) == 0)
        case .danglingSymlink: try require(symlink(root + "/nowhere", path) == 0)
        case .fifo: try require(mkfifo(path, 0o644) == 0)
        case .modeZeroDirectory, .foreignDirectory:
            try require(mkdir(path, 0o755) == 0)
            try Data(kept.utf8).write(to: URL(fileURLWithPath: path + "/alert-1-1-0001.msg"))
        }
        let script = root + "/script.txt"
        try Data("0.5 PANIC hold 1.7\n4 end\n".utf8).write(to: URL(fileURLWithPath: script))
        try require(lchownTree(root, 65534, 65534))
        // After the chown: these stay root's (the foreign directory) or locked (mode 000).
        if c.form == .foreignDirectory { try require(lchownTree(path, 0, 0)) }
        if c.form == .modeZeroDirectory { try require(chmod(path, 0) == 0) }

        let r = UnwindRun.run(["sim", "--headless", script, "--state", state, "--out", out, "--no-frames"], user: .nobody)
        check(r.status == 0, "the device must run: \(r)")
        let sent = (readText(out + "/alerts.log") ?? "").split(separator: "\n")
        check(sent.count == AlertSlotFile.slotCount, "every alert must go out: \(sent)")
        check(r.stderr.contains("\(c.directory) was ") && r.stderr.contains("moved aside as \(c.directory).corrupt-"),
              "the log must say what was set aside: \(r.stderr)")

        // A new, real directory under the name; the old thing beside it, untouched.
        check(fileType(path) == S_IFDIR, "no new \(c.directory) directory")
        let entries = try FileManager.default.contentsOfDirectory(atPath: state)
        let aside = entries.filter { $0.hasPrefix(c.directory + ".corrupt-") }.map { state + "/" + $0 }
        check(aside.count == 1, "one thing set aside expected: \(entries)")
        if let a = aside.first {
            switch c.form {
            case .regularFile: check(readText(a) == kept, "the file's bytes changed")
            case .symlinkToFile, .symlinkToDirectoryOutside, .danglingSymlink: check(fileType(a) == S_IFLNK, "not the link")
            case .fifo: check(fileType(a) == S_IFIFO, "not the FIFO")
            case .modeZeroDirectory, .foreignDirectory:
                chmod(a, 0o755)  // root reads it back either way
                check(readText(a + "/alert-1-1-0001.msg") == kept, "the message set aside is gone")
            }
        }
        // Nothing written through a link.
        check(readText(secretPath) == HostileStateFileTests.secret, "the secret changed")
        check(((try? FileManager.default.contentsOfDirectory(atPath: outside)) ?? ["?"]).isEmpty, "something was written outside")
        // (escalation.txt is what followed the last alerts: PANIC was pressed, it holds that now.)
        for (name, bytes) in HostileStateFileTests.baseline where name != EscalationFile.name {
            check(FileManager.default.contents(atPath: state + "/" + name).map { [UInt8]($0) } == bytes, "\(name) changed")
        }
        // The maintainer is told, once the device is down too.
        let status = UnwindRun.run(["status", "--state", state])
        check(status.stdout.contains("Set aside:") && status.stdout.contains("\(c.directory).corrupt-"),
              "unwind status does not say what was set aside: \(status)")
    }
}

/// chown -hR: links themselves, never what they point to.
func lchownTree(_ root: String, _ uid: uid_t, _ gid: gid_t) -> Bool {
    guard lchown(root, uid, gid) == 0 else { return false }
    guard fileType(root) == S_IFDIR else { return true }
    for name in (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? [] {
        if !lchownTree(root + "/" + name, uid, gid) { return false }
    }
    return true
}

/// Deterministic bytes (SplitMix64), so a failing case is the same case every run.
struct SeededBytes {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt8 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return UInt8(truncatingIfNeeded: z ^ (z >> 31))
    }
}

struct SetupFailure: Error, CustomStringConvertible {
    var description: String
}

func require(_ ok: Bool, line: Int = #line) throws {
    if !ok { throw SetupFailure(description: "line \(line): errno \(errno)") }
}

/// Every case at once (each is a child process), each failed one recorded with its problems:
/// how many survived.
func runAttacks<C: CustomTestStringConvertible & Sendable>(_ all: [C], _ attack: @Sendable (C, inout [String]) throws -> Void) -> Int {
    let results = Mutex([String: [String]]())
    DispatchQueue.concurrentPerform(iterations: all.count) { i in
        var problems: [String] = []
        do { try attack(all[i], &problems) } catch { problems.append("setting up: \(error)") }
        results.withLock { $0[all[i].testDescription] = problems }
    }
    let failed = results.withLock { $0 }.filter { !$0.value.isEmpty }
    for (name, problems) in failed.sorted(by: { $0.key < $1.key }) {
        Issue.record("\(name): \(problems.joined(separator: "; "))")
    }
    return all.count - failed.count
}
