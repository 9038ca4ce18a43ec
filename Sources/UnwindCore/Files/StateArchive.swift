/// The backup archive of a state directory (`unwind backup FILE`, `unwind restore FILE`).
///
/// Format: a POSIX ustar archive (readable by any `tar`: `tar tvf backup.tar`), written and read
/// here in a few dozen lines so no tar binary or library is needed on the device and nothing
/// in an archive is interpreted by anyone else before it has been checked. Members, in order:
///
///     manifest.txt          unwind-state-archive 1
///                           created <unix seconds>
///                           file <name> <size in bytes> <CRC-32 as 8 hex digits>   (one per member)
///     totalTime.txt  sessionHistory.txt  mantras.txt  reminders.txt
///     alert01.txt … alert05.txt
///     breathing.txt  patterns.txt  checkIn.txt  alertTest.txt  escalation.txt
///     selfChecks.txt  moods.txt  copingCards.txt  selfCheckReminder.txt   (when there are)
///     outbox/<id>.msg       (zero or more: messages not yet confirmed sent)
///     replies/<id>.reply    (zero or more: the SMS the device received; `<id>` is `r` and 16
///                           lowercase hex digits, as the inbox names them; parts of a long
///                           reply still waiting for the rest are not kept: they wait minutes)
///
/// Every one of the nine state files is always present: a backup is a snapshot of what the
/// device *means*, so a file that was missing is written as what its absence means (zeros, no
/// history, the shipped mantras, `never`, an empty slot). Reading refuses anything else:
/// another tar, a compressed file, a truncated archive (every member's data, the two closing
/// zero blocks and the manifest's sizes and CRCs are checked), links, directories, absolute
/// paths, `..`, unknown or duplicate names, a newer format version.
public enum StateArchive {
    public static let formatVersion = 1
    public static let manifestName = "manifest.txt"
    /// Far more than any real state directory: a full mantras.txt is 321 KB, and a full inbox
    /// of the longest replies (500 of up to 49 KB) would be 25 MB.
    public static let maximumSize = 32 << 20
    public static let outboxPrefix = "outbox/"
    public static let repliesPrefix = "replies/"
    public static let replyExtension = ".reply"

    /// The state files every archive holds, in archive order.
    public static var stateFiles: [String] {
        [TotalTimeFile.name, SessionHistoryFile.name, MantrasFile.name, RemindersFile.name] + AlertSlotFile.names
    }

    /// State files an archive holds when the state directory had them: the breathing choice, the
    /// maintainer's patterns, the last check-in day, the last monthly test, what followed the
    /// last alerts, and "How am I doing?"'s self-checks, moods, coping cards and reminder.
    /// Archives made before them still restore (the device's own are then kept as they are).
    public static var optionalFiles: [String] {
        [BreathingChoiceFile.name, PatternsFile.name, CheckInFile.name, AlertTestFile.name, EscalationFile.name,
         SelfChecksFile.name, MoodsFile.name, CopingCardsFile.name, SelfCheckReminderFile.name]
    }

    public enum Problem: Error, Equatable, Sendable, CustomStringConvertible {
        case tooLarge(Int)
        case empty
        case compressed
        case notTar(String)
        case truncated(String)
        case unsupportedMember(String, String)
        case unsafeName(String)
        case unknownName(String)
        case duplicate(String)
        case noManifest
        case manifest(String)
        case newerFormat(Int)
        case missing(String)
        case mismatch(String, String)

        public var description: String {
            switch self {
            case .tooLarge(let n): "\(n) bytes; an unwind backup has at most \(StateArchive.maximumSize)"
            case .empty: "the file is empty"
            case .compressed: "a compressed file; an unwind backup is a plain tar archive (gunzip it first?)"
            case .notTar(let why): "not a tar archive (\(why))"
            case .truncated(let why): "the archive is cut short (\(why))"
            case .unsupportedMember(let name, let kind): "\(name) is a \(kind); an unwind backup holds only plain files"
            case .unsafeName(let name): "the member name \(String(reflecting: name)) could write outside the state directory"
            case .unknownName(let name): "\(String(reflecting: name)) is not a file of an unwind state directory"
            case .duplicate(let name): "\(name) appears twice"
            case .noManifest: "not an unwind backup (no \(StateArchive.manifestName) at its start)"
            case .manifest(let why): "\(StateArchive.manifestName): \(why)"
            case .newerFormat(let v): "archive format \(v) is newer than this unwind reads (\(StateArchive.formatVersion)); update unwind"
            case .missing(let name): "\(name) is missing"
            case .mismatch(let name, let why): "\(name) does not match the manifest (\(why)): the archive is damaged"
            }
        }
    }

