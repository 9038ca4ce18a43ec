import ArgumentParser
import Glibc
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Logging
import UnwindAssembly
import UnwindMaintenance
import UnwindCore
import UnwindRuntime
import UnwindLinuxHardware
import UnwindRender
import UnwindSeams

/// `unwind hw test motor|display|buttons`.
struct HardwareCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hw",
        abstract: "Hardware checks: pulse the motor, draw a test pattern, print button presses.",
        subcommands: [Test.self])

    enum Part: String, ExpressibleByArgument, CaseIterable {
        case motor, display, buttons
    }

    struct Test: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "test",
            abstract: "Test one part: motor | display | buttons.",
            discussion: """
                motor: three 0.3 s pulses (through the running device, which owns the line; or directly when \
                it is stopped). display: a test pattern for --seconds (default 10), then the panel is cleared; \
                buttons: every press and release, live, until Ctrl-C or --seconds. Both need the device \
                stopped (it owns the display and the buttons): sudo systemctl stop unwind.
                """)
        @OptionGroup var options: MaintenanceOptions
        @Argument(help: "motor, display or buttons.") var part: Part
        @Option(help: "How long the display test or the button listing lasts, in seconds.", transform: plainSeconds) var seconds: Double?

        func validate() throws {
            if let seconds, !(seconds > 0 && seconds <= 3600) { throw ValidationError("--seconds takes 0 to 3600 seconds") }
        }

        func run() throws {
            let m = try options.maintainer()
            let running = try m.runningDeviceSocket() != nil
            switch part {
            case .motor:
                if running {
                    say(try m.ask(.motorTest).message ?? "the device pulses its motor")
                    return
                }
                try pulseMotor(try options.configuration())
            case .display:
                if running { throw ControlFailure.failed("the daemon owns the display; stop it first: sudo systemctl stop unwind") }
                try drawTestPattern(try options.configuration(), seconds: seconds ?? 10)
            case .buttons:
                if running { throw ControlFailure.failed("the daemon owns the buttons; stop it first: sudo systemctl stop unwind") }
                try listButtons(try options.configuration(), seconds: seconds)
            }
        }

        func pulseMotor(_ c: DeviceConfiguration) throws {
            let motor: LinuxMotorLine
            do { motor = try LinuxMotorLine(c.gpio.motor, consumer: "unwind-hw-test") } catch {
                throw ControlFailure.failed("cannot open the motor line \(c.gpio.motor): \(error)")
            }
            defer { motor.release() }
            for k in 1...3 {
                do { try motor.set(true) } catch { throw ControlFailure.failed("motor: \(error)") }
                say("pulse \(k)")
                usleep(300_000)
                try? motor.set(false)
                usleep(300_000)
            }
            say("the motor pulsed 3 times (0.3 s each) on \(c.gpio.motor)")
        }

        func drawTestPattern(_ c: DeviceConfiguration, seconds: Double) throws {
            let bus: LinuxI2CBus
            do { bus = try LinuxI2CBus(bus: c.display.bus, address: c.display.address) } catch {
                throw ControlFailure.failed("cannot open the display: \(error)")
            }
            var logger = Logger(label: "unwind.hw")
            logger.logLevel = .error
            let clock = LinuxClock()
            let panel = SSD1306(bus: bus, configuration: c.display.panel, logger: logger, clock: { clock.now().instant })
            var fb = Framebuffer(width: c.display.panel.width, height: c.display.panel.height)
            fb.rectangle(x: 0, y: 0, width: fb.width, height: fb.height)
            for i in 0..<8 { fb.fill(x: 2 + i * 4, y: 2, width: 2, height: 2 + i) }           // a ramp
            for y in stride(from: fb.height - 12, to: fb.height - 2, by: 2) {                 // a checkerboard
                for x in stride(from: fb.width - 22 + (y / 2 % 2), to: fb.width - 2, by: 2) { fb.plot(x, y) }
            }
            fb.text("UNWIND", font: .large, x: (fb.width - 60) / 2, y: 14)
            fb.text("display test", font: .regular, x: (fb.width - 72) / 2, y: 36)
            fb.text("i2c-\(c.display.bus) 0x\(String(c.display.address, radix: 16))", font: .small, x: 4, y: fb.height - 9)
            do { try panel.show(fb) } catch { throw ControlFailure.failed("the display does not answer: \(error)") }
            say("test pattern on /dev/i2c-\(c.display.bus) at 0x\(String(c.display.address, radix: 16)) for \(seconds) s: a frame, a ramp, UNWIND, a checkerboard")
            usleep(UInt32(seconds * 1_000_000))
            try? panel.show(Framebuffer(width: fb.width, height: fb.height))
            say("display cleared")
        }

        func listButtons(_ c: DeviceConfiguration, seconds: Double?) throws {
            let lines: LinuxButtonLines
            do { lines = try LinuxButtonLines(configuration: c.gpio) } catch {
                throw ControlFailure.failed("cannot open the button lines: \(error)")
            }
            defer { lines.release() }
            let clock = LinuxClock()
            let start = clock.now().instant
            let end = seconds.map { start + .milliseconds(Int64($0 * 1000)) }
            var classifier = ButtonClassifier(timing: c.buttonTiming)
            var edges: [ButtonEdge] = []
            var gestures: [ButtonGesture] = []
            say("press the buttons (PAGE, LEFT, RIGHT, SELECT, PANIC); Ctrl-C ends" + (seconds.map { ", or after \($0) s" } ?? ""))
            fflush(nil)
            while end.map({ clock.now().instant < $0 }) ?? true {
                edges.removeAll()
                do { try lines.readEdges(into: &edges) } catch { throw ControlFailure.failed("buttons: \(error)") }
                gestures.removeAll()
                for e in edges { classifier.feed(e, into: &gestures) }
                classifier.advance(to: clock.now().instant, into: &gestures)
                for g in gestures {
                    let t = (clock.now().instant - start).wholeSeconds
                    switch g {
                    case .down(let b): say("\(t) s  \(b.rawValue) down")
                    case .short(let b): say("\(t) s  \(b.rawValue) short press")
                    case .long(let b): say("\(t) s  \(b.rawValue) long press")
                    case .up(let b, let held): say("\(t) s  \(b.rawValue) up (held \(held))")
                    }
                    fflush(nil)
                }
                var fds = lines.pollDescriptors.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
                _ = poll(&fds, nfds_t(fds.count), 20)
            }
        }
    }
}
