import Laboratory
import LinkModel
import Testing

@testable import Flashing

/// The class estimate against the simulator's modelled class time: boards on one adapter,
/// all started together, sharing its radio. Virtual time is deterministic, so these are not
/// timed assertions. `bitflash bench class` covers 8 to 64 boards on every profile.
@Suite struct ClassEstimateAccuracyTests {
    @Test(arguments: [LinkProfile.linuxDefault, .fast], [8, 16])
    func aPartialFlashOfAClassIsEstimatedWithinTenPercent(profile: LinkProfile, boards: Int) {
        let row = ClassBench.run(.partial, boards: boards, profile: profile)
        #expect(row.failures == 0)
        #expect(row.modelledClassSeconds > 0)
        #expect(
            abs(row.classError) <= 0.10,
            "\(boards) boards \(profile.name): estimate \(row.estimatedClassSeconds) s, modelled \(row.modelledClassSeconds) s"
        )
    }

    @Test func oneBoardsOwnEstimateIsFarTooLowForSixteenBoardsOnAFastLink() {
        // What each board was told before the shared radio was counted: the class takes much longer.
        let row = ClassBench.run(.partial, boards: 16, profile: .fast)
        #expect(row.singleBoardError < -0.25)
        #expect(row.estimatedClassSeconds > row.singleBoardSeconds * 1.4)
    }

    @Test func theClassEstimateOfOneBoardIsItsPathEstimate() throws {
        let demand = try #require(
            ClassEstimator.demand(
                plan: try ClassBench.samplePlan(.partial), path: .partial, options: FlashOptions(mode: .partial),
                link: .profile(.deviceRequested)))
        let estimate = ClassEstimator.estimate(demand, boards: 1, adapters: [.unlimited])
        #expect(estimate.classTime == demand.alone)
        #expect(demand.air > .zero && demand.air < demand.alone)
    }

    @Test func aClassInWavesTakesLongerThanOneWaveButEachBoardLess() throws {
        let demand = try #require(
            ClassEstimator.demand(
                plan: try ClassBench.samplePlan(.partial), path: .partial, options: FlashOptions(mode: .partial),
                link: .profile(.fast)))
        let all = ClassEstimator.estimate(demand, boards: 30, adapters: [.unlimited])
        let waves = ClassEstimator.estimate(
            demand, boards: 30, adapters: [.init(name: "hci0", connectionLimit: 7)])
        #expect(waves.waves == 5)
        #expect(waves.slowestBoard < all.slowestBoard)
        #expect(waves.classTime > all.classTime)
        let two = ClassEstimator.estimate(
            demand, boards: 30, adapters: [.init(name: "hci0"), .init(name: "hci1")])
        #expect(two.classTime < all.classTime)
    }
}
