#if canImport(Glibc)
import Glibc
#endif
import UnwindCore

/// An SSD1306 as the bus sees it: decodes each I²C write transaction like the chip, keeps the
/// 128x64 GDDRAM and the registers, and tells what a person would see.
///
/// ## Decoding
/// A transaction (the bytes after the address byte) starts with a control byte: bit 7 `Co`,
/// bit 6 `D/C#`. `0x00` makes every following byte a command (arguments included), `0x40` data,
/// until the STOP; `0x80` / `0xC0` (Co = 1) cover exactly one byte, after which another control
/// byte follows. An SMBus block write is the same on the wire (register = control byte), so both
/// bus paths arrive here identically.
///
/// Data bytes go to GDDRAM at the pointer, which advances per the addressing mode:
/// - horizontal (0x20 0): column++, past the window's end column back to its start and page++,
///   past the end page back to the start page;
/// - vertical (0x20 1): page++, past the end page back to the start page and column++, past the
///   end column back to the start column;
/// - page (0x20 2, the reset mode): column++, past 127 back to the column start address set by
///   0x00–0x1F (the datasheet's "reset to column start address"), page unchanged.
/// 0x21/0x22 set the window and move the pointer to its start. The page-mode commands
/// (0xB0–0xB7, 0x00–0x1F) and the window commands outside their modes are still applied but
/// recorded in `violations`, as are unknown commands, bad arguments, a command cut off by the end
/// of a transaction, and a COM pins setting that does not match the module.
///
/// ## What a person sees (`visibleFramebuffer`)
/// The module is assumed wired the way the common breakout boards are: upright with segment
/// remap on (0xA1, RAM column 127 on SEG0) and COM scan reversed (0xC8), which is what the
/// driver sends unless `flipped`. So a glass column x shows RAM column x with 0xA1 and
/// 127 − x with 0xA0; glass row y is on COM[rows − 1 − y], which shows scan line
/// y + mux − rows with 0xC8 and rows − 1 − y with 0xC0 (with mux = rows: y, or the rows upside
/// down).
/// `mounting: .upsideDown` then turns the whole glass by 180° for the viewer. Hence a driver
/// configured `flipped` (0xA0/0xC0) shows its frame upright on an upside-down module, and upside
/// down on an upright one. Scan line k shows RAM row (start line + offset + k) mod 64 (exact for
/// the start line and offset 0 every driver here uses). A COM pins setting other than the one
/// the module needs (0x12 for 64 rows, 0x02 for 32) interleaves the rows, the well-known
/// every-other-line symptom. Nothing is lit while the display is off (0xAE) or the charge pump
/// is off; 0xA5 lights everything and 0xA7 inverts. Contrast and scrolling are not drawn.
public final class SSD1306Model {
    public enum Mounting: Sendable { case upright, upsideDown }
    public enum AddressingMode: UInt8, Sendable { case horizontal = 0, vertical = 1, page = 2 }

    /// The glass: 64 or 32 rows of 128 pixels.
    public let rows: Int
    public let mounting: Mounting

    /// GDDRAM, 8 pages of 128 columns, page-major like `Framebuffer.bytes`.
    public private(set) var memory: [UInt8]
    public private(set) var isOn = false
    public private(set) var contrast: UInt8 = 0x7F
    /// 0xA1: column 127 on SEG0.
    public private(set) var segmentRemap = false
    /// 0xC8: COM scan from COM[N-1] to COM0.
    public private(set) var comScanReversed = false
    public private(set) var addressingMode = AddressingMode.page
    public private(set) var multiplexRatio = 64
    public private(set) var displayOffset = 0
    public private(set) var startLine = 0
    /// 0xDA's argument.
    public private(set) var comPins: UInt8 = 0x12
    public private(set) var chargePump = false
    public private(set) var inverted = false
    public private(set) var entireDisplayOn = false
    public private(set) var isScrolling = false
    public private(set) var clockDivide: UInt8 = 0x80
    public private(set) var precharge: UInt8 = 0x22
    public private(set) var vcomh: UInt8 = 0x20
    /// The window (horizontal and vertical modes) and the pointer.
    public private(set) var columnStart = 0, columnEnd = 127, pageStart = 0, pageEnd = 7
    public private(set) var column = 0, page = 0
    /// Page mode's column start address (0x00–0x1F).
    public private(set) var pageModeColumnStart = 0

