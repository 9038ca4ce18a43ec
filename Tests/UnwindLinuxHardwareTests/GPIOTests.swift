#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Logging
import Testing
import UnwindTestSupport
import UnwindSimulatedHardware
import UnwindCore
import UnwindRuntime
import UnwindLinuxHardware
import UnwindSeams

/// Pins of the reference build (GPIOConfiguration.raspberryPi).
private let motorPin = 18
private let pins: [Button: Int] = [.page: 5, .left: 6, .right: 13, .select: 19, .panic: 26]

/// The classifier fed from the simulated chip's button lines the way the loop feeds it:
/// read edges, feed, advance, then let simulated time jump to whatever comes next.
private func gestures(on chip: SimulatedGPIOChip, _ buttons: SimulatedGPIOButtons, time: SimulatedTime,
                      until end: Instant) throws -> [(Instant, ButtonGesture)] {
    var classifier = ButtonClassifier()
    var edges: [ButtonEdge] = []
    var out: [ButtonGesture] = []
    var log: [(Instant, ButtonGesture)] = []
    while true {
        edges.removeAll()
        try buttons.readEdges(into: &edges)
        out.removeAll()
        for e in edges { classifier.feed(e, into: &out) }
        classifier.advance(to: time.instant, into: &out)
        log += out.map { (time.instant, $0) }
        if time.instant >= end { return log }
        var next = end
        if let t = buttons.nextEdgeTime, t < next { next = t }
        if let t = classifier.nextDeadline(), t < next { next = t }
        try time.wait(until: next, watching: buttons.pollDescriptors)
    }
}

@Suite struct GPIOTests {
    // MARK: The board's adapter (GPIOMotor, GPIOButtons) on the simulated chip

    @Test func bouncyShortPressIsOneShortGesture() throws {
        let time = SimulatedTime()
        let chip = SimulatedGPIOChip(clock: time)
        let buttons = try chip.buttonLines(pins)
        chip.bouncyPress(pins[.select]!, at: .seconds(1), holdFor: .milliseconds(150), bounces: 4)
        let g = try gestures(on: chip, buttons, time: time, until: .seconds(3))
        #expect(g.map(\.1) == [.down(.select), .short(.select), .up(.select, heldFor: .milliseconds(150))])
        #expect(g.first?.0 == .seconds(1))                          // answered on the first edge
        #expect(g.last?.0 == .seconds(1) + .milliseconds(150))     // and the first edge of the release
    }

    @Test func bouncyLongPressAndAHeldButton() throws {
        let time = SimulatedTime()
        let chip = SimulatedGPIOChip(clock: time)
        let buttons = try chip.buttonLines(pins)
        chip.bouncyPress(pins[.page]!, at: .seconds(1), holdFor: .milliseconds(1200), bounces: 3)
        // PANIC goes down and stays down (a held button: long, no up yet).
        chip.drive(pins[.panic]!, high: false, at: .seconds(2))
        chip.drive(pins[.panic]!, high: true, at: .seconds(2.001))   // one bounce
        chip.drive(pins[.panic]!, high: false, at: .seconds(2.002))
        let g = try gestures(on: chip, buttons, time: time, until: .seconds(4))
        let page = g.filter { $0.1.button == .page }
        #expect(page.map(\.1) == [.down(.page), .long(.page), .up(.page, heldFor: .milliseconds(1200))])
        #expect(page[1].0 == .seconds(1.8))                         // long reported at the threshold, while held
        let panic = g.filter { $0.1.button == .panic }
        #expect(panic.map(\.1) == [.down(.panic), .long(.panic)])
        #expect(panic.map(\.0) == [.seconds(2), .seconds(2.8)])
    }

