import UnwindCore

extension DeviceCore {
    /// The core as the device starts it: state files loaded (or recovered), help loaded.
    public static func starting(settings: DeviceSettings, persistence: StatePersistence,
                                help: HelpLibrary, now: WallTime) -> DeviceCore {
        DeviceCore(settings: settings,
                   totals: persistence.loadTotals(now: now),
                   history: persistence.loadHistory(now: now),
                   help: help)
    }
}
