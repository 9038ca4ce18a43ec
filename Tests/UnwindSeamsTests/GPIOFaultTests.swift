#if canImport(Glibc)
import Glibc
#endif
import SystemPackage
import Testing
import UnwindCore
import UnwindSeams
import UnwindSimulatedHardware

/// The board's GPIO adapter when the kernel says no: a signal mid-call, a line another program
/// holds, a chip that goes away — injected on the simulated chip, answered by the same code
/// and messages as on libgpiod.
@Suite struct GPIOFaultTests {
    let time = SimulatedTime()

    @Test func aSignalMidCallIsCalledAgainNotReported() throws {
        let chip = SimulatedGPIOChip(clock: time)
        chip.interrupt(18, times: 2)                                  // the request, twice
        let motor = try chip.motorLine(offset: 18)
        chip.interrupt(18, times: 3)
        time.advance(by: .seconds(1))
        try motor.set(true)
        #expect(chip.history(18) == [.init(at: .seconds(1), high: true)])

        let buttons = try chip.buttonLines([.select: 19, .panic: 26])
        chip.press(19, at: .seconds(2), holdFor: .milliseconds(100))
        chip.interrupt(19)
        chip.interrupt(26)
        time.advance(by: .seconds(2))
        var edges: [ButtonEdge] = []
        try buttons.readEdges(into: &edges)
        #expect(edges == [ButtonEdge(.select, pressed: true, at: .seconds(2)),
                          ButtonEdge(.select, pressed: false, at: .seconds(2.1))])
        chip.interrupt(26)
        #expect(try buttons.isPressed(.panic) == false)
    }

    @Test func aLineAnotherProgramHoldsIsEBUSYUntilItLetsGo() throws {
        let chip = SimulatedGPIOChip(clock: time)
        chip.hold(26, consumer: "gpioset")
        #expect(chip.consumer(26) == "gpioset")
        let error = #expect(throws: DeviceError.self) { _ = try chip.buttonLines([.page: 5, .panic: 26]) }
        #expect(error?.code == .resourceBusy)
        #expect(error?.device == "gpiochip0 line 26 (PANIC button)")
        #expect(error?.operation == "request as input with edge events")
        #expect(error?.hint == "GPIO line 26 on gpiochip0 is held by another consumer (see gpioinfo): stop the other program or choose another line")
        #expect(chip.consumer(5) == nil, "PAGE's line, taken first, was let go")
        chip.letGo(26)
        let buttons = try chip.buttonLines([.page: 5, .panic: 26])
        #expect(chip.consumer(26) == "unwind")
        buttons.release()
        #expect(chip.consumer(26) == nil)
    }

    @Test func anUnpluggedChipIsENODEVOnItsLinesAndENOENTForNewRequests() throws {
        let chip = SimulatedGPIOChip(clock: time)
        let motor = try chip.motorLine(offset: 18)
        let buttons = try chip.buttonLines([.left: 6, .right: 13])
        chip.unplug()
        let set = #expect(throws: DeviceError.self) { try motor.set(true) }
        #expect(set?.code == .operationNotSupportedByDevice)
        #expect(set?.description.hasPrefix("gpiochip0 line 18 (motor): set 1 failed: No such device (errno 19)") == true)
        var edges: [ButtonEdge] = []
        let read = #expect(throws: DeviceError.self) { try buttons.readEdges(into: &edges) }
        #expect(read?.device == "gpiochip0 line 6 (LEFT button)", "the first line that failed is reported")
        #expect(read?.operation == "read edge events")
        let again = #expect(throws: DeviceError.self) { _ = try chip.motorLine(offset: 20) }
        #expect(again?.code == .noSuchFileOrDirectory)
        #expect(again?.hint == "gpiochip0 not found: check the chip name (gpiodetect lists the chips)")
        motor.release()                                             // nothing to report, nothing thrown
        buttons.release()
    }

    @Test func selectorsResolveOnTheSimulatedChipAsOnABoard() throws {
        let chip = SimulatedGPIOChip(clock: time)
        let byName = try GPIOMotor(try LineSelector(parsing: "GPIO18"), backend: chip)
        #expect(byName.chip == "gpiochip0" && byName.path == "/dev/gpiochip0" && byName.offset == 18)
        byName.release()
        for written in ["gpiochip0:18", "/dev/gpiochip0:18", "0:18", "unwind-simulated:18"] {
            let motor = try GPIOMotor(try LineSelector(parsing: written), backend: chip)
            #expect(motor.path == "/dev/gpiochip0", "\(written)")
            motor.release()
        }
        let info = try GPIOChipInfo(chip: "gpiochip0", backend: chip)
        #expect(info == GPIOChipInfo(path: "/dev/gpiochip0", name: "gpiochip0", label: "unwind-simulated", lineCount: 54))
        let noName = #expect(throws: DeviceError.self) { _ = try GPIOMotor(.name("NO_SUCH_LINE"), backend: chip) }
        #expect(noName?.hint.hasPrefix("no GPIO line is named \"NO_SUCH_LINE\" on any chip") == true)
        chip.unplug()
        let noChip = #expect(throws: DeviceError.self) { _ = try GPIOMotor(.name("GPIO18"), backend: chip) }
        #expect(noChip?.hint.contains("there is no GPIO chip at all") == true)
    }

    @Test func aButtonsLevelReadsAsPressedThroughTheWiring() throws {
        let chip = SimulatedGPIOChip(clock: time)
        let low = try chip.buttonLines([.select: 19])
        let high = try chip.buttonLines([.select: 20], activeLow: false)
        #expect(try !low.isPressed(.select) && !high.isPressed(.select))
        #expect(try !low.isPressed(.page), "a button without a line is never pressed")
        chip.drive(19, high: false, at: .seconds(1))
        chip.drive(20, high: true, at: .seconds(1))
        time.advance(by: .seconds(1))
        #expect(try low.isPressed(.select) && high.isPressed(.select))
        low.release()
        #expect(throws: DeviceError.self) { _ = try low.isPressed(.select) }
    }

    /// The simulator's motor and buttons are the board's code on the chip: the reference
    /// build's lines, held under the configuration's consumer name.
    @Test func theSimulatorsPartsAreTheBoardsCodeOnTheChip() throws {
        let chip = SimulatedGPIOChip(clock: time)
        let motor = try SimulatedMotor(chip: chip)
        let buttons = try SimulatedButtons(chip: chip)
        #expect(chip.consumer(18) == "unwind" && chip.consumer(26) == "unwind")
        buttons.tap(.panic, at: .seconds(1), holdFor: .milliseconds(200))
        #expect(chip.nextEdgeTime == .seconds(1))
        time.advance(by: .seconds(1.5))
        try motor.set(true)
        var edges: [ButtonEdge] = []
        try buttons.readEdges(into: &edges)
        #expect(edges == [ButtonEdge(.panic, pressed: true, at: .seconds(1)), ButtonEdge(.panic, pressed: false, at: .seconds(1.2))])
        #expect(motor.isOn && chip.level(18))
        #expect(motor.history == [SimulatedMotor.Change(at: .seconds(1.5), on: true)])
    }
}
