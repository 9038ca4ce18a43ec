#if os(Linux)
import Glibc
import CLinuxSystem
import UnwindSeams

/// SIGTERM, SIGINT (and, for the terminal, SIGHUP) as a descriptor the loop polls: the handler
/// only writes the signal's number to a self-pipe, so the loop wakes within its own poll(2) and
/// stops between two passes — no flag shared with a handler, no work in signal context.
public final class StopSignals {
    /// The pipe's read end, for poll(2).
    public let descriptor: Int32

    /// sigaction(2) for each signal; pipe2(2) for the self-pipe.
    public init(_ signals: [Int32]) throws(DeviceError) {
        let fd = signals.withUnsafeBufferPointer { unwind_stop_signals_install($0.baseAddress, $0.count) }
        guard fd >= 0 else { throw DeviceError(device: "stop signals", operation: "install handlers", errno: errno) }
        descriptor = fd
    }

    /// read(2) on the self-pipe: the last signal received since the previous call, or nil.
    public func take() -> Int32? {
        var buffer = (UInt8(0), UInt8(0), UInt8(0), UInt8(0), UInt8(0), UInt8(0), UInt8(0), UInt8(0))
        var last: Int32?
        // Until the pipe is empty (EAGAIN: it is non-blocking) or closed.
        while let n = try? valueOrErrno({ withUnsafeMutableBytes(of: &buffer) { read(descriptor, $0.baseAddress, $0.count) } }), n > 0 {
            withUnsafeBytes(of: &buffer) { last = Int32($0[n - 1]) }
        }
        return last
    }
}
#endif
