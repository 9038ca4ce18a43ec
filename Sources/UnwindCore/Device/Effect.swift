/// The files the core asks the edge to write, each replaced atomically.
public enum StateFile: Hashable, Sendable {
    case totalTime
    case sessionHistory
    case mantras
    case reminders
    /// `alert01.txt` … `alert05.txt`, slot 1…5.
    case alertSlot(Int)
    /// `checkIn.txt`: the last day the daily check-in was settled.
    case checkIn
    /// `alertTest.txt`: the last monthly alert test.
    case alertTest
    /// `breathing.txt`: the pattern and session length chosen last.
    case breathingChoice
    /// `patterns.txt`: the maintainer's own breathing patterns.
    case patterns
    /// `statusTexts.txt`: the STATUS answers and maintainer's texts sent (their limits).
    case statusTexts
    /// `escalation.txt`: what followed the last alerts (the ladder, "I'm OK now").
    case escalation
    /// `setupResult.txt`: the last setup import's result, emptied once the person has seen it.
    case setupResult
    /// `selfChecks.txt`: every completed self-check.
    case selfChecks
    /// `moods.txt`: the mood diary.
    case moods
    /// `copingCards.txt`: the person's coping cards.
    case copingCards
    /// `selfCheckReminder.txt`: the weekly self-check reminder.
    case selfCheckReminder

    /// The file's name in the state directory.
    public var name: String {
        switch self {
        case .totalTime: TotalTimeFile.name
        case .sessionHistory: SessionHistoryFile.name
        case .mantras: MantrasFile.name
        case .reminders: RemindersFile.name
        case .alertSlot(let slot): AlertSlotFile.name(slot: slot)
        case .checkIn: CheckInFile.name
        case .alertTest: AlertTestFile.name
        case .breathingChoice: BreathingChoiceFile.name
        case .patterns: PatternsFile.name
        case .statusTexts: StatusTextsFile.name
        case .escalation: EscalationFile.name
        case .setupResult: SetupResultFile.name
        case .selfChecks: SelfChecksFile.name
        case .moods: MoodsFile.name
        case .copingCards: CopingCardsFile.name
        case .selfCheckReminder: SelfCheckReminderFile.name
        }
    }
}

/// What the core asks the edge to do. Nothing here has happened yet.
public enum Effect: Equatable, Sendable {
    /// Change the motor line at an exact instant.
    case motor(MotorEdge)
    /// Drop every scheduled motor edge and drive the line low now.
    case cancelMotor
    /// Replace a state file with these contents.
    case save(StateFile, String)
    /// Switch the panel on (wake) or off (sleep). The loop keeps drawing; frames are blank while asleep.
    case displayPower(Bool)
    /// Set the panel's contrast (SSD1306 command 0x81): night dimming.
    case displayContrast(UInt8)
    /// Grounding: run the capture command, if one is configured, to write capture `index`
    /// (`NN.JPG`, 00…44) into the private temporary directory. Without a camera, nothing.
    case captureImage(Int)
    /// Grounding: capture `index` was undone; its photo, if any, is deleted.
    case discardCapture(Int)
    /// Grounding: the exercise was completed or retried; every photo is deleted.
    case deleteCaptures
    /// Panic: queue these alerts in the outbox and send them.
    case sendAlerts([AlertRequest])
    /// Panic: call the counselling line (ATD…;).
    case dial(PhoneNumber)
    /// Panic: end the call (ATH).
    case hangUp
    /// Panic: started again while the ladder rang a contact — the call the earlier run left up
    /// is looked for (AT+CLCC) and followed as this run's own.
    case followCallLeftUp
    /// The person dismissed these replies: remembered in the inbox, never shown again.
    case markRepliesSeen([String])
    /// Panic: cancel these slots' alerts that have not gone yet ("I'm OK now" before they went).
    case cancelAlerts([Int])
    /// A line for the maintainer's log: what the core decided and why (calls, check-ins, tests).
    case log(String)
    /// Run the modem's start-up checks now (no SMS); the answer comes as `.alertReadiness`.
    case runSelfTest
    /// Send a text that is not an alert (a STATUS answer, the maintainer's): never journaled,
    /// and sent only when no alert waits.
    case sendText(DeviceText)
}
