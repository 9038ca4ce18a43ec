import Logging
import UnwindMaintenance
import UnwindCore
import UnwindModem
import UnwindRender

extension DeviceCore {
    /// The core as the device starts it: state files loaded (or recovered), help loaded, the
    /// person's mantras seeded from the shipped list in `content` on first start, the alert
    /// slots read (a slot that fails validation is shown as "needs attention" and logged).
    public static func starting(settings: DeviceSettings, persistence: StatePersistence,
                                help: HelpLibrary, now: WallTime,
                                content: String? = nil,
                                counselling: CounsellingLine = .sfuCounselling,
                                website: String? = CounsellingLine.sfuWebsite) -> DeviceCore {
        // Loaded in this order (the log's order): statistics, mantras, reminder, check-in, monthly
        // test, STATUS texts, escalation, breathing patterns and choice, the setup result, the
        // self-checks, moods, coping cards and their reminder, alert slots.
        let totals = persistence.loadTotals(now: now)
        let history = persistence.loadHistory(now: now)
        let mantras = persistence.loadMantras(now: now, seed: { DeviceContent.shippedMantras(in: content) })
        let reminder = persistence.loadReminder(now: now)
        let checkIn = persistence.loadCheckIn(now: now)
        let alertTest = persistence.loadAlertTest(now: now)
        let statusTexts = persistence.loadStatusTexts(now: now)
        let escalation = persistence.loadEscalation(now: now)
        let patterns = persistence.loadPatterns(now: now)
        let choice = persistence.loadBreathingChoice(now: now)
        let setupNotice = persistence.loadSetupResult(now: now)?.flatMap { HelpLibrary.wrap($0, columns: Screen.helpColumns) }
        let selfCheck = persistence.loadSelfCheck(now: now)
        let slots = AlertSlotStore.load(from: persistence.store)
        for (i, s) in slots.enumerated() {
            if case .needsAttention(let problem) = s {
                let slot = i + 1
                persistence.logger.error("alert slot \(slot) (\(AlertSlotFile.name(slot: slot))) needs attention: \(problem); the other slots keep working")
            }
        }
        var code: QRCodeImage?
        if let website {
            do { code = try QRCode.encode(website) } catch {
                persistence.logger.error("counselling.website: \(error); the QR code is not shown")
            }
        }
        var core = DeviceCore(settings: settings, totals: totals, history: history, help: help, mantras: mantras,
                          reminder: reminder, alertSlots: slots, counselling: counselling, website: website, websiteCode: code,
                          checkIn: checkIn.record, alertTest: alertTest, customPatterns: patterns, breathingChoice: choice,
                          statusTexts: statusTexts, checkInGrace: checkIn.grace, escalation: escalation,
                          selfCheck: selfCheck)
        core.showSetupResult(setupNotice)
        return core
    }
}
