import UnwindSeams
// LinuxI2CBus and the SSD1306 driver against the kernel's i2c-stub, inside the kernel rig's guest
// (see RigSupport.swift and Tests/KernelRig/README.md). Skipped everywhere else.
//
// i2c-stub is SMBus only (no I2C_FUNC_I2C: I2C_RDWR fails with EOPNOTSUPP), so the driver must
// take its SMBus path: commands as I²C-block writes to register 0x00, data as I²C-block writes
// of at most 32 bytes to register 0x40. The stub keeps a 256-byte register file per address and
// an I²C-block write to register R with N bytes stores them at R...R+N-1, so after a transfer
// the registers hold its bytes: the tests read them back with SMBus reads through libi2c.

import CI2C
import CUnwindI2C
import Foundation
import Logging
import Testing
import UnwindCore
import UnwindLinuxHardware

#if canImport(Glibc)
import Glibc
#endif

extension RigTests {
    @Suite("I²C and the SSD1306 on i2c-stub")
    struct RigI2CTests {
        /// The datasheet initialisation the driver sends as one command transfer (control 0x00),
        /// for a 128x64 panel, not flipped, contrast 0x7F.
        static let initialisation: [UInt8] = [
            0xAE, 0xD5, 0x80, 0xA8, 0x3F, 0xD3, 0x00, 0x40, 0x8D, 0x14, 0x20, 0x00, 0xA1, 0xC8,
            0xDA, 0x12, 0x81, 0x7F, 0xD9, 0xF1, 0xDB, 0x40, 0xA4, 0xA6, 0x2E,
        ]

        static let logger = Logger(label: "rig.ssd1306")

        static func openBus() throws -> LinuxI2CBus {
            try LinuxI2CBus(bus: KernelRig.i2cBus, address: KernelRig.i2cAddress)
        }

        static func panel(on bus: LinuxI2CBus) -> SSD1306 {
            SSD1306(bus: bus, logger: logger, clock: { KernelRig.now() })
        }

        /// A frame whose every byte differs from its neighbours, so a misplaced byte shows.
        static func patterned() -> Framebuffer {
            var frame = Framebuffer()
            for i in frame.bytes.indices { frame.bytes[i] = UInt8(truncatingIfNeeded: i &* 37 &+ 11) }
            return frame
        }

        // MARK: - Capabilities

        @Test("the adapter reports SMBus I²C-block writes and no plain I²C, so the driver takes the SMBus path",
              .kernelRig)
        func capabilities() throws {
            let bus = try Self.openBus()
            #expect(bus.bus == KernelRig.i2cBus)
            #expect(!bus.capabilities.contains(.plainI2C), "i2c-stub has no I2C_FUNC_I2C (\(bus.capabilities))")
            #expect(bus.capabilities.contains(.smbusBlockWrite))
            #expect(bus.functionality & unwind_i2c_func_plain_i2c() == 0)
            #expect(!Self.panel(on: bus).usesPlainI2C)

            // What the driver avoids: a plain write is refused by this adapter.
            let plain = #expect(throws: DeviceError.self) { try bus.write([0x00, 0xAE]) }
            #expect(plain?.errno == EOPNOTSUPP)
            #expect(plain?.operation == "ioctl(I2C_RDWR)")

            let missing = #expect(throws: DeviceError.self) { _ = try LinuxI2CBus(bus: 99, address: KernelRig.i2cAddress) }
            #expect(missing?.errno == ENOENT)
            #expect(missing?.hint.contains("no /dev/i2c-99") == true)
        }

        // MARK: - Frames

        @Test("initialisation and a full frame reach the stub as SMBus blocks; partial and unchanged frames send only what changed",
              .kernelRig)
        func frames() throws {
            let registers = try StubRegisters()
            try registers.clear()
            let bus = try Self.openBus()
            let panel = Self.panel(on: bus)

            let frame = Self.patterned()
            try panel.show(frame)
            var stats = panel.statistics
            #expect(!panel.isLost)
            #expect(stats.failures == 0)
            #expect(stats.initialisations == 1)
            #expect(stats.fullFrames == 1)
            // Initialisation (control + 25 commands), window (control + 6), 32 data blocks of
            // register + 32 bytes, display on (control + 0xAF).
            #expect(stats.lastFrame == FrameCost.of(transfers: [26, 7] + Array(repeating: 33, count: 32) + [2]))
            #expect(stats.lastFrame.transfers == 35)

            // Register 0x00 took every command transfer; the last ones overwrote the start of the
            // initialisation: the window (21 00 7F 22 00 07), then display on (AF) alone.
            #expect(try registers.read(0x00, count: 25)
                    == [0xAF, 0x00, 0x7F, 0x22, 0x00, 0x07] + Self.initialisation[6...],
                    "the command transfers, last one first")
            #expect(try registers.read(0x19, count: 0x40 - 0x19).allSatisfy { $0 == 0 }, "no command transfer was longer")
            // Register 0x40 took every data block; the last is the frame's last 32 bytes
            // (page 7, columns 96...127).
            #expect(try registers.read(0x40, count: 32) == Array(frame.bytes[992..<1024]))
            #expect(try registers.read(0x60, count: 0xA0).allSatisfy { $0 == 0 }, "no data block was longer than 32 bytes")

