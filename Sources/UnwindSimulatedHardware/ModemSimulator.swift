import CLinuxSystem
import Foundation
import Glibc
import Synchronization
import UnwindCore
import UnwindDevices

/// What a simulated modem does with one AT+CMGS.
public struct SubmitPlan: Equatable, Sendable {
    public enum Prompt: Equatable, Sendable {
        case immediate
        /// The `> ` comes this late. Bytes arriving meanwhile go into the prompt, as a real
        /// modem reads them once it is ready; an ESC meanwhile is lost unless
        /// `ModemScript.escapeCancelsPendingPrompt`.
        case after(Duration)
        /// No prompt at all; an ESC ends the wait.
        case never
    }

    public enum Result: Equatable, Sendable {
        /// `+CMGS: <mr>` and OK.
        case accepted
        /// `+CMGS: <mr>` and no OK.
        case acceptedWithoutOK
        case cmsError(Int)
        /// Nothing at all (the message may or may not have gone: in doubt).
        case silence
        /// The modem restarts (boot messages) instead of answering.
        case restart
    }

    public var prompt: Prompt
    public var result: Result
    /// Between the PDU's Ctrl-Z and the result.
    public var resultDelay: Duration
    /// Lines sent right after `> `, before the PDU can arrive (URCs between the prompt and +CMGS).
    public var afterPrompt: [String]
    /// Lines sent after the PDU, before the result.
    public var beforeResult: [String]
    /// The result lines sent again this long after the result: a modem that repeats its result
    /// code, so the repeat reaches the device while its next command is in flight.
    public var repeatResultAfter: Duration?
    /// The result as it goes over the line, when noise corrupts it (e.g. "+CMG$: 7"); the
    /// network's acceptance is unchanged.
    public var corruptedResult: [String]?

    public init(prompt: Prompt = .immediate, result: Result = .accepted, resultDelay: Duration = .zero,
                afterPrompt: [String] = [], beforeResult: [String] = [], repeatResultAfter: Duration? = nil,
                corruptedResult: [String]? = nil) {
        self.prompt = prompt
        self.result = result
        self.resultDelay = resultDelay
        self.afterPrompt = afterPrompt
        self.beforeResult = beforeResult
        self.repeatResultAfter = repeatResultAfter
        self.corruptedResult = corruptedResult
    }
}

/// How a simulated modem behaves. Everything not scripted answers like a healthy SIM800/SIM7600.
public struct ModemScript: Equatable, Sendable {
    /// Echo at power-on (ATE0 turns it off until the next restart).
    public var echo: Bool = true
    /// Paces the modem's output as a line at this rate would (10 bits a byte); nil: as fast as the pty.
    public var outputBaud: Int?
    /// Replies by exact command line, used in order, one per occurrence; an empty reply is
    /// silence. When a command's list runs out it answers normally.
    public var replies: [String: [[String]]] = [:]
    /// AT+CMGS plans by occurrence (1-based); others use `defaultSubmit`.
    public var submits: [Int: SubmitPlan] = [:]
    public var defaultSubmit = SubmitPlan()
    public var escapeCancelsPendingPrompt = false
    /// Answers to the registration queries; nil answers ERROR (not supported).
    public var creg: String? = "+CREG: 0,1"
    public var cgreg: String? = "+CGREG: 0,1"
    public var cereg: String? = "+CEREG: 0,1"
    public var csq = "+CSQ: 21,99"
    public var cops = "+COPS: 0,0,\"Unwind Mobile\",7"
    /// The SIM's service centre as `AT+CSCA?` reports it (until `AT+CSCA=` sets another).
    public var csca = "+CSCA: \"+15550009999\",145"
    /// What a restart prints, after `bootTime`.
    public var bootMessages = ["RDY", "+CFUN: 1", "+CPIN: READY", "Call Ready", "SMS Ready"]
    public var bootTime: Duration = .milliseconds(30)
    /// Answers nothing at all.
    public var silent = false
    /// A SIM that asks for this PIN: AT+CPIN? answers `SIM PIN` until AT+CPIN="<pin>" unlocks it;
    /// a wrong PIN answers +CME ERROR: 16 (and three of them lock the SIM behind its PUK).
    public var simPIN: String?

    public init() {}
}

/// One part the simulated network accepted (or, for `silence`, may have).
public struct SimulatedPart: Equatable, Sendable {
    public var submit: DecodedSubmit
    /// 1-based occurrence of AT+CMGS.
    public var occurrence: Int
    public var answered: Bool
}

