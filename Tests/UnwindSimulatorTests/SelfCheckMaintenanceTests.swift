#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import UnwindMaintenance
import UnwindCore
import UnwindRuntime
import UnwindRender

/// "How am I doing?" for the maintainer, end to end through the real `unwind`: the coping cards
/// and the weekly reminder beside the running device and with it stopped (the same rules, the
/// same words), the export for a clinician, backup and restore, and what never leaves the device
/// (`unwind status`, `unwind screen`).
@Suite(.serialized) struct SelfCheckMaintenanceTests {
    static let results = "1767225600 gad7 1201320 9\n1767312000 phq9 012101213 11\n1767398400 gad2 21 3\n1767398400 phq2 00 0\n"
    static let moods = "2026-01-01 4\n2026-01-03 2\n"
    static let card = ("I will panic at the dentist.", "I have sat through it before.")

    static func prepare(_ dir: String) throws {
        try results.write(toFile: dir + "/" + SelfChecksFile.name, atomically: true, encoding: .utf8)
        try moods.write(toFile: dir + "/" + MoodsFile.name, atomically: true, encoding: .utf8)
    }

    @Test func cardsAndTheReminderThroughTheRunningDevice() throws {
        let rig = try MaintenanceRig()
        let add = rig.unwind(["cards", "add", Self.card.0, Self.card.1])
        #expect(add.status == 0 && add.stdout.contains("added card 1: \"I will panic at the dentist.\""), "\(add)")
        #expect(rig.file(CopingCardsFile.name) == "I will panic at the dentist.\tI have sat through it before.\n")
        #expect(rig.loop.core.state.selfCheck.cards == [CopingCard(concern: Self.card.0, answer: Self.card.1)])
        let list = rig.unwind(["cards", "list"])
        #expect(list.stdout == "1  I will panic at the dentist.\n   → I have sat through it before.\n", "\(list)")
        // The mantras' rules, in the card's words; nothing changes.
        expectFailure(rig.unwind(["cards", "add", "Tab\there", "answer"]), 2, "card: the concern cannot contain control characters (found U+0009)")
        expectFailure(rig.unwind(["cards", "add", "Fine", String(repeating: "x", count: 161)]), 2, "card: the answer has at most 160 characters; this one has 161")
        expectFailure(rig.unwind(["cards", "add", "Fine", "😀"]), 2, "the display cannot show the character U+1F600")
        expectFailure(rig.unwind(["cards", "delete", "2"]), 2, "card 2: there is no such card; the list has 1 (1 to 1)")
        #expect(rig.loop.core.state.selfCheck.cards.count == 1)
        let delete = rig.unwind(["cards", "delete", "1"])
        #expect(delete.status == 0 && delete.stdout.contains("deleted card 1"), "\(delete)")
        #expect(rig.file(CopingCardsFile.name) == "" && rig.loop.core.state.selfCheck.cards.isEmpty)

        let set = rig.unwind(["progress", "reminder", "weekly", "Sunday", "6:30"])
        #expect(set.status == 0 && set.stdout.contains("self-check reminder: weekly sun 06:30"), "\(set)")
        #expect(rig.file(SelfCheckReminderFile.name) == "weekly sun 06:30\n")
        #expect(rig.loop.core.state.selfCheck.reminder.schedule == .weekly(.sunday, hour: 6, minute: 30))
        expectFailure(rig.unwind(["progress", "reminder", "daily", "21:00"]), 2, "the self-check reminder is 'never' or 'weekly DAY HH:MM'")
        let show = rig.unwind(["progress", "reminder"])
        #expect(show.stdout == "self-check reminder: weekly sun 06:30 — every Sunday at 06:30\n", "\(show)")
        #expect(rig.unwind(["progress", "reminder", "never"]).status == 0)
        #expect(rig.file(SelfCheckReminderFile.name) == "never\n")
    }

