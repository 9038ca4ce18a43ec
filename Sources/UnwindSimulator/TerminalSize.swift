import CLinuxSystem
import UnwindSimulatedHardware
import UnwindRender

extension TerminalLayout {
    /// The size of the terminal on `fd` (TIOCGWINSZ); 0x0 when `fd` is no terminal or the
    /// terminal does not say (a serial console), which `TerminalLayout` draws full size.
    public static func measure(_ fd: Int32) -> TerminalLayout {
        var c: UInt16 = 0, r: UInt16 = 0
        guard unwind_terminal_size(fd, &c, &r) == 0 else { return TerminalLayout(columns: 0, rows: 0) }
        return TerminalLayout(columns: Int(c), rows: Int(r))
    }
}
