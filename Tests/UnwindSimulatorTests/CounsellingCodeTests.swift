import Foundation
import Testing
import UnwindAssembly
import UnwindMaintenance
import UnwindSimulatedHardware
import UnwindCore
import UnwindRuntime
import UnwindRender
import UnwindSimulator

/// The counselling website as a QR code, checked with an independent decoder
/// (zbarimg, from Debian's zbar-tools, which deploy/dev-deps.sh installs).
@Suite struct CounsellingCodeTests {
    static let zbarimg = ["/usr/bin/zbarimg", "/usr/local/bin/zbarimg"].first { FileManager.default.isExecutableFile(atPath: $0) }

    /// Decodes a PNG with zbarimg; nil when it finds no code.
    func decode(_ png: [UInt8]) throws -> String? {
        let exe = try #require(Self.zbarimg, "zbarimg is missing: run ./deploy/dev-deps.sh (installs zbar-tools)")
        let path = scratchRoot + "qr-\(UUID().uuidString).png"
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Data(png).write(to: URL(fileURLWithPath: path))
        let p = Process()
        p.executableURL = URL(fileURLWithPath: exe)
        p.arguments = ["--quiet", "--raw", path]
        let out = Pipe()
        p.standardOutput = out
        p.standardError = FileHandle.nullDevice
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        guard p.terminationStatus == 0 else { return nil }
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .newlines)
    }

    func screen(website: String) throws -> Framebuffer {
        var core = DeviceCore(counselling: .sfuCounselling, website: website, websiteCode: try QRCode.encode(website))
        var e: [Effect] = []
        for _ in 0..<3 { core.apply(.button(.short(.page)), at: Moment(.zero), effects: &e) }
        core.apply(.button(.down(.left)), at: Moment(.seconds(1)), effects: &e)
        core.apply(.button(.long(.select)), at: Moment(.seconds(2)), effects: &e)
        #expect(core.state.overlay == .counsellingCode)
        var fb = Framebuffer()
        Screen.render(core.state, at: .seconds(3), into: &fb)
        return fb
    }

    @Test(arguments: ["https://sfu.ca/students/health", "https://example.org/", "http://a.b/c?d=e&f=1#x",
                      "https://www.sfu.ca/students/h"])
    func theScreenDecodesToTheConfiguredAddress(_ url: String) throws {
        let fb = try screen(website: url)
        // At the device's true size, scaled only as a phone camera would see it.
        #expect(try decode(PNGImage.encode(fb, scale: 3, border: 6)) == url)
    }

    @Test func theCodeFitsWithTwoPixelModulesAndAQuietZone() throws {
        let code = try QRCode.encode("https://sfu.ca/students/health")
        #expect(code.version <= 2)
        let quiet = (64 / QRCode.pixelsPerModule - code.size) / 2
        #expect(quiet >= QRCode.minimumQuietZone)
        #expect((code.size + 2 * quiet) * QRCode.pixelsPerModule <= 64)
        // The strongest correction that fits is chosen: a short address gets H.
        #expect(try QRCode.encode("https://a.io").level == "H")
    }

    @Test func aTooLongAddressIsAClearConfigurationError() {
        #expect(throws: QRCode.Problem.tooLong(bytes: 39, maximum: 32)) {
            try QRCode.encode("https://www.sfu.ca/students/health.html")
        }
        #expect(throws: ConfigErrors.self) {
            try DeviceConfiguration.parse("counselling:\n  website: https://www.sfu.ca/students/health/counselling/index.html\n")
        }
        do {
            _ = try DeviceConfiguration.parse("counselling:\n  website: https://www.sfu.ca/students/health/counselling/index.html\n", path: "unwind.conf")
        } catch {
            #expect(error.description.contains("counselling.website"))
            #expect(error.description.contains("at most 32"))
        }
    }

    @Test func theHeadlessScreenshotOfTheDeviceDecodes() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let script = try ButtonScript.parse("0 PAGE\n0.5 PAGE\n1 PAGE\n1.5 LEFT\n2 SELECT long\n4 end\n")
        let r = try HeadlessSimulation(script: script, stateDirectory: dir + "/s", outputDirectory: dir + "/o", recordFrames: false).run()
        #expect(r.finalState.overlay == .counsellingCode)
        let png = try [UInt8](Data(contentsOf: URL(fileURLWithPath: dir + "/o/screen.png")))
        #expect(try decode(png) == DeviceConfiguration().counsellingWebsite)
    }
}
