import UnwindCore

extension DeviceCore {
    /// The core as the device starts it: state files loaded (or recovered), help loaded, the
    /// person's mantras seeded from the shipped list in `content` on first start.
    public static func starting(settings: DeviceSettings, persistence: StatePersistence,
                                help: HelpLibrary, now: WallTime,
                                content: String = DeviceContent.directory()) -> DeviceCore {
        DeviceCore(settings: settings,
                   totals: persistence.loadTotals(now: now),
                   history: persistence.loadHistory(now: now),
                   help: help,
                   mantras: persistence.loadMantras(now: now, seed: { DeviceContent.shippedMantras(in: content) }),
                   reminder: persistence.loadReminder(now: now))
    }
}
