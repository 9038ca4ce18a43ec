#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Logging
import Synchronization
import Testing
import UnwindAssembly
import UnwindMaintenance
import UnwindSimulatedHardware
import UnwindCore
import UnwindRuntime
import UnwindLinuxHardware
import UnwindModem
import UnwindRender
import UnwindSimulator
import UnwindSeams

/// A device running as the daemon runs, in this test process: the real DeviceLoop on the real
/// clock and poll waiter, on its own thread, with its control socket, the state lock and the
/// presence file, a GSMModem talking AT to a simulated modem on a pseudo-terminal, a simulated
/// motor and display, and buttons a test can press. The maintainer's commands are the real
/// `unwind` executable, run as child processes against its state directory.
enum RigError: Error { case notAssembled }

final class MaintenanceRig: @unchecked Sendable {
    let directory: String
    let modemSim: ModemSimulator
    let motor: SimulatedMotor
    let buttons: SimulatedButtons
    let display = SimulatedDisplay()
    let device: DeviceAssembly
    let host: MaintenanceHost
    let loop: DeviceLoop
    let modem: GSMModem
    private let stop = Atomic<Bool>(false)
    /// The loop's thread (/proc/self/task/ID), once it runs.
    let loopThread = Atomic<pid_t>(0)
    private let finished = DispatchSemaphore(value: 0)
    private var stopped = false

    /// The settings of a device whose screen stays still (no sleep, no pixel shift, no night).
    static var settings: DeviceSettings {
        var s = DeviceSettings()
        s.screen = ScreenCareSettings(sleepAfter: nil, nightStart: nil, nightEnd: nil, pixelShiftPeriod: nil)
        s.trustUnsynchronisedClock = true  // reminders are due whatever this machine's NTP says
        return s
    }

    /// `prepare` runs on the empty state directory before the device starts; `controlDeadlines`
    /// shortens the control socket's so a test sees them act.
    /// `withInbox`: the modem keeps received SMS in `replies/`, as the daemon's does.
    init(directory: String? = nil, modemScript: ModemScript = ModemScript(), controlDeadlines: ControlServer.Deadlines = .device,
         withInbox: Bool = false, prepare: (String) throws -> Void = { _ in }) throws {
        self.directory = directory ?? temporaryDirectory("maint")
        try prepare(self.directory)
        let clock = LinuxClock()
        var logger = Logger(label: "unwind.test")
        logger.logLevel = ProcessInfo.processInfo.environment["UNWIND_TEST_LOG"] != nil ? .trace : .critical
        modemSim = try ModemSimulator(script: modemScript)
        modemSim.start()
        motor = SimulatedMotor(clock: clock)
        buttons = try SimulatedButtons(wakingPollersOn: clock)
        let board = Board(clock: clock, waiter: try PollWaiter(), motor: motor, buttons: buttons, presenter: display,
                          alarm: try? RealtimeAlarm())
        var recipe = DeviceRecipe(stateDirectory: self.directory, settings: Self.settings,
                                  socket: ControlSocket.simulator(stateDirectory: self.directory), writeInBackground: true)
        recipe.controlDeadlines = controlDeadlines
        let directory = self.directory
        var opened: GSMModem?
        device = try DeviceAssembly(board: board, recipe: recipe, alerts: { [modemSim] now in
            // Written in the background, as the daemon's is.
            let outbox = Outbox(storage: try DirectoryStore.outbox(at: directory + "/outbox"), now: now.wall, writer: .inBackground())
            let inbox = withInbox
                ? Inbox(storage: try DirectoryStore(directory: directory + "/" + Inbox.directoryName, maximumFileSize: 256 * 1024), now: now.wall)
                : nil
            let modem = GSMModem(port: try SerialPort(SerialConfiguration(path: modemSim.path)), outbox: outbox, inbox: inbox,
                                 configuration: patientModemConfiguration, random: SeededRandom(seed: 1), logger: logger)
            opened = modem
            return ModemAlertLink(modem: modem)
        }, logger: logger)
        guard let host = device.host, let modem = opened else { throw RigError.notAssembled }
        self.host = host
        self.modem = modem
        loop = device.loop
        let thread = Thread { [self] in
            loopThread.store(currentThreadID(), ordering: .releasing)
            device.loop.run(until: { self.stop.load(ordering: .relaxed) })
            finished.signal()
        }
        thread.start()
    }

    /// Stops the loop (the session is saved, as on SIGTERM), then the socket and the presence.
    func shutdown() {
        guard !stopped else { return }
        stopped = true
        stop.store(true, ordering: .relaxed)
        finished.wait()
        device.finish()
        modemSim.stop()
    }

