import Testing
@testable import UnwindCore

/// The questionnaires' words and scoring against the published instruments: the PHQ-9 and GAD-7
/// forms (Spitzer, Williams, Kroenke et al.; phqscreeners.com), their bands, and the two-item
/// screens' cut-off.
@Suite struct SelfCheckScoringTests {
    @Test func theGAD7BandsAreThePublishedOnes() {
        let expected: [(ClosedRange<Int>, SelfCheckBand)] = [(0...4, .minimal), (5...9, .mild), (10...14, .moderate), (15...21, .severe)]
        for (range, band) in expected { for t in range { #expect(Instrument.gad7.band(total: t) == band, "GAD-7 \(t)") } }
        #expect(Instrument.gad7.maximumTotal == 21)
    }

    @Test func thePHQ9BandsAreThePublishedOnes() {
        let expected: [(ClosedRange<Int>, SelfCheckBand)] = [(0...4, .minimal), (5...9, .mild), (10...14, .moderate),
                                                             (15...19, .moderatelySevere), (20...27, .severe)]
        for (range, band) in expected { for t in range { #expect(Instrument.phq9.band(total: t) == band, "PHQ-9 \(t)") } }
        #expect(Instrument.phq9.maximumTotal == 27)
    }

    @Test func aQuickScreenOfThreeOrMoreSuggestsTheFullCheck() {
        for i in [Instrument.gad2, .phq2] {
            #expect(i.maximumTotal == 6)
            for t in 0...2 { #expect(i.band(total: t) == .belowCutOff) }
            for t in 3...6 { #expect(i.band(total: t) == .fullCheckSuggested) }
        }
        #expect(Instrument.gad2.fullCheck == .gad7 && Instrument.phq2.fullCheck == .phq9)
    }

    @Test func moderateAndAboveAreHigh() {
        let high = [SelfCheckBand.moderate, .moderatelySevere, .severe].map(\.isHigh)
        let low = [SelfCheckBand.minimal, .mild, .belowCutOff, .fullCheckSuggested].map(\.isHigh)
        #expect(high == [true, true, true] && low == [false, false, false, false])
        #expect(Instrument.gad7.band(total: 9).isHigh == false && Instrument.gad7.band(total: 10).isHigh)
        #expect(Instrument.phq9.band(total: 9).isHigh == false && Instrument.phq9.band(total: 10).isHigh)
    }

    @Test func theItemsAreThePublishedWordsInOrder() {
        #expect(Instrument.stem == "Over the last 2 weeks, how often have you been bothered by")
        #expect(Instrument.answers == ["Not at all", "Several days", "More than half the days", "Nearly every day"])
        #expect(Instrument.gad7.items == [
            "Feeling nervous, anxious, or on edge",
            "Not being able to stop or control worrying",
            "Worrying too much about different things",
            "Trouble relaxing",
            "Being so restless that it is hard to sit still",
            "Becoming easily annoyed or irritable",
            "Feeling afraid, as if something awful might happen",
        ])
        #expect(Instrument.phq9.items.count == 9)
        #expect(Instrument.phq9.items[0] == "Little interest or pleasure in doing things")
        #expect(Instrument.phq9.items[1] == "Feeling down, depressed, or hopeless")
        #expect(Instrument.phq9.items[5] == "Feeling bad about yourself \u{2014} or that you are a failure or have let yourself or your family down")
        #expect(Instrument.phq9.items[7].hasPrefix("Moving or speaking so slowly that other people could have noticed? Or the opposite \u{2014} being so fidgety"))
        #expect(Instrument.phq9.items[Instrument.safetyItem] == "Thoughts that you would be better off dead or of hurting yourself in some way")
        // The two-item screens are the first two items of each.
        #expect(Instrument.gad2.items == Array(Instrument.gad7.items.prefix(2)))
        #expect(Instrument.phq2.items == Array(Instrument.phq9.items.prefix(2)))
        for i in Instrument.allCases { #expect(i.items.count == i.itemCount) }
    }

    @Test func theTotalIsTheSumOfTheAnswersScoredZeroToThree() {
        let r = SelfCheckResult(taken: WallTime(secondsSinceEpoch: 0), instrument: .gad7, answers: [0, 1, 2, 3, 3, 2, 1])
        #expect(r.total == 12 && r.band == .moderate)
        let all = SelfCheckResult(taken: WallTime(secondsSinceEpoch: 0), instrument: .phq9, answers: Array(repeating: 3, count: 9))
        #expect(all.total == 27 && all.band == .severe)
        #expect(SelfCheckResult.problem(instrument: .gad7, answers: [0, 1]) != nil)
        #expect(SelfCheckResult.problem(instrument: .gad2, answers: [0, 4]) != nil)
        #expect(SelfCheckResult.problem(instrument: .gad2, answers: [0, 3]) == nil)
    }

    @Test func onlyPHQ9ItemNineAboveNotAtAllAsksForTheSafetyStep() {
        var answers = Array(repeating: 0, count: 9)
        #expect(!SelfCheckResult(taken: WallTime(secondsSinceEpoch: 0), instrument: .phq9, answers: answers).needsSafetyStep)
        for a in 1...3 {
            answers[8] = a
            #expect(SelfCheckResult(taken: WallTime(secondsSinceEpoch: 0), instrument: .phq9, answers: answers).needsSafetyStep)
        }
        // Every other item at its highest never does.
        let others = [3, 3, 3, 3, 3, 3, 3, 3, 0]
        #expect(!SelfCheckResult(taken: WallTime(secondsSinceEpoch: 0), instrument: .phq9, answers: others).needsSafetyStep)
        #expect(!SelfCheckResult(taken: WallTime(secondsSinceEpoch: 0), instrument: .gad7, answers: Array(repeating: 3, count: 7)).needsSafetyStep)
    }

    @Test func theResultOffersWhatFollows() {
        func r(_ i: Instrument, _ total: Int) -> SelfCheckResult {
            var a = Array(repeating: 0, count: i.itemCount)
            var left = total
            for k in a.indices { a[k] = min(3, left); left -= a[k] }
            return SelfCheckResult(taken: WallTime(secondsSinceEpoch: 0), instrument: i, answers: a)
        }
        #expect(SelfCheckOutcome([r(.gad2, 2), r(.phq2, 2)], hasCards: true).offer == .none)
        #expect(SelfCheckOutcome([r(.gad2, 3), r(.phq2, 2)], hasCards: true).offer == .fullCheck(.anxiety))
        #expect(SelfCheckOutcome([r(.gad2, 2), r(.phq2, 3)], hasCards: true).offer == .fullCheck(.mood))
        // Both: the PHQ-9 first (it asks what the counselling line answers).
        #expect(SelfCheckOutcome([r(.gad2, 6), r(.phq2, 3)], hasCards: true).offer == .fullCheck(.mood))
        #expect(SelfCheckOutcome([r(.gad7, 9)], hasCards: true).offer == .none)
        #expect(SelfCheckOutcome([r(.gad7, 10)], hasCards: true).offer == .cards)
        #expect(SelfCheckOutcome([r(.phq9, 15)], hasCards: false).offer == .breathe)
    }
}
