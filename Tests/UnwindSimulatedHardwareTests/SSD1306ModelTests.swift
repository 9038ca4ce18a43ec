import Testing
import UnwindSimulatedHardware

/// The SSD1306 model itself, on hand-written byte streams: what the other tests decode the
/// driver's bytes with must be right first.
@Suite struct SSD1306ModelTests {
    @Test func modelPageAddressingMode() {
        let m = SSD1306Model(garbageSeed: nil)
        #expect(m.addressingMode == .page)  // the reset mode
        m.receive([0x00, 0xB2, 0x05, 0x11])  // page 2, column 0x15
        m.receive([0x40, 0xAA, 0xBB])
        #expect(m.memory[2 * 128 + 21] == 0xAA && m.memory[2 * 128 + 22] == 0xBB)
        // Co = 1: one command or data byte per control byte.
        m.receive([0x80, 0xB1, 0x80, 0x02, 0x80, 0x10, 0xC0, 0x55, 0x40, 0x66, 0x77])
        #expect(m.memory[128 + 2] == 0x55 && m.memory[128 + 3] == 0x66 && m.memory[128 + 4] == 0x77)
        // At the end of the page the column wraps to the column start; the page stays.
        m.receive([0x00, 0xB3, 0x0E, 0x17])  // page 3, column 126
        m.receive([0x40, 1, 2, 3])
        #expect(m.memory[3 * 128 + 127] == 2)
        #expect(m.memory[3 * 128 + 126] == 3)
        #expect(m.memory[4 * 128] == 0)
        #expect(m.page == 3)
        // SMBus block writes are the same stream.
        m.receive(register: 0x00, [0xB7, 0x00, 0x10])
        m.receive(register: 0x40, [9, 8])
        #expect(m.memory[7 * 128] == 9 && m.memory[7 * 128 + 1] == 8)
        #expect(m.violations.isEmpty, "\(m.violations)")
    }

    @Test func modelVerticalAndHorizontalModes() {
        let m = SSD1306Model(garbageSeed: nil)
        m.receive([0x00, 0x20, 0x01, 0x21, 10, 11, 0x22, 2, 4])
        m.receive([0x40, 1, 2, 3, 4, 5, 6, 7])
        #expect(m.memory[2 * 128 + 10] == 7)  // wrapped back to the window's start
        #expect(m.memory[3 * 128 + 10] == 2 && m.memory[4 * 128 + 10] == 3)
        #expect(m.memory[2 * 128 + 11] == 4 && m.memory[3 * 128 + 11] == 5 && m.memory[4 * 128 + 11] == 6)
        #expect(m.column == 10 && m.page == 3)

        m.receive([0x00, 0x20, 0x00, 0x21, 120, 121, 0x22, 6, 7])
        m.receive([0x40, 1, 2, 3, 4, 5])
        #expect(m.memory[6 * 128 + 120] == 5 && m.memory[6 * 128 + 121] == 2)
        #expect(m.memory[7 * 128 + 120] == 3 && m.memory[7 * 128 + 121] == 4)
        #expect(m.violations.isEmpty, "\(m.violations)")
    }

    @Test func modelFlagsProtocolMistakes() {
        let m = SSD1306Model(garbageSeed: nil)
        m.receive([0x00, 0x81])                   // argument cut off by the STOP
        m.receive([0x00, 0xFF])                   // unknown command
        m.receive([0x00, 0x20, 0x00, 0xB3])       // page start in horizontal mode
        m.receive([0x80, 0xA8, 0x40, 0x01])       // data while 0xA8 waits for its argument
        #expect(m.violations.count == 4, "\(m.violations)")
        #expect(m.contrast == 0x7F)
    }

    @Test func modelVisibleImageFollowsTheDisplayState() {
        let m = SSD1306Model(garbageSeed: nil)
        m.receive([0x00, 0x20, 0x00, 0xA1, 0xC8, 0x21, 0, 127, 0x22, 0, 7])
        m.receive([0x40, 0x03])  // the two top-left pixels
        #expect(m.visibleFramebuffer().litPixels == 0)  // off, no charge pump
        m.receive([0x00, 0x8D, 0x14, 0xAF])
        #expect(m.visibleFramebuffer() == m.framebuffer())
        m.receive([0x00, 0xA0, 0xC0])  // rotated: now bottom-right
        #expect(m.visibleFramebuffer()[127, 63] && m.visibleFramebuffer()[127, 62])
        #expect(m.visibleFramebuffer().litPixels == 2)
        m.receive([0x00, 0xA7])
        #expect(m.visibleFramebuffer().litPixels == 128 * 64 - 2)
        m.receive([0x00, 0xA6, 0xA5])
        #expect(m.visibleFramebuffer().litPixels == 128 * 64)
        // A 64-row panel with the 32-row COM pins setting interleaves rows.
        m.receive([0x00, 0xA4, 0xA1, 0xC8, 0xDA, 0x02])
        #expect(m.visibleFramebuffer() != m.framebuffer())
    }
}
