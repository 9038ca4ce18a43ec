import UnwindCore
import UnwindSeams

/// The five buttons wired as on the reference build (`GPIOConfiguration.raspberryPi`: switches
/// to ground on pulled-up lines) to a simulated chip and read through the board's own code
/// (`GPIOButtons`). A test (or the keyboard) presses them at chosen instants, bounce included;
/// the loop reads the edges when their time has come.
///
/// Pressed from any thread: a press touches only the chip, behind its lock, and the lines'
/// fixed map; reading the edges is the loop's alone.
public final class SimulatedButtons: ButtonLines, @unchecked Sendable {
    public let chip: SimulatedGPIOChip
    /// The buttons' lines on `chip`.
    public let lines: SimulatedGPIOButtons

    /// The buttons on `chip`, at the lines and with the wiring `configuration` gives them.
    public init(chip: SimulatedGPIOChip, configuration: GPIOConfiguration = .raspberryPi) throws(DeviceError) {
        self.chip = chip
        self.lines = try GPIOButtons(configuration: configuration, backend: chip)
    }

    /// The buttons on a chip of their own.
    public convenience init(clock: DeviceClock) {
        do {
            try self.init(chip: SimulatedGPIOChip(clock: clock))
        } catch {
            preconditionFailure("a fresh simulated chip refused the buttons' lines: \(error)")
        }
    }

    /// The buttons on a chip of their own that wakes a polling loop (`SimulatedGPIOChip.wakingPollers`):
    /// pressed from another thread while the loop runs on the real clock (a test, the benchmark).
    public convenience init(wakingPollersOn clock: DeviceClock) throws(DeviceError) {
        try self.init(chip: SimulatedGPIOChip.wakingPollers(clock: clock))
    }

    public var pollDescriptors: [Int32] { lines.pollDescriptors }

    public var nextEdgeTime: Instant? { chip.nextEdgeTime }

    public func readEdges(into edges: inout [ButtonEdge]) throws(DeviceError) { try lines.readEdges(into: &edges) }

    /// The button's contacts close (`pressed`) or open at `at`: the line is driven to its
    /// pressed level, or left to its pull.
    public func edge(_ button: Button, pressed: Bool, at: Instant) {
        guard let offset = offset(of: button) else { return }
        if pressed { chip.drive(offset, high: !lines.activeLow, at: at) } else { chip.float(offset, at: at) }
    }

    /// A press held for `holdFor`, then released.
    public func tap(_ button: Button, at: Instant, holdFor: Duration = .milliseconds(80)) {
        guard let offset = offset(of: button) else { return }
        chip.schedule([(offset, lines.activeLow ? false : true, at), (offset, nil, at + holdFor)])
    }

    /// A press now (the chip's clock), held for `holdFor`.
    public func tap(_ button: Button, holdFor: Duration = .milliseconds(80)) {
        tap(button, at: chip.clock.now().instant, holdFor: holdFor)
    }

    /// Every press has happened and the device has read every edge.
    public var isIdle: Bool { chip.isQuiet }

    /// The button's line on the chip.
    private func offset(of button: Button) -> Int? { lines.lines.first { $0.button == button }?.offset }
}
