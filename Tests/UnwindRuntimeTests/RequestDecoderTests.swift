#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Logging
import Synchronization
import Testing
import UnwindTestSupport
import UnwindMaintenance
import UnwindCore
@testable import UnwindRuntime

/// Control requests are decoded off the loop's thread: the loop hands a
/// line to the decoder and goes on with its passes; nothing a client writes is decoded, nor
/// walked character by character, on the loop's thread.
@Suite("The control socket's request decoder") struct RequestDecoderTests {
    @Test func nestingIsCountedOutsideStrings() {
        let limit = RequestDecoder.maximumNesting
        func bytes(_ s: String) -> [UInt8] { Array(s.utf8) }
        #expect(!RequestDecoder.nesting(of: bytes(String(repeating: "[", count: limit) + String(repeating: "]", count: limit)), exceeds: limit))
        #expect(RequestDecoder.nesting(of: bytes(String(repeating: "[", count: limit + 1)), exceeds: limit))
        #expect(RequestDecoder.nesting(of: bytes(String(repeating: "{\"a\":", count: limit + 1)), exceeds: limit))
        // Brackets in a string, an escaped quote among them, are text.
        #expect(!RequestDecoder.nesting(of: bytes("{\"t\":\"" + String(repeating: "[\\\"{", count: 100) + "\"}"), exceeds: limit))
        // Every real request is well inside the limit, the deepest (restore) included.
        let restore = try? ControlEnvelope(.restore(files: ["mantras.txt": Data("a\n".utf8)])).encodedLine()
        // (its archive is checked on the decoder's queue too: this one is no archive at all)
        if case .restore(_, .failure(let f)) = RequestDecoder.decode(restore.map { Array($0.dropLast()) } ?? []) {
            #expect(f.message.contains("the archive has no"), "\(f)")
        } else {
            Issue.record("a restore request must decode, its archive checked")
        }
    }

    @Test func overlongTextsAreRefusedBeforeTheDeviceSeesThem() throws {
        let long = String(repeating: "ä", count: RequestDecoder.longestText)
        let line = try ControlEnvelope(.setAlert(slot: 1, name: "Mum", number: nil, message: long)).encodedLine()
        if case .tooLong("message") = RequestDecoder.decode(Array(line.dropLast())) {} else { Issue.record("a 32 KB message must be refused") }
        let mantra = ControlEnvelope(.addMantra(text: String(repeating: "a", count: 160)))
        if case .request(mantra) = RequestDecoder.decode(Array(try mantra.encodedLine().dropLast())) {} else {
            Issue.record("a 160-character mantra must decode")
        }
    }

    /// A decoder that holds every line until let go, against the server serviced on this
    /// thread as the loop services it: pass after pass returns while the request is held,
    /// the decoding ran on another thread, and the answer comes once it is let go.
    @Test func theLoopDoesNotWaitForDecoding() throws {
        let held = Mutex<Bool>(true)
        let decodingThread = Mutex<pthread_t?>(nil)
        // Every line to the queue, however short.
        let decoder = RequestDecoder(decode: { line in
            decodingThread.withLock { $0 = pthread_self() }
            _ = waitUntil(.seconds(60), every: .milliseconds(1)) { !held.withLock { $0 } }
            return RequestDecoder.decode(line)
        }, inlineLimit: 0)
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let server = try ControlServer(path: directory + "/control.sock", stateDirectory: directory, logger: quietLogger(),
                                       now: WallTime(secondsSinceEpoch: 0), decoder: decoder)
        defer { server.close() }
        let handler = Answering()
        let client = Thread {
            _ = try? ControlClient.request(.status, path: directory + "/control.sock", timeout: .seconds(60))
        }
        client.start()
        // One instant for every pass: no deadline of the socket's runs out meanwhile.
        func pass() { server.service(handler, at: Moment(.zero)) }
        // Passes go on while the line is held.
        #expect(waitUntil(.seconds(30)) {
            pass()
            return decodingThread.withLock { $0 } != nil
        })
        for _ in 0..<100 { pass() }
        #expect(handler.answered.load(ordering: .relaxed) == 0)
        #expect(decodingThread.withLock { $0 } != pthread_self())
        #expect(server.pollDescriptors.contains(decoder.wakeDescriptor), "the loop must wake when the outcome lands")
        held.withLock { $0 = false }
        #expect(waitUntil(.seconds(30)) {
            pass()
            return handler.answered.load(ordering: .relaxed) == 1
        })
    }
}

/// A client's garbage is logged at most once a second (each line is a write from the loop's
/// thread): thirty refused lines in one second are one warning, and the next second's says
/// how many were held back.
@Suite("The control socket's warnings") struct ControlWarningTests {
    @Test func refusedLinesAreLoggedAtMostOnceASecond() throws {
        let recent = RecentLog(capacity: 100)
        let logger = Logger(label: "unwind.test") { recent.handler(label: $0) }
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/control.sock"
        let server = try ControlServer(path: path, stateDirectory: directory, logger: logger, now: WallTime(secondsSinceEpoch: 0))
        defer { server.close() }
        let handler = Answering()
        func refuse(_ times: Int, at now: Moment) {
            for _ in 0..<times {
                let answered = Atomic<Bool>(false)
                let client = Thread {
                    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
                    defer { close(fd) }
                    var a = sockaddr_un()
                    a.sun_family = sa_family_t(AF_UNIX)
                    withUnsafeMutableBytes(of: &a.sun_path) { $0.copyBytes(from: Array(path.utf8) + [0]) }
                    _ = withUnsafePointer(to: &a) {
                        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
                    }
                    _ = send(fd, "[[[[[[[[[[[[[[[[[[[[\n", 21, 0)
                    var b = [UInt8](repeating: 0, count: 512)
                    _ = recv(fd, &b, b.count, 0)
                    answered.store(true, ordering: .relaxed)
                }
                client.start()
                #expect(waitUntil(.seconds(30)) {
                    server.service(handler, at: now)
                    return answered.load(ordering: .relaxed)
                })
            }
        }
        refuse(30, at: Moment(.zero))
        #expect(recent.lines.count == 1, "\(recent.lines)")
        refuse(1, at: Moment(Instant(nanoseconds: 2_000_000_000)))
        #expect(recent.lines.count == 2)
        #expect(recent.lines.last?.contains("and 29 more warnings about clients in the last second, not logged") == true, "\(recent.lines)")
    }
}

/// Answers every request at once, counting them.
final class Answering: ControlHandling {
    let answered = Atomic<Int>(0)
    func handleControl(_ request: ControlRequest, restorable: Result<MaintenanceEdits.RestorableState, ControlFailure>?,
                       from peer: ControlServer.Peer, at now: Moment) -> ControlReply {
        answered.add(1, ordering: .relaxed)
        return .now(ControlResponse(code: 0, message: "ok"))
    }
}
