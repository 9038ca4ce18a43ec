import Testing
import UnwindRuntime

/// The grounding camera's command from the configuration: split into words the way a shell
/// would quote them, with no shell ever run, and `{path}` where each photo goes.
@Suite struct CaptureCommandTests {
    @Test func wordsQuotesAndPath() throws {
        let c = try CaptureCommand("rpicam-still -n -t 1 --annotate 'Unwind grounding' -o {path}")
        #expect(c.arguments == ["rpicam-still", "-n", "-t", "1", "--annotate", "Unwind grounding", "-o", "{path}"])
        #expect(c.arguments(writing: "/tmp/x/07.JPG").last == "/tmp/x/07.JPG")
        #expect(try CaptureCommand("cam --out=\"{path}\"").arguments(writing: "/a b/01.JPG") == ["cam", "--out=/a b/01.JPG"])
        // Shell syntax is just text: no shell ever sees it.
        #expect(try CaptureCommand("cam {path};rm -rf /").arguments(writing: "p") == ["cam", "p;rm", "-rf", "/"])
    }

    @Test func problems() {
        #expect(throws: CaptureCommand.Problem.self) { try CaptureCommand("") }
        #expect(throws: CaptureCommand.Problem.self) { try CaptureCommand("rpicam-still -o photo.jpg") }
        #expect(throws: CaptureCommand.Problem.self) { try CaptureCommand("{path}") }
        #expect(throws: CaptureCommand.Problem.self) { try CaptureCommand("cam 'unclosed {path}") }
        #expect(throws: CaptureCommand.Problem.self) { try CaptureCommand("cam {path}\nrm") }
    }
}
