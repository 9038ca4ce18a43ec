import ArgumentParser
import UnwindMaintenance
import UnwindCore

/// `unwind cards …`: the person's coping cards (the cue creator): a concern and their own answer
/// to it, written together with them, read on the device.
struct CardsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cards",
        abstract: "The person's coping cards: list, add a concern and its answer, delete.",
        discussion: """
            A card is a concern the person has and their own answer to it, written with them. Each text is 1 to 160 \
            characters the display can draw (Latin-1), without control characters and without a space at either end, \
            as a mantra is; at most \(CopingCardsFile.maximumCount) cards. The device shows them on "How am I doing?", \
            on the mantra page after the last mantra, and after a self-check that came out moderate or above.
            """,
        subcommands: [List.self, Add.self, Delete.self])

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "List the cards, numbered.")
        @OptionGroup var options: MaintenanceOptions

        func run() throws {
            let cards = try StateFiles(try options.maintainer()).cards()
            if cards.isEmpty { say("no coping cards") }
            let width = String(cards.count).count
            for (i, c) in cards.enumerated() {
                let n = String(i + 1)
                say(String(repeating: " ", count: width - n.count) + n + "  " + c.concern)
                say(String(repeating: " ", count: width) + "  → " + c.answer)
            }
        }
    }

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "add", abstract: "Add a card at the end: the concern, then the answer.")
        @OptionGroup var options: MaintenanceOptions
        @Argument(help: "The concern (quote it: \"I will panic at the dentist.\").") var concern: String
        @Argument(help: "The person's answer to it (quoted).") var answer: String

        func run() throws {
            let card = MaintenanceEdits.card(concern: concern, answer: answer)
            try MaintenanceEdits.checkCard(card, count: 0)
            report(try options.maintainer().change(.addCard(concern: card.concern, answer: card.answer)))
        }
    }

    struct Delete: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "delete",
            abstract: "Delete card N (as 'unwind cards list' numbers them).",
            discussion: "If the cards changed meanwhile, nothing is deleted and you are told.")
        @OptionGroup var options: MaintenanceOptions
        @Argument(help: "The card's number.") var number: Int

        func run() throws {
            let m = try options.maintainer()
            let cards = try StateFiles(m).cards()
            let index = try MaintenanceEdits.cardIndex(number, count: cards.count)
            report(try m.change(.deleteCard(number: number, concern: cards[index].concern, answer: cards[index].answer)))
        }
    }
}