    public private(set) var transactions = 0
    public private(set) var commandsReceived = 0
    public private(set) var dataBytesReceived = 0
    /// Every protocol problem seen, in order, as text.
    public private(set) var violations: [String] = []
    /// Power-on resets so far (the first one included).
    public private(set) var powerOns = 0

    // Decoder state.
    private var pending: [UInt8] = []
    private var pendingNeeds = 0
    private var garbage: UInt64

    /// - Parameter garbageSeed: GDDRAM content after power-on is undefined; it is filled with
    ///   pseudo-random bytes from this seed (nil: zeros).
    public init(rows: Int = 64, mounting: Mounting = .upright, garbageSeed: UInt64? = 0x5EED_1306) {
        precondition(rows == 64 || rows == 32, "SSD1306Model: 64 or 32 rows")
        self.rows = rows
        self.mounting = mounting
        memory = [UInt8](repeating: 0, count: 1024)
        garbage = garbageSeed ?? 0
        useGarbage = garbageSeed != nil
        powerOn()
    }

    private let useGarbage: Bool

    /// Power-on reset: the datasheet's reset values, display off, GDDRAM undefined.
    public func powerOn() {
        powerOns += 1
        isOn = false; contrast = 0x7F; segmentRemap = false; comScanReversed = false
        addressingMode = .page; multiplexRatio = 64; displayOffset = 0; startLine = 0; comPins = 0x12
        chargePump = false; inverted = false; entireDisplayOn = false; isScrolling = false
        clockDivide = 0x80; precharge = 0x22; vcomh = 0x20
        columnStart = 0; columnEnd = 127; pageStart = 0; pageEnd = 7; column = 0; page = 0; pageModeColumnStart = 0
        pending.removeAll(); pendingNeeds = 0
        for i in 0..<memory.count {
            if useGarbage {
                // SplitMix64.
                garbage &+= 0x9E37_79B9_7F4A_7C15
                var z = garbage
                z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
                z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
                memory[i] = UInt8(truncatingIfNeeded: z ^ (z >> 31))
            } else {
                memory[i] = 0
            }
        }
    }

    /// True when the display shows RAM: on, charge pump on, following RAM.
    public var isInitialised: Bool { isOn && chargePump && !isScrolling }

    // MARK: Decoding

    /// One I²C write transaction: the bytes after the address byte, control bytes included.
    public func receive<C: Collection<UInt8>>(_ bytes: C) {
        transactions += 1
        var i = bytes.startIndex
        while i != bytes.endIndex {
            let control = bytes[i]
            bytes.formIndex(after: &i)
            if control & 0x3F != 0 { violation("control byte \(hex(control)) has bits 5–0 set") }
            let isData = control & 0x40 != 0
            let single = control & 0x80 != 0
            if single {
                guard i != bytes.endIndex else { violation("control byte \(hex(control)) without its byte"); break }
                let b = bytes[i]
                bytes.formIndex(after: &i)
                if isData { writeData(b) } else { command(b) }
            } else {
                while i != bytes.endIndex {
                    let b = bytes[i]
                    if isData { writeData(b) } else { command(b) }
                    bytes.formIndex(after: &i)
                }
            }
        }
        if pendingNeeds > 0 {
            violation("command \(hex(pending[0])) cut off by the STOP (\(pendingNeeds) argument(s) missing)")
            pending.removeAll(); pendingNeeds = 0
        }
    }

    /// An SMBus I²C-block write: the register is the control byte.
    public func receive(register: UInt8, _ bytes: some Collection<UInt8>) {
        receive([register] + Array(bytes))
    }

