import Foundation

/// What kind of machine the suite runs on, where that changes what a test may promise.
public enum TestMachine {
    /// The suite runs as foreign code under an instruction-set emulator (`Tests/Arm64`: aarch64
    /// under qemu-user sets `UNWIND_TEST_EMULATED=1`). Behaviour is checked there as everywhere;
    /// wall-clock figures (frame deadlines, how long a command took) are an emulator's, 10 to 50
    /// times a board's, so tests that measure time check them only natively and say so.
    public static let emulated = ProcessInfo.processInfo.environment["UNWIND_TEST_EMULATED"] == "1"
}