    /// Whether `name` may be a member (besides the manifest): a state file, an outbox message or
    /// a reply.
    public static func isKnown(_ name: String) -> Bool {
        if stateFiles.contains(name) || optionalFiles.contains(name) { return true }
        if name.hasPrefix(repliesPrefix) { return replyID(name) != nil }
        guard name.hasPrefix(outboxPrefix), name.hasSuffix(".msg") else { return false }
        let id = name.dropFirst(outboxPrefix.count)
        return id.count > 4 && id.count <= 90 && !id.hasPrefix(".")
            && id.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "-_.".unicodeScalars.contains($0)) }
    }

    /// The reply's id of a `replies/<id>.reply` member: exactly the names the inbox writes
    /// (`r` and 16 lowercase hex digits), nothing else.
    public static func replyID(_ name: String) -> String? {
        guard name.hasPrefix(repliesPrefix), name.hasSuffix(replyExtension) else { return nil }
        let id = Array(name.utf8.dropFirst(repliesPrefix.utf8.count).dropLast(replyExtension.utf8.count))
        guard id.count == 17, id[0] == UInt8(ascii: "r"),
              id.dropFirst().allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }) else { return nil }
        return String(decoding: id, as: UTF8.self)
    }

    /// The archive of `files` (name → bytes): the manifest first, then the state files, then
    /// the outbox and the replies in name order.
    public static func make(_ files: [String: [UInt8]], created: WallTime) -> [UInt8] {
        let names = (stateFiles + optionalFiles).filter { files[$0] != nil } + files.keys.filter { $0.hasPrefix(outboxPrefix) }.sorted()
            + files.keys.filter { $0.hasPrefix(repliesPrefix) }.sorted()
        var manifest = "unwind-state-archive \(formatVersion)\ncreated \(created.secondsSinceEpoch)\n"
        for n in names { manifest += "file \(n) \(files[n]!.count) \(hex8(CRC32.of(files[n]!)))\n" }
        var members: [(String, [UInt8])] = [(manifestName, Array(manifest.utf8))]
        for n in names { members.append((n, files[n]!)) }
        // A tar header's mtime holds 11 octal digits, none of them a sign.
        return Tar.write(members, mtime: min(max(created.secondsSinceEpoch, 0), 0o777_7777_7777))
    }

    /// The files of a valid archive (name → bytes), after every check above. The contents are
    /// not parsed here; the restorer checks each with its own parser.
    public static func open(_ bytes: [UInt8]) throws(Problem) -> (files: [String: [UInt8]], created: WallTime) {
        if bytes.count > maximumSize { throw .tooLarge(bytes.count) }
        if bytes.isEmpty { throw .empty }
        if bytes.starts(with: [0x1F, 0x8B]) || bytes.starts(with: [0x42, 0x5A, 0x68]) || bytes.starts(with: [0xFD, 0x37, 0x7A, 0x58, 0x5A])
            || bytes.starts(with: [0x28, 0xB5, 0x2F, 0xFD]) {
            throw .compressed
        }
        let members = try Tar.read(bytes)
        guard let first = members.first, first.name == manifestName else { throw .noManifest }
        let (created, listed) = try parseManifest(first.data)
        var files: [String: [UInt8]] = [:]
        for m in members.dropFirst() {
            if m.name == manifestName || files[m.name] != nil { throw .duplicate(m.name) }
            guard isKnown(m.name) else { throw .unknownName(m.name) }
            guard let entry = listed[m.name] else { throw .mismatch(m.name, "not listed") }
            if entry.size != m.data.count { throw .mismatch(m.name, "\(m.data.count) bytes, \(entry.size) listed") }
            if entry.crc != CRC32.of(m.data) { throw .mismatch(m.name, "CRC-32 differs") }
            files[m.name] = m.data
        }
        for name in listed.keys.sorted() where files[name] == nil { throw .missing(name) }
        for name in stateFiles where files[name] == nil { throw .missing(name) }
        return (files, created)
    }

    static func parseManifest(_ data: [UInt8]) throws(Problem) -> (WallTime, [String: (size: Int, crc: UInt32)]) {
        guard let text = String(validating: data, as: UTF8.self) else { throw .manifest("not UTF-8 text") }
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        if lines.last == "" { lines.removeLast() }
        guard let head = lines.first, head.hasPrefix("unwind-state-archive ") else { throw .noManifest }
        guard let version = Int(head.dropFirst("unwind-state-archive ".count)), version >= 1 else {
            throw .manifest("line 1: a format version expected")
        }
        if version > formatVersion { throw .newerFormat(version) }
        guard lines.count >= 2, lines[1].hasPrefix("created "), let t = Int64(lines[1].dropFirst(8)) else {
            throw .manifest("line 2: \"created <unix seconds>\" expected")
        }
        // A device writes its clock here: never before 1970, never beyond the calendar's range.
        guard (0...WallTime.calendarRange.upperBound).contains(t) else {
            throw .manifest("line 2: created \(t) is not a time a device could have written (0 to \(WallTime.calendarRange.upperBound) seconds since 1970)")
        }
        var listed: [String: (Int, UInt32)] = [:]
        for (i, line) in lines.enumerated().dropFirst(2) {
            let f = line.split(separator: " ", omittingEmptySubsequences: false)
            guard f.count == 4, f[0] == "file", let size = Int(f[2]), size >= 0, f[3].count == 8,
                  let crc = UInt32(f[3], radix: 16) else {
                throw .manifest("line \(i + 1): \"file <name> <size> <crc32>\" expected")
            }
            let name = String(f[1])
            guard isKnown(name) else { throw .unknownName(name) }
            if listed[name] != nil { throw .duplicate(name) }
            listed[name] = (size, crc)
        }
        return (WallTime(secondsSinceEpoch: t), listed)
    }

    static func hex8(_ v: UInt32) -> String {
        let s = String(v, radix: 16)
        return String(repeating: "0", count: 8 - s.count) + s
    }
}

