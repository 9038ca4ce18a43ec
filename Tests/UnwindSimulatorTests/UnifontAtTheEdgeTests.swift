import Foundation
import Logging
import Testing
import UnwindAssembly
import UnwindCore
import UnwindRuntime
import UnwindLinuxHardware
import UnwindRender
import UnwindSimulator
import UnwindTestSupport

/// The device reads GNU Unifont from Debian's package at start-up: a contact's reply in Chinese
/// reaches the panel; without the file (or with a damaged one) the device runs the same, draws
/// boxes, and says why once.
@Suite struct UnifontAtTheEdgeTests {
    static let script = """
        1     PANIC hold 1.7
        40    reply 1   你好，我马上到 ❤️
        42    end
        """

    func run(unifont: String?, in dir: String, logger: Logger = quietLogger()) throws -> HeadlessSimulation.Report {
        try FileManager.default.createDirectory(atPath: dir + "/state", withIntermediateDirectories: true)
        try Data("Mum\n+15550100001\nPlease call me.\n".utf8).write(to: URL(fileURLWithPath: dir + "/state/alert01.txt"))
        var sim = HeadlessSimulation(script: try ButtonScript.parse(Self.script), stateDirectory: dir + "/state",
                                     recordFrames: false, logger: logger)
        sim.unifont = unifont
        return try sim.run()
    }

    /// The reply's box on `fb`.
    func replyBox(_ fb: Framebuffer) -> [Bool] {
        var out: [Bool] = []
        for y in 27..<55 { for x in 0..<fb.width { out.append(fb[x, y]) } }
        return out
    }

    /// What the renderer draws for the run's last state with `fonts`.
    func expected(_ r: HeadlessSimulation.Report, fonts: Fonts) -> Framebuffer {
        var fb = Framebuffer()
        Screen.render(r.finalState, at: r.start + .seconds(41.9), fonts: fonts, into: &fb)
        return fb
    }

    @Test func aChineseReplyReachesThePanelInUnifontsGlyphs() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let r = try run(unifont: Unifont.debianPath, in: dir)
        #expect(r.finalState.panic.aftercare.replies.first?.text == "你好，我马上到 ❤️")
        let unifont = try SystemFonts.read(Unifont.debianPath).get()
        #expect(replyBox(r.panelScreen) == replyBox(expected(r, fonts: Fonts(unifont: unifont))))
        #expect(replyBox(r.panelScreen) != replyBox(expected(r, fonts: .builtIn)))
    }

    @Test func withoutTheFileTheDeviceRunsDrawsBoxesAndSaysWhyOnce() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let recent = RecentLog(capacity: 100)
        let logger = recent.logger(label: "unwind.test", base: { _ in SwiftLogNoOpLogHandler() })
        let r = try run(unifont: dir + "/unifont.hex", in: dir, logger: logger)
        #expect(r.alertRequests.count == 1)
        #expect(replyBox(r.panelScreen) == replyBox(expected(r, fonts: .builtIn)))
        let said = recent.lines.filter { $0.contains(dir + "/unifont.hex") }
        #expect(said.count == 1)
        #expect(said.first?.hasSuffix("\(dir)/unifont.hex is missing (Debian package unifont): characters the built-in fonts lack are drawn as boxes") == true, "\(said)")
    }

    @Test func aBadFileIsToldApart() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let good = "0041:0000000018242442427E424242420000\n"
        func write(_ name: String, _ text: String) throws -> String {
            let path = dir + "/" + name
            try Data(text.utf8).write(to: URL(fileURLWithPath: path))
            return path
        }
        #expect(try SystemFonts.read(write("good.hex", good)).get().count == 1)
        let missing = dir + "/none.hex"
        #expect(SystemFonts.read(missing).failure == .file(missing, .missing))
        let truncated = try write("truncated.hex", good + "4E00:0000FFFE")
        #expect(SystemFonts.read(truncated).failure == .format(truncated, .badLine(line: 2, reason: "the bitmap has 8 hex digits; a glyph has 32 (8x16) or 64 (16x16)")))
        #expect(SystemFonts.read(truncated).failure?.description == "\(truncated) is not a Unifont hex file (line 2: the bitmap has 8 hex digits; a glyph has 32 (8x16) or 64 (16x16)): characters the built-in fonts lack are drawn as boxes")
        let huge = try write("huge.hex", String(repeating: good, count: 100))
        #expect(SystemFonts.read(huge, limit: 1000).failure == .file(huge, .tooLarge(3800)))
        let fifo = dir + "/fifo.hex"
        #expect(mkfifo(fifo, 0o600) == 0)
        #expect(SystemFonts.read(fifo).failure == .file(fifo, .notARegularFile("a FIFO (named pipe)")))
        #expect(SystemFonts.read(dir).failure == .file(dir, .notARegularFile("a directory")))
    }
}

extension Result {
    var failure: Failure? { if case .failure(let f) = self { f } else { nil } }
}