/// A complete message (all parts) to one number.
public struct SimulatedSMS: Equatable, Sendable {
    public var number: String
    public var text: String
    public var parts: Int

    public init(number: String, text: String, parts: Int) {
        self.number = number
        self.text = text
        self.parts = parts
    }
}

/// A GSM modem on the far end of a real pseudo-terminal (openpty), for tests and the simulator.
///
/// The device opens `path` (a symlink to the pty's slave, as `/dev/serial/by-id/…` is to a
/// USB tty) with its real `SerialPort`. The simulator reads the master side: command lines,
/// prompts, PDUs. It records every byte it received, every command line, everything typed into
/// every prompt, and each rule the device broke (`violations`): a Ctrl-Z outside a prompt, a
/// prompt that held anything but a valid PDU, a command line it does not know. It can run on
/// its own thread (`start`) or be stepped from a test (`step`).
public final class ModemSimulator: Sendable {
    let state: Mutex<SimulatorCore>
    let running = Atomic<Bool>(false)
    private let directory: String
    /// The directory is this simulator's own (made in /tmp) and goes when it does.
    private let ownsDirectory: Bool
    /// The stable path the device opens.
    public let path: String

    /// `directory`: where the link `ttyMODEM` is made (created if missing; the terminal
    /// simulator uses its state directory, so nothing of it is ever left in /tmp). Without one,
    /// a private `/tmp/unwind-modem-sim-<pid>-XXXXXX`, removed by `deinit` or at exit — and a
    /// process killed before either leaves one that the next simulator removes (its pid is gone).
    public init(script: ModemScript = ModemScript(), directory: String? = nil) throws(DeviceError) {
        if let directory {
            if mkdir(directory, 0o700) != 0 && errno != EEXIST {
                throw DeviceError(device: directory, operation: "mkdir", errno: errno)
            }
            self.directory = directory
            ownsDirectory = false
        } else {
            Self.removeAbandoned()
            var template = Array("/tmp/unwind-modem-sim-\(getpid())-XXXXXX".utf8CString)
            guard let dir = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
                throw DeviceError(device: "modem simulator", operation: "mkdtemp", errno: errno)
            }
            let made = String(cString: dir)
            self.directory = made
            ownsDirectory = true
            _ = Self.live.withLock { $0.insert(made) }
            Self.removeAtExit()
        }
        path = self.directory + "/ttyMODEM"
        var core = SimulatorCore(script: script, path: path)
        try core.plug()
        state = Mutex(core)
    }

    deinit {
        stop()
        state.withLock { $0.unplug() }
        if ownsDirectory {
            rmdir(directory)
            _ = Self.live.withLock { $0.remove(directory) }
        }
    }

    /// The directories of simulators still alive, for the exit handler.
    private static let live = Mutex<Set<String>>([])
    private static let exitHandler = Atomic<Bool>(false)

    private static func removeAtExit() {
        guard !exitHandler.exchange(true, ordering: .relaxed) else { return }
        atexit {
            for d in ModemSimulator.live.withLock({ $0 }) {
                unlink(d + "/ttyMODEM")
                rmdir(d)
            }
        }
    }

    /// `/tmp/unwind-modem-sim-<pid>-XXXXXX` of processes that no longer exist (killed before
    /// they could clean up): only the link was in it.
    static func removeAbandoned() {
        guard let d = opendir("/tmp") else { return }
        defer { closedir(d) }
        let prefix = "unwind-modem-sim-"
        while let e = readdir(d) {
            let name = withUnsafeBytes(of: e.pointee.d_name) { String(decoding: $0.prefix(while: { $0 != 0 }), as: UTF8.self) }
            guard name.hasPrefix(prefix) else { continue }
            let rest = name.dropFirst(prefix.count).split(separator: "-")
            guard rest.count == 2, let pid = Int32(rest[0]), pid > 0, pid != getpid() else { continue }
            var st = stat()
            guard lstat("/tmp/" + name, &st) == 0, st.st_uid == getuid(), kill(pid, 0) != 0, errno == ESRCH else { continue }
            unlink("/tmp/" + name + "/ttyMODEM")
            rmdir("/tmp/" + name)
        }
    }

    // MARK: Driving

    /// The master side, to poll (changes after `unplug` / `replug`; -1 while unplugged).
    public var descriptor: Int32 { state.withLock { $0.master } }

    /// Reads what arrived and writes what is due.
    public func step(now: Instant = monotonicNow()) {
        state.withLock { $0.step(now: now) }
    }

    /// When `step` has something to write next.
    public var nextDeadline: Instant? { state.withLock { $0.nextDeadline } }

    /// Runs on its own thread until `stop`.
    public func start() {
        guard !running.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let t = Thread { [self] in
            while running.load(ordering: .acquiring) {
                let now = monotonicNow()
                let (fd, next) = state.withLock { core -> (Int32, Instant?) in
                    core.step(now: now)
                    return (core.master, core.nextDeadline)
                }
                var timeout: Int32 = 5
                if let next { timeout = Int32(max(0, min(5, (next - now).nanoseconds / 1_000_000))) }
                var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                if fd >= 0 { _ = poll(&p, 1, timeout) } else { usleep(UInt32(timeout) * 1000) }
            }
        }
        t.start()
    }

    /// Ends the thread (it notices within 5 ms).
    public func stop() {
        if running.exchange(false, ordering: .acquiringAndReleasing) { usleep(10_000) }
    }

    // MARK: Scripting

    public func setScript(_ change: (inout ModemScript) -> Void) { state.withLock { change(&$0.script) } }

    /// Sends lines now (framed CR LF … CR LF), e.g. an unsolicited code at a chosen moment.
    public func inject(_ lines: [String], now: Instant = monotonicNow()) {
        state.withLock { $0.send(lines, at: now) }
    }

    /// Restarts: forgets ATE0 and everything in flight, prints the boot messages.
    public func restart(now: Instant = monotonicNow()) { state.withLock { $0.restart(at: now) } }

    /// The USB modem goes away: the pty is closed and the path removed.
    public func unplug() { state.withLock { $0.unplug() } }

    /// …and comes back (at the same path, a fresh pty, booting).
    public func replug(now: Instant = monotonicNow()) throws(DeviceError) {
        try state.withLock { core throws(DeviceError) in
            try core.plug()
            core.restart(at: now)
        }
    }

    // MARK: Records

    /// Every byte the device wrote, in order, across replugs.
    public var received: [UInt8] { state.withLock { $0.received } }
    /// Every command line (without CR), in order.
    public var commands: [String] { state.withLock { $0.commands } }
    /// Everything typed into each prompt, and whether it ended in Ctrl-Z (sent) or ESC.
    public var prompts: [(text: [UInt8], sent: Bool)] { state.withLock { $0.prompts } }
    /// Parts accepted (`+CMGS` answered) or swallowed (`silence`).
    public var parts: [SimulatedPart] { state.withLock { $0.parts } }
    /// Rules the device broke. A correct device leaves this empty.
    public var violations: [String] { state.withLock { $0.violations } }
    public var calls: [String] { state.withLock { $0.calls } }
    public var serviceCentre: String? { state.withLock { $0.serviceCentre } }
    /// When the first byte of the first `AT+CMGS` arrived.
    public var firstSubmitAt: Instant? { state.withLock { $0.firstSubmitAt } }
    public var submitCount: Int { state.withLock { $0.submitCount } }

    /// Complete messages accepted with `+CMGS`, parts joined by their concatenation reference.
    public var delivered: [SimulatedSMS] { state.withLock { $0.delivered(includeSilent: false) } }
    /// Also counting parts that got no answer (in doubt: a real network may have sent them).
    public var possiblyDelivered: [SimulatedSMS] { state.withLock { $0.delivered(includeSilent: true) } }
}