/// CRC-32 (ISO-HDLC, as zlib and PNG use it).
public enum CRC32 {
    static let table: [UInt32] = (0..<256).map { n in
        var c = UInt32(n)
        for _ in 0..<8 { c = c & 1 != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
        return c
    }

    public static func of(_ data: [UInt8]) -> UInt32 {
        var c: UInt32 = 0xFFFF_FFFF
        for b in data { c = table[Int((c ^ UInt32(b)) & 0xFF)] ^ (c >> 8) }
        return c ^ 0xFFFF_FFFF
    }
}

/// A minimal POSIX ustar writer and a strict reader for it: plain files only.
public enum Tar {
    public struct Member: Equatable, Sendable {
        public var name: String
        public var data: [UInt8]
    }

    static let block = 512

    /// Regular files, mode 0640, owner 0, the given modification time; two zero blocks at the end.
    public static func write(_ members: [(String, [UInt8])], mtime: Int64) -> [UInt8] {
        var out: [UInt8] = []
        for (name, data) in members {
            precondition(name.utf8.count <= 100, "tar member names are at most 100 bytes here")
            var h = [UInt8](repeating: 0, count: block)
            func put(_ s: String, at offset: Int) { for (i, b) in s.utf8.enumerated() { h[offset + i] = b } }
            func octal(_ v: Int64, at offset: Int, width: Int) {
                var s = String(v, radix: 8)
                s = String(repeating: "0", count: max(0, width - 1 - s.count)) + s
                put(s, at: offset)  // the last byte stays NUL
            }
            put(name, at: 0)
            octal(0o640, at: 100, width: 8)
            octal(0, at: 108, width: 8)
            octal(0, at: 116, width: 8)
            octal(Int64(data.count), at: 124, width: 12)
            octal(mtime, at: 136, width: 12)
            h[156] = UInt8(ascii: "0")
            put("ustar", at: 257)
            put("00", at: 263)
            put("root", at: 265)
            put("root", at: 297)
            for i in 148..<156 { h[i] = 0x20 }
            let sum = h.reduce(0) { $0 + Int($1) }
            var s = String(sum, radix: 8)
            s = String(repeating: "0", count: max(0, 6 - s.count)) + s
            for (i, b) in s.utf8.enumerated() { h[148 + i] = b }
            h[154] = 0
            h[155] = 0x20
            out += h
            out += data
            let pad = (block - data.count % block) % block
            out += [UInt8](repeating: 0, count: pad)
        }
        out += [UInt8](repeating: 0, count: 2 * block)
        return out
    }

