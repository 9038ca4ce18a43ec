import UnwindSeams
// store-writer: the child process DirectoryStoreTests kill with SIGKILL mid-write.
//
//   store-writer DIR NAME
//       Writes content A to DIR/NAME through DirectoryStore, prints "ready\n", then replaces the
//       file forever, alternating B, A, B, … Exits on its own only when its parent goes away.
//
//   store-writer --fsize-limit BYTES DIR NAME
//       Writes A, lowers RLIMIT_FSIZE to BYTES (SIGXFSZ ignored) so the next replace gets a short
//       write and then EFBIG, replaces with B, and checks the store threw EFBIG, kept A and left
//       no temporary file. Prints "ok: …" and exits 0, or "fail: …" and exits 1.
//
//   store-writer --transaction-kill-at K DIR
//       Writes the old set (`file1.txt` … `file5.txt`, "old N"), then replaces them all with the
//       new set ("new N") in one `replaceAll`, killing itself with SIGKILL at the K-th step (0
//       first). Exits 0 after printing "done" when there are fewer than K+1 steps.
//
//   store-writer --recovery-kill-at K DIR
//       Opens a store on DIR (which finishes or discards a dead writer's transaction), killing
//       itself at the K-th step of that recovery; prints "done" when it finished first.
//
// The contents are self-describing: a header line "<tag> <total length> <FNV-1a 64 of the body,
// 16 hex digits>\n" and then deterministic text, A 65 536 bytes, B 61 440 bytes.
// The tests ask this binary for them (`store-writer --content A|B`): one definition, here.

import UnwindSeams
import UnwindLinuxHardware

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

