#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import SystemPackage

// The one rule for a system call a signal interrupts, after swift-system's internal
// `valueOrErrno(retryOnInterrupt:)`: EINTR says a signal handler ran (SIGCHLD from a camera
// child, SIGWINCH in the simulator, a timer), not that the call failed, so the call is made
// again; any other failure is thrown as its `Errno`. Every retried call in Unwind goes through
// `retryingInterrupts`, directly or through `valueOrErrno` / `pointerOrErrno`.
//
// Not for close(2): Linux releases the descriptor even when close is interrupted, and a retry
// could close a descriptor another thread has just been given.

/// Calls `call` again for as long as it fails with `.interrupted`; returns its value or throws
/// its other failure.
@inlinable
public func retryingInterrupts<T>(_ call: () throws(Errno) -> T) throws(Errno) -> T {
    while true {
        do throws(Errno) {
            return try call()
        } catch {
            if error != .interrupted { throw error }
        }
    }
}

/// A C call that returns -1 and sets errno when it fails: its value, or the errno as an
/// `Errno`. With `retryOnInterrupt` (the default) an EINTR failure is called again.
@inlinable
public func valueOrErrno<I: FixedWidthInteger>(retryOnInterrupt: Bool = true, _ call: () -> I) throws(Errno) -> I {
    func once() throws(Errno) -> I {
        let value = call()
        if value == -1 { throw Errno(rawValue: errno) }
        return value
    }
    return retryOnInterrupt ? try retryingInterrupts(once) : try once()
}

/// A C call that returns NULL and sets errno when it fails: the pointer, or the errno as an
/// `Errno`. With `retryOnInterrupt` (the default) an EINTR failure is called again.
@inlinable
public func pointerOrErrno<P>(retryOnInterrupt: Bool = true, _ call: () -> P?) throws(Errno) -> P {
    func once() throws(Errno) -> P {
        guard let pointer = call() else { throw Errno(rawValue: errno) }
        return pointer
    }
    return retryOnInterrupt ? try retryingInterrupts(once) : try once()
}

/// Hands `bytes` to `call` (write(2), send(2)) until every byte went: a short write goes on
/// with the rest, EINTR is called again, any other failure is thrown (nothing written is taken
/// back). A call that takes nothing of a non-empty buffer throws `.ioError`.
public func writingAll(_ bytes: UnsafeRawBufferPointer, _ call: (UnsafeRawBufferPointer) -> Int) throws(Errno) {
    var offset = 0
    while offset < bytes.count {
        let n = try valueOrErrno { call(UnsafeRawBufferPointer(rebasing: bytes[offset...])) }
        if n == 0 { throw .ioError }
        offset += n
    }
}

/// The name in a directory entry readdir(3) returned, or nil when it is not UTF-8.
///
/// Read in place, up to its NUL: a record is only as long as its name (`d_reclen`), so copying
/// the whole 256-byte `d_name` field — `withUnsafeBytes(of: entry.pointee.d_name)` — reads past
/// the end of the buffer readdir filled, and crashed once where that buffer ended on a page.
public func directoryEntryName(_ entry: UnsafeMutablePointer<dirent>) -> String? {
    withUnsafeMutablePointer(to: &entry.pointee.d_name) { field in
        field.withMemoryRebound(to: CChar.self, capacity: 256) { String(validatingCString: $0) }
    }
}
