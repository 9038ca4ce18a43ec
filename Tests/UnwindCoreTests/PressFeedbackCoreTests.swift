import Testing
@testable import UnwindCore

/// PAGE and SELECT act on release where holding them means something else; the press itself
/// must still answer within a frame.
@Suite struct PressFeedbackCoreTests {
    @Test func pagePressMarksTheNextPageAndTheReleaseOpensIt() {
        var core = DeviceCore()
        var effects: [Effect] = []
        core.apply(.button(.down(.page)), at: Moment(.seconds(1)), effects: &effects)
        #expect(core.state.pagePressed && core.state.page == .breathing)
        core.apply(.button(.short(.page)), at: Moment(.seconds(1.08)), effects: &effects)
        #expect(!core.state.pagePressed && core.state.page == .grounding)
        core.handle(.up(.page, heldFor: .milliseconds(80)), at: Moment(.seconds(1.08)), effects: &effects)
        #expect(!core.state.pagePressed)
    }

    @Test func aLongPressStillOpensHelpAndDropsTheMark() {
        var core = DeviceCore()
        var effects: [Effect] = []
        core.apply(.button(.down(.page)), at: Moment(.seconds(1)), effects: &effects)
        core.apply(.button(.long(.page)), at: Moment(.seconds(1.8)), effects: &effects)
        #expect(core.state.overlay == .help(scroll: 0) && !core.state.pagePressed && core.state.page == .breathing)
    }

    @Test func duringASessionThePressShowsTheLockAtOnce() {
        var core = DeviceCore()
        var effects: [Effect] = []
        core.apply(.button(.down(.select)), at: Moment(.seconds(0)), effects: &effects)
        core.apply(.button(.down(.page)), at: Moment(.seconds(3)), effects: &effects)
        #expect(core.showsLockNoticeForTest(at: .seconds(3)) && !core.state.pagePressed)
    }

    @Test func selectOnTheMantraAndAlertPagesShowsThePress() {
        for page in [Page.affirmations, .panic] {
            var core = DeviceCore()
            var effects: [Effect] = []
            core.state.page = page
            core.apply(.button(.down(.select)), at: Moment(.seconds(1)), effects: &effects)
            #expect(core.state.selectPressed)
            core.apply(.button(.short(.select)), at: Moment(.seconds(1.08)), effects: &effects)
            #expect(!core.state.selectPressed)
        }
    }
}

extension DeviceCore {
    func showsLockNoticeForTest(at t: Instant) -> Bool { state.showsLockNotice(at: t) }
}
