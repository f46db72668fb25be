import Laboratory
import LinkModel
import Testing

@testable import Flashing

/// The class estimate against the simulator's modelled class time: boards on one adapter,
/// sharing its radio, all started together or in waves of its connection limit. Virtual time is deterministic, so these are not
/// timed assertions. `bitflash-lab bench class --full --sim-adapter none --sim-adapter unknown`
/// covers 8 to 64 boards on every profile and path, all at once and in waves.
@Suite struct ClassEstimateAccuracyTests {
    /// Every board of the class took the expected path, and the class estimate is within 10 %
    /// of the modelled class time.
    static func expectWithinTenPercent(_ row: ClassBench.Row, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(row.failures == 0, sourceLocation: sourceLocation)
        #expect(
            abs(row.classError) <= 0.10,
            "\(row.boards) boards \(row.path) \(row.profile): estimate \(row.estimatedClassSeconds) s, modelled \(row.modelledClassSeconds) s",
            sourceLocation: sourceLocation)
    }

    @Test(arguments: [LinkProfile.linuxDefault, .fast], [8, 16])
    func aPartialFlashOfAClassIsEstimatedWithinTenPercent(profile: LinkProfile, boards: Int) {
        let row = ClassBench.run(.partial, boards: boards, profile: profile)
        #expect(row.modelledClassSeconds > 0)
        Self.expectWithinTenPercent(row)
    }

    @Test func eachBoardOfSixteenConnectedOneByOneIsToldItsOwnFinishWithinTenPercent() {
        // Partial flashing at 7.5 ms: the controller connects the boards in pairing mode a
        // quarter of a second apart, so the first ones write alone while the radio fills, and
        // finish seconds before the last.
        let row = ClassBench.run(.partial, boards: 16, profile: .fast)
        #expect(row.modelledFastestSeconds < 0.8 * row.modelledSlowestSeconds)
        #expect(abs(row.worstBoardError) <= 0.10, "worst board's error \(row.worstBoardError)")
        Self.expectWithinTenPercent(row)
    }

    @Test func eachBoardOfSixtyFourWithNoConnectionLimitIsToldItsOwnFinishWithinTenPercent() {
        // The first boards restart in pairing mode while the controller still connects the
        // others, which run their programs and so advertise four times as often: it hears
        // those first, and the first boards wait for all of them.
        let row = ClassBench.run(.partial, boards: 64, profile: .fast)
        #expect(abs(row.worstBoardError) <= 0.10, "worst board's error \(row.worstBoardError)")
        Self.expectWithinTenPercent(row)
    }

    @Test func aNordicDFUClassOfSixteenBoardsIsEstimatedWithinTenPercent() {
        // Full updates through the stock boards' Secure DFU bootloader: long waits after each
        // Create alternate with full events, and the last Execute's answer shares the radio.
        let row = ClassBench.run(.nordic, boards: 16, profile: .deviceRequested)
        #expect(row.modelledClassSeconds > row.singleBoardSeconds)
        Self.expectWithinTenPercent(row)
    }

    @Test func eightStockBoardsConnectedOneByOneAreEstimatedWithinTenPercent() {
        // The controller connects the boards a few tens of milliseconds apart, so they do not
        // move in step: each one's packets partly go out while the others wait after a Create.
        let row = ClassBench.run(.nordic, boards: 8, profile: .linuxDefault)
        #expect(row.modelledFastestSeconds < row.modelledSlowestSeconds)
        Self.expectWithinTenPercent(row)
    }

    @Test func aClassInWavesOfFiveConnectionsIsEstimatedWithinTenPercent() throws {
        // The adapter of unknown capacity the command line assumes: 16 boards in 4 waves.
        let adapter = try AdapterProfile(named: "unknown")
        let row = ClassBench.run(.partial, boards: 16, profile: .fast, adapter: adapter)
        #expect(row.connectionLimit == 5)
        // Waves: the class takes several times one board's own time.
        #expect(row.modelledClassSeconds > 3 * row.modelledFastestSeconds)
        Self.expectWithinTenPercent(row)
    }

    @Test func aNordicDFUClassOfSixteenBoardsInWavesOfFiveIsEstimatedWithinTenPercent() throws {
        // Secure DFU in waves: the boards of a wave fall into step object by object, their
        // erases together and then their packets, each wave waiting for the one before it.
        let adapter = try AdapterProfile(named: "unknown")
        let row = ClassBench.run(.nordic, boards: 16, profile: .deviceRequested, adapter: adapter)
        #expect(row.connectionLimit == 5)
        #expect(row.modelledClassSeconds > 3 * row.modelledFastestSeconds)
        Self.expectWithinTenPercent(row)
    }

    @Test func eachStockBoardOfThirtyTwoThroughEightConnectionsIsToldItsOwnFinishWithinTenPercent() throws {
        // Four waves of Secure DFU at 15 ms: a board that takes a place freed early moves in
        // step with the boards that join its wave after it, object by object, and does not
        // finish far ahead of them (it was told 16 % too early while the estimate took each
        // board's Creates and erases as one quiet stretch before all its packets).
        let adapter = try AdapterProfile(named: "8")
        let row = ClassBench.run(.nordic, boards: 32, profile: .deviceRequested, adapter: adapter, perBoard: true)
        let finishes = try #require(row.boardFinishes)
        #expect(finishes.count == 32 && row.retries == 0)
        #expect(abs(row.worstBoardError) <= 0.10, "worst board's error \(row.worstBoardError)")
        Self.expectWithinTenPercent(row)
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