/// The simulator's state; all of it lives under the simulator's lock.
struct SimulatorCore: Sendable {
    enum Mode: Equatable, Sendable {
        case command
        /// AT+CMGS read; the prompt is due at `promptAt` (nil: never).
        case awaitingPrompt(length: Int, occurrence: Int, promptAt: Instant?)
        case prompt(length: Int, occurrence: Int)
        case booting(until: Instant)
    }

    var script: ModemScript
    let path: String
    var master: Int32 = -1
    var slave: Int32 = -1
    var mode: Mode = .command
    var echo: Bool
    var pduMode = true
    var simUnlocked = false
    var wrongPINs = 0
    var line: [UInt8] = []
    var lineStart: Instant?
    var promptText: [UInt8] = []
    var output: [(byte: UInt8, at: Instant)] = []
    var lastByteAt = Instant.zero
    var replyCursor: [String: Int] = [:]

    var received: [UInt8] = []
    var commands: [String] = []
    var prompts: [(text: [UInt8], sent: Bool)] = []
    var parts: [SimulatedPart] = []
    var violations: [String] = []
    var calls: [String] = []
    var serviceCentre: String?
    var submitCount = 0
    var firstSubmitAt: Instant?
    var messageReference = 0

    init(script: ModemScript, path: String) {
        self.script = script
        self.path = path
        self.echo = script.echo
    }

