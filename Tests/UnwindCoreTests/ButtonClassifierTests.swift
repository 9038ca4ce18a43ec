import Testing
@testable import UnwindCore

@Suite struct ButtonClassifierTests {
    func run(_ edges: [ButtonEdge], until end: Instant) -> [ButtonGesture] {
        var c = ButtonClassifier()
        var out: [ButtonGesture] = []
        for e in edges { c.feed(e, into: &out) }
        c.advance(to: end, into: &out)
        return out
    }

    @Test func shortPress() {
        let g = run([ButtonEdge(.select, pressed: true, at: .seconds(1)),
                     ButtonEdge(.select, pressed: false, at: .seconds(1.1))], until: .seconds(5))
        #expect(g == [.down(.select), .short(.select), .up(.select, heldFor: .milliseconds(100))])
    }

    @Test func longPressIsReportedWhileHeld() {
        var c = ButtonClassifier()
        var out: [ButtonGesture] = []
        c.feed(ButtonEdge(.page, pressed: true, at: .seconds(1)), into: &out)
        #expect(c.nextDeadline() == .seconds(1.8))
        c.advance(to: .seconds(1.79), into: &out)
        #expect(out == [.down(.page)])
        c.advance(to: .seconds(1.8), into: &out)
        #expect(out == [.down(.page), .long(.page)])
        c.feed(ButtonEdge(.page, pressed: false, at: .seconds(3)), into: &out)
        #expect(out == [.down(.page), .long(.page), .up(.page, heldFor: .seconds(2))])
    }

    @Test func bounceStormIsOnePress() {
        var edges: [ButtonEdge] = []
        var t = Instant.seconds(1)
        for i in 0..<9 { edges.append(ButtonEdge(.left, pressed: i % 2 == 0, at: t)); t += .milliseconds(1) }
        edges.append(ButtonEdge(.left, pressed: false, at: .seconds(1.2)))
        for i in 0..<6 { edges.append(ButtonEdge(.left, pressed: i % 2 == 1, at: .seconds(1.2) + .milliseconds(Int64(i + 1)))) }
        // ends released (last edge i=5 → pressed true? no: i=5 is odd → true); add a final release
        edges.append(ButtonEdge(.left, pressed: false, at: .seconds(1.21)))
        let g = run(edges, until: .seconds(2))
        #expect(g.filter { if case .short = $0 { true } else { false } }.count == 1)
        #expect(g.filter { if case .down = $0 { true } else { false } }.count == 1)
    }

    @Test func releaseHiddenInLockoutIsRecovered() {
        // Pressed and released within the debounce window: the release is taken when the
        // lockout ends, so the button does not stay "down" for ever.
        var c = ButtonClassifier()
        var out: [ButtonGesture] = []
        c.feed(ButtonEdge(.right, pressed: true, at: .seconds(1)), into: &out)
        c.feed(ButtonEdge(.right, pressed: false, at: .seconds(1.005)), into: &out)
        #expect(c.isDown(.right))
        #expect(c.nextDeadline() == .seconds(1.02))
        c.advance(to: .seconds(1.02), into: &out)
        #expect(!c.isDown(.right))
        #expect(out == [.down(.right), .short(.right), .up(.right, heldFor: .milliseconds(20))])
    }

    @Test func twoButtonsAtOnce() {
        let g = run([ButtonEdge(.left, pressed: true, at: .seconds(1)),
                     ButtonEdge(.right, pressed: true, at: .seconds(1.001)),
                     ButtonEdge(.left, pressed: false, at: .seconds(1.1)),
                     ButtonEdge(.right, pressed: false, at: .seconds(2))], until: .seconds(3))
        #expect(g == [.down(.left), .down(.right), .short(.left), .up(.left, heldFor: .milliseconds(100)),
                      .long(.right), .up(.right, heldFor: .milliseconds(999))])
    }
}
