// swift-tools-version:6.0
import PackageDescription

// The module graph is drawn in README.md from this file (Tests/module-graph.sh checks it).
let package = Package(
    name: "unwind",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "unwind", targets: ["unwind"]),
        .executable(name: "unwind-bench", targets: ["unwind-bench"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-system.git", from: "1.4.0"),
        .package(url: "https://github.com/ordo-one/malloc-interposer.git", from: "1.6.1"),
    ],
    targets: [
        // Pure behaviour and file formats: values and functions, no I/O, no clock reads.
        .target(name: "UnwindCore", exclude: ["README.md", "SelfCheck/README.md"]),
        // libqrencode: the counselling website as a QR code (spec 5.3).
        .systemLibrary(name: "CQREncode", pkgConfig: "libqrencode", providers: [.apt(["libqrencode-dev"])]),
        // 1-bit framebuffer, fonts and the screens: pure functions of the core's state.
        .target(name: "UnwindRender", dependencies: ["UnwindCore", "CQREncode"], exclude: ["Fonts/generate-fonts.py"]),
        // Every device seam in one place: the protocols the loop and the modem talk to (motor,
        // buttons, panel, presenter, clock, waiter, wall-clock alarm, display control, serial
        // line, I²C bus, state store) and their errors. Real ones in UnwindLinuxHardware, fakes in
        // UnwindSimulatedHardware. Also the GPIO adapter (polarity, edge merging, its messages)
        // over the lowest GPIO seam, `GPIOBackend`, so libgpiod and the simulated chip run the
        // same adapter. swift-system for `Errno`: the backend's failures and the one EINTR rule
        // (SystemCalls.swift) are typed in it on both sides of the seam.
        .target(
            name: "UnwindSeams",
            dependencies: ["UnwindCore", "CLinuxSystem", .product(name: "SystemPackage", package: "swift-system")]
        ),
        // The fakes, as gpiozero's mock pins: devices a test or the simulator drives (press a
        // button, read the motor's history, the display's pixels, script a modem's answers).
        // Beside the Linux implementations, on the seams alone.
        .target(name: "UnwindSimulatedHardware", dependencies: ["UnwindCore", "UnwindSeams", "CLinuxSystem"]),
        // Linux headers Glibc does not export (timerfd).
        .target(name: "CLinuxSystem"),
        // libgpiod (v1 API on Debian bookworm; the shim also builds against v2).
        .systemLibrary(name: "CGPIOD", pkgConfig: "libgpiod", providers: [.apt(["libgpiod-dev"])]),
        .target(name: "CUnwindGPIO", dependencies: ["CGPIOD"]),
        // libi2c and the i2c-dev ioctls (libi2c-dev ships no pkg-config file).
        .systemLibrary(name: "CI2C", providers: [.apt(["libi2c-dev"])]),
        .target(name: "CUnwindI2C", dependencies: ["CI2C"]),
        // The Linux side of each seam: libgpiod, i2c-dev and the SSD1306, the serial port, the
        // state directory, timerfd, sd_notify and the journal.
        .target(
            name: "UnwindLinuxHardware",
            dependencies: [
                "UnwindCore",
                "UnwindSeams",
                "CLinuxSystem",
                "CUnwindGPIO",
                "CUnwindI2C",
                .product(name: "SystemPackage", package: "swift-system"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The GSM modem: serial AT engine, SMS PDU encoding, the journaled outbox.
        .target(name: "UnwindModem", dependencies: ["UnwindSeams", .product(name: "Logging", package: "swift-log")], exclude: ["README.md"]),
        // The maintainer's side of the control socket, shared by the daemon and the CLI: the
        // protocol, the client, the state lock, and the checks both sides make on an edit.
        .target(name: "UnwindMaintenance", dependencies: ["UnwindCore", "UnwindSeams", "UnwindModem", .product(name: "SystemPackage", package: "swift-system")]),
        // The real-time loop: core + edge on absolute deadlines, clock injected.
        .target(
            name: "UnwindRuntime",
            dependencies: ["UnwindRender", "UnwindSeams", "UnwindModem", "UnwindMaintenance", .product(name: "Logging", package: "swift-log"),
                           .product(name: "SystemPackage", package: "swift-system")],
            // The shipped texts are compiled in (ShippedContent.swift): a resource bundle's
            // generated accessor would import the whole of Foundation, and with it ICU.
            exclude: ["Content"]
        ),
        // One assembly: the daemon, both simulators, the benchmark and the test rigs build the
        // device from a Board (Linux / simulated / terminal) and a recipe, with one shutdown order.
        .target(name: "UnwindAssembly", dependencies: ["UnwindRuntime", "UnwindLinuxHardware", "UnwindModem", "UnwindMaintenance", "CLibYAML"]),
        // libyaml's parser (upstream acd6f6f), as Yams 6.2.2 vendors it (its Sources/CYaml, without the
        // emitter): the configuration file's YAML without Yams, whose Swift half imports the
        // whole of Foundation (and so ICU). Sources/README.md says why.
        .target(name: "CLibYAML", exclude: ["License"], publicHeadersPath: "vendor/include", cSettings: [.define("YAML_DECLARE_STATIC")]),
        // The simulators: the terminal board (keys, a drawn panel) and the headless script runner.
        .target(name: "UnwindSimulator", dependencies: ["UnwindAssembly", "UnwindSimulatedHardware", "CLinuxSystem",
                                                .product(name: "SystemPackage", package: "swift-system")],
                exclude: ["README.md"]),
        // Composition root: `unwind run`, `unwind sim`, the maintainer's commands.
        .executableTarget(
            name: "unwind",
            dependencies: [
                "UnwindSimulator",
                "UnwindAssembly",
                "UnwindMaintenance",
                "CLinuxSystem",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "SystemPackage", package: "swift-system"),
            ],
            exclude: ["README.md"]
        ),
        .executableTarget(
            name: "unwind-bench",
            dependencies: [
                "UnwindSimulator",
                "UnwindAssembly",
                .product(name: "MallocInterposerSwift", package: "malloc-interposer"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // A child process the file-store tests kill with SIGKILL mid-write.
        .executableTarget(name: "store-writer", dependencies: ["UnwindSeams", "UnwindLinuxHardware"], path: "Tests/StoreWriter"),
        // The panic path in a child process the outbox restart test kills with SIGKILL.
        .executableTarget(
            name: "alert-sender",
            dependencies: ["UnwindModem", "UnwindLinuxHardware", .product(name: "Logging", package: "swift-log")],
            path: "Tests/AlertSender"
        ),
        // What the suites of several targets share: scratch directories under one per-process root,
        // quiet loggers, a log recorder, waiting for a condition or a process, the fast and the
        // patient modem configurations.
        .target(name: "UnwindTestSupport", dependencies: ["UnwindSeams", "UnwindModem", .product(name: "Logging", package: "swift-log")], path: "Tests/TestSupport"),
        .testTarget(name: "UnwindCoreTests", dependencies: ["UnwindCore"]),
        .testTarget(name: "UnwindRenderTests", dependencies: ["UnwindRender"]),
        // The seams' own code on the simulated chip: the GPIO adapter under faults, the EINTR rule.
        .testTarget(name: "UnwindSeamsTests", dependencies: ["UnwindSeams", "UnwindSimulatedHardware"]),
        .testTarget(name: "UnwindSimulatedHardwareTests", dependencies: ["UnwindSimulatedHardware", "UnwindLinuxHardware"]),
        // The SSD1306 driver decoded by the simulated display, GPIO on the simulated chip as the loop
        // drives it, the bus cost the benchmark measures (UnwindSimulator), and the file store with
        // `store-writer` killed mid-write.
        .testTarget(
            name: "UnwindLinuxHardwareTests",
            dependencies: ["UnwindTestSupport", "UnwindLinuxHardware", "UnwindSimulatedHardware", "UnwindRuntime", "UnwindSimulator",
                           "store-writer"]
        ),
        // The modem suite: the modem on its seams, the simulated modem, and the Linux serial port for the
        // end-to-end runs over a pseudo-terminal.
        .testTarget(name: "UnwindModemTests", dependencies: ["UnwindTestSupport", "UnwindModem", "UnwindSimulatedHardware", "UnwindLinuxHardware", "alert-sender"]),
        // The loop's links and control socket: the panic link against the scripted modem, the
        // request decoder, the shipped content.
        .testTarget(name: "UnwindRuntimeTests", dependencies: ["UnwindTestSupport", "UnwindRuntime", "UnwindLinuxHardware", "UnwindSimulatedHardware"]),
        // The configuration file's keys, and the daemon's own opening of its modem link.
        .testTarget(name: "UnwindAssemblyTests", dependencies: ["UnwindTestSupport", "UnwindAssembly", "UnwindSimulatedHardware"]),
        // The device end to end: the simulators, the daemon's assembly in the test process, and
        // "unwind": the maintainer-command tests run the real executable against a device in the test.
        .testTarget(name: "UnwindSimulatorTests", dependencies: ["UnwindTestSupport", "UnwindSimulator", "UnwindAssembly", "unwind"]),
    ]
)

// A release build of the tests (the arm64 stage's, Tests/Arm64/arm64-tests.sh) optimises the code
// under test as the board's release does, and leaves the test targets' own code unoptimised:
// optimising them costs about a fifth of that build and changes nothing they check. What the
// suites run beside them (UnwindTestSupport's modems, store-writer, alert-sender) stays -O.
for target in package.targets where target.type == .test {
    target.swiftSettings = (target.swiftSettings ?? []) + [.unsafeFlags(["-Onone"], .when(configuration: .release))]
}
