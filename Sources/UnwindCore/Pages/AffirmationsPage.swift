/// The person's mantras (spec 4.2–4.5): the list, the one shown, and that one word-wrapped for
/// the display. Wrapping happens here, when the current mantra changes, so drawing a frame
/// never builds a string.
public struct MantraList: Equatable, Sendable {
    /// Spec 4.x and the data table: "individual mantra statements of 160 characters or less".
    public static let maximumLength = 160
    /// Characters a line of the mantra box holds (the regular 6x10 font across 128 pixels).
    public static let columns = 21
    /// Spec 4.3.1: what the page shows when every mantra has been deleted.
    public static let emptyMessage = "No mantras found. Please create a new mantra"

    public private(set) var items: [String]
    /// Index of the mantra shown (and sent with reminders); 0 when the list is empty.
    public private(set) var current: Int
    /// The current mantra (or the empty message) wrapped to `columns`.
    public private(set) var lines: [String]

    public init(_ items: [String] = [], current: Int = 0) {
        self.items = items
        self.current = items.isEmpty ? 0 : max(0, min(items.count - 1, current))
        self.lines = []
        rewrap()
    }

    public var isEmpty: Bool { items.isEmpty }
    public var count: Int { items.count }
    public var currentText: String? { items.isEmpty ? nil : items[current] }

    /// RIGHT: the next mantra, from the last back to the first (spec 4.5, "infinite scroll").
    public mutating func next() {
        guard !items.isEmpty else { return }
        current = (current + 1) % items.count
        rewrap()
    }

    /// LEFT: the previous mantra, from the first round to the last.
    public mutating func previous() {
        guard !items.isEmpty else { return }
        current = (current + items.count - 1) % items.count
        rewrap()
    }

    /// Deletes the current mantra (spec 4.3); the one after it takes its place (after the last,
    /// the first). Returns the text deleted.
    @discardableResult
    public mutating func deleteCurrent() -> String? {
        guard !items.isEmpty else { return nil }
        let removed = items.remove(at: current)
        current = items.isEmpty ? 0 : current % items.count
        rewrap()
        return removed
    }

    /// Adds a mantra at the end and makes it the current one (spec 4.2's scenario: "your
    /// mantra will be the currently selected mantra").
    public mutating func add(_ text: String) throws(MantrasFile.Problem) {
        if let p = MantrasFile.problem(with: text) { throw .invalid(line: items.count + 1, p) }
        if items.count >= MantrasFile.maximumCount { throw .tooMany(items.count + 1) }
        items.append(text)
        current = items.count - 1
        rewrap()
    }

    /// Replaces the whole list (a maintainer's edit); `current` is kept where it can be.
    public mutating func replace(with items: [String], current: Int? = nil) {
        self = MantraList(items, current: current ?? self.current)
    }

    private mutating func rewrap() {
        lines = HelpLibrary.wrap(currentText ?? Self.emptyMessage, columns: Self.columns)
    }
}

/// The page's buttons: browsing, the reminder settings, deleting a mantra.
extension DeviceCore {
    // MARK: Positive affirmations (spec 4.x)

    /// LEFT/RIGHT browse (on the press), SELECT opens the reminder settings (on release: holding
    /// it means delete), SELECT held asks to delete the mantra shown. With coping cards, their
    /// entry sits between the last mantra and the first: SELECT there opens them.
    mutating func handleAffirmations(_ gesture: ButtonGesture, at now: Moment, effects: inout [Effect]) {
        let onCards = state.selfCheck.showsCardsOnMantraPage
        switch gesture {
        case .down(.left):
            if !browseTowardsCards(-1) { state.mantras.previous() }
            state.mantraShownAt = now.instant
        case .down(.right):
            if !browseTowardsCards(1) { state.mantras.next() }
            state.mantraShownAt = now.instant
        case .short(.select) where onCards:
            show(.cards(CardViewer(cards: state.selfCheck.cards, at: now.instant)), at: now)
        case .short(.select):
            state.overlay = .reminderSettings(ReminderEditor(state.reminders.schedule))
        case .long(.select):
            if !onCards && !state.mantras.isEmpty { state.overlay = .confirmDelete }
        default: break
        }
    }

    /// A second SELECT deletes; any other button keeps the mantra. The press that decides is used
    /// up, so its release does nothing more.
    mutating func handleConfirmDelete(_ gesture: ButtonGesture, at now: Moment, effects: inout [Effect]) {
        guard case .down(let b) = gesture, b != .panic else { return }
        state.overlay = .none
        swallowPress(b)
        guard b == .select else { return }
        state.mantras.deleteCurrent()
        state.mantraShownAt = now.instant
        effects.append(.save(.mantras, MantrasFile.format(state.mantras.items)))
    }

    /// LEFT/RIGHT change the focused value, SELECT goes to the next field and saves after the
    /// last, PAGE leaves without saving.
    mutating func handleReminderEditor(_ gesture: ButtonGesture, _ editor: ReminderEditor, at now: Moment,
                                       effects: inout [Effect]) {
        var e = editor
        let step = e.press(gesture)
        if step != .ignored, case .down(let b) = gesture, b == .select || b == .page { swallowPress(b) }
        switch step {
        case .ignored: return
        case .editing: state.overlay = .reminderSettings(e)
        case .cancelled: state.overlay = .none
        case .finished:
            state.overlay = .none
            setReminder(e.schedule, at: now, effects: &effects)
        }
    }
}
