import Foundation
import Logging
import Testing
import UnwindAssembly
import UnwindCore
import UnwindSimulatedHardware
import UnwindTestSupport

/// One owner of shutdown: the assembly undoes the board's parts in the board's order, once —
/// after the loop's last save, and when the device cannot be assembled at all, so no caller
/// (`unwind run`, the terminal simulator) needs a failure path of its own.
@Suite struct AssemblyShutdownTests {
    final class Undone: @unchecked Sendable {
        var parts: [String] = []
    }

    static func board(_ undone: Undone) -> Board {
        let time = SimulatedTime()
        return Board(clock: time, waiter: time, motor: SimulatedMotor(clock: time), buttons: SimulatedButtons(clock: time),
                     presenter: SimulatedDisplay(),
                     teardown: [{ undone.parts.append("presenter") }, { undone.parts.append("motor") },
                                { undone.parts.append("buttons") }])
    }

    static var quiet: Logger {
        var logger = Logger(label: "unwind.test.assembly")
        logger.logLevel = .critical
        return logger
    }

    @Test func aDeviceThatCannotBeAssembledUndoesTheBoardInItsOrder() throws {
        let dir = temporaryDirectory("assembly-fails")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // The state directory is a file: nothing can be kept there.
        let notADirectory = dir + "/state"
        #expect(FileManager.default.createFile(atPath: notADirectory, contents: Data("a file".utf8)))
        let undone = Undone()
        let recipe = DeviceRecipe(stateDirectory: notADirectory, settings: DeviceSettings(), writeInBackground: false)
        #expect(throws: AssemblyError.self) {
            _ = try DeviceAssembly(board: Self.board(undone), recipe: recipe, logger: Self.quiet)
        }
        #expect(undone.parts == ["presenter", "motor", "buttons"])
    }

    @Test func anAlertLinkThatCannotOpenUndoesTheBoardToo() throws {
        let dir = temporaryDirectory("assembly-no-modem")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        struct NoModem: Error {}
        let undone = Undone()
        let recipe = DeviceRecipe(stateDirectory: dir, settings: DeviceSettings(), writeInBackground: false)
        #expect(throws: AssemblyError.self) {
            _ = try DeviceAssembly(board: Self.board(undone), recipe: recipe, alerts: { _ in throw NoModem() }, logger: Self.quiet)
        }
        #expect(undone.parts == ["presenter", "motor", "buttons"])
    }

    @Test func aFinishedDeviceUndoesTheBoardOnce() throws {
        let dir = temporaryDirectory("assembly-finishes")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let undone = Undone()
        let recipe = DeviceRecipe(stateDirectory: dir, settings: DeviceSettings(), writeInBackground: false)
        let device = try DeviceAssembly(board: Self.board(undone), recipe: recipe, logger: Self.quiet)
        device.run(until: { true })
        device.finish()
        #expect(undone.parts == ["presenter", "motor", "buttons"])
    }
}