    private func writeData(_ b: UInt8) {
        if pendingNeeds > 0 {
            violation("data while command \(hex(pending[0])) waits for arguments")
            pending.removeAll(); pendingNeeds = 0
        }
        dataBytesReceived += 1
        memory[page * 128 + column] = b
        switch addressingMode {
        case .horizontal:
            column += 1
            if column > columnEnd {
                column = columnStart
                page += 1
                if page > pageEnd { page = pageStart }
            }
        case .vertical:
            page += 1
            if page > pageEnd {
                page = pageStart
                column += 1
                if column > columnEnd { column = columnStart }
            }
        case .page:
            column += 1
            if column > 127 { column = pageModeColumnStart }
        }
    }

    private func command(_ b: UInt8) {
        if pendingNeeds > 0 {
            pending.append(b)
            pendingNeeds -= 1
            if pendingNeeds == 0 { execute(pending); pending.removeAll() }
            return
        }
        let needs = Self.argumentCount(b)
        if needs == 0 {
            execute([b])
        } else {
            pending = [b]
            pendingNeeds = needs
        }
    }

    /// Arguments each command takes.
    public static func argumentCount(_ command: UInt8) -> Int {
        switch command {
        case 0x81, 0xA8, 0xD3, 0xD5, 0xD9, 0xDA, 0xDB, 0x8D, 0x20, 0xD6, 0x23: return 1
        case 0x21, 0x22, 0xA3: return 2
        case 0x29, 0x2A: return 5
        case 0x26, 0x27: return 6
        default: return 0
        }
    }

    private func execute(_ c: [UInt8]) {
        commandsReceived += 1
        let op = c[0]
        switch op {
        case 0x00...0x0F:
            if addressingMode != .page { violation("lower column start \(hex(op)) outside page addressing mode") }
            pageModeColumnStart = (pageModeColumnStart & 0xF0) | Int(op & 0x0F)
            column = pageModeColumnStart
        case 0x10...0x1F:
            if addressingMode != .page { violation("higher column start \(hex(op)) outside page addressing mode") }
            pageModeColumnStart = (pageModeColumnStart & 0x0F) | (Int(op & 0x07) << 4)
            column = pageModeColumnStart
        case 0x20:
            switch c[1] & 0x03 {
            case 0: addressingMode = .horizontal
            case 1: addressingMode = .vertical
            case 2: addressingMode = .page
            default: violation("memory addressing mode 3 is invalid")
            }
        case 0x21:
            if addressingMode == .page { violation("column address 0x21 in page addressing mode") }
            let a = Int(c[1] & 0x7F), b = Int(c[2] & 0x7F)
            if c[1] > 0x7F || c[2] > 0x7F { violation("column address \(c[1])...\(c[2]) beyond 127") }
            if a > b { violation("column window \(a)...\(b) is empty") }
            columnStart = a; columnEnd = b; column = a
        case 0x22:
            if addressingMode == .page { violation("page address 0x22 in page addressing mode") }
            let a = Int(c[1] & 0x07), b = Int(c[2] & 0x07)
            if c[1] > 7 || c[2] > 7 { violation("page address \(c[1])...\(c[2]) beyond 7") }
            if a > b { violation("page window \(a)...\(b) is empty") }
            pageStart = a; pageEnd = b; page = a
        case 0x23, 0xD6: break  // fade/blink, zoom (SSD1306B): not drawn
        case 0x26, 0x27, 0x29, 0x2A, 0xA3: break  // scroll setup: not drawn
        case 0x2E: isScrolling = false
        case 0x2F: isScrolling = true
        case 0x40...0x7F: startLine = Int(op & 0x3F)
        case 0x81: contrast = c[1]
        case 0x8D:
            if c[1] & 0x10 == 0 || c[1] & 0x6A != 0 { violation("charge pump argument \(hex(c[1]))") }
            chargePump = c[1] & 0x04 != 0
        case 0xA0: segmentRemap = false
        case 0xA1: segmentRemap = true
        case 0xA4: entireDisplayOn = false
        case 0xA5: entireDisplayOn = true
        case 0xA6: inverted = false
        case 0xA7: inverted = true
        case 0xA8:
            let m = Int(c[1] & 0x3F) + 1
            if m < 16 { violation("multiplex ratio \(m) below 16") } else { multiplexRatio = m }
        case 0xAE: isOn = false
        case 0xAF: isOn = true
        case 0xB0...0xB7:
            if addressingMode != .page { violation("page start \(hex(op)) outside page addressing mode") }
            page = Int(op & 0x07)
        case 0xC0: comScanReversed = false
        case 0xC8: comScanReversed = true
        case 0xD3: displayOffset = Int(c[1] & 0x3F)
        case 0xD5: clockDivide = c[1]
        case 0xD9:
            if c[1] & 0x0F == 0 || c[1] & 0xF0 == 0 { violation("pre-charge phase of 0 DCLKs (\(hex(c[1])))") }
            precharge = c[1]
        case 0xDA:
            if c[1] & 0xCF != 0x02 { violation("COM pins argument \(hex(c[1]))") }
            else if c[1] != requiredComPins { violation("COM pins \(hex(c[1])) on a module wired for \(hex(requiredComPins))") }
            comPins = c[1]
        case 0xDB: vcomh = c[1]
        case 0xE3: break  // NOP
        default: violation("unknown command \(hex(op))")
        }
    }

