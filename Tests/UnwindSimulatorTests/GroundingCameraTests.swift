import Foundation
import Logging
import Testing
import UnwindMaintenance
import UnwindTestSupport
@testable import UnwindCore
@testable import UnwindRuntime
@testable import UnwindSimulator

/// A fake camera: a tiny shell script that notes each path in a log and touches it. The command
/// runs it through /bin/sh rather than executing the file: while another test's child process is
/// between fork and exec it still holds the just-written file open for writing, and executing the
/// file then fails with ETXTBSY ("text file busy"), which only a loaded machine ever shows.
func fakeCamera(in dir: String, body: String = "echo \"$1\" >> \"$(dirname \"$0\")/calls.log\"\ntouch \"$1\"") throws -> String {
    let path = dir + "/fake-camera.sh"
    try (body + "\n").write(toFile: path, atomically: false, encoding: .utf8)
    return "/bin/sh " + path
}

@Suite struct GroundingCameraTests {
    @Test func photosLiveInAPrivateDirectoryAndAreDeleted() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let script = try fakeCamera(in: dir)
        // The camera's log goes with every failed expectation: a capture that did not start says why.
        let log = LogRecorder()
        // A limit no machine meets by being slow (on a loaded two-core machine a shell script's
        // start has taken over a minute): this test is about where photos live, not about the
        // time limit (tested below).
        let camera = GroundingCamera(command: try CaptureCommand(script + " {path}"), temporaryDirectory: dir,
                                     timeout: .seconds(1800), logger: log.logger(), inBackground: true)
        #expect(camera.directory == nil, "\(log.text)") // nothing is made before the first capture
        camera.capture(0)
        camera.capture(1)
        camera.flush()
        let private1 = try #require(camera.directory, "\(log.text)")
        #expect(private1.hasPrefix(dir + "/unwind-grounding-\(getpid())-"), "\(log.text)")
        var st = stat()
        #expect(stat(private1, &st) == 0 && st.st_mode & 0o777 == 0o700, "\(log.text)")
        #expect(FileManager.default.fileExists(atPath: private1 + "/00.JPG"), "\(log.text)")
        #expect(FileManager.default.fileExists(atPath: private1 + "/01.JPG"), "\(log.text)")
        camera.discard(1)
        camera.flush()
        #expect(!FileManager.default.fileExists(atPath: private1 + "/01.JPG"), "\(log.text)")
        camera.deleteAll()
        camera.flush()
        #expect(!FileManager.default.fileExists(atPath: private1), "\(log.text)")
        camera.capture(2)
        camera.flush()
        let private2 = try #require(camera.directory, "\(log.text)")
        #expect(FileManager.default.fileExists(atPath: private2 + "/02.JPG"), "\(log.text)")
        camera.close()
        #expect(!FileManager.default.fileExists(atPath: private2), "\(log.text)")
        #expect(readText(dir + "/calls.log") == "\(private1)/00.JPG\n\(private1)/01.JPG\n\(private2)/02.JPG\n", "\(log.text)")
    }

    @Test func failingMissingAndHangingCommandsAreSurvived() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        for command in ["/bin/false {path}", "/no/such/camera {path}", try fakeCamera(in: dir, body: "sleep 5") + " {path}"] {
            let camera = GroundingCamera(command: try CaptureCommand(command), temporaryDirectory: dir,
                                         timeout: .milliseconds(200), logger: quietLogger(), inBackground: false)
            let started = Date()
            camera.capture(0)
            #expect(Date().timeIntervalSince(started) < 3)
            if let d = camera.directory { #expect(!FileManager.default.fileExists(atPath: d + "/00.JPG")) }
            camera.close()
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.hasPrefix("unwind-grounding-") }.isEmpty)
    }

    @Test func directoriesOfDeadDaemonsAreRemoved() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // A pid above the kernel's limit cannot be alive; our own pid is.
        let dead = dir + "/unwind-grounding-99999999-abcdef"
        let ours = dir + "/unwind-grounding-\(getpid())-abcdef"
        for d in [dead, ours] {
            try FileManager.default.createDirectory(atPath: d, withIntermediateDirectories: false)
            #expect(FileManager.default.createFile(atPath: d + "/03.JPG", contents: Data([1])))
        }
        _ = GroundingCamera(command: try CaptureCommand("/bin/true {path}"), temporaryDirectory: dir,
                            logger: quietLogger(), inBackground: false)
        #expect(!FileManager.default.fileExists(atPath: dead))
        #expect(FileManager.default.fileExists(atPath: ours))
    }

    /// The whole exercise through the device: 45 captures name 00…44 in one private directory,
    /// which is gone when the exercise completes.
    @Test func fortyFiveCapturesThroughTheDevice() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let script = try fakeCamera(in: dir)
        var lines = "1 PAGE\n"
        for k in 0..<45 { lines += "\(2 + k) SELECT\n" }
        lines += "48 end\n"
        var sim = HeadlessSimulation(script: try ButtonScript.parse(lines), stateDirectory: dir + "/state", recordFrames: false)
        sim.captureCommand = script + " {path}"
        sim.captureTemporaryDirectory = dir
        let r = try sim.run()
        #expect(r.finalState.grounding.isComplete)
        let calls = (readText(dir + "/calls.log") ?? "").split(separator: "\n").map(String.init)
        #expect(calls.count == 45)
        #expect(calls.map { String($0.suffix(6)) } == (0..<45).map { GroundingCamera.fileName($0) })
        #expect(Set(calls.map { ($0 as NSString).deletingLastPathComponent }).count == 1)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.hasPrefix("unwind-grounding-") }.isEmpty)
        // Each capture ticked the motor; the finish buzzed three times.
        #expect(r.motor.filter(\.on).count == 44 + 3)
    }

    @Test func photosDoNotOutliveTheDaemonAndUndoDiscards() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let script = try fakeCamera(in: dir, body: "echo \"$1\" >> \"$(dirname \"$0\")/calls.log\"\ntouch \"$1\"\nls \"$(dirname \"$1\")\" > \"$(dirname \"$0\")/seen.txt\"")
        var sim = HeadlessSimulation(script: try ButtonScript.parse("1 PAGE\n2 SELECT\n3 SELECT\n4 LEFT\n5 SELECT\n6 SELECT\n8 end\n"),
                                     stateDirectory: dir + "/state", recordFrames: false)
        sim.captureCommand = script + " {path}"
        sim.captureTemporaryDirectory = dir
        let r = try sim.run()
        #expect(r.finalState.grounding.captured == 3)
        #expect(r.finalState.grounding.filledInRow == 3)   // leaving the page would keep this; the exit forgets it
        let calls = (readText(dir + "/calls.log") ?? "").split(separator: "\n").map { String($0.suffix(6)) }
        #expect(calls == ["00.JPG", "01.JPG", "01.JPG", "02.JPG"])
        // When 02.JPG was taken, the undone-and-retaken 01.JPG was there once, nothing more.
        #expect(readText(dir + "/seen.txt") == "00.JPG\n01.JPG\n02.JPG\ncapture-output.txt\n")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.hasPrefix("unwind-grounding-") }.isEmpty)
    }

    @Test func withoutACameraNothingIsWritten() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let r = try HeadlessSimulation(script: try ButtonScript.parse("1 PAGE\n2 SELECT\n3 SELECT\n4 end\n"),
                                       stateDirectory: dir + "/state", recordFrames: false).run()
        #expect(r.finalState.grounding.captured == 2)
        let state = try FileManager.default.contentsOfDirectory(atPath: dir + "/state")
        #expect(!state.contains { $0.hasSuffix(".JPG") })
    }
}
