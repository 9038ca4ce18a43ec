import Testing
@testable import UnwindLinuxHardware
import UnwindSeams
import UnwindSimulatedHardware

/// The SSD1306's framing on each bus path, apart from what the driver decides to send: a
/// control byte before every command stream and every run of display data, carried as plain
/// I²C messages or as SMBus registers, and counted as it goes.
@Suite struct SSD1306LinkTests {
    static func link(_ capabilities: I2CCapabilities) -> (SSD1306Link, SimulatedI2CBus) {
        let bus = SimulatedI2CBus(capabilities: capabilities)
        bus.recording = true
        return (SSD1306Link(bus: bus, commandCapacity: 16, dataCapacity: 100), bus)
    }

    static func window(_ link: SSD1306Link, data n: Int) {
        let window: [UInt8] = [0x21, 0, 9, 0x22, 2, 3]
        for (i, b) in window.enumerated() { link.commands[i] = b }
        for i in 0..<n { link.data[i] = UInt8(i) }
    }

    /// Each message's length, the SMBus register counted as the control byte it carries.
    static func lengths(_ recorded: [SimulatedI2CBus.Transaction]) -> [Int] {
        recorded.flatMap { $0.messages.map(\.count) }
    }

    @Test func plainI2CSendsACommandStreamAsOneWriteAndAWindowAsTwoMessages() throws {
        let (link, bus) = Self.link(.plainI2C)
        var cost = FrameCost(busSpeedHz: 400_000)
        link.commands[0] = 0xAF
        try link.sendCommands(1, cost: &cost)
        Self.window(link, data: 20)
        try link.sendWindow(commands: 6, data: 20, cost: &cost)
        #expect(bus.recorded.map(\.kind) == [.write, .combined])
        #expect(bus.recorded[0].messages == [[0x00, 0xAF]])
        #expect(bus.recorded[1].messages == [[0x00, 0x21, 0, 9, 0x22, 2, 3], [0x40] + (0..<20).map { UInt8($0) }])
        #expect(cost.transfers == 3 && cost.bytes == 2 + 7 + 21)
    }

    @Test func smbusCarriesTheControlByteAsTheRegisterInBlocksOfAtMost32() throws {
        let (link, bus) = Self.link(.smbusBlockWrite)
        var cost = FrameCost(busSpeedHz: 400_000)
        Self.window(link, data: 70)
        try link.sendWindow(commands: 6, data: 70, cost: &cost)
        #expect(bus.recorded.allSatisfy { $0.kind == .smbusBlock })
        #expect(bus.recorded.map { $0.bytes.first } == [0x00, 0x40, 0x40, 0x40])
        #expect(bus.recorded.map { $0.bytes.count - 1 } == [6, 32, 32, 6])
        #expect(bus.recorded.dropFirst().flatMap { $0.bytes.dropFirst() } == (0..<70).map { UInt8($0) })
        #expect(cost.transfers == 4 && cost.bytes == 7 + 33 + 33 + 7)
    }

    /// What the planning and the benchmark count is what goes on the wire.
    @Test(arguments: [I2CCapabilities.plainI2C, .smbusBlockWrite], [0, 1, 31, 32, 33, 100])
    func aWindowsCountedBitsAreItsTransfers(_ capabilities: I2CCapabilities, _ n: Int) throws {
        let (link, bus) = Self.link(capabilities)
        var cost = FrameCost(busSpeedHz: 100_000)
        Self.window(link, data: n)
        try link.sendWindow(commands: SSD1306Link.windowCommands, data: n, cost: &cost)
        // The bits planning counts for a window are the bits of what was sent, on both paths.
        #expect(link.windowBits(data: n) == cost.bits)
        #expect(cost.bits == FrameCost.of(transfers: Self.lengths(bus.recorded), busSpeedHz: 100_000).bits)
    }
}
