import UnwindSeams
// The libgpiod motor and button lines against the kernel's gpio-sim, inside the kernel rig's
// guest (see RigSupport.swift and Tests/KernelRig/README.md). Skipped everywhere else.
//
// The simulated chip has 8 lines; each test uses its own:
//   0 motor levels · 1, 4, 5 gestures · 2, 3 bias · 6, 7 busy lines · 6 also selectors.
// Timing is asserted on the kernel's own event timestamps and on monotonic instants taken around
// each action, with margins, never on how long a sleep took: under emulation sleeps stretch.

import Foundation
import Testing
import UnwindCore
import UnwindLinuxHardware
import UnwindTestSupport

#if canImport(Glibc)
import Glibc
#endif

extension RigTests {
    @Suite("GPIO on gpio-sim")
    struct RigGPIOTests {
        static let consumer = "unwind-rig-test"

        // MARK: - Motor

        @Test("motor: low from the request, every set seen in sim value, in order and for as long as it was set",
              .kernelRig)
        func motorLevels() throws {
            let offset = 0
            // Against a pull-up, so "low" can only be the program driving it.
            try KernelRig.setPull(offset, .up)
            #expect(try KernelRig.value(offset) == 1, "a free line follows the simulated pull")

            let motor = try LinuxMotorLine(KernelRig.line(offset), consumer: Self.consumer)
            defer {
                motor.release()
                try? KernelRig.setPull(offset, .down)
            }
            #expect(motor.path == KernelRig.chipPath)
            #expect(motor.offset == offset)
            #expect(try KernelRig.value(offset) == 0, "requested as an output driven low from the first instant")

            try motor.set(true)
            #expect(try KernelRig.value(offset) == 1)
            try motor.set(false)
            #expect(try KernelRig.value(offset) == 0)

            // The signal-handler path: no object, one ioctl per registered output.
            try motor.set(true)
            driveLowNow()
            #expect(try KernelRig.value(offset) == 0, "driveLowNow() drives the registered motor line low")

            // Three pulses of a hold corner (120 ms on, 100 ms off), watched by a sampler thread.
            let pulse = Duration.milliseconds(120), gap = Duration.milliseconds(100)
            let sampler = LineSampler(line: offset)
            sampler.start()
            try #require(waitUntil { sampler.isSampling }, "the sampler never read the line")
            var ons: [Bracket] = [], offs: [Bracket] = []
            for _ in 0..<3 {
                ons.append(try KernelRig.bracket { try motor.set(true) })
                KernelRig.sleep(pulse)
                offs.append(try KernelRig.bracket { try motor.set(false) })
                KernelRig.sleep(gap)
            }
            let seen = sampler.stop()
            #expect(seen.errors.isEmpty)
            #expect(seen.samples > 20, "the sampler read the line often enough to see every pulse")

            let values = seen.changes.map(\.value)
            try #require(values == [0, 1, 0, 1, 0, 1, 0],
                         "the level went low, then high and low three times, nothing else (\(seen.changes); \(seen.samples) samples, longest gap \(seen.longestGap))")
            for k in 0..<3 {
                let rise = seen.changes[1 + 2 * k], fall = seen.changes[2 + 2 * k]
                #expect(rise.within.overlaps(ons[k]), "pulse \(k): the rise \(rise.within) happened during set(true) \(ons[k])")
                #expect(fall.within.overlaps(offs[k]), "pulse \(k): the fall \(fall.within) happened during set(false) \(offs[k])")
                // The line was high at least from the end of set(true) to the start of set(false)…
                let commanded = offs[k].before - ons[k].after
                #expect(commanded >= pulse, "pulse \(k): on for \(commanded)")
                #expect(commanded < .seconds(5), "pulse \(k): on for \(commanded), implausibly long")
                // …and the sampler agrees: the widest interval it allows covers the pulse.
                let observedAtMost = fall.within.after - rise.within.before
                #expect(observedAtMost >= pulse, "pulse \(k): seen high for at most \(observedAtMost)")
                if k > 0 {
                    let low = ons[k].before - offs[k - 1].after
                    #expect(low >= gap, "gap before pulse \(k): \(low)")
                }
            }
        }

