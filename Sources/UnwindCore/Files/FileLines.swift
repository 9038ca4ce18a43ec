/// The lines of a state file of one record a line: split on newlines, one final newline
/// ending the last line rather than starting an empty one.
enum FileLines {
    static func lines(_ bytes: [UInt8]) -> [ArraySlice<UInt8>] {
        var lines = bytes[...].split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        if lines.last?.isEmpty == true { lines.removeLast() }
        return lines
    }

    /// The non-empty lines of the last `maximumSize` bytes, from the first whole line among
    /// them: what can be kept of a file whose newest records are at its end.
    static func newestLines(_ bytes: [UInt8], maximumSize: Int) -> [ArraySlice<UInt8>] {
        var kept = bytes[...]
        if bytes.count > maximumSize {
            kept = bytes.suffix(maximumSize)
            if let nl = kept.firstIndex(of: UInt8(ascii: "\n")) { kept = kept[(nl + 1)...] }
        }
        return kept.split(separator: UInt8(ascii: "\n"))
    }

    /// Decimal digits only (no sign, no space), at most 12 of them.
    static func number(_ s: ArraySlice<UInt8>) -> Int64? {
        guard !s.isEmpty, s.count <= 12, s.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return s.reduce(Int64(0)) { $0 * 10 + Int64($1 - 0x30) }
    }
}