    var nextDeadline: Instant? {
        var d = output.first?.at
        switch mode {
        case .booting(let until): d = min(d ?? until, until)
        case .awaitingPrompt(_, _, let at?): d = min(d ?? at, at)
        default: break
        }
        return d
    }

    // MARK: The pty

    mutating func plug() throws(DeviceError) {
        var m: Int32 = -1, s: Int32 = -1
        var t = termios()
        cfmakeraw(&t)
        if openpty(&m, &s, nil, &t, nil) != 0 {
            throw DeviceError(device: "modem simulator", operation: "openpty", errno: errno)
        }
        _ = fcntl(m, F_SETFL, fcntl(m, F_GETFL) | O_NONBLOCK)
        _ = fcntl(m, F_SETFD, FD_CLOEXEC)
        _ = fcntl(s, F_SETFD, FD_CLOEXEC)
        var name = [CChar](repeating: 0, count: 128)
        if ttyname_r(s, &name, name.count) != 0 {
            close(m); close(s)
            throw DeviceError(device: "modem simulator", operation: "ttyname_r", errno: errno)
        }
        unlink(path)
        if symlink(name, path) != 0 {
            close(m); close(s)
            throw DeviceError(device: "modem simulator", operation: "symlink \(path)", errno: errno)
        }
        master = m
        slave = s  // held open so the master never reads EIO while the device reopens
        mode = .command
        output.removeAll()
    }

    mutating func unplug() {
        if master >= 0 { close(master) }
        if slave >= 0 { close(slave) }
        master = -1
        slave = -1
        unlink(path)
        output.removeAll()
        line.removeAll()
        mode = .command
    }

