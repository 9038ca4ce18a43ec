import CQREncode
import UnwindCore

/// A QR code sized for the 128x64 OLED, made by libqrencode once at start (never per frame).
///
/// The screen is 64 pixels high. A module must be at least 2 pixels to be read reliably off a
/// small glowing panel, and the quiet zone at least 2 modules (4 is the print standard; the
/// panel's unlit border is no quiet zone, since the code is drawn dark-on-lit): so the symbol
/// is at most (64 / 2) - 2·2 = 28 modules wide, i.e. version 1 (21) or 2 (25). The encoder asks
/// for the strongest error correction that still fits (H, then Q, M, L); a clean, backlit-free
/// screen needs little correction, and L keeps room for a real URL: version 2-L holds 32 bytes.
public enum QRCode {
    public enum Level: String, Sendable, CaseIterable { case H, Q, M, L }

    public static let pixelsPerModule = 2
    public static let minimumQuietZone = 2
    public static let maximumVersion = 2

    public enum Problem: Error, Equatable, CustomStringConvertible, Sendable {
        case tooLong(bytes: Int, maximum: Int)
        case empty
        public var description: String {
            switch self {
            case .tooLong(let n, let max):
                "the address is \(n) bytes; a QR code that fits the 64-pixel screen (version 2, 2 pixels a module) holds at most \(max); use a shorter address"
            case .empty: "the address is empty"
            }
        }
    }

    /// Encodes `text` (QRcode_encodeString, case-sensitive, 8-bit hint) at the smallest version
    /// and strongest correction that fit the screen.
    public static func encode(_ text: String) throws(Problem) -> QRCodeImage {
        if text.isEmpty { throw .empty }
        for level in Level.allCases {
            let ec: QRecLevel = switch level {
            case .H: QR_ECLEVEL_H
            case .Q: QR_ECLEVEL_Q
            case .M: QR_ECLEVEL_M
            case .L: QR_ECLEVEL_L
            }
            // Version 0 lets libqrencode pick the smallest version that holds the text.
            guard let code = QRcode_encodeString(text, 0, ec, QR_MODE_8, 1) else { continue }
            defer { QRcode_free(code) }
            let v = Int(code.pointee.version)
            guard v <= maximumVersion else { continue }
            let w = Int(code.pointee.width)
            var m = [Bool](repeating: false, count: w * w)
            for i in 0..<(w * w) { m[i] = code.pointee.data[i] & 1 != 0 }
            return QRCodeImage(size: w, modules: m, version: v, level: level.rawValue)
        }
        throw .tooLong(bytes: text.utf8.count, maximum: 32)
    }
}

extension Framebuffer {
    /// Draws `code` dark-on-lit with its quiet zone, its top-left corner (quiet zone included)
    /// at (x, y); returns the width used.
    @discardableResult
    public mutating func qrCode(_ code: QRCodeImage, x: Int, y: Int, quietZone: Int) -> Int {
        let px = QRCode.pixelsPerModule
        let side = (code.size + 2 * quietZone) * px
        fill(x: x, y: y, width: side, height: side)
        for my in 0..<code.size {
            for mx in 0..<code.size where code[mx, my] {
                fill(x: x + (quietZone + mx) * px, y: y + (quietZone + my) * px, width: px, height: px, .off)
            }
        }
        return side
    }
}
