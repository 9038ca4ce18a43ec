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
