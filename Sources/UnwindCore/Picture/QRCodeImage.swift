/// A QR code as modules, made once by the edge (libqrencode) and drawn by the renderer.
public struct QRCodeImage: Equatable, Sendable {
    /// Modules per side.
    public let size: Int
    /// Row-major, true = dark module.
    public let modules: [Bool]
    public let version: Int
    /// Error correction: "L", "M", "Q" or "H".
    public let level: String

    public init(size: Int, modules: [Bool], version: Int, level: String) {
        precondition(modules.count == size * size)
        self.size = size
        self.modules = modules
        self.version = version
        self.level = level
    }

    public subscript(x: Int, y: Int) -> Bool { modules[y * size + x] }
}
