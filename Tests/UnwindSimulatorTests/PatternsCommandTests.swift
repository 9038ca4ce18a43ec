import Foundation
import Testing
import UnwindCore
import UnwindSimulator
import UnwindMaintenance

/// `unwind patterns` and `unwind stats --csv`, end to end: against a running device (through
/// its control socket, the device the one writer) and against the files when none runs.
@Suite(.serialized) struct PatternsCommandTests {
    @Test func aPatternAddedIsOfferedAtOnceAndRemovedAgain() throws {
        let rig = try MaintenanceRig()
        let add = rig.unwind(["patterns", "add", "evening", "4,2,8,0"])
        #expect(add.status == 0, "\(add)")
        #expect(add.stdout.contains("added pattern evening: 4,2,8,0") && add.stdout.contains("offered on the breathing page now"))
        #expect(rig.file("patterns.txt") == "evening 4,2,8,0\n")
        #expect(rig.loop.core.state.breathing.presets.last?.name == "evening")
        // The person chooses it: LEFT from the first goes round to the last.
        rig.buttons.tap(.left)
        #expect(rig.wait { rig.loop.core.state.breathing.preset.name == "evening" })
        #expect(rig.wait { rig.file("breathing.txt") == "pattern evening\nlength open\n" })
        // The maintainer sees the choice in `unwind status`.
        let status = rig.unwind(["status"])
        #expect(status.stdout.contains("Pattern:   evening: 4,2,8,0 (") && status.stdout.contains("; sessions open-ended"), "\(status)")
        #expect(rig.status()?.breathing?.hasPrefix("evening: 4,2,8,0") == true)
        let slow = rig.unwind(["patterns", "add", "slowing", "4,0,6,0 from 11 over 180"])
        #expect(slow.status == 0, "\(slow)")
        let list = rig.unwind(["patterns", "list"])
        #expect(list.stdout.contains("* evening    4,2,8,0"), "\(list)")
        #expect(list.stdout.contains("  slowing    4,0,6,0 from 11 over 180"), "\(list)")
        // Removing the one chosen: the page offers the first again, and says so.
        let remove = rig.unwind(["patterns", "remove", "evening"])
        #expect(remove.status == 0 && remove.stdout.contains("the page now offers box"), "\(remove)")
        #expect(rig.file("patterns.txt") == "slowing 4,0,6,0 from 11 over 180\n")
        #expect(rig.file("breathing.txt") == "pattern box\nlength open\n")
        // Refused by the device in the same words as offline, nothing changed.
        for (args, words) in [(["add", "calm", "4,4,4,4"], "calm is a shipped preset's name"),
                              (["add", "slowing", "4,4,4,4"], "there is already a pattern called slowing"),
                              (["add", "x", "4,4,4"], "expected four lengths"),
                              (["remove", "sigh"], "sigh is shipped with the device and cannot be removed"),
                              (["remove", "evening"], "there is no pattern of your own called \"evening\"; yours: slowing")] {
            let r = rig.unwind(["patterns"] + args)
            #expect(r.status == 2 && r.stderr.contains(words), "\(args): \(r)")
        }
        #expect(rig.file("patterns.txt") == "slowing 4,0,6,0 from 11 over 180\n")
        rig.shutdown()
    }

