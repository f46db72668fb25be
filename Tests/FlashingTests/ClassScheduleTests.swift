import LinkModel
import Testing

@testable import Flashing

/// The waves arithmetic of a class set on its own: which adapter, which wave, when each board
/// starts and ends, with a board time given as a function of how many boards share its adapter
/// and each board moving at the pace of the boards beside it at the moment.
@Suite struct ClassScheduleTests {
    /// 10 s alone, 1 s more for every other board on the adapter.
    static func time(_ board: Int, _ sharing: Int) -> Duration { .seconds(10 + (sharing - 1)) }

    @Test func oneUnlimitedAdapterStartsEveryBoardAtOnce() {
        let boards = ClassSchedule.schedule(boards: 5, adapters: [.unlimited], time: Self.time)
        #expect(boards.count == 5)
        #expect(boards.allSatisfy { $0.start == .zero && $0.duration == .seconds(14) && $0.wave == 1 })
        #expect(ClassEstimate(boards: boards, adapters: [.unlimited]).classTime == .seconds(14))
    }

    @Test func noAdapterGivenMeansOneUnlimitedAdapter() {
        let boards = ClassSchedule.schedule(boards: 3, adapters: [], time: Self.time)
        #expect(boards.map(\.adapter) == [0, 0, 0])
        #expect(boards.map(\.finish) == [.seconds(12), .seconds(12), .seconds(12)])
    }

    @Test func aConnectionLimitMakesWaves() {
        // 7 boards, at most 3 at once: waves of 3, 3 and 1 board(s).
        let adapter = ClassEstimator.Adapter(name: "hci0", connectionLimit: 3)
        let boards = ClassSchedule.schedule(boards: 7, adapters: [adapter], time: Self.time)
        #expect(boards.map(\.wave) == [1, 1, 1, 2, 2, 2, 3])
        #expect(boards.map(\.start) == [0, 0, 0, 12, 12, 12, 24].map { Duration.seconds($0) })
        // The last wave has its adapter to itself: 10 s.
        #expect(boards[6].duration == .seconds(10))
        let estimate = ClassEstimate(boards: boards, adapters: [adapter])
        #expect(estimate.classTime == .seconds(34))
        #expect(estimate.slowestBoard == .seconds(12))
        #expect(estimate.waves == 3)
    }

    @Test func boardsAreSpreadOverAdaptersWithinTheirLimits() {
        let a = ClassEstimator.Adapter(name: "hci0", connectionLimit: 2)
        let b = ClassEstimator.Adapter(name: "hci1")
        let boards = ClassSchedule.schedule(boards: 6, adapters: [a, b], time: Self.time)
        // hci0 takes two boards, hci1 (no limit) the four others; all start at once.
        #expect(boards.filter { $0.adapter == 0 }.count == 2)
        #expect(boards.filter { $0.adapter == 1 }.count == 4)
        #expect(boards.allSatisfy { $0.start == .zero && $0.wave == 1 })
        #expect(ClassEstimate(boards: boards, adapters: [a, b]).classTime == .seconds(13))
    }

    @Test func aWaitingBoardStartsOnTheAdapterThatFreesUpFirst() {
        // hci0 is slow for its boards (time depends on the adapter through the sharing count):
        // with limits 1 and 1, boards 0 and 1 start at once; board 2 waits for the first to end.
        let limited = [
            ClassEstimator.Adapter(name: "hci0", connectionLimit: 1),
            ClassEstimator.Adapter(name: "hci1", connectionLimit: 1)
        ]
        let boards = ClassSchedule.schedule(
            boards: 3, adapters: limited, time: { board, _ in board == 0 ? .seconds(30) : .seconds(10) })
        #expect(boards[0].adapter == 0 && boards[1].adapter == 1)
        #expect(boards[2].adapter == 1)
        #expect(boards[2].start == .seconds(10) && boards[2].wave == 2)
        #expect(ClassEstimate(boards: boards, adapters: limited).classTime == .seconds(30))
    }

    @Test func aBoardStartingLateIsSlowedOnlyWhileTheBoardsBesideItLast() {
        // The radio is the bottleneck: k boards on the adapter take k times their time alone.
        // Two at once: board 0 (10 s alone) and board 1 (4 s alone) start together; board 1
        // ends at 8 s with 0.4 of board 0's flow done. Board 2 (10 s alone) takes its place:
        // both at half pace until board 0 ends at 20 s, then board 2 alone finishes its last 0.4.
        let adapter = ClassEstimator.Adapter(name: "hci0", connectionLimit: 2)
        let alone: [Int64] = [10, 4, 10]
        let boards = ClassSchedule.schedule(
            boards: 3, adapters: [adapter], time: { board, sharing in .seconds(alone[board] * Int64(sharing)) })
        #expect(boards.map(\.finish) == [.seconds(20), .seconds(8), .seconds(24)])
        #expect(boards[2].start == .seconds(8) && boards[2].duration == .seconds(16))
        #expect(boards.map(\.wave) == [1, 1, 2])
    }

    @Test func noBoardsMakeAnEmptyClass() {
        let estimate = ClassEstimator.estimate([], adapters: [.unlimited])
        #expect(estimate.boards.isEmpty && estimate.classTime == .zero && estimate.waves == 0)
    }

    @Test func sharingTheRadioCostsTheAirTimeOfEveryBoard() {
        // A part of 1 s alone with 0.1 s of air: alone up to 10 boards, then 0.1 s a board.
        let demand = RadioDemand(
            path: .partial,
            parts: [
                .init(name: "setup", duration: .seconds(1), air: .zero),
                .init(name: "blocks", duration: .seconds(1), air: .milliseconds(100))
            ])
        #expect(ClassEstimator.boardTime(demand, sharedBy: 1) == .seconds(2))
        #expect(ClassEstimator.boardTime(demand, sharedBy: 20) >= .seconds(3))
        #expect(ClassEstimator.boardTime(demand, sharedBy: 40) >= .seconds(5))
        #expect(ClassEstimator.boardTime(demand, sharedBy: 40) < .milliseconds(5_500))
    }

    @Test func boardsStartingTogetherWaitForTheControllerToConnectThemOneByOne() {
        // Three boards in pairing mode (200 ms) on a 15 ms link, 1 s each alone, no air time.
        // The controller hears one after 50, then 66.7, then 100 ms, and connects each at its
        // next advertisement (200 ms) and one interval (15 ms) later; a lone board's setup
        // already holds 100 + 215 ms, so the first waits nothing more.
        let demand = RadioDemand(
            path: .partial, parts: [.init(name: "setup", duration: .seconds(1), air: .zero)],
            connecting: .pairing, connectionInterval: .milliseconds(15))
        let estimate = ClassEstimator.estimate(demand, boards: 3, adapters: [.unlimited])
        let millis = estimate.boards.map { Double($0.duration.wholeMicroseconds) / 1000 }
        #expect(abs(millis[0] - 1000) < 0.01 && abs(millis[1] - 1231.667) < 0.01 && abs(millis[2] - 1546.667) < 0.01)
        // On two adapters each controller connects its own boards: two start with no wait.
        let two = ClassEstimator.estimate(demand, boards: 3, adapters: [.init(name: "hci0"), .init(name: "hci1")])
        #expect(two.boards.filter { $0.duration == .seconds(1) }.count == 2)
    }
}
