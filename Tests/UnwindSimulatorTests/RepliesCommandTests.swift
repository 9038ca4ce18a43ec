#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import UnwindCore
import UnwindSeams
import UnwindLinuxHardware
import UnwindModem

/// `unwind replies` reads the inbox the device writes; the terminal simulator's `r` key makes
/// slot 1's contact reply through the simulated modem, end to end.
@Suite("unwind replies and the reply key", .serialized)
struct RepliesCommandTests {
    static func deliver(_ text: String, from: String) throws -> SMSDeliver {
        // "+15550100001" (or another), GSM-7, no header.
        let digits = from.dropFirst()
        var oa: [UInt8] = [UInt8(digits.count), 0x91]
        let d = digits.compactMap { $0.wholeNumberValue.map(UInt8.init) }
        for i in stride(from: 0, to: d.count, by: 2) { oa.append((i + 1 < d.count ? d[i + 1] : 0x0F) << 4 | d[i]) }
        let stamp: [UInt8] = [0x62, 0x10, 0x10, 0x21, 0x43, 0x65, 0x00]
        let tpdu: [UInt8]
        if let septets = GSM7.septets(of: text) {
            var ud: [UInt8] = [], acc = 0, bits = 0
            for s in septets {
                acc |= Int(s) << bits
                bits += 7
                while bits >= 8 { ud.append(UInt8(acc & 0xFF)); acc >>= 8; bits -= 8 }
            }
            if bits > 0 { ud.append(UInt8(acc & 0xFF)) }
            let head: [UInt8] = [0x04] + oa + [0x00, 0x00]
            tpdu = head + stamp + [UInt8(septets.count)] + ud
        } else {
            let ud: [UInt8] = text.utf16.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }
            let head: [UInt8] = [0x04] + oa + [0x00, 0x08]
            tpdu = head + stamp + [UInt8(ud.count)] + ud
        }
        guard case .deliver(let m) = try IncomingPDU.decode(tpdu: tpdu) else { throw IncomingPDUProblem.malformed("no deliver") }
        return m
    }

    @Test func listsContactsAndStrangersReadOnly() throws {
        let state = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: state) }
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true)
        try Data("Mum\n7787824615\nPlease call me.\n".utf8).write(to: URL(fileURLWithPath: state + "/alert01.txt"))
        let inbox = Inbox(storage: try DirectoryStore(directory: state + "/replies"))
        _ = try inbox.accept(try Self.deliver("On my way", from: "+17787824615"), at: WallTime(secondsSinceEpoch: 1_767_225_600), instant: .zero)
        let stranger = try inbox.accept(try Self.deliver("Who is this?\u{1B}[2J", from: "+19995550000"),
                                        at: WallTime(secondsSinceEpoch: 1_767_225_700), instant: .zero)
        try inbox.markSeen(stranger.map(\.id))
        let before = try FileManager.default.contentsOfDirectory(atPath: state + "/replies").sorted()

        let r = UnwindRun.run(["replies", "--state", state])
        #expect(r.status == 0, "\(r)")
        #expect(r.stdout.contains("2 text messages received, 1 not dismissed by the person"), "\(r)")
        #expect(r.stdout.contains("+17787824615 (Mum, slot 1)  new"), "\(r)")
        #expect(r.stdout.contains("    On my way"))
        #expect(r.stdout.contains("+19995550000 (not a contact)"))
        #expect(!r.stdout.contains("\u{1B}"), "the sender's escape sequence never reaches the terminal")

        let j = UnwindRun.run(["replies", "--state", state, "--json"])
        #expect(j.status == 0, "\(j)")
        let list = try JSONSerialization.jsonObject(with: Data(j.stdout.utf8)) as? [[String: Any]]
        #expect(list?.count == 2)
        #expect(list?.first?["slot"] as? Int == 1 && list?.first?["contact"] as? String == "Mum")
        #expect(list?.first?["seen"] as? Bool == false && list?.last?["seen"] as? Bool == true)
        #expect(try FileManager.default.contentsOfDirectory(atPath: state + "/replies").sorted() == before, "nothing changed")
    }

    @Test func noRepliesYet() throws {
        let state = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: state) }
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true)
        let r = UnwindRun.run(["replies", "--state", state])
        #expect(r.status == 0 && r.stdout.contains("No text messages received"), "\(r)")
        #expect(!FileManager.default.fileExists(atPath: state + "/replies"), "a read-only command creates nothing")
    }

    /// Whatever link is under `replies` (to a real directory, to nothing, to itself) or a file:
    /// the same answer, exit 1 and what it is — never "no messages", never followed.
    @Test(arguments: ["link to a directory", "dangling link", "looping link", "file"])
    func aRepliesThatIsNotTheDirectoryIsSaid(_ form: String) throws {
        let root = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let state = root + "/state", elsewhere = root + "/elsewhere", path = state + "/replies"
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: elsewhere, withIntermediateDirectories: true)
        switch form {
        case "link to a directory": #expect(symlink(elsewhere, path) == 0)
        case "dangling link": #expect(symlink(root + "/nowhere", path) == 0)
        case "looping link": #expect(symlink(path, path) == 0)
        default: #expect(FileManager.default.createFile(atPath: path, contents: Data("x".utf8)))
        }
        let r = UnwindRun.run(["replies", "--state", state])
        expectFailure(r, 1, form == "file" ? "it is not a directory" : "it is a symbolic link")
        #expect(try FileManager.default.contentsOfDirectory(atPath: elsewhere).isEmpty)
    }

    /// `r` in `unwind sim`: slot 1's contact replies "On my way" through the simulated modem; the
    /// reply goes through the real AT engine onto the card, and `unwind replies` lists it.
    @Test func theReplyKey() throws {
        let state = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: state) }
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true)
        try Data("Mum\n+15550100001\nPlease call me.\n".utf8).write(to: URL(fileURLWithPath: state + "/alert01.txt"))
        let sim = try SimulatorOnTerminal(state: state)
        #expect(sim.waitUntilReady(), "the simulator did not come up: \(sim.text.suffix(300))")
        sim.type("r")
        var listed = UnwindRun.run(["replies", "--state", state])
        _ = waitUntil(.seconds(30), every: .milliseconds(50)) {
            listed = UnwindRun.run(["replies", "--state", state])
            return listed.stdout.contains("On my way")
        }
        #expect(listed.stdout.contains("+15550100001 (Mum, slot 1)"), "\(listed)")
        #expect(listed.stdout.contains("    On my way"))
        kill(sim.process.processIdentifier, SIGTERM)
        #expect(sim.exitStatus() == 0)
    }
}