    @Test func withoutADeviceTheFilesAreEditedAndTheDeviceReadsThemAtStart() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let state = dir + "/state"
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true)
        let add = UnwindRun.run(["patterns", "add", "double", "2+1,0,7,0", "--state", state])
        #expect(add.status == 0 && add.stdout.contains("the files were changed directly"), "\(add)")
        for i in 0..<19 { _ = UnwindRun.run(["patterns", "add", "p\(i)", "4,4,4,4", "--state", state]) }
        let full = UnwindRun.run(["patterns", "add", "one-more", "4,4,4,4", "--state", state])
        #expect(full.status == 2 && full.stderr.contains("at most 20"), "\(full)")
        // The device offers them after the shipped ones; LEFT from box reaches the last one.
        try Data("1 LEFT\n2 SELECT\n30 end\n".utf8).write(to: URL(fileURLWithPath: dir + "/s.txt"))
        let run = UnwindRun.run(["sim", "--headless", dir + "/s.txt", "--out", dir + "/out", "--state", state, "--no-frames"])
        #expect(run.status == 0, "\(run)")
        #expect(readText(state + "/breathing.txt") == "pattern p18\nlength open\n")
        #expect(readText(state + "/sessionHistory.txt")?.hasSuffix(" 28 p18\n") == true)
    }

    @Test func statsPrintsTheRatingsAndExportsCSV() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try Data("""
            1767225600 60
            1767229200 300 calm 7 3
            1767232800 600 sigh 6 -
            1767236400 300 resonance 8 4

            """.utf8).write(to: URL(fileURLWithPath: dir + "/sessionHistory.txt"))
        try Data("0\n21\n0\n60\n600\n4\n".utf8).write(to: URL(fileURLWithPath: dir + "/totalTime.txt"))
        try Data("reminders:\n  time_zone: America/Vancouver\n".utf8).write(to: URL(fileURLWithPath: dir + "/unwind.conf"))
        let csv = UnwindRun.run(["stats", "--csv", "--state", dir, "--config", dir + "/unwind.conf"])
        #expect(csv.status == 0, "\(csv)")
        #expect(csv.stdout == """
            start,start_unix,seconds,pattern,anxiety_before,anxiety_after,change
            2025-12-31T16:00:00-08:00,1767225600,60,,,,
            2025-12-31T17:00:00-08:00,1767229200,300,calm,7,3,-4
            2025-12-31T18:00:00-08:00,1767232800,600,sigh,6,,
            2025-12-31T19:00:00-08:00,1767236400,300,resonance,8,4,-4

            """)
        let stats = UnwindRun.run(["stats", "--state", dir])
        #expect(stats.status == 0, "\(stats)")
        #expect(stats.stdout.contains("Anxiety, 0-10 (2 of the 4 recent sessions rated before and after):"), "\(stats)")
        #expect(stats.stdout.contains("before 7.5 → after 3.5 on average: -4.0 (calmer)"), "\(stats)")
        #expect(stats.stdout.contains("calm        7 → 3   -4 ▼▼▼▼"), "\(stats)")
        let bad = UnwindRun.run(["stats", "--csv", "--reset", "--state", dir])
        #expect(bad.status == 2)
    }

    /// A backup keeps the maintainer's patterns and the person's choice; a restore brings them
    /// back to a running device; an archive made before them still restores and leaves them be.
    @Test func backupAndRestoreKeepThePatternsAndTheChoice() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let state = dir + "/state"
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true)
        try Data("evening 4,2,8,0\n".utf8).write(to: URL(fileURLWithPath: state + "/patterns.txt"))
        try Data("pattern evening\nlength 10\n".utf8).write(to: URL(fileURLWithPath: state + "/breathing.txt"))
        let backup = UnwindRun.run(["backup", dir + "/b.tar", "--state", state])
        #expect(backup.status == 0 && backup.stdout.contains("11 state files"), "\(backup)")
        let tar = FileManager.default.contents(atPath: dir + "/b.tar") ?? Data()
        let opened = try StateArchive.open([UInt8](tar))
        #expect(opened.files["patterns.txt"] == Array("evening 4,2,8,0\n".utf8))
        // An archive from before the breathing files: still a valid archive.
        var old = opened.files
        old["patterns.txt"] = nil
        old["breathing.txt"] = nil
        let oldTar = StateArchive.make(old, created: WallTime(secondsSinceEpoch: 1))
        #expect((try? StateArchive.open(oldTar)) != nil)
        try Data(oldTar).write(to: URL(fileURLWithPath: dir + "/old.tar"))

        // Restored into a running device whose own are different.
        let rig = try MaintenanceRig()
        #expect(rig.unwind(["patterns", "add", "other", "5,0,7,0"]).status == 0)
        let restore = rig.unwind(["restore", dir + "/b.tar", "--yes"])
        #expect(restore.status == 0 && restore.stdout.contains("1 breathing pattern of your own"), "\(restore)")
        #expect(rig.file("patterns.txt") == "evening 4,2,8,0\n")
        #expect(rig.loop.core.state.breathing.preset.name == "evening" && rig.loop.core.state.breathing.minutes == 10)
        #expect(rig.file("breathing.txt") == "pattern evening\nlength 10\n")
        // The old archive leaves them as they are.
        let again = rig.unwind(["restore", dir + "/old.tar", "--yes"])
        #expect(again.status == 0, "\(again)")
        #expect(rig.file("patterns.txt") == "evening 4,2,8,0\n")
        #expect(rig.loop.core.state.breathing.presets.last?.name == "evening")
        rig.shutdown()
    }
}
