#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import UnwindMaintenance
import UnwindSimulatedHardware
import UnwindCore
import UnwindRuntime
import UnwindModem
import UnwindRender
import UnwindSimulator

/// The maintainer's commands, end to end: a device runs (MaintenanceRig), the real `unwind`
/// executable talks to it, and the files, the screen and the bytes the simulated modem received
/// are checked.
@Suite(.serialized) struct MaintenanceEndToEndTests {
    @Test func statusScreenAndANewMantraShownAtOnce() throws {
        let rig = try MaintenanceRig()
        #expect(rig.wait { rig.status()?.modem?.link == "ready" })
        let status = rig.unwind(["status"])
        #expect(status.status == 0, "\(status)")
        #expect(status.stdout.contains("Device:    running"))
        #expect(status.stdout.contains("SIM ready"))
        #expect(status.stdout.contains("operator Unwind Mobile"))
        #expect(status.stdout.contains("Outbox:    0 pending, 0 failed"))

        let add = rig.unwind(["mantras", "add", "Slow breath, soft shoulders."])
        #expect(add.status == 0, "\(add)")
        #expect(add.stdout.contains("added mantra 51"))
        // The answer came after the write: the file already has it.
        #expect(rig.file("mantras.txt")?.hasSuffix("\nSlow breath, soft shoulders.\n") == true)
        #expect(rig.status()?.currentMantra == 51)
        let list = rig.unwind(["mantras", "list"])
        #expect(list.stdout.contains("* 51  Slow breath, soft shoulders."), "\(list)")

        // On the affirmations page the device shows it; the screen command shows what the device shows.
        #expect(rig.tap(.page) { rig.status()?.page == "grounding" })
        #expect(rig.tap(.page) { rig.status()?.page == "affirmations" })
        // Drawn and settled: the screen the device shows is the same twice running.
        #expect(rig.wait {
            let first = rig.unwind(["screen"]).stdout
            return first.contains("affirmations page") && rig.unwind(["screen"]).stdout == first
        })
        let png = rig.directory + "/../\(UUID().uuidString).png"
        defer { unlink(png) }
        let shot = rig.unwind(["screen", "--png", png])
        #expect(shot.status == 0, "\(shot)")
        let watch = rig.unwind(["screen", "--watch", "--seconds", "0.6"])
        #expect(watch.status == 0 && watch.stdout.hasPrefix("┌") && watch.stdout.contains("affirmations page"), "\(watch)")
        let text = rig.unwind(["screen"])
        #expect(text.status == 0)
        #expect(text.stdout.hasPrefix("┌") && text.stdout.contains("affirmations page"))
        rig.shutdown()
        let frame = rig.display.current
        #expect([UInt8](FileManager.default.contents(atPath: png) ?? Data()) == PNGImage.encode(frame))
        #expect(text.stdout.hasPrefix(TextArt.halfBlocks(frame)))
        // And that frame is the mantra's: the core's state drawn afresh gives the same pixels.
        var expected = Framebuffer()
        Screen.render(rig.loop.core.state, at: .zero, into: &expected)
        #expect(expected == frame)
        #expect(rig.loop.core.state.mantras.currentText == "Slow breath, soft shoulders.")
    }

    @Test func alertsSetShowTheEncodingAndATestGoesOutThroughTheModem() throws {
        let rig = try MaintenanceRig()
        #expect(rig.wait { rig.status()?.modem?.link == "ready" })
        let set = rig.unwind(["alerts", "set", "1", "--name", "Mum", "--number", "+447700900123", "--message", "Please call me. I need you."])
        #expect(set.status == 0, "\(set)")
        #expect(set.stdout.contains("encoding: GSM-7, 1 part (27 of 160 septets)"))
        #expect(rig.file("alert01.txt") == "Mum\n+447700900123\nPlease call me. I need you.\n")
        #expect(rig.status()?.alertSlots.first == "Mum +447700900123")

        let ucs = rig.unwind(["alerts", "set", "2", "--name", "Zoë", "--number", "7787824615", "--message", "Ça va ? Appelle-moi 🙏"])
        #expect(ucs.status == 0, "\(ucs)")
        #expect(ucs.stdout.contains("UCS-2 (because of \"🙏\"), 1 part"))
        // A field changed on its own keeps the others.
        let rename = rig.unwind(["alerts", "set", "2", "--name", "Zoe"])
        #expect(rename.status == 0)
        #expect(rig.file("alert02.txt") == "Zoe\n7787824615\nÇa va ? Appelle-moi 🙏\n")

        let test = rig.unwind(["alerts", "test", "1", "--wait", "20"])
        #expect(test.status == 0, "\(test)")
        #expect(test.stdout.contains("test message sent to Mum (+447700900123)"))
        #expect(rig.modemSim.delivered == [SimulatedSMS(number: "+447700900123", text: "[TEST] Please call me. I need you.", parts: 1)])
        #expect(rig.modemSim.violations.isEmpty, "\(rig.modemSim.violations)")
        let received = String(decoding: rig.modemSim.received, as: UTF8.self)
        #expect(received.contains("AT+CMGF=0\rAT+CMGS="))
        // Nothing was left in the outbox, and the person's screen was not touched.
        #expect(rig.status()?.outboxPending == 0)
        #expect(rig.status()?.overlay == "none")

        let clear = rig.unwind(["alerts", "clear", "2"])
        #expect(clear.status == 0 && clear.stdout.contains("slot 2 cleared"))
        #expect(rig.file("alert02.txt") == "")
        let show = rig.unwind(["alerts", "show", "1"])
        #expect(show.stdout.contains("number:   +447700900123") && show.stdout.contains("'unwind alerts test 1' sends"))
    }

    @Test func importAContactFromAPhonesVCard() throws {
        let rig = try MaintenanceRig()
        let vcf = rig.directory + "/../\(UUID().uuidString).vcf"
        defer { unlink(vcf) }
        try """
            BEGIN:VCARD\r
            VERSION:3.0\r
            N:Lee;Sam;;;\r
            FN:Sam Lee\r
            TEL;TYPE=HOME,VOICE:+1 (604) 555-0100\r
            TEL;TYPE=CELL:+1 604-555-0199\r
            END:VCARD\r
            BEGIN:VCARD\r
            VERSION:3.0\r
            FN:Dr. Ana\r
              Gomez\r
            TEL;TYPE=WORK:604.555.0142\r
            END:VCARD\r

            """.write(toFile: vcf, atomically: true, encoding: .utf8)
        let noMessage = rig.unwind(["alerts", "import-vcard", vcf, "--slot", "3", "--contact", "sam"])
        expectFailure(noMessage, 2, "slot 3 has no message yet")
        let r = rig.unwind(["alerts", "import-vcard", vcf, "--slot", "3", "--contact", "sam", "--message", "Panic attack, please call."])
        #expect(r.status == 0, "\(r)")
        #expect(r.stdout.contains("Sam Lee, +16045550199 (written \"+1 604-555-0199\" in the vCard)"))
        #expect(rig.file("alert03.txt") == "Sam Lee\n+16045550199\nPanic attack, please call.\n")
        // The slot keeps its message when another contact is imported into it.
        let r2 = rig.unwind(["alerts", "import-vcard", vcf, "--slot", "3", "--contact", "Dr. Ana Gomez"])
        #expect(r2.status == 0, "\(r2)")
        #expect(rig.file("alert03.txt") == "Dr. Ana Gomez\n6045550142\nPanic attack, please call.\n")
    }

    @Test func modemCheckReportsEachStepAndTechnicianCommandsAreGuarded() throws {
        let rig = try MaintenanceRig()
        #expect(rig.wait { rig.status()?.modem?.link == "ready" })
        let check = rig.unwind(["modem", "check"])
        #expect(check.status == 0, "\(check)")
        for step in ["AT ", "ATE0", "AT+CMEE=1", "AT+CPIN?", "AT+CMGF=0", "AT+CREG?", "AT+CSQ", "AT+COPS?"] {
            #expect(check.stdout.contains("ok   \(step)"), "\(step) in \(check.stdout)")
        }
        #expect(check.stdout.contains("+CPIN: READY") && check.stdout.contains("+CSQ: 21,99"))
        #expect(check.stdout.contains("operator Unwind Mobile"))

        let csq = rig.unwind(["modem", "at", "AT+CSQ"])
        #expect(csq.status == 0, "\(csq)")
        #expect(csq.stdout == "+CSQ: 21,99\nOK\n")
        let creg = rig.unwind(["modem", "at", "at+creg?"])
        #expect(creg.stdout == "+CREG: 0,1\nOK\n", "\(creg)")
        // A read form of a command this modem does not know reaches it and gets its ERROR; the
        // bare command is refused here (only read-only queries pass).
        let unknown = rig.unwind(["modem", "at", "AT+XYZ?"])
        expectFailure(unknown, 1, "AT+XYZ?: ERROR")
        expectFailure(rig.unwind(["modem", "at", "AT+XYZ"]), 2, "only read-only queries are allowed")

        let before = rig.modemSim.commands.count
        for bad in ["AT+CMGS=23", "ATD+15551234;", "ATD5551234", "AT+CMGW", "at+cmss=1", "A/", "AT+CSQ;+CMGS=1",
                    "AT+CSCA=\"+15551234\",145", "AT\r+CMGS=1", "AT+CSQ\u{1A}", "AT+CFUN=0", "AT+CPOWD=1", "", "CSQ",
                    "AT+" + String(repeating: "X", count: 70)] {
            let r = rig.unwind(["modem", "at", bad])
            expectFailure(r, 2, "")
        }
        // The device puts one command at a time on the line, in order: once an allowed query
        // after them is answered, any refused one that had been passed on would be there too.
        #expect(rig.unwind(["modem", "at", "AT+CSQ"]).status == 0)
        let since = rig.modemSim.commands.dropFirst(before)
        // Only the device's own queries (its status refresh runs on its own clock, and a slow
        // machine gives it time to) and the last probe: nothing of what was refused.
        let refusedMarks = ["CMGS", "ATD", "CMGW", "CMSS", "A/", "CSCA=", "\u{1A}", "CFUN", "CPOWD", "XXXX"]
        #expect(since.last == "AT+CSQ", "\(since)")
        #expect(!since.contains { c in c == "CSQ" || c.isEmpty || refusedMarks.contains { c.uppercased().contains($0) } },
                "a refused command reached the modem: \(since)")
        #expect(rig.modemSim.submitCount == 0 && rig.modemSim.calls.isEmpty)
        #expect(rig.modemSim.violations == ["unknown command line \"AT+XYZ?\""])
    }

    @Test func motorTestPulsesTheDevicesOwnMotorAndTheOtherPartsAreRefused() throws {
        let rig = try MaintenanceRig()
        let r = rig.unwind(["hw", "test", "motor"])
        #expect(r.status == 0, "\(r)")
        // The three pulses, each on and off again.
        #expect(rig.wait { let h = rig.motor.history; return h.filter(\.on).count == 3 && h.filter { !$0.on }.count >= 3 && h.last?.on == false })
        expectFailure(rig.unwind(["hw", "test", "display"]), 1, "the daemon owns the display; stop it first: sudo systemctl stop unwind")
        expectFailure(rig.unwind(["hw", "test", "buttons"]), 1, "stop it first")
        rig.shutdown()
        // Each pulse on, then off, on the device's own motor. How long each is, is the core's
        // (`DeviceCoreTests.aMotorTestIsThreePulsesOf300ms`): on this real clock a busy machine
        // may apply an edge late (a pulse measured here was once under 280 ms).
        let changes = rig.motor.history.drop { !$0.on }
        #expect(changes.map(\.on) == [true, false, true, false, true, false], "\(rig.motor.history)")
        #expect(zip(changes, changes.dropFirst()).allSatisfy { $0.at <= $1.at })
    }

    @Test func remindersAndStatistics() throws {
        let rig = try MaintenanceRig { dir in
            try "3\n2\n1\n30\n600\n4\n".write(toFile: dir + "/totalTime.txt", atomically: true, encoding: .utf8)
        }
        let set = rig.unwind(["reminders", "set", "weekly", "Sunday", "9:05"])
        #expect(set.status == 0, "\(set)")
        #expect(rig.file("reminders.txt") == "weekly sun 09:05\n")
        let show = rig.unwind(["reminders", "show"])
        #expect(show.stdout.hasPrefix("reminder: weekly sun 09:05 — every Sunday at 09:05\nnext: Sun"), "\(show)")
        #expect(rig.unwind(["reminders", "set", "hourly", "15"]).status == 0)
        #expect(rig.file("reminders.txt") == "hourly :15\n")
        #expect(rig.unwind(["reminders", "set", "never"]).status == 0)
        #expect(rig.status()?.reminder == "never")

        let stats = rig.unwind(["stats"])
        #expect(stats.stdout.contains("Sessions: 4") && stats.stdout.contains("Total:    1:02:03"), "\(stats)")
        expectFailure(rig.unwind(["stats", "--reset"]), 2, "needs confirmation; add --yes")
        #expect(rig.file("totalTime.txt") == "3\n2\n1\n30\n600\n4\n")
        let reset = rig.unwind(["stats", "--reset", "--yes"])
        #expect(reset.status == 0, "\(reset)")
        #expect(rig.file("totalTime.txt") == "0\n0\n0\n0\n0\n0\n")
        #expect(rig.status()?.sessions == 0)
    }

    @Test func backupAndRestoreWhileTheDeviceRuns() throws {
        let rig = try MaintenanceRig()
        #expect(rig.unwind(["alerts", "set", "1", "--name", "Mum", "--number", "+447700900123", "--message", "Call me"]).status == 0)
        #expect(rig.unwind(["mantras", "add", "Kept in the backup."]).status == 0)
        let before = stateSnapshot(rig.directory)
        let archive = rig.directory + "/../\(UUID().uuidString).tar"
        defer { unlink(archive) }
        let backup = rig.unwind(["backup", archive])
        #expect(backup.status == 0, "\(backup)")
        // Any tar reads it.
        let tar = Process()
        tar.executableURL = URL(fileURLWithPath: "/usr/bin/tar")
        tar.arguments = ["tf", archive]
        let pipe = Pipe()
        tar.standardOutput = pipe
        try tar.run()
        tar.waitUntilExit()
        let listing = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(listing.hasPrefix("manifest.txt\ntotalTime.txt\n") && listing.contains("alert05.txt"))

        // Change everything, then restore.
        #expect(rig.unwind(["alerts", "clear", "1"]).status == 0)
        #expect(rig.unwind(["mantras", "delete", "1"]).status == 0)
        #expect(rig.unwind(["reminders", "set", "daily", "21:00"]).status == 0)
        #expect(stateSnapshot(rig.directory) != before)
        let restore = rig.unwind(["restore", archive, "--yes"])
        #expect(restore.status == 0, "\(restore)")
        #expect(restore.stdout.contains("restored: 0 sessions, 51 mantras, reminder never, 1 alert slots set"))
        // Every file is as it was; the ones that were missing now say what their absence meant.
        let after = stateSnapshot(rig.directory)
        for (name, bytes) in before { #expect(after[name] == bytes, "\(name)") }
        let meaning: [String: String] = ["reminders.txt": "never\n", "totalTime.txt": "0\n0\n0\n0\n0\n0\n", "sessionHistory.txt": "",
                                         "alert02.txt": "", "alert03.txt": "", "alert04.txt": "", "alert05.txt": ""]
        for (name, bytes) in after where before[name] == nil { #expect(meaning[name].map { Data($0.utf8) } == bytes, "\(name)") }
        let s = rig.status()
        #expect(s?.mantraCount == 51 && s?.alertSlots.first == "Mum +447700900123" && s?.reminder == "never")
    }

    /// The race: the person deletes a mantra on the device while the maintainer adds some.
    /// Neither change is lost, and the person's "yes" deletes the mantra they were shown.
    @Test func thePersonDeletesOnTheDeviceWhileTheMaintainerAdds() throws {
        let rig = try MaintenanceRig { dir in
            try "Alpha.\nBravo.\nCharlie.\n".write(toFile: dir + "/mantras.txt", atomically: true, encoding: .utf8)
        }
        #expect(rig.tap(.page) { rig.status()?.page == "grounding" })
        #expect(rig.tap(.page) { rig.status()?.page == "affirmations" })
        // The person holds SELECT: "Delete this mantra?" about Alpha; the hold is over.
        #expect(rig.tap(.select, holdFor: .milliseconds(1000)) { rig.status()?.overlay == "delete this mantra?" })
        // Meanwhile five maintainers' commands add mantras at once…
        let adds = try (1...5).map { try UnwindRun.start(["mantras", "add", "Added \($0).", "--state", rig.directory]) }
        // …and the person says yes while they run: once the first of them is in.
        #expect(rig.wait(.seconds(60)) { (rig.status()?.mantraCount ?? 0) > 3 }, "no add came in")
        rig.buttons.tap(.select)
        for p in adds { p.waitUntilExit() }
        #expect(adds.allSatisfy { $0.terminationStatus == 0 })
        #expect(rig.wait { rig.status()?.mantraCount == 7 })
        // The person's delete is saved in the background like any button's change: the file may
        // trail the status by a write (seen on a loaded machine).
        rig.wait { (rig.file("mantras.txt") ?? "").split(separator: "\n").count == 7 }
        let lines = (rig.file("mantras.txt") ?? "").split(separator: "\n").map(String.init)
        #expect(!lines.contains("Alpha."))
        #expect(Array(lines.prefix(2)) == ["Bravo.", "Charlie."])
        #expect(Set(lines.dropFirst(2)) == Set((1...5).map { "Added \($0)." }))
        rig.shutdown()
        #expect(rig.loop.core.state.mantras.items == lines)
    }

    /// With no device, commands edit the files under the state lock: concurrent ones never lose
    /// each other's change; a device that starts while one holds the lock loads its result.
    @Test func withoutADeviceConcurrentEditsAreSerialisedByTheLock() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try "One.\n".write(toFile: dir + "/mantras.txt", atomically: true, encoding: .utf8)
        let adds = try (1...8).map { try UnwindRun.start(["mantras", "add", "Offline \($0).", "--state", dir]) }
        for p in adds { p.waitUntilExit() }
        #expect(adds.allSatisfy { $0.terminationStatus == 0 })
        let lines = (readText(dir + "/mantras.txt") ?? "").split(separator: "\n").map(String.init)
        #expect(lines.first == "One." && Set(lines.dropFirst()) == Set((1...8).map { "Offline \($0)." }))

        // A command holds the lock (here: this test); the device starting meanwhile waits for it.
        let held = try StateLock(stateDirectory: dir).acquire()
        final class Box: @unchecked Sendable { var rig: MaintenanceRig? }
        let box = Box()
        let started = DispatchSemaphore(value: 0)
        Thread { box.rig = try? MaintenanceRig(directory: dir); started.signal() }.start()
        // The device has opened the lock file (its own descriptor beside this test's) and waits.
        #expect(waitUntil(.seconds(30)) { descriptors(onto: dir + "/" + StateLock.fileName) >= 2 }, "the device never came to the lock")
        try "Written under the lock.\n".write(toFile: dir + "/mantras.txt", atomically: true, encoding: .utf8)
        held.release()
        started.wait()
        let rig = try #require(box.rig)
        #expect(rig.status()?.mantraCount == 1)
        // From now on, commands go through the device.
        let add = rig.unwind(["mantras", "add", "Through the device."])
        #expect(add.status == 0 && !add.stdout.contains("not running"), "\(add)")
        rig.shutdown()
        #expect(rig.loop.core.state.mantras.items == ["Written under the lock.", "Through the device."])
    }
}
