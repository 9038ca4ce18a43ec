import ArgumentParser
import Glibc
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import UnwindMaintenance
import UnwindCore
import UnwindRuntime

/// `unwind alerts …`: the panic page's five slots (spec 5.x).
struct AlertsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "alerts",
        abstract: "The five panic alert slots: list, show, set, clear, test, import a contact from a vCard.",
        discussion: """
            A slot holds a contact name (1–40 characters), a number (an optional leading "+" and 3 to 20 \
            digits, nothing else: no spaces, dashes or brackets) and a message (1–160 characters). Nothing is \
            ever corrected: a value that breaks a rule is refused with the field and the rule named.
            """,
        subcommands: [List.self, Show.self, SetSlot.self, Clear.self, Test.self, ImportVCard.self])

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "List the five slots.")
        @OptionGroup var options: MaintenanceOptions

        func run() throws {
            let f = try StateFiles(try options.maintainer())
            for n in 1...AlertSlotFile.slotCount {
                switch try f.slot(n) {
                case .empty:
                    say("\(n)  (empty)")
                case .ready(let a):
                    say("\(n)  \(a.name)  \(a.number.text)  \(a.encoding)")
                    say("   \"\(a.message)\"")
                case .needsAttention(let p):
                    say("\(n)  NEEDS ATTENTION (\(AlertSlotFile.name(slot: n)): \(p)); set it again with 'unwind alerts set \(n)'")
                }
            }
        }
    }

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "show", abstract: "Show one slot, with how its message will travel.")
        @OptionGroup var options: MaintenanceOptions
        @Argument(help: "The slot, 1 to 5.") var slot: Int

        func run() throws {
            _ = try MaintenanceEdits.slotIndex(slot)
            let f = try StateFiles(try options.maintainer())
            say("Slot \(slot) (\(AlertSlotFile.name(slot: slot)))")
            switch try f.slot(slot) {
            case .empty:
                say("  empty: set it with 'unwind alerts set \(slot) --name NAME --number NUMBER --message TEXT'")
            case .needsAttention(let p):
                say("  needs attention: \(p)")
                say("  (the device shows it as needing attention and never sends it; set it again)")
            case .ready(let a):
                say("  name:     \(a.name)")
                say("  number:   \(a.number.text)")
                say("  message:  \(a.message)")
                say("  encoding: \(a.encoding)")
                say("  test:     " + testNote(a, slot: slot))
            }
        }
    }

    struct SetSlot: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "set",
            abstract: "Set a slot's name, number and message (an empty slot needs all three).",
            discussion: "Shows how the message will travel: GSM-7 or UCS-2, and in how many parts.")
        @OptionGroup var options: MaintenanceOptions
        @Argument(help: "The slot, 1 to 5.") var slot: Int
        @Option(help: "The contact's name (1–40 characters).") var name: String?
        @Option(help: "The number, as the phone network needs it: +17787824615 or 7787824615.") var number: String?
        @Option(help: "The message (1–160 characters).") var message: String?

        func run() throws {
            _ = try MaintenanceEdits.slotIndex(slot)
            // Refused here, in the device's words, before anything is sent; sent in NFC.
            let name = try MaintenanceEdits.alertText(name, .name)
            let number = try MaintenanceEdits.alertText(number, .number)
            let message = try MaintenanceEdits.alertText(message, .message)
            let result = try options.maintainer().change(.setAlert(slot: slot, name: name, number: number, message: message))
            printSaved(result)
        }
    }

    struct Clear: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "clear", abstract: "Empty a slot (it can no longer be sent).")
        @OptionGroup var options: MaintenanceOptions
        @Argument(help: "The slot, 1 to 5.") var slot: Int

        func run() throws {
            _ = try MaintenanceEdits.slotIndex(slot)
            report(try options.maintainer().change(.clearAlert(slot: slot)))
        }
    }

    struct Test: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "test",
            abstract: "Send a slot's message, marked \"[TEST] \", through the device's modem, and report the outcome.",
            discussion: """
                Needs the running device (only it talks to the modem). The message must leave room for the 7 \
                characters of "[TEST] " (at most 153 characters). Waits for the network's acceptance; a \
                message not confirmed in time stays in the outbox and is retried by the device.
                """)
        @OptionGroup var options: MaintenanceOptions
        @Argument(help: "The slot, 1 to 5.") var slot: Int
        @Option(help: "How long to wait for the outcome, in seconds (1–600).") var wait: Int = 90

        func validate() throws {
            if !(1...600).contains(wait) { throw ValidationError("--wait takes 1 to 600 seconds") }
        }

        func run() throws {
            _ = try MaintenanceEdits.slotIndex(slot)
            let m = try options.maintainer()
            guard try m.runningDeviceSocket() != nil else {
                throw ControlFailure.failed("the device is not running; only it can send through the modem (start it: sudo systemctl start unwind)")
            }
            // Refuse before anything is queued when the slot cannot be tested.
            if case .ready(let a) = try StateFiles(m).slot(slot) { _ = try MaintenanceEdits.testAlert(a, slot: slot) }
            let r = try m.ask(.testAlert(slot: slot, waitSeconds: wait), timeout: .seconds(Int64(wait) + 15))
            if let msg = r.message { say(msg) }
        }
    }

    struct ImportVCard: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "import-vcard",
            abstract: "Set a slot's name and number from a contact in a vCard (.vcf) file exported from a phone.",
            discussion: """
                Reads vCard 2.1, 3.0 and 4.0. With several contacts in the file, --contact chooses one (the \
                full name, or a part only one name contains). A mobile number is preferred. The number is used \
                as written, without its spaces, dashes, dots and brackets; no country code is added. The slot \
                keeps its message, or takes --message (needed for an empty slot).
                """)
        @OptionGroup var options: MaintenanceOptions
        @Argument(help: "The vCard file.") var file: String
        @Option(help: "The slot, 1 to 5.") var slot: Int
        @Option(help: "The contact's name in the file (needed when it holds several).") var contact: String?
        @Option(help: "The message to send (default: the slot's message).") var message: String?

        func run() throws {
            _ = try MaintenanceEdits.slotIndex(slot)
            let bytes = try readFile(file, limit: VCard.maximumSize)
            let chosen: VCardContact
            let number: PhoneNumber
            do {
                chosen = try VCard.choose(try VCard.parse(bytes), named: contact)
                number = try VCard.phoneNumber(of: chosen)
            } catch {
                throw ControlFailure.input("\(file): \(error)")
            }
            let name = try MaintenanceEdits.alertText(chosen.name, .name)
            let message = try MaintenanceEdits.alertText(message, .message)
            let m = try options.maintainer()
            if message == nil, try StateFiles(m).slot(slot).alert == nil {
                throw ControlFailure.input("slot \(slot) has no message yet: give one with --message TEXT")
            }
            let result = try m.change(.setAlert(slot: slot, name: name, number: number.text, message: message))
            say("from \(file): \(chosen.name), \(number.text)"
                + (chosen.bestTelephone.map { $0.value != number.text ? " (written \"\($0.value)\" in the vCard)" : "" } ?? ""))
            printSaved(result)
        }
    }
}

func testNote(_ a: AlertSlot, slot: Int) -> String {
    do {
        let t = try MaintenanceEdits.testAlert(a, slot: slot)
        return "'unwind alerts test \(slot)' sends \"\(t.message.prefix(40))…\" (\(t.encoding))"
    } catch {
        return "too long for 'unwind alerts test' (at most \(AlertSlot.messageLimit - MaintenanceEdits.testPrefix.count) characters leave room for \"[TEST] \")"
    }
}

func printSaved(_ result: (response: ControlResponse, viaDevice: Bool)) {
    report(result)
    guard let a = result.response.alert else { return }
    say("  name:     \(a.name)")
    say("  number:   \(a.number)")
    say("  message:  \(a.message)")
    say("  encoding: \(a.encoding)")
    if a.message.count > AlertSlot.messageLimit - MaintenanceEdits.testPrefix.count {
        say("  note: 'unwind alerts test \(a.slot)' needs a message of at most \(AlertSlot.messageLimit - MaintenanceEdits.testPrefix.count) characters")
    }
}
