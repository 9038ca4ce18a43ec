#if canImport(Glibc)
import Glibc
#endif
import SystemPackage
import Testing
import UnwindDevices

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