    private func violation(_ s: String) { violations.append(s) }

    private func hex(_ b: UInt8) -> String {
        let d = Array("0123456789ABCDEF")
        return "0x" + String(d[Int(b >> 4)]) + String(d[Int(b & 15)])
    }

    // MARK: Reading the display

    /// GDDRAM as a 128x64 framebuffer, no mapping.
    public func framebuffer() -> Framebuffer {
        var fb = Framebuffer(width: 128, height: 64)
        fb.bytes = memory
        return fb
    }

    /// Whether GDDRAM holds exactly `frame` (its bytes, page-major). Compared as memory: a
    /// measurement checks this after each of tens of thousands of frames.
    public func holds(_ frame: Framebuffer) -> Bool {
        guard frame.bytes.count <= memory.count else { return false }
        return memory.withUnsafeBytes { m in
            frame.bytes.withUnsafeBytes { f in f.isEmpty || memcmp(m.baseAddress!, f.baseAddress!, f.count) == 0 }
        }
    }

    /// The COM pins setting the module's wiring needs.
    public var requiredComPins: UInt8 { rows == 64 ? 0x12 : 0x02 }

    /// What a person sees: `rows` rows of 128 pixels (see the type's documentation).
    public func visibleFramebuffer() -> Framebuffer {
        var fb = Framebuffer(width: 128, height: rows)
        guard isOn && chargePump else { return fb }
        let mux = multiplexRatio
        for y in 0..<rows {
            // The glass row the viewer sees at y, and the COM line driving it.
            let glassRow = mounting == .upright ? y : rows - 1 - y
            let com = rows - 1 - glassRow  // glass row 0 is on COM[rows-1]
            var scan = comScanReversed ? mux - 1 - com : com
            if comPins != requiredComPins {
                // Rows interleaved: even scan lines on one half, odd on the other.
                scan = scan % 2 == 0 ? scan / 2 : mux / 2 + scan / 2
            }
            guard scan >= 0 && scan < mux else { continue }  // COM not driven
            let ramRow = (startLine + displayOffset + scan) % 64
            for x in 0..<128 {
                let glassColumn = mounting == .upright ? x : 127 - x
                let ramColumn = segmentRemap ? glassColumn : 127 - glassColumn
                var lit = memory[(ramRow >> 3) * 128 + ramColumn] & (1 << UInt8(ramRow & 7)) != 0
                if inverted { lit.toggle() }
                if entireDisplayOn { lit = true }
                if lit { fb[x, y] = true }
            }
        }
        return fb
    }
}