    @Test func theSameRulesWithTheDeviceStopped() throws {
        let dir = temporaryDirectory("selfcheck-offline")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let add = UnwindRun.run(["cards", "add", Self.card.0, Self.card.1, "--state", dir])
        #expect(add.status == 0 && add.stdout.contains("(shown when the device starts)"), "\(add)")
        #expect(readText(dir + "/" + CopingCardsFile.name) == "I will panic at the dentist.\tI have sat through it before.\n")
        expectFailure(UnwindRun.run(["cards", "add", "Tab\there", "answer", "--state", dir]), 2, "card: the concern cannot contain control characters (found U+0009)")
        #expect(UnwindRun.run(["progress", "reminder", "weekly", "mon", "09:00", "--state", dir]).status == 0)
        #expect(readText(dir + "/" + SelfCheckReminderFile.name) == "weekly mon 09:00\n")
        expectFailure(UnwindRun.run(["progress", "reminder", "hourly", ":15", "--state", dir]), 2, "the self-check reminder is 'never' or 'weekly DAY HH:MM'")
        // A broken cards file is set aside, never written over.
        try Data([0xFF, 0x0A]).write(to: URL(fileURLWithPath: dir + "/" + CopingCardsFile.name))
        expectFailure(UnwindRun.run(["cards", "add", "a", "b", "--state", dir]), 1, "copingCards.txt line 1 is not UTF-8 text; nothing changed")
        #expect(FileManager.default.contents(atPath: dir + "/" + CopingCardsFile.name) == Data([0xFF, 0x0A]))
    }

