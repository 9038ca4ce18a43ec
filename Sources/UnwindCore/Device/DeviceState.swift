/// What is drawn over the page.
public enum Overlay: Equatable, Sendable {
    case none
    /// The page's help, scrolled down by `scroll` lines.
    case help(scroll: Int)
    /// The breathing statistics screen.
    case stats
    /// Affirmations: the reminder settings screen (spec 4.6, 4.6.1).
    case reminderSettings(ReminderEditor)
    /// Affirmations: "Delete this mantra?" after a long SELECT (spec 4.3).
    case confirmDelete
    /// Panic: where each alert stands, until acknowledged.
    case alertStatus
    /// Panic: the counselling service's website as a QR code (spec 5.3).
    case counsellingCode
    /// Breathing: how anxious, 0–10, before or after a session (`breathing.check_in`).
    case rating(AnxietyRating)
    /// "How am I doing?": a self-check, its results, the mood, the chart, the coping cards (also
    /// over the affirmations page), the weekly reminder's setting.
    case selfCheck(SelfCheckView)
}

/// The whole device as the person sees it.
public struct DeviceState: Equatable, Sendable {
    public var page: Page = .breathing
    public var overlay: Overlay = .none
    public var breathing: BreathingState
    /// "Stop first" is shown until this instant after PAGE was pressed during a session.
    public var lockNoticeUntil: Instant?
    /// PAGE is down on a page (no overlay): the menu bar marks the page its release opens. PAGE
    /// acts on release so that holding it can open help instead; this is the press's answer
    /// within a frame.
    public var pagePressed = false
    /// SELECT is down on the mantra or alert page, where it acts on release (holding it means
    /// something else there): the page shows the press at once.
    public var selectPressed = false
    public var help: HelpLibrary
    public var grounding = GroundingState()
    public var mantras: MantraList
    /// When the current mantra appeared: a long one scrolls from here.
    public var mantraShownAt = Instant.zero
    public var reminders: ReminderState
    public var display = DisplayState()
    public var panic = PanicState()
    /// The daily check-in's prompt and its last day (off unless configured).
    public var checkIn = CheckInState()
    /// STATUS by SMS and the maintainer's texts.
    public var statusTexts = StatusTexts()
    /// What the setup file's import found ("Ready", or the line to fix), wrapped to the screen,
    /// until the person presses a button.
    public var setupNotice: [String]?
    /// "How am I doing?": the self-checks, the mood diary, the coping cards, the weekly reminder.
    public var selfCheck = SelfCheckState()
    /// Buttons whose current press was used up (waking the display, closing a reminder or an
    /// overlay on the press): the rest of that press (short, long, up) means nothing.
    var swallowed: UInt8 = 0

    public func showsLockNotice(at now: Instant) -> Bool {
        guard let until = lockNoticeUntil else { return false }
        return now < until
    }

    /// Whether something on screen must not be put to sleep.
    public var keepsDisplayAwake: Bool {
        breathing.isRunning || reminders.isShowing || panic.armingSince != nil || panic.sendingAt != nil
            || overlay == .alertStatus || checkIn.showing || selfCheck.reminder.isShowing
    }
}
