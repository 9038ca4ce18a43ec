#if canImport(Glibc)
import Glibc
#endif
import SystemPackage
import Testing
import UnwindSeams

/// The one EINTR rule (SystemCalls.swift): a call a signal interrupts is made again; any other
/// failure comes back as its `Errno`.
@Suite struct SystemCallTests {
    /// A C call that fails with `failures` in turn (setting errno), then returns `value`.
    final class Script {
        var failures: [Int32]
        var calls = 0
        init(_ failures: [Int32]) { self.failures = failures }
        func call(_ value: Int32) -> Int32 {
            calls += 1
            guard !failures.isEmpty else { return value }
            errno = failures.removeFirst()
            return -1
        }
    }

    @Test func anInterruptedCallIsMadeAgain() throws {
        let c = Script([EINTR, EINTR])
        #expect(try valueOrErrno { c.call(7) } == 7)
        #expect(c.calls == 3)
    }

    @Test func anyOtherFailureIsThrownAsItsErrno() {
        let c = Script([EINTR, EBUSY])
        #expect(throws: Errno.resourceBusy) { try valueOrErrno { c.call(7) } }
        #expect(c.calls == 2, "not called again after EBUSY")
    }

    @Test func withoutRetryTheInterruptionIsTheCallersToHandle() {
        let c = Script([EINTR])
        #expect(throws: Errno.interrupted) { try valueOrErrno(retryOnInterrupt: false) { c.call(7) } }
        #expect(c.calls == 1)
    }

    @Test func aNullPointerIsItsErrno() throws {
        let c = Script([EINTR, EINTR, ENOENT])
        #expect(throws: Errno.noSuchFileOrDirectory) {
            try pointerOrErrno { c.call(1) == -1 ? nil as UnsafeRawPointer? : UnsafeRawPointer(bitPattern: 1) }
        }
        #expect(c.calls == 3)
        let d = Script([EINTR])
        #expect(try pointerOrErrno { d.call(1) == -1 ? nil : UnsafeRawPointer(bitPattern: 8) } == UnsafeRawPointer(bitPattern: 8))
    }

    /// `writingAll`: a short write goes on with the rest, EINTR is made again, anything else
    /// (EAGAIN on a full non-blocking socket, EPIPE) is thrown, and a write that takes nothing
    /// is an I/O error rather than a loop.
    @Test func writingAllContinuesShortWritesAndRetriesInterruptions() throws {
        let bytes = Array("a frame for the terminal".utf8)
        var taken: [UInt8] = []
        var answers: [Int] = [5, -Int(EINTR), 3, -Int(EINTR), -Int(EINTR), 100]
        try bytes.withUnsafeBytes { b in
            try writingAll(b) { chunk in
                let a = answers.removeFirst()
                if a < 0 { errno = Int32(-a); return -1 }
                let n = min(a, chunk.count)
                taken += chunk.prefix(n)
                return n
            }
        }
        #expect(taken == bytes)
        #expect(answers.isEmpty)
        for (failure, expected) in [(EAGAIN, Errno.wouldBlock), (EPIPE, Errno.brokenPipe)] {
            var calls = 0
            #expect(throws: expected) {
                try bytes.withUnsafeBytes { b in
                    try writingAll(b) { _ in calls += 1; if calls == 1 { return 4 }; errno = failure; return -1 }
                }
            }
            #expect(calls == 2)
        }
        #expect(throws: Errno.ioError) { try bytes.withUnsafeBytes { b in try writingAll(b) { _ in 0 } } }
        try [UInt8]().withUnsafeBytes { b in try writingAll(b) { _ in Issue.record("nothing to write, yet called"); return 0 } }
    }

    @Test func swiftCallsFollowTheSameRule() throws {
        var attempts = 0
        let value = try retryingInterrupts { () throws(Errno) -> String in
            attempts += 1
            if attempts < 3 { throw .interrupted }
            return "done"
        }
        #expect(value == "done" && attempts == 3)
    }
}