    deinit {
        shutdown()
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Runs `unwind ARGS --state DIR`.
    func unwind(_ arguments: [String], user: UnwindRun.User = .me) -> UnwindRun.Result {
        UnwindRun.run(arguments + ["--state", directory], user: user)
    }

    /// Waits until `done` holds (looking every 20 ms), at most `limit`.
    @discardableResult
    func wait(_ limit: Duration = .seconds(10), until done: () -> Bool) -> Bool {
        waitUntil(limit, every: .milliseconds(20), done)
    }

    /// Taps a button, then waits until the device has taken both edges of the tap and `done`
    /// holds: the next tap cannot overlap this one, however slow the machine.
    @discardableResult
    func tap(_ button: Button, holdFor: Duration = .milliseconds(80), until done: () -> Bool) -> Bool {
        buttons.tap(button, holdFor: holdFor)
        return wait { buttons.isIdle && done() }
    }

    /// The status, as `unwind status --json` prints it.
    func status() -> StatusReport? {
        let r = unwind(["status", "--json"])
        guard r.status == 0 else { return nil }
        return try? JSONDecoder().decode(StatusReport.self, from: Data(r.stdout.utf8))
    }

    func file(_ name: String) -> String? { readText(directory + "/" + name) }
}

/// The `unwind` executable SwiftPM built beside this test binary, run as a child process.
enum UnwindRun {
    struct Result: CustomStringConvertible {
        var status: Int32
        var stdout: String
        var stderr: String
        var description: String { "exit \(status)\nstdout: \(stdout)\nstderr: \(stderr)" }
        var stderrLines: [Substring] { stderr.split(separator: "\n") }
    }

    enum User {
        case me
        /// nobody (uid 65534), through setpriv: for permission tests when the tests run as root.
        case nobody
    }

    static var executable: String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        let path = n > 0 ? String(decoding: buffer[..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self) : ""
        let dir = path[..<(path.lastIndex(of: "/") ?? path.startIndex)]
        return "\(dir)/unwind"
    }

    static func run(_ arguments: [String], user: User = .me, stdin: String? = nil) -> Result {
        let p = Process()
        switch user {
        case .me:
            p.executableURL = URL(fileURLWithPath: executable)
            p.arguments = arguments
        case .nobody:
            p.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
            p.arguments = ["--reuid=65534", "--regid=65534", "--clear-groups", executable] + arguments
        }
        let out = temporaryFile("out"), err = temporaryFile("err")
        defer {
            unlink(out)
            unlink(err)
        }
        p.standardOutput = FileHandle(forWritingAtPath: out)
        p.standardError = FileHandle(forWritingAtPath: err)
        p.standardInput = stdin.map { text -> Any in
            let pipe = Pipe()
            pipe.fileHandleForWriting.write(Data(text.utf8))
            try? pipe.fileHandleForWriting.close()
            return pipe
        } ?? FileHandle.nullDevice
        do { try p.run() } catch { return Result(status: -1, stdout: "", stderr: "cannot run \(executable): \(error)") }
        p.waitUntilExit()
        return Result(status: p.terminationStatus, stdout: readText(out) ?? "", stderr: readText(err) ?? "")
    }

    /// Starts `unwind ARGS` without waiting.
    static func start(_ arguments: [String]) throws -> Process {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: executable)
        p.arguments = arguments
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        p.standardInput = FileHandle.nullDevice
        try p.run()
        return p
    }

    static func temporaryFile(_ tag: String) -> String {
        let path = scratchRoot + "run-\(tag)-\(UUID().uuidString.prefix(8))"
        _ = FileManager.default.createFile(atPath: path, contents: nil)
        return path
    }
}

/// Every state file's name and bytes (the lock, the presence file and the socket left out):
/// what "no state file changed" compares.
func stateSnapshot(_ directory: String) -> [String: Data] {
    var out: [String: Data] = [:]
    func walk(_ dir: String, _ prefix: String) {
        for name in (try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? [] {
            if [".lock", ".daemon", "control.sock"].contains(name) { continue }
            let path = dir + "/" + name
            var isDir: ObjCBool = false
            _ = FileManager.default.fileExists(atPath: path, isDirectory: &isDir)
            if isDir.boolValue { walk(path, prefix + name + "/") } else { out[prefix + name] = FileManager.default.contents(atPath: path) }
        }
    }
    walk(directory, "")
    return out
}

/// Asserts a failed command: the exit status, one line on standard error starting "unwind: ",
/// containing `words`.
func expectFailure(_ r: UnwindRun.Result, _ code: Int32, _ words: String, sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(r.status == code, "\(r)", sourceLocation: sourceLocation)
    #expect(r.stderrLines.count == 1, "one line expected: \(r)", sourceLocation: sourceLocation)
    #expect(r.stderr.hasPrefix("unwind: "), "\(r)", sourceLocation: sourceLocation)
    #expect(words.isEmpty || r.stderr.contains(words), "'\(words)' expected in: \(r)", sourceLocation: sourceLocation)
}