func storeWriterContent(_ tag: String) -> [UInt8] {
    precondition(tag == "A" || tag == "B")
    let total = tag == "A" ? 65_536 : 61_440
    let headerLength = 25  // "A 65536 0123456789abcdef\n"
    let alphabet = Array("abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ".utf8)
    var body: [UInt8] = []
    body.reserveCapacity(total - headerLength)
    var line = 0
    while body.count < total - headerLength {
        let number = String(line)
        body += Array("\(tag) line \(String(repeating: "0", count: max(0, 5 - number.count)))\(number) ".utf8)
        for column in 0..<49 { body.append(alphabet[(line + column) % alphabet.count]) }
        body.append(UInt8(ascii: "\n"))
        line += 1
    }
    body.removeLast(body.count - (total - headerLength))
    var hash: UInt64 = 0xcbf2_9ce4_8422_2325
    for byte in body { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
    let hex = String(hash, radix: 16)
    let header = Array("\(tag) \(total) \(String(repeating: "0", count: 16 - hex.count))\(hex)\n".utf8)
    precondition(header.count == headerLength)
    return header + body
}

func say(_ text: String, to fd: Int32 = 1) {
    let bytes = Array((text + "\n").utf8)
    _ = bytes.withUnsafeBytes { b in try? writingAll(b) { write(fd, $0.baseAddress, $0.count) } }
}

func die(_ text: String) -> Never {
    say("store-writer: \(text)", to: 2)
    exit(1)
}

/// Names in `directory` that start with ".<name>.tmp-".
func temporaryFiles(in directory: String, for name: String) -> [String] {
    guard let stream = opendir(directory) else { return [] }
    defer { closedir(stream) }
    var found: [String] = []
    while let entry = readdir(stream) {
        guard let entryName = directoryEntryName(entry) else { continue }
        if entryName.hasPrefix(".\(name).tmp-") { found.append(entryName) }
    }
    return found
}

func writeForever(directory: String, name: String) -> Never {
    let parent = getppid()
    let a = storeWriterContent("A")
    let b = storeWriterContent("B")
    do {
        let store = try DirectoryStore(directory: directory)
        try store.replace(name, with: a)
        say("ready")
        var nextIsB = true
        while true {
            if getppid() != parent { exit(0) }  // orphaned: the test is gone, stop writing
            try store.replace(name, with: nextIsB ? b : a)
            nextIsB.toggle()
        }
    } catch {
        die("\(error)")
    }
}

func shortWriteCheck(limit: Int, directory: String, name: String) -> Never {
    let a = storeWriterContent("A")
    let b = storeWriterContent("B")
    precondition(limit < b.count, "the limit must cut B short")
    let store: DirectoryStore
    do {
        store = try DirectoryStore(directory: directory)
        try store.replace(name, with: a)
    } catch {
        die("setup: \(error)")
    }

    signal(SIGXFSZ, SIG_IGN)
    var fileSize = rlimit()
    #if canImport(Glibc)
    let resource = __rlimit_resource_t(RLIMIT_FSIZE.rawValue)
    #else
    let resource = RLIMIT_FSIZE
    #endif
    guard getrlimit(resource, &fileSize) == 0 else { die("getrlimit: errno \(errno)") }
    fileSize.rlim_cur = rlim_t(limit)
    guard setrlimit(resource, &fileSize) == 0 else { die("setrlimit: errno \(errno)") }

    let thrown: StoreError?
    do {
        try store.replace(name, with: b)
        thrown = nil
    } catch {
        thrown = error
    }
    guard let thrown else {
        say("fail: replace succeeded past RLIMIT_FSIZE \(limit)")
        exit(1)
    }
    guard thrown.errno == EFBIG else {
        say("fail: expected EFBIG, got \(thrown)")
        exit(1)
    }
    let leftovers = temporaryFiles(in: directory, for: name)
    guard leftovers.isEmpty else {
        say("fail: temporary files left: \(leftovers)")
        exit(1)
    }
    let now: [UInt8]?
    do { now = try store.read(name) } catch { die("read: \(error)") }
    guard now == a else {
        say("fail: the old content did not survive (\(now?.count ?? -1) bytes)")
        exit(1)
    }
    say("ok: \(thrown)")
    exit(0)
}

let transactionFiles = 5

func killingAtStep(_ k: Int) -> @Sendable (String) -> Void {
    let counter = UnsafeMutablePointer<Int>.allocate(capacity: 1)
    counter.initialize(to: 0)
    nonisolated(unsafe) let steps = counter
    return { _ in
        if steps.pointee == k { kill(getpid(), SIGKILL) }
        steps.pointee += 1
    }
}

func transactionKill(at k: Int, directory: String) -> Never {
    do {
        let plain = try DirectoryStore(directory: directory)
        for i in 1...transactionFiles { try plain.replace("file\(i).txt", with: Array("old \(i)\n".utf8)) }
        let store = try DirectoryStore(directory: directory, transactionStep: killingAtStep(k))
        try store.replaceAll((1...transactionFiles).map { (name: "file\($0).txt", bytes: Array("new \($0)\n".utf8)) })
    } catch {
        die("\(error)")
    }
    say("done")
    exit(0)
}

func recoveryKill(at k: Int, directory: String) -> Never {
    do { _ = try DirectoryStore(directory: directory, transactionStep: killingAtStep(k)) } catch { die("\(error)") }
    say("done")
    exit(0)
}

let arguments = CommandLine.arguments
switch arguments.count {
case 3 where arguments[1] == "--content" && (arguments[2] == "A" || arguments[2] == "B"):
    // The test reads the contents from here rather than keeping its own copy of the generator.
    let content = storeWriterContent(arguments[2])
    let written: Bool = content.withUnsafeBytes { b in (try? writingAll(b) { write(1, $0.baseAddress, $0.count) }) != nil }
    exit(written ? 0 : 1)
case 3:
    writeForever(directory: arguments[1], name: arguments[2])
case 4 where arguments[1] == "--transaction-kill-at" || arguments[1] == "--recovery-kill-at":
    guard let k = Int(arguments[2]), k >= 0 else { die("bad step \(arguments[2])") }
    if arguments[1] == "--transaction-kill-at" { transactionKill(at: k, directory: arguments[3]) }
    recoveryKill(at: k, directory: arguments[3])
case 5 where arguments[1] == "--fsize-limit":
    guard let limit = Int(arguments[2]), limit > 0 else { die("bad limit \(arguments[2])") }
    shortWriteCheck(limit: limit, directory: arguments[3], name: arguments[4])
default:
    die("usage: store-writer DIR NAME | store-writer --content A|B | store-writer --fsize-limit BYTES DIR NAME")
}