    mutating func step(now: Instant) {
        guard master >= 0 else { return }
        var buf = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = buf.withUnsafeMutableBytes { read(master, $0.baseAddress, $0.count) }
            if n > 0 {
                for b in buf[0..<n] { byte(b, at: now) }
                continue
            }
            break  // EAGAIN; EIO only while no slave is open, which never happens here
        }
        timers(now)
        var due: [UInt8] = []
        while let first = output.first, first.at <= now {
            due.append(first.byte)
            output.removeFirst()
        }
        if !due.isEmpty {
            var off = 0
            while off < due.count {
                let n = due[off...].withUnsafeBytes { write(master, $0.baseAddress, $0.count) }
                if n <= 0 {
                    // The pty buffer is full (the device is not reading): keep the rest for later.
                    output.insert(contentsOf: due[off...].map { (byte: $0, at: now) }, at: 0)
                    break
                }
                off += n
            }
        }
    }

    private mutating func timers(_ now: Instant) {
        switch mode {
        case .booting(let until) where now >= until:
            mode = .command
            send(script.bootMessages, at: now)
        case .awaitingPrompt(let length, let k, let at?) where now >= at:
            showPrompt(length: length, occurrence: k, at: now)
        default:
            break
        }
    }

    // MARK: Output

    mutating func emit(_ bytes: some Sequence<UInt8>, at now: Instant) {
        guard !script.silent else { return }
        let byteTime: Duration = script.outputBaud.map { .nanoseconds(10_000_000_000 / Int64($0)) } ?? .zero
        var t = max(now, lastByteAt)
        for b in bytes {
            t = t + byteTime
            output.append((b, byteTime == .zero ? now : t))
        }
        if byteTime != .zero { lastByteAt = t }
    }

    mutating func send(_ lines: [String], at now: Instant) {
        for l in lines { emit(Array("\r\n\(l)\r\n".utf8), at: now) }
    }

    /// Boots from `now`. What was already said before the restart (the OK of AT+CFUN=1,1) still
    /// goes out when `keepingOutput`.
    mutating func restart(at now: Instant, keepingOutput: Bool = false) {
        mode = .booting(until: now + script.bootTime)
        if !keepingOutput { output.removeAll() }
        line.removeAll()
        promptText.removeAll()
        echo = script.echo
        pduMode = true
    }

    // MARK: Input

    mutating func byte(_ b: UInt8, at now: Instant) {
        received.append(b)
        switch mode {
        case .booting:
            return
        case .prompt(let length, let k):
            if echo { emit([b], at: now) }
            switch b {
            case 0x1A: submit(length: length, occurrence: k, at: now)
            case 0x1B:
                prompts.append((promptText, false))
                promptText.removeAll()
                mode = .command
            default: promptText.append(b)
            }
        case .awaitingPrompt(let length, let k, let at):
            if b == 0x1B && (at == nil || script.escapeCancelsPendingPrompt) {
                prompts.append((promptText, false))
                promptText.removeAll()
                mode = .command
                return
            }
            if b == 0x1A {
                violations.append("Ctrl-Z before the prompt of AT+CMGS #\(k) was shown")
                mode = .command
                return
            }
            if b != 0x1B { promptText.append(b) }
            _ = length
        case .command:
            if echo { emit([b], at: now) }
            switch b {
            case 0x0D:
                let text = line
                line.removeAll()
                let started = lineStart ?? now
                lineStart = nil
                command(text, startedAt: started, at: now)
            case 0x0A:
                break
            case 0x1A:
                violations.append("Ctrl-Z outside a prompt")
                line.removeAll()
            case 0x1B:
                line.removeAll()  // ESC at the command level clears the line
                lineStart = nil
            default:
                if line.isEmpty { lineStart = now }
                line.append(b)
            }
        }
    }

    private mutating func command(_ bytes: [UInt8], startedAt: Instant, at now: Instant) {
        if bytes.isEmpty { return }
        let text = String(decoding: bytes, as: UTF8.self)
        commands.append(text)
        if bytes.contains(where: { $0 < 0x20 || $0 == 0x7F }) {
            violations.append("control character in the command line \(text.debugDescription)")
        }
        if let list = script.replies[text] {
            let k = replyCursor[text, default: 0]
            if k < list.count {
                replyCursor[text] = k + 1
                send(list[k], at: now)
                return
            }
        }
        let upper = text.uppercased()
        switch upper {
        case "AT", "AT+CMEE=1", "AT+CMEE=2", "ATE1":
            if upper == "ATE1" { echo = true }
            ok(now)
        case "ATE0":
            echo = false
            ok(now)
        case "AT+CPIN?":
            if let _ = script.simPIN, !simUnlocked {
                send([wrongPINs >= 3 ? "+CPIN: SIM PUK" : "+CPIN: SIM PIN", "OK"], at: now)
            } else {
                send(["+CPIN: READY", "OK"], at: now)
            }
        case _ where upper.hasPrefix("AT+CPIN=") && script.simPIN != nil:
            let given = String(text.dropFirst("AT+CPIN=".count)).replacingOccurrences(of: "\"", with: "")
            if wrongPINs < 3 && given == script.simPIN {
                simUnlocked = true
                ok(now)
            } else {
                wrongPINs += 1
                send(["+CME ERROR: 16"], at: now)
            }
        case "AT+CREG?", "AT+CGREG?", "AT+CEREG?":
            let answer = upper == "AT+CREG?" ? script.creg : upper == "AT+CGREG?" ? script.cgreg : script.cereg
            if let a = answer { send([a, "OK"], at: now) } else { send(["ERROR"], at: now) }
        case "AT+CSQ":
            send([script.csq, "OK"], at: now)
        case "AT+COPS?":
            send([script.cops, "OK"], at: now)
        case "AT+COPS=0":
            // Automatic selection: registered again (a modem someone deregistered by hand).
            script.cops = "+COPS: 0,0,\"Unwind Mobile\",7"
            script.creg = script.creg.map { _ in "+CREG: 0,1" }
            ok(now)
        case "AT+CSCA?":
            if let set = serviceCentre {
                send(["+CSCA: " + set.dropFirst("AT+CSCA=".count), "OK"], at: now)
            } else {
                send([script.csca, "OK"], at: now)
            }
        case "AT+CMGF=0":
            pduMode = true
            ok(now)
        case "AT+CMGF=1":
            pduMode = false
            ok(now)
        case "ATH":
            calls.append("ATH")
            ok(now)
        case "AT+CFUN=1,1":
            ok(now)
            restart(at: now + .milliseconds(5), keepingOutput: true)
        default:
            if upper.hasPrefix("AT+CMGS="), let n = Int(upper.dropFirst(8)) {
                cmgs(length: n, startedAt: startedAt, at: now)
            } else if upper.hasPrefix("AT+CSCA=\"") && Self.isServiceCentre(text) {
                serviceCentre = text
                ok(now)
            } else if upper.hasPrefix("ATD") && Self.isDial(text) {
                calls.append(text)
                ok(now)
            } else {
                violations.append("unknown command line \(text.debugDescription)")
                send(["ERROR"], at: now)
            }
        }
    }

    private mutating func ok(_ now: Instant) { send(["OK"], at: now) }

    private mutating func cmgs(length: Int, startedAt: Instant, at now: Instant) {
        submitCount += 1
        if firstSubmitAt == nil { firstSubmitAt = startedAt }
        if !pduMode { violations.append("AT+CMGS #\(submitCount) in text mode") }
        let plan = script.submits[submitCount] ?? script.defaultSubmit
        promptText.removeAll()
        switch plan.prompt {
        case .immediate: showPrompt(length: length, occurrence: submitCount, at: now)
        case .after(let d): mode = .awaitingPrompt(length: length, occurrence: submitCount, promptAt: now + d)
        case .never: mode = .awaitingPrompt(length: length, occurrence: submitCount, promptAt: nil)
        }
    }

    private mutating func showPrompt(length: Int, occurrence k: Int, at now: Instant) {
        mode = .prompt(length: length, occurrence: k)
        emit(Array("\r\n> ".utf8), at: now)
        let plan = script.submits[k] ?? script.defaultSubmit
        send(plan.afterPrompt, at: now)
    }

    private mutating func submit(length: Int, occurrence k: Int, at now: Instant) {
        let text = promptText
        promptText.removeAll()
        prompts.append((text, true))
        mode = .command
        let plan = script.submits[k] ?? script.defaultSubmit
        let decoded: DecodedSubmit
        do {
            decoded = try DecodedSubmit.decode(hex: text, announced: length)
        } catch {
            violations.append("prompt of AT+CMGS #\(k) sent with \(String(decoding: text, as: UTF8.self).debugDescription): \(error)")
            send(["+CMS ERROR: 304"], at: now)
            return
        }
        let at = now + plan.resultDelay
        send(plan.beforeResult, at: now)
        switch plan.result {
        case .accepted, .acceptedWithoutOK:
            parts.append(SimulatedPart(submit: decoded, occurrence: k, answered: true))
            messageReference = (messageReference + 1) % 256
            let lines = ["+CMGS: \(messageReference)"] + (plan.result == .accepted ? ["OK"] : [])
            send(plan.corruptedResult ?? lines, at: at)
            if let again = plan.repeatResultAfter { send(lines, at: at + again) }
        case .cmsError(let n):
            send(["+CMS ERROR: \(n)"], at: at)
            if let again = plan.repeatResultAfter { send(["+CMS ERROR: \(n)"], at: at + again) }
        case .silence:
            parts.append(SimulatedPart(submit: decoded, occurrence: k, answered: false))
        case .restart:
            restart(at: at)
        }
    }

    static func isServiceCentre(_ s: String) -> Bool {
        // AT+CSCA="<+digits>",<145|129>
        let body = s.dropFirst(9)
        guard let q = body.firstIndex(of: "\"") else { return false }
        let number = body[..<q], rest = body[body.index(after: q)...]
        return (try? PhoneNumber(String(number))) != nil && (rest == ",145" || rest == ",129")
    }

    static func isDial(_ s: String) -> Bool {
        guard s.hasSuffix(";") else { return false }
        return (try? PhoneNumber(String(s.dropFirst(3).dropLast()))) != nil
    }

    func delivered(includeSilent: Bool) -> [SimulatedSMS] {
        var out: [SimulatedSMS] = []
        var pending: [String: [Int: String]] = [:]
        var done: Set<String> = []
        for p in parts where p.answered || includeSilent {
            let s = p.submit
            guard let c = s.concatenation else {
                out.append(SimulatedSMS(number: s.number, text: s.text, parts: 1))
                continue
            }
            let key = "\(s.number)#\(c.reference)#\(c.parts)"
            pending[key, default: [:]][c.part] = s.text
            if pending[key]!.count == c.parts && !done.contains(key) {
                done.insert(key)
                let text = (1...c.parts).map { pending[key]![$0] ?? "" }.joined()
                out.append(SimulatedSMS(number: s.number, text: text, parts: c.parts))
            }
        }
        return out
    }
}

/// clock_gettime(CLOCK_MONOTONIC): the time base `LinuxClock` gives the device, so a simulator
/// on a real pseudo-terminal and the modem code under test agree on every deadline.
public func monotonicNow() -> Instant {
    var t = timespec()
    clock_gettime(CLOCK_MONOTONIC, &t)
    return Instant(nanoseconds: Int64(t.tv_sec) * 1_000_000_000 + Int64(t.tv_nsec))
}