        // MARK: - Buttons

        @Test("buttons: presses driven through the pull give short, long and held gestures on the edges' own timestamps",
              .kernelRig)
        func gestures() throws {
            let page = 1, select = 4, panic = 5
            let lineOf: [Button: Int] = [.page: page, .select: select, .panic: panic]
            let lines = try LinuxButtonLines([.page: KernelRig.line(page), .select: KernelRig.line(select),
                                              .panic: KernelRig.line(panic)],
                                             activeLow: true, consumer: Self.consumer)
            defer { lines.release() }
            #expect(lines.pollDescriptors.count == 3)
            #expect(lines.pollDescriptors.allSatisfy { $0 >= 0 })
            for offset in [page, select, panic] {
                #expect(try KernelRig.value(offset) == 1, "line \(offset) idles high on the pull-up the program asked for")
            }
            #expect(try Self.edges(from: lines, count: 1, within: .milliseconds(300)).isEmpty,
                    "requesting the lines reports no edge")

            // Each change is driven once the previous one has been delivered, as a person's
            // presses are: the kernel stamps an edge in hard-irq context but queues it from the
            // line's irq thread, so under emulation an edge on one line can become readable after
            // a later edge on another line (each line's own edges always come in order).
            var writes: [(button: Button, pressed: Bool, at: Bracket)] = []
            var edges: [ButtonEdge] = []
            func drive(_ button: Button, pressed: Bool) throws {
                let offset = lineOf[button]!
                // Active-low: pressed pulls the line to ground.
                let at = try KernelRig.bracket { try KernelRig.setPull(offset, pressed ? .down : .up) }
                writes.append((button, pressed, at))
                let arrived = try Self.edges(from: lines, count: 1, within: .seconds(20))
                try #require(arrived.count == 1, "\(button) \(pressed ? "down" : "up"): one edge, got \(arrived)")
                edges += arrived
            }

            // SELECT: a short press. PAGE: a long one (held 1.2 s). PANIC: pressed and kept down.
            try drive(.select, pressed: true)
            KernelRig.sleep(.milliseconds(100))
            try drive(.select, pressed: false)
            try drive(.page, pressed: true)
            KernelRig.sleep(.milliseconds(1200))
            try drive(.page, pressed: false)
            try drive(.panic, pressed: true)

            #expect(edges.map(\.button) == [.select, .select, .page, .page, .panic])
            #expect(edges.map(\.pressed) == [true, false, true, false, true], "falling edge = pressed for active-low buttons")
            Self.expectStampedDuringTheirWrites(edges, writes)