    @Test func theExportForAClinician() throws {
        let dir = temporaryDirectory("selfcheck-export")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try Self.prepare(dir)
        let csv = UnwindRun.run(["progress", "--csv", "--state", dir])
        #expect(csv.status == 0, "\(csv)")
        #expect(csv.stdout == """
            taken,taken_unix,instrument,item1,item2,item3,item4,item5,item6,item7,item8,item9,total,band
            2026-01-01,,mood,4,,,,,,,,,4,good
            2026-01-01T00:00:00Z,1767225600,GAD-7,1,2,0,1,3,2,0,,,9,mild
            2026-01-02T00:00:00Z,1767312000,PHQ-9,0,1,2,1,0,1,2,1,3,11,moderate
            2026-01-03,,mood,2,,,,,,,,,2,low
            2026-01-03T00:00:00Z,1767398400,GAD-2,2,1,,,,,,,,3,3 or more
            2026-01-03T00:00:00Z,1767398400,PHQ-2,0,0,,,,,,,,0,under 3

            """, "\(csv)")
        let summary = UnwindRun.run(["progress", "--state", dir])
        #expect(summary.stdout.contains("Self-checks kept: 4") && summary.stdout.contains("PHQ-9 (mood): 1, the last 11 of 27, moderate"), "\(summary)")
        #expect(summary.stdout.contains("Moods kept: 2 days") && summary.stdout.contains("a self-check, not a diagnosis"))
    }

    @Test func backupAndRestoreKeepThem() throws {
        let rig = try MaintenanceRig(prepare: Self.prepare)
        #expect(rig.unwind(["cards", "add", Self.card.0, Self.card.1]).status == 0)
        #expect(rig.unwind(["progress", "reminder", "weekly", "sun", "18:00"]).status == 0)
        let before = stateSnapshot(rig.directory)
        let archive = rig.directory + "/../\(UUID().uuidString).tar"
        defer { unlink(archive) }
        #expect(rig.unwind(["backup", archive]).status == 0)
        let listing = tarListing(archive)
        for name in [SelfChecksFile.name, MoodsFile.name, CopingCardsFile.name, SelfCheckReminderFile.name] {
            #expect(listing.contains(name + "\n"), "\(name) in \(listing)")
        }
        #expect(rig.unwind(["cards", "delete", "1"]).status == 0)
        #expect(rig.unwind(["progress", "reminder", "never"]).status == 0)
        let restore = rig.unwind(["restore", archive, "--yes"])
        #expect(restore.status == 0, "\(restore)")
        let after = stateSnapshot(rig.directory)
        for name in [SelfChecksFile.name, MoodsFile.name, CopingCardsFile.name, SelfCheckReminderFile.name] {
            #expect(after[name] == before[name], "\(name)")
        }
        let s = rig.loop.core.state.selfCheck
        #expect(s.cards.count == 1 && s.results.count == 4 && s.moods.count == 2 && s.reminder.schedule == .weekly(.sunday, hour: 18, minute: 0))
    }

    /// An archive whose page files the device could not load is refused whole, nothing changed.
    @Test(arguments: [(SelfChecksFile.name, "1767225600 gad7 1201320 8\n", "line 1 is not"),
                      (MoodsFile.name, "2026-01-02 4\n2026-01-01 3\n", "line 2 is not after the day before it"),
                      (CopingCardsFile.name, "no tab\n", "line 1 is not '<concern><TAB><answer>'"),
                      (SelfCheckReminderFile.name, "daily 21:00\n", "'never' or 'weekly DAY HH:MM'"),
                      (SelfChecksFile.name, String(repeating: "1767225600 gad2 00 0\n", count: SelfChecksFile.capacity + 1), "lines; at most 500")])
    func aBrokenArchiveIsRefusedWhole(_ name: String, _ bytes: String, _ words: String) throws {
        let dir = temporaryDirectory("selfcheck-restore")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try Self.prepare(dir)
        let archive = dir + "/../\(UUID().uuidString).tar"
        defer { unlink(archive) }
        #expect(UnwindRun.run(["backup", archive, "--state", dir]).status == 0)
        var files = try StateArchive.open([UInt8](try Data(contentsOf: URL(fileURLWithPath: archive)))).files
        files[name] = Array(bytes.utf8)
        try Data(StateArchive.make(files, created: WallTime(secondsSinceEpoch: 1_767_225_600))).write(to: URL(fileURLWithPath: archive))
        let before = stateSnapshot(dir)
        let r = UnwindRun.run(["restore", archive, "--yes", "--state", dir])
        #expect(r.status == 2 && r.stderr.contains("the archive's \(name) is not valid") && r.stderr.contains(words), "\(r)")
        #expect(stateSnapshot(dir) == before)
    }

    @Test func statusAndTheScreenSayNothingOfIt() throws {
        let rig = try MaintenanceRig(prepare: Self.prepare)
        #expect(rig.unwind(["cards", "add", Self.card.0, Self.card.1]).status == 0)
        // The person opens the PHQ-9 and answers its first item.
        for _ in 0..<4 { rig.tap(.page) { true } }
        #expect(rig.wait { rig.loop.core.state.page == .howAmIDoing })
        for _ in 0..<3 { rig.tap(.right) { true } }
        rig.tap(.select) { rig.loop.core.state.overlay != .none }
        rig.tap(.right) { true }
        rig.tap(.right) { true }
        #expect(rig.wait { if case .selfCheck(.questionnaire(let r)) = rig.loop.core.state.overlay { r.answer == 1 } else { false } })
        for args in [["status"], ["status", "--json"]] {
            let r = rig.unwind(args)
            #expect(r.status == 0, "\(r)")
            for word in ["PHQ", "GAD", "Little interest", "Several days", "dentist", "sat through", "mood", "Mood", "selfChecks", "copingCards"] {
                #expect(!r.stdout.contains(word), "\(word) in `unwind \(args.joined(separator: " "))`: \(r.stdout)")
            }
        }
        // The screen shows the menu bar and that the rest is the person's own.
        let screen = rig.unwind(["screen"])
        var expected = Framebuffer()
        PrivateScreen.render(rig.loop.core.state, into: &expected)
        #expect(screen.status == 0 && screen.stdout.hasPrefix(TextArt.halfBlocks(expected)), "\(screen)")
        var shown = Framebuffer()
        Screen.render(rig.loop.core.state, at: .zero, into: &shown)
        #expect(!screen.stdout.contains(TextArt.halfBlocks(shown)))
    }
}

/// `tar tf ARCHIVE`: any tar reads a backup.
func tarListing(_ archive: String) -> String {
    let tar = Process()
    tar.executableURL = URL(fileURLWithPath: "/usr/bin/tar")
    tar.arguments = ["tf", archive]
    let pipe = Pipe()
    tar.standardOutput = pipe
    try? tar.run()
    tar.waitUntilExit()
    return String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
}