    /// Every member of an archive `write` could have made, after checking each header's
    /// checksum, the ustar magic, the member type, the name, that the data is all there and that
    /// the archive ends with its two zero blocks.
    public static func read(_ bytes: [UInt8]) throws(StateArchive.Problem) -> [Member] {
        if bytes.count < block { throw .notTar("shorter than one 512-byte header") }
        var members: [Member] = []
        var offset = 0
        while true {
            guard offset + block <= bytes.count else {
                throw members.isEmpty ? .notTar("no header") : .truncated("no end-of-archive marker")
            }
            let h = bytes[offset..<offset + block]
            if h.allSatisfy({ $0 == 0 }) {
                guard offset + 2 * block <= bytes.count, bytes[offset + block..<offset + 2 * block].allSatisfy({ $0 == 0 }) else {
                    throw .truncated("only one of the two closing zero blocks")
                }
                // Anything after the end marker must be padding.
                guard bytes[(offset + 2 * block)...].allSatisfy({ $0 == 0 }) else { throw .notTar("data after the end of the archive") }
                return members
            }
            let base = h.startIndex
            guard Array(h[base + 257..<base + 262]) == Array("ustar".utf8) else {
                throw members.isEmpty ? .notTar("no ustar header") : .truncated("member \(members.count + 1) has no ustar header")
            }
            guard let stored = octal(h[base + 148..<base + 156]) else { throw .notTar("unreadable header checksum") }
            var sum = 0
            for (i, b) in h.enumerated() { sum += (148..<156).contains(i) ? 0x20 : Int(b) }
            guard stored == sum else {
                throw members.isEmpty ? .notTar("header checksum mismatch") : .truncated("header \(members.count + 1) is damaged (checksum)")
            }
            let name = field(h[base..<base + 100])
            let prefix = field(h[base + 345..<base + 500])
            let full = prefix.isEmpty ? name : prefix + "/" + name
            switch h[base + 156] {
            case 0, UInt8(ascii: "0"): break
            case UInt8(ascii: "5"): throw .unsupportedMember(full, "directory")
            case UInt8(ascii: "1"), UInt8(ascii: "2"): throw .unsupportedMember(full, "link")
            case UInt8(ascii: "x"), UInt8(ascii: "g"), UInt8(ascii: "L"), UInt8(ascii: "K"):
                throw .unsupportedMember(full, "extended header (not written by unwind)")
            default: throw .unsupportedMember(full, "device, pipe or other special file")
            }
            guard !full.isEmpty, !full.hasPrefix("/"), !full.split(separator: "/", omittingEmptySubsequences: false).contains(where: { $0 == ".." || $0 == "." || $0.isEmpty }),
                  !full.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F || $0 == UInt8(ascii: "\\") }) else {
                throw .unsafeName(full)
            }
            guard let size = octal(h[base + 124..<base + 136]), size >= 0 else { throw .notTar("unreadable size of \(full)") }
            let start = offset + block
            guard size <= bytes.count - start else {
                throw .truncated("\(full) should have \(size) bytes, \(max(0, bytes.count - start)) are there")
            }
            members.append(Member(name: full, data: Array(bytes[start..<start + size])))
            offset = start + (size + block - 1) / block * block
        }
    }

    /// A NUL-terminated text field.
    static func field(_ b: ArraySlice<UInt8>) -> String {
        String(decoding: b.prefix { $0 != 0 }, as: UTF8.self)
    }

    /// An octal number field: optional leading spaces, digits, then NUL or space.
    static func octal(_ b: ArraySlice<UInt8>) -> Int? {
        var v = 0
        var seen = false
        for c in b {
            if c == 0x20 && !seen { continue }
            if c == 0 || c == 0x20 { break }
            guard (0x30...0x37).contains(c), v < Int.max / 16 else { return nil }
            v = v * 8 + Int(c - 0x30)
            seen = true
        }
        return seen ? v : nil
    }
}
