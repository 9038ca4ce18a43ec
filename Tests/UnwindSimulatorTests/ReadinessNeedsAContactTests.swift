import Foundation
import Testing
import UnwindMaintenance

/// "Readiness: ready" promises that a PANIC would reach someone. With every alert slot empty it
/// would reach nobody, however well the modem is: status says so, in the readiness line itself.
@Suite struct ReadinessNeedsAContactTests {
    @Test func noContactIsNotReadyAndOneContactIs() throws {
        let rig = try MaintenanceRig()
        #expect(rig.wait { rig.status()?.modem?.link == "ready" })
        let empty = rig.unwind(["status"])
        #expect(empty.status == 0, "\(empty)")
        #expect(empty.stdout.contains("Readiness: not ready: no alert contacts are set, so a PANIC would reach nobody"), "\(empty.stdout)")
        #expect(rig.status()?.help?.readiness == "not ready")

        #expect(rig.unwind(["alerts", "set", "1", "--name", "Mum", "--number", "+447700900123", "--message", "Call me"]).status == 0)
        #expect(rig.wait { rig.status()?.help?.readiness == "ready" })
        // The problem list follows within a wall-clock second (it is kept once a second).
        var one = ""
        #expect(rig.wait {
            one = rig.unwind(["status"]).stdout
            return one.contains("Readiness: ready") && !one.contains("no alert contacts")
        }, "\(one)")
    }
}
