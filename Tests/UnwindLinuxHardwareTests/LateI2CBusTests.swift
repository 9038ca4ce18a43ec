#if canImport(Glibc)
import Glibc
#endif
import Logging
import Testing
import UnwindCore
import UnwindSeams
import UnwindLinuxHardware

/// A display bus that is not there at start (`/dev/i2c-N` missing): the device runs with its
/// display lost instead of exiting, and every try opens the bus again.
@Suite struct LateI2CBusTests {
    /// A bus number no machine here has.
    static let missing = 987

    @Test func eachTransferTriesTheBusAgainAndThrowsItsOpenError() {
        let bus = LateI2CBus(bus: Self.missing, address: 0x3C)
        for _ in 0..<2 {
            let errors = [
                #expect(throws: DeviceError.self) { try bus.write([0x00, 0xAE]) },
                #expect(throws: DeviceError.self) { try bus.writeMessages([0x00], [0xAE]) },
                #expect(throws: DeviceError.self) { try bus.smbusBlockWrite(register: 0x40, [0xFF]) },
            ]
            for e in errors {
                #expect(e?.errno == ENOENT, "\(String(describing: e))")
                #expect(e.map { "\($0)".contains("/dev/i2c-\(Self.missing)") } == true, "\(String(describing: e))")
            }
        }
        #expect(!bus.isOpen)
    }

    @Test func theDisplayOnItIsLostNotAStop() {
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        var now = Instant(nanoseconds: 0)
        let panel = SSD1306(bus: LateI2CBus(bus: Self.missing, address: 0x3C), logger: logger, clock: { now })
        #expect(throws: DeviceError.self) { try panel.show(Framebuffer(width: 128, height: 64)) }
        #expect(panel.isLost)
        now = Instant(nanoseconds: 3_600_000_000_000)
        #expect(throws: DeviceError.self) { try panel.show(Framebuffer(width: 128, height: 64)) }
        #expect(panel.isLost)
    }
}
