#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif


/// Repeats a system call while it fails with EINTR; returns its result, -1 meaning `errno` is set.
@inline(__always)
func retryingOnInterrupt<T: BinaryInteger>(_ call: () -> T) -> T {
    while true {
        let r = call()
        if r == -1 && errno == EINTR { continue }
        return r
    }
}