            // Five bytes of page 3 change: one window, one data block.
            var changed = frame
            for column in 10...14 { changed.bytes[3 * 128 + column] ^= 0xFF }
            try panel.show(changed)
            stats = panel.statistics
            #expect(stats.lastFrame == FrameCost.of(transfers: [7, 6]))
            #expect(try registers.read(0x00, count: 6) == [0x21, 10, 14, 0x22, 3, 3], "window: columns 10-14 of page 3")
            #expect(try registers.read(0x40, count: 5) == Array(changed.bytes[(3 * 128 + 10)...(3 * 128 + 14)]))
            #expect(try registers.read(0x45, count: 27) == Array(frame.bytes[997..<1024]),
                    "the rest of the last full-frame block is untouched")

            // The same frame again: nothing on the bus.
            try registers.clear()
            try panel.show(changed)
            stats = panel.statistics
            #expect(stats.lastFrame.transfers == 0)
            #expect(stats.framesUnchanged == 1)
            #expect(try registers.read(0x00, count: 256).allSatisfy { $0 == 0 }, "the stub saw no transfer")
            #expect(stats.failures == 0)
        }

        @Test("contrast, sleep and wake go out as SMBus command blocks", .kernelRig)
        func contrastAndSleep() throws {
            let registers = try StubRegisters()
            let bus = try Self.openBus()
            let panel = Self.panel(on: bus)
            let frame = Self.patterned()
            try panel.show(frame)
            try registers.clear()

            panel.setContrast(0x20)
            try panel.show(frame)
            #expect(try registers.read(0x00, count: 3) == [0x81, 0x20, 0x00], "contrast: 81 20")
            #expect(panel.statistics.lastFrame == FrameCost.of(transfers: [3]))

            panel.setSleeping(true)
            try panel.show(frame)
            #expect(try registers.read(0x00, count: 2) == [0xAE, 0x20], "sleep: AE")

            // Asleep: frames do not go out.
            var changed = frame
            for column in 100...101 { changed.bytes[6 * 128 + column] = 0x5A }
            try registers.clear()
            try panel.show(changed)
            #expect(try registers.read(0x00, count: 256).allSatisfy { $0 == 0 }, "nothing sent while asleep")

            // Waking sends what changed, then display on.
            panel.setSleeping(false)
            try panel.show(changed)
            #expect(try registers.read(0x00, count: 6) == [0xAF, 100, 101, 0x22, 6, 6], "window for the change, then AF")
            #expect(try registers.read(0x40, count: 3) == [0x5A, 0x5A, 0x00])
            #expect(panel.statistics.lastFrame == FrameCost.of(transfers: [7, 3, 2]))
            #expect(panel.statistics.failures == 0)
            #expect(!panel.isLost)
        }
    }
}

/// The i2c-stub chip's register file, read and cleared with SMBus I²C-block transfers through
/// libi2c (i2c_smbus_read_i2c_block_data / i2c_smbus_write_i2c_block_data) on its own descriptor.
final class StubRegisters {
    let fd: Int32

    init() throws {
        fd = open(KernelRig.i2cDevice, O_RDWR | O_CLOEXEC)
        guard fd >= 0 else { throw RigError("open \(KernelRig.i2cDevice): \(String(cString: strerror(errno)))") }
        guard unwind_i2c_set_slave(fd, UInt16(KernelRig.i2cAddress)) == 0 else {
            let e = String(cString: strerror(errno))
            close(fd)
            throw RigError("I2C_SLAVE \(KernelRig.i2cAddress): \(e)")
        }
    }

    deinit { close(fd) }

    /// `count` registers from `first` on (at most up to 0xFF).
    func read(_ first: Int, count: Int) throws -> [UInt8] {
        precondition(first >= 0 && count >= 0 && first + count <= 256)
        var out: [UInt8] = []
        var at = first
        while at < first + count {
            let n = min(32, first + count - at)
            var chunk = [UInt8](repeating: 0, count: 32)
            let r = i2c_smbus_read_i2c_block_data(fd, UInt8(at), UInt8(n), &chunk)
            guard r == n else { throw RigError("SMBus read of \(n) registers at \(at): \(r < 0 ? String(cString: strerror(-r)) : "\(r) bytes")") }
            out += chunk[..<n]
            at += n
        }
        return out
    }

    /// Zeros all 256 registers.
    func clear() throws {
        let zeros = [UInt8](repeating: 0, count: 32)
        for at in stride(from: 0, to: 256, by: 32) {
            let r = i2c_smbus_write_i2c_block_data(fd, UInt8(at), 32, zeros)
            guard r >= 0 else { throw RigError("SMBus write at \(at): \(String(cString: strerror(-r)))") }
        }
        #expect(try read(0, count: 256).allSatisfy { $0 == 0 })
    }
}