            let selectHeld = edges[1].at - edges[0].at
            let pageHeld = edges[3].at - edges[2].at
            let timing = ButtonClassifier.Timing()
            #expect(selectHeld >= .milliseconds(50) && selectHeld < timing.longPress,
                    "SELECT held \(selectHeld) by the kernel's timestamps: a short press")
            #expect(pageHeld >= .milliseconds(1100), "PAGE held \(pageHeld) by the kernel's timestamps: a long press")

            var classifier = ButtonClassifier(timing: timing)
            var gestures: [ButtonGesture] = []
            for e in edges { classifier.feed(e, into: &gestures) }
            // (The loop also advances the classifier to "now" between edges; fed edge by edge,
            // a long press shows up at the latest with its release, as here.)
            #expect(gestures == [
                .down(.select), .short(.select), .up(.select, heldFor: selectHeld),
                .down(.page), .long(.page), .up(.page, heldFor: pageHeld),
                .down(.panic),
            ])

            // PANIC stays down past the long-press threshold: "long" comes from time alone, on
            // the monotonic clock the loop reads, which is the clock of the edges' timestamps.
            let panicDown = edges[4].at
            #expect(classifier.nextDeadline() == panicDown + timing.longPress)
            KernelRig.sleep(.milliseconds(1700))
            let later = KernelRig.now()
            #expect(later - panicDown >= .milliseconds(1600))
            gestures.removeAll()
            classifier.advance(to: later, into: &gestures)
            #expect(gestures == [.long(.panic)], "held: reported while the button is still down")
            #expect(classifier.isDown(.panic))
            #expect(try Self.edges(from: lines, count: 1, within: .milliseconds(200)).isEmpty, "no edge while held")

            try drive(.panic, pressed: false)
            let release = edges[5]
            #expect(release.button == .panic && !release.pressed)
            Self.expectStampedDuringTheirWrites(Array(edges.suffix(1)), Array(writes.suffix(1)))
            let panicHeld = release.at - panicDown
            #expect(panicHeld >= .milliseconds(1600))
            gestures.removeAll()
            classifier.feed(release, into: &gestures)
            #expect(gestures == [.up(.panic, heldFor: panicHeld)], "no second long, no short after a long press")
            #expect(!classifier.isDown(.panic))
        }

        // MARK: - Bias

        @Test("buttons: the pull-up bias is requested (and pull-down for active-high wiring)", .kernelRig)
        func bias() throws {
            let left = 2, right = 3
            try KernelRig.setPull(left, .down)
            #expect(try KernelRig.value(left) == 0)
            do {
                let lines = try LinuxButtonLines([.left: KernelRig.line(left)], activeLow: true, consumer: Self.consumer)
                defer { lines.release() }
                #expect(try KernelRig.value(left) == 1, "after the request the line reads high: the pull-up bias is in effect")
                #expect(try KernelRig.pull(left) == "pull-up")
                #expect(try !lines.isPressed(.left), "the line's value read back: high, so not pressed")
                #expect(try Self.edges(from: lines, count: 1, within: .milliseconds(300)).isEmpty,
                        "the bias taking effect is not reported as a release")
            }

            // Buttons to 3V3: pulled down, and a rising edge is the press.
            try KernelRig.setPull(right, .up)
            #expect(try KernelRig.value(right) == 1)
            let lines = try LinuxButtonLines([.right: KernelRig.line(right)], activeLow: false, consumer: Self.consumer)
            defer { lines.release() }
            #expect(try KernelRig.value(right) == 0, "pull-down bias for active-high buttons")
            #expect(try KernelRig.pull(right) == "pull-down")
            let press = try KernelRig.bracket { try KernelRig.setPull(right, .up) }
            let edges = try Self.edges(from: lines, count: 1, within: .seconds(20))
            try #require(edges.count == 1)
            #expect(edges[0] == ButtonEdge(.right, pressed: true, at: edges[0].at), "rising edge = pressed for active-high buttons")
            #expect(try lines.isPressed(.right), "the line's value read back: high, so pressed")
            Self.expectStampedDuringTheirWrites(edges, [(.right, true, press)])
            try KernelRig.setPull(right, .down)
        }

        // MARK: - Busy lines

        @Test("a line held by another consumer: EBUSY with the message that says what to do", .kernelRig)
        func busyLine() throws {
            // Held by this process: the motor's line asked for twice, then as a button.
            let motor = try LinuxMotorLine(KernelRig.line(6), consumer: Self.consumer)
            defer { motor.release() }
            let second = #expect(throws: DeviceError.self) {
                _ = try LinuxMotorLine(KernelRig.line(6), consumer: Self.consumer)
            }
            #expect(second?.errno == EBUSY)
            #expect(second?.device == "\(KernelRig.chipName) line 6 (motor)")
            #expect(second?.hint.contains("held by another consumer (see gpioinfo)") == true, "\(String(describing: second))")
            let asButton = #expect(throws: DeviceError.self) {
                _ = try LinuxButtonLines([.select: KernelRig.line(6)], consumer: Self.consumer)
            }
            #expect(asButton?.errno == EBUSY)
            #expect(asButton?.device == "\(KernelRig.chipName) line 6 (SELECT button)")

            // Held by another program: gpioset keeps line 7 low against the pull-up.
            try KernelRig.setPull(7, .up)
            let holder = try RigChild("/usr/bin/gpioset", KernelRig.gpiosetHolding(7, at: 0))
            defer { holder.stop() }
            let deadline = KernelRig.now() + .seconds(30)
            while try KernelRig.value(7) != 0 && KernelRig.now() < deadline && holder.isRunning {
                KernelRig.sleep(.milliseconds(20))
            }
            try #require(try KernelRig.value(7) == 0, "gpioset holds line 7 low")

            let error = #expect(throws: DeviceError.self) {
                _ = try LinuxButtonLines([.page: KernelRig.line(3), .panic: KernelRig.line(7)], consumer: Self.consumer)
            }
            #expect(error?.errno == EBUSY)
            #expect(error?.device == "\(KernelRig.chipName) line 7 (PANIC button)")
            #expect(error?.operation == "request as input with edge events")
            #expect(error?.description.contains("GPIO line 7 on \(KernelRig.chipName) is held by another consumer") == true,
                    "\(String(describing: error))")
            // The lines requested before the busy one were let go: PAGE's line is free again.
            let page = try LinuxButtonLines([.page: KernelRig.line(3)], consumer: Self.consumer)
            page.release()

            holder.stop()
            let free = try LinuxButtonLines([.panic: KernelRig.line(7)], consumer: Self.consumer)
            free.release()
        }

        // MARK: - Selectors

        @Test("selectors resolve on the real chip: by name, by label; wrong ones get their messages", .kernelRig)
        func selectors() throws {
            let byName = try LinuxMotorLine(try LineSelector(parsing: "sim6"), consumer: Self.consumer)
            #expect(byName.path == KernelRig.chipPath)
            #expect(byName.offset == 6)
            byName.release()
            let byLabel = try LinuxMotorLine(.offset(chip: KernelRig.chipLabel, line: 6), consumer: Self.consumer)
            #expect(byLabel.path == KernelRig.chipPath)
            byLabel.release()
            let info = try GPIOChipInfo(chip: KernelRig.chipName)
            #expect(info.label == KernelRig.chipLabel)
            #expect(info.lineCount == KernelRig.lineCount)

            let noName = #expect(throws: DeviceError.self) {
                _ = try LinuxMotorLine(.name("NO_SUCH_LINE"), consumer: Self.consumer)
            }
            #expect(noName?.errno == ENOENT)
            #expect(noName?.hint.contains("no GPIO line is named \"NO_SUCH_LINE\" on any chip") == true)
            let beyond = #expect(throws: DeviceError.self) {
                _ = try LinuxMotorLine(KernelRig.line(KernelRig.lineCount), consumer: Self.consumer)
            }
            #expect(beyond?.errno == EINVAL)
            #expect(beyond?.hint.contains("its lines are 0 to \(KernelRig.lineCount - 1)") == true,
                    "\(String(describing: beyond))")
        }

        // MARK: - Helpers

        /// Polls the lines' descriptors and reads edges until `count` have come or `within` passed.
        static func edges(from lines: LinuxButtonLines, count: Int, within: Duration) throws -> [ButtonEdge] {
            var edges: [ButtonEdge] = []
            let deadline = KernelRig.now() + within
            while edges.count < count {
                let left = deadline - KernelRig.now()
                if left <= .zero { break }
                var fds = lines.pollDescriptors.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
                let ms = Int32(clamping: min(left.nanoseconds / 1_000_000 + 1, 1000))
                _ = poll(&fds, nfds_t(fds.count), ms)
                try lines.readEdges(into: &edges)
            }
            return edges
        }

        /// Each edge's kernel timestamp lies in the monotonic interval of the write that caused
        /// it (plus a margin for the irq_work that stamps it; generous under emulation).
        static func expectStampedDuringTheirWrites(_ edges: [ButtonEdge],
                                                   _ writes: [(button: Button, pressed: Bool, at: Bracket)],
                                                   sourceLocation: SourceLocation = #_sourceLocation) {
            #expect(edges.count == writes.count, sourceLocation: sourceLocation)
            for (e, w) in zip(edges, writes) {
                #expect(e.button == w.button && e.pressed == w.pressed, sourceLocation: sourceLocation)
                #expect(e.at >= w.at.before && e.at <= w.at.after + .milliseconds(500),
                        "\(e.button) \(e.pressed ? "down" : "up") stamped \(e.at.nanoseconds) ns, written during \(w.at)",
                        sourceLocation: sourceLocation)
            }
            for i in edges.indices.dropFirst() {
                #expect(edges[i].at > edges[i - 1].at, "timestamps increase", sourceLocation: sourceLocation)
            }
        }
    }
}
