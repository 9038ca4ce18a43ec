#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing

/// `unwind config check --config PATH` quotes what is wrong in the file (a value, a line). A
/// path that is a symbolic link may reach any file, one the person running the check may read
/// and the link's owner may not: nothing of the file it reaches is printed, only that it is not
/// a valid configuration and that it can be checked by its own path.
@Suite struct ConfigThroughALinkTests {
    static let secret = "display:\n  bus: SECRET-root-only\n"

    @Test func aLinkedFileIsNeverQuoted() throws {
        let dir = temporaryDirectory("config-link")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let file = dir + "/root-only.yaml", link = dir + "/unwind.conf"
        try Data(Self.secret.utf8).write(to: URL(fileURLWithPath: file))
        chmod(file, 0o600)
        try #require(symlink(file, link) == 0)

        let viaLink = UnwindRun.run(["config", "check", "--config", link])
        expectFailure(viaLink, 2, "is a symbolic link (to \(file))")
        #expect(!viaLink.stdout.contains("SECRET") && !viaLink.stderr.contains("SECRET"), "\(viaLink)")

        // Named by its own path, the same file is checked and its problem shown.
        let direct = UnwindRun.run(["config", "check", "--config", file])
        expectFailure(direct, 2, "display.bus")
        #expect(direct.stderr.contains("SECRET"), "\(direct)")

        // A link to a file that is not UTF-8, or holds a control character: not quoted either.
        for bytes: [UInt8] in [[0x62, 0x75, 0x73, 0xFF, 0x0A], Array("display:\n  bus: 1\u{1B}[2J\n".utf8)] {
            try Data(bytes).write(to: URL(fileURLWithPath: file))
            let r = UnwindRun.run(["config", "check", "--config", link])
            expectFailure(r, 2, "is a symbolic link")
            #expect(!r.stderr.contains("line 1") && !r.stderr.contains("U+001B"), "\(r)")
        }
    }
}