    @Test func twoButtonsAtOnce() throws {
        let time = SimulatedTime()
        let chip = SimulatedGPIOChip(clock: time)
        let buttons = try chip.buttonLines(pins)
        chip.bouncyPress(pins[.left]!, at: .seconds(1), holdFor: .milliseconds(300), bounces: 2)
        chip.bouncyPress(pins[.right]!, at: .seconds(1.1), holdFor: .milliseconds(100), bounces: 2)
        let g = try gestures(on: chip, buttons, time: time, until: .seconds(2))
        #expect(g.map(\.1) == [.down(.left), .down(.right), .short(.right), .up(.right, heldFor: .milliseconds(100)),
                               .short(.left), .up(.left, heldFor: .milliseconds(300))])
    }

    @Test func edgesCarryTheirOwnInstantsAndComeSortedAcrossLines() throws {
        let time = SimulatedTime()
        let chip = SimulatedGPIOChip(clock: time)
        let buttons = try chip.buttonLines(pins)
        chip.press(pins[.right]!, at: .seconds(1.003), holdFor: .milliseconds(5))
        chip.press(pins[.left]!, at: .seconds(1.001), holdFor: .milliseconds(3))
        chip.press(pins[.select]!, at: .seconds(1.002), holdFor: .milliseconds(10))
        #expect(chip.nextEdgeTime == .seconds(1.001))
        time.advance(by: .seconds(5))                                // read long after they happened
        var edges: [ButtonEdge] = []
        try buttons.readEdges(into: &edges)
        #expect(edges == [
            ButtonEdge(.left, pressed: true, at: .seconds(1.001)),
            ButtonEdge(.select, pressed: true, at: .seconds(1.002)),
            ButtonEdge(.right, pressed: true, at: .seconds(1.003)),
            ButtonEdge(.left, pressed: false, at: .seconds(1.004)),
            ButtonEdge(.right, pressed: false, at: .seconds(1.008)),
            ButtonEdge(.select, pressed: false, at: .seconds(1.012)),
        ])
        #expect(chip.nextEdgeTime == nil)
        // Released buttons read high (the pull-up); a driven-low one reads low.
        #expect(chip.level(pins[.left]!))
        chip.drive(pins[.left]!, high: false, at: .seconds(6))
        #expect(chip.level(pins[.left]!))
        time.advance(by: .seconds(1))
        #expect(!chip.level(pins[.left]!))
    }

    @Test func activeHighButtonsUsePullDown() throws {
        let time = SimulatedTime()
        let chip = SimulatedGPIOChip(clock: time)
        let buttons = try chip.buttonLines([.select: 19], activeLow: false)
        #expect(!chip.level(19))
        chip.drive(19, high: true, at: .seconds(1))
        chip.float(19, at: .seconds(1.1))
        time.advance(by: .seconds(2))
        var edges: [ButtonEdge] = []
        try buttons.readEdges(into: &edges)
        #expect(edges == [ButtonEdge(.select, pressed: true, at: .seconds(1)), ButtonEdge(.select, pressed: false, at: .seconds(1.1))])
    }

    @Test func requestingAHeldLineIsEBUSYWithTheRealMessage() throws {
        let time = SimulatedTime()
        let chip = SimulatedGPIOChip(clock: time)
        let motor = try chip.motorLine(offset: motorPin)
        #expect(chip.consumer(motorPin) == "unwind")
        let expected = GPIOErrors.request(chip: "gpiochip0", path: "/dev/gpiochip0", offset: motorPin, purpose: "SELECT button",
                                          operation: "request as input with edge events", errno: EBUSY, lineCount: 54)
        #expect(throws: expected) { _ = try chip.buttonLines([.select: motorPin]) }
        #expect(expected.description.contains(
            "GPIO line 18 on gpiochip0 is held by another consumer (see gpioinfo): stop the other program or choose another line"))
        #expect(expected.description.hasPrefix("gpiochip0 line 18 (SELECT button): request as input with edge events failed:"))
        #expect(throws: DeviceError.self) { _ = try chip.motorLine(offset: motorPin) }
        // A failed multi-line request lets go of the lines it had already taken.
        #expect(throws: DeviceError.self) { _ = try chip.buttonLines([.page: 5, .select: motorPin]) }
        #expect(chip.consumer(5) == nil)
        // Released, the line can be had again — and it was left low.
        motor.release()
        #expect(chip.consumer(motorPin) == nil)
        _ = try chip.buttonLines([.select: motorPin])
        // An offset the chip does not have.
        #expect {
            _ = try chip.motorLine(offset: 60)
        } throws: { error in
            (error as? DeviceError)?.hint == "gpiochip0 has no line 60: its lines are 0 to 53 (gpioinfo gpiochip0 lists them)"
        }
    }

    @Test func outputHistoryHasEveryChangeWithItsInstant() throws {
        let time = SimulatedTime()
        let chip = SimulatedGPIOChip(clock: time)
        let motor = try chip.motorLine(offset: motorPin)
        #expect(chip.history(motorPin).isEmpty)                       // requested low: no change
        time.advance(by: .seconds(1))
        try motor.set(true)
        try motor.set(true)                                           // no change, no entry
        time.advance(by: .milliseconds(120))
        try motor.set(false)
        time.advance(by: .milliseconds(100))
        try motor.set(true)
        #expect(chip.history(motorPin) == [.init(at: .seconds(1), high: true), .init(at: .seconds(1.12), high: false),
                                           .init(at: .seconds(1.22), high: true)])
        // Releasing drives it low first, like LinuxMotorLine.
        time.advance(by: .milliseconds(5))
        motor.release()
        #expect(chip.history(motorPin).last == .init(at: .seconds(1.225), high: false))
        #expect(!chip.level(motorPin))
        #expect(throws: DeviceError.self) { try motor.set(true) }
        // A broken wire is a DeviceError naming the line.
        let other = try chip.motorLine(offset: 20)
        chip.fail(20, errno: EIO)
        #expect(throws: DeviceError.self) { try other.set(true) }
    }

    /// "The GPIO lines must see the intended edges at the intended times": the whole loop on the
    /// simulated chip, a SELECT press driven on its input line, the motor pulses read back from
    /// the output line.
    @Test func deviceLoopOnTheSimulatedChip() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let time = SimulatedTime()
        let chip = SimulatedGPIOChip(clock: time)
        let motor = try chip.motorLine(offset: motorPin)
        let buttons = try chip.buttonLines(pins)
        time.nextEvent = { chip.nextEdgeTime }
        // Start at 0.5 s, stop at 8.7 s (during the third corner's pulse), both with bouncing contacts.
        chip.bouncyPress(pins[.select]!, at: .seconds(0.5), holdFor: .milliseconds(90), bounces: 3)
        chip.bouncyPress(pins[.select]!, at: .seconds(8.7), holdFor: .milliseconds(90), bounces: 3)

        let logger = Logger(label: "gpio-test")
        let persistence = StatePersistence(store: try DirectoryStore(directory: dir), logger: logger, writeInBackground: false)
        let help = DeviceContent.helpLibrary()
        let core = DeviceCore.starting(settings: DeviceSettings(), persistence: persistence, help: help, now: time.now().wall)
        let loop = DeviceLoop(core: core, clock: time, waiter: time, buttons: buttons, motor: motor,
                              presenter: SimulatedDisplay(), persistence: persistence, logger: logger)
        var gestures: [(Instant, ButtonGesture)] = []
        loop.onGesture = { g, at in gestures.append((at, g)) }
        loop.run(until: { time.instant >= .seconds(14) })

        #expect(gestures.filter { if case .down(.select) = $0.1 { true } else { false } }.map(\.0) == [.seconds(0.5), .seconds(8.7)])
        // Corners at 0.5 + 4k s: breathe in one 120 ms pulse, hold two, breathe out one of 400 ms
        // (cut short by the stop at 8.7 s); none after the stop.
        let want: [(Double, Bool)] = [(0.5, true), (0.62, false),
                                      (4.5, true), (4.62, false), (4.72, true), (4.84, false),
                                      (8.5, true), (8.7, false)]
        let got = chip.history(motorPin)
        #expect(got.count == want.count, "motor line: \(got)")
        for (g, w) in zip(got, want) {
            #expect(g.high == w.1)
            #expect(abs((g.at - Instant.seconds(w.0)).nanoseconds) <= 1_000_000, "edge at \(g.at), expected \(w.0)")
        }
        #expect(loop.statistics.errors == 0)
        #expect(loop.statistics.worstMotorLateness <= .milliseconds(1))
        #expect(!chip.level(motorPin))
    }

    @Test func aFailingButtonLineDoesNotSilenceTheOthers() throws {
        let time = SimulatedTime()
        let chip = SimulatedGPIOChip(clock: time)
        let buttons = try chip.buttonLines(pins)
        chip.press(pins[.left]!, at: .seconds(1), holdFor: .milliseconds(50))
        chip.fail(pins[.page]!, errno: ENODEV)
        time.advance(by: .seconds(2))
        var edges: [ButtonEdge] = []
        #expect(throws: DeviceError.self) { try buttons.readEdges(into: &edges) }
        #expect(edges.map(\.button) == [.left, .left])
    }

    // MARK: Configuration

    @Test func lineSelectorsParse() throws {
        #expect(try LineSelector(parsing: "gpiochip0:17") == .offset(chip: "gpiochip0", line: 17))
        #expect(try LineSelector(parsing: " /dev/gpiochip4 : 5 ") == .offset(chip: "/dev/gpiochip4", line: 5))
        #expect(try LineSelector(parsing: "pinctrl-bcm2711:26") == .offset(chip: "pinctrl-bcm2711", line: 26))
        #expect(try LineSelector(parsing: "GPIO17") == .name("GPIO17"))
        #expect(try LineSelector(parsing: "MOTOR") == .name("MOTOR"))
        #expect(LineSelector.offset(chip: "gpiochip0", line: 17).description == "gpiochip0:17")
        #expect(throws: LineSelector.ParseError(text: "17", reason: "a bare number does not say which chip; write gpiochip0:17, or the line name GPIO17")) {
            try LineSelector(parsing: "17")
        }
        #expect(throws: LineSelector.ParseError.self) { try LineSelector(parsing: "gpiochip0:GPIO17") }
        #expect(throws: LineSelector.ParseError.self) { try LineSelector(parsing: "gpiochip0:-1") }
        #expect(throws: LineSelector.ParseError.self) { try LineSelector(parsing: ":17") }
        #expect(throws: LineSelector.ParseError.self) { try LineSelector(parsing: "  ") }
    }

    @Test func raspberryPiDefaultsAndDuplicateLines() {
        let pi = GPIOConfiguration.raspberryPi
        #expect(pi.problem == nil)
        #expect(pi.activeLowButtons)
        #expect(pi.motor == .offset(chip: "gpiochip0", line: 18))
        #expect(pi.buttons.count == 5)
        var bad = pi
        bad.buttons[.panic] = .offset(chip: "gpiochip0", line: 18)
        #expect(bad.problem == "motor and PANIC are both on gpiochip0:18: each needs its own line")
    }

    // MARK: libgpiod, without hardware

    #if os(Linux)
    static let hasChips = !GPIOChipInfo.devicePaths().isEmpty

    @Test func missingChipNamesTheChip() {
        #expect {
            _ = try LinuxMotorLine(.offset(chip: "gpiochip97", line: 18))
        } throws: { error in
            guard let e = error as? DeviceError else { return false }
            return e.errno == ENOENT
                && e.description.hasPrefix("gpiochip97 line 18 (motor): open /dev/gpiochip97 failed: ")
                && e.description.hasSuffix("gpiochip97 not found: check the chip name (gpiodetect lists the chips)")
        }
        #expect {
            _ = try LinuxButtonLines([.select: .offset(chip: "/dev/gpiochip97", line: 19)])
        } throws: { error in
            (error as? DeviceError)?.hint == "/dev/gpiochip97 not found: check the chip name (gpiodetect lists the chips)"
        }
        #expect(throws: DeviceError.self) { _ = try GPIOChipInfo(chip: "97") }
    }

    /// Runs everywhere: with no chip at all the message says so.
    @Test(.enabled(if: !hasChips, "this machine has GPIO chips: lineNameNotFoundOnAnyChip covers it"))
    func lineNameWithoutAnyChip() {
        #expect {
            _ = try LinuxMotorLine(.name("UNWIND_NO_SUCH_LINE"))
        } throws: { error in
            guard let e = error as? DeviceError else { return false }
            return e.errno == ENOENT && e.description.contains("\"UNWIND_NO_SUCH_LINE\"")
                && e.hint.contains("there is no GPIO chip at all")
        }
    }

    // No /dev/gpiochip* on the CI container (its kernel has no GPIOLIB): these need a real chip.
    @Test(.enabled(if: hasChips, "no /dev/gpiochip* on this machine: a line name can only be looked for on a real chip"))
    func lineNameNotFoundOnAnyChip() {
        #expect {
            _ = try LinuxButtonLines([.select: .name("UNWIND_NO_SUCH_LINE")])
        } throws: { error in
            guard let e = error as? DeviceError else { return false }
            return e.errno == ENOENT && e.hint.hasPrefix("no GPIO line is named \"UNWIND_NO_SUCH_LINE\" on any chip")
        }
    }

    @Test(.enabled(if: hasChips, "no /dev/gpiochip* on this machine: chip info and offset range need a real chip"))
    func realChipInfoAndAnOffsetPastTheEnd() throws {
        guard let path = GPIOChipInfo.devicePaths().first else { return }
        let info = try GPIOChipInfo(chip: path)
        #expect(info.lineCount > 0)
        #expect {
            _ = try LinuxMotorLine(.offset(chip: path, line: info.lineCount + 100))
        } throws: { error in
            (error as? DeviceError)?.hint.contains("has no line \(info.lineCount + 100)") == true
        }
    }
    #endif
}
