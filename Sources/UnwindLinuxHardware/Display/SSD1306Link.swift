import UnwindSeams

/// The SSD1306's framing on an `I2CBus` (datasheet rev 1.1, §8.1.5.2): every transfer starts
/// with a control byte, `0x00` before a command stream and `0x40` before display data. The link
/// owns that framing, how a bus path carries it and what it costs on the wire; the driver
/// (`SSD1306`) decides what changed and what fits in a frame.
///
/// - Plain I²C: a command stream is one write, `00 c…`; a window and its bytes one I2C_RDWR of
///   two messages, `00 21 c0 c1 22 p0 p1` and `40 d…`.
/// - SMBus only: the control byte is the register: one `00`-register block for the commands,
///   then the data in `40`-register blocks of at most 32 bytes.
///
/// The buffers are allocated once: sending allocates nothing.
final class SSD1306Link {
    let bus: I2CBus
    let plainI2C: Bool
    /// The next transfer's commands, written from index 0 (the control byte sits before them).
    let commands: UnsafeMutableRawBufferPointer
    /// The next window's display data, written from index 0.
    let data: UnsafeMutableRawBufferPointer
    private let commandTransfer: UnsafeMutableRawBufferPointer
    private let dataTransfer: UnsafeMutableRawBufferPointer

    static let commandControl: UInt8 = 0x00
    static let dataControl: UInt8 = 0x40
    /// A window's own commands: 0x21 c0 c1 0x22 p0 p1.
    static let windowCommands = 6

    init(bus: I2CBus, commandCapacity: Int, dataCapacity: Int) {
        self.bus = bus
        plainI2C = bus.capabilities.contains(.plainI2C)
        commandTransfer = .allocate(byteCount: 1 + commandCapacity, alignment: 1)
        commandTransfer[0] = Self.commandControl
        dataTransfer = .allocate(byteCount: 1 + dataCapacity, alignment: 1)
        dataTransfer[0] = Self.dataControl
        commands = UnsafeMutableRawBufferPointer(rebasing: commandTransfer[1...])
        data = UnsafeMutableRawBufferPointer(rebasing: dataTransfer[1...])
    }

    deinit {
        commandTransfer.deallocate()
        dataTransfer.deallocate()
    }

    /// Whether this bus can carry the display at all.
    var canSend: Bool { plainI2C || bus.capabilities.contains(.smbusBlockWrite) }

    /// `commands[0..<count]` as one command stream.
    func sendCommands(_ count: Int, cost: inout FrameCost) throws(DeviceError) {
        cost.addTransfer(bytes: 1 + count)
        if plainI2C {
            try bus.write(UnsafeRawBufferPointer(rebasing: commandTransfer[0..<1 + count]))
        } else {
            try bus.smbusBlockWrite(register: Self.commandControl, UnsafeRawBufferPointer(rebasing: commands[0..<count]))
        }
    }

    /// `commands[0..<commandCount]` (ending with a window), then `data[0..<dataCount]` into it.
    func sendWindow(commands commandCount: Int, data dataCount: Int, cost: inout FrameCost) throws(DeviceError) {
        Self.windowTransfers(commands: commandCount, data: dataCount, plainI2C: plainI2C) { cost.addTransfer(bytes: $0) }
        if plainI2C {
            try bus.writeMessages(UnsafeRawBufferPointer(rebasing: commandTransfer[0..<1 + commandCount]),
                                  UnsafeRawBufferPointer(rebasing: dataTransfer[0..<1 + dataCount]))
        } else {
            try bus.smbusBlockWrite(register: Self.commandControl, UnsafeRawBufferPointer(rebasing: commands[0..<commandCount]))
            var start = 0
            while start < dataCount {
                let end = min(dataCount, start + I2CLimits.smbusBlockMax)
                try bus.smbusBlockWrite(register: Self.dataControl, UnsafeRawBufferPointer(rebasing: data[start..<end]))
                start = end
            }
        }
    }

    /// The transfers (their lengths, control bytes included) of a window of `data` bytes after
    /// `commands` command bytes, in the order they go: what `sendWindow` sends and what the
    /// driver's planning and the benchmark count.
    static func windowTransfers(commands: Int, data: Int, plainI2C: Bool, _ each: (Int) -> Void) {
        each(1 + commands)
        if plainI2C {
            each(1 + data)
            return
        }
        var left = data
        while left > 0 {
            let k = min(left, I2CLimits.smbusBlockMax)
            each(1 + k)
            left -= k
        }
    }

    /// Bits on the wire for a window of `data` bytes (its window commands included).
    func windowBits(data: Int) -> Int {
        var bits = 0
        Self.windowTransfers(commands: Self.windowCommands, data: data, plainI2C: plainI2C) { bits += FrameCost.bits(ofTransfer: $0) }
        return bits
    }
}
