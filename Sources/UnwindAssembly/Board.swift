import UnwindCore
import UnwindRuntime
import UnwindSeams
import UnwindRender

/// The parts of one device that differ between the board (libgpiod, I²C, a real clock), the
/// terminal (keys and a drawn panel on real time) and a test or the headless simulator
/// (simulated time and fakes). Everything else is assembled the same way from `DeviceRecipe`.
public struct Board {
    public var clock: DeviceClock
    public var waiter: LoopWaiter
    public var motor: MotorLine
    public var buttons: ButtonLines
    public var presenter: FramePresenter
    /// The panel's power and contrast, for screen care (nil: left as it is).
    public var displayControl: DisplayControl?
    /// What `unwind status` says about the panel ("ok", "lost …").
    public var displayHealth: (() -> String?)?
    /// The wall-clock alarm for reminders (nil: reminders never fire).
    public var alarm: WallClockAlarm?
    public var camera: GroundingCamera?
    /// Undone after the loop's last save, in this order: the presenter stopped, the lines
    /// released, a simulator stopped.
    public var teardown: [() -> Void]

    public init(clock: DeviceClock, waiter: LoopWaiter, motor: MotorLine, buttons: ButtonLines,
                presenter: FramePresenter, displayControl: DisplayControl? = nil,
                displayHealth: (() -> String?)? = nil, alarm: WallClockAlarm? = nil,
                camera: GroundingCamera? = nil, teardown: [() -> Void] = []) {
        self.clock = clock
        self.waiter = waiter
        self.motor = motor
        self.buttons = buttons
        self.presenter = presenter
        self.displayControl = displayControl
        self.displayHealth = displayHealth
        self.alarm = alarm
        self.camera = camera
        self.teardown = teardown
    }
}

/// What the configuration (or the simulator's options) says about the device, whatever the board.
public struct DeviceRecipe {
    public var stateDirectory: String
    public var contentDirectory: String?
    public var settings: DeviceSettings
    public var counselling: CounsellingLine = .sfuCounselling
    public var website: String? = CounsellingLine.sfuWebsite
    public var buttonTiming = ButtonClassifier.Timing()
    public var displaySize: (width: Int, height: Int) = (128, 64)
    /// GNU Unifont's hex file, for the characters the built-in fonts lack (nil: none; see
    /// `SystemFonts`).
    public var unifont: String? = Unifont.debianPath
    /// The control socket the maintainer's commands use; nil: no socket and no state lock (a
    /// headless run, the benchmark: nothing else touches their directory).
    public var socket: String?
    public var controlDeadlines: ControlServer.Deadlines = .device
    /// The latest warnings and errors, for `unwind status`.
    public var recentLog: RecentLog?
    /// State files written on a background queue (an fsync on an SD card can outlast a frame),
    /// or at once (headless runs and tests read them right after).
    public var writeInBackground: Bool

    public init(stateDirectory: String, contentDirectory: String? = nil, settings: DeviceSettings,
                socket: String? = nil, writeInBackground: Bool) {
        self.stateDirectory = stateDirectory
        self.contentDirectory = contentDirectory
        self.settings = settings
        self.socket = socket
        self.writeInBackground = writeInBackground
    }
}
