#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import UnwindMaintenance
import UnwindCore
import UnwindRuntime

/// Anyone who can open `<state>/.lock` can hold it. The device must never wait for it without a
/// deadline: its writes are kept and tried again, and quitting does not hang.
@Suite("A state lock held by someone else")
struct HostileLockTests {
    /// A shared lock, as `flock -s <state>/.lock sleep 1000` would take.
    final class Holder {
        let fd: Int32
        init(_ directory: String) throws {
            fd = open(directory + "/" + StateLock.fileName, O_RDONLY | O_CREAT | O_CLOEXEC, 0o660)
            try #require(fd >= 0 && flock(fd, LOCK_SH) == 0)
        }
        func release() { flock(fd, LOCK_UN); close(fd) }
    }

    @Test func writesWaitAndLandOnceTheLockIsFreeAndQuittingDoesNotHang() throws {
        let rig = try MaintenanceRig()
        let holder = try Holder(rig.directory)
        let clock = ContinuousClock()

        // A change while the lock is held: answered (not hung), honestly "delayed".
        let started = clock.now
        let r = rig.unwind(["mantras", "add", "Held but not lost."])
        #expect(clock.now - started < .seconds(15), "the command waited \(clock.now - started)")
        #expect(r.status == 1 && r.stderr.contains("delayed"), "\(r)")
        #expect(r.stderr.contains("the device uses the change now, but it is not on the card"), "\(r)")
        #expect(!(rig.file(MantrasFile.name) ?? "").contains("Held but not lost."))
        // The loop kept running meanwhile: the status answers.
        #expect(rig.status() != nil)

        // Released: the kept write lands within a retry or two.
        holder.release()
        #expect(rig.wait(.seconds(8)) { (rig.file(MantrasFile.name) ?? "").contains("Held but not lost.") },
                "the delayed write never landed")

        // Held again at shutdown: quitting is bounded.
        let again = try Holder(rig.directory)
        defer { again.release() }
        #expect(rig.unwind(["mantras", "add", "One more."]).status == 1)
        let stopping = clock.now
        rig.shutdown()
        #expect(clock.now - stopping < .seconds(8), "shutdown took \(clock.now - stopping)")
        // Written without the lock on the way out: nothing the person or maintainer did is lost.
        #expect((rig.file(MantrasFile.name) ?? "").contains("One more."), "the change made while the lock was held was lost")
        print("hostile lock: a shared .lock held during a change and at shutdown — the device answered, kept the write, landed it after release, and quit in \(clock.now - stopping)")
    }

    /// The device starts with the lock held (loading goes on after a bounded wait): a held lock
    /// must not keep PANIC from working after a restart.
    @Test func theDeviceStartsWhileTheLockIsHeld() throws {
        let directory = temporaryDirectory("lockheld")
        let holder = try Holder(directory)
        defer { holder.release() }
        let clock = ContinuousClock()
        let started = clock.now
        let rig = try MaintenanceRig(directory: directory)
        #expect(clock.now - started < .seconds(15), "starting took \(clock.now - started)")
        #expect(rig.status() != nil)
        rig.shutdown()
    }

    /// A write that fails (the state directory made immutable: nothing can be renamed into it)
    /// is said as it is: the device uses the new contact now, the card does not have it.
    @Test(.enabled(if: KeptBeforeReplacedTests.canMakeImmutable, "the file system here has no immutable files"))
    func aFailedSaveSaysTheDeviceUsesTheChangeButTheCardDoesNot() throws {
        let rig = try MaintenanceRig()
        try require(KeptBeforeReplacedTests.runTool("/usr/bin/chattr", ["+i", rig.directory]))
        defer { _ = KeptBeforeReplacedTests.runTool("/usr/bin/chattr", ["-i", rig.directory]) }
        let r = rig.unwind(["alerts", "set", "3", "--name", "Carol", "--number", "+15550100", "--message", "Please call."])
        #expect(r.status == 1, "\(r)")
        #expect(r.stderr.contains("the device uses the change now, but it is not on the card"), "\(r)")
        #expect(r.stderr.contains("failed"), "\(r)")
        #expect(rig.status()?.alertSlots[2].hasPrefix("Carol") == true)
    }
}
