import LinkModel
import Testing

@testable import Flashing

/// The waves arithmetic of a class set on its own: which adapter, which wave, when each board
/// starts and ends, each board moving through its parts at the pace the shared radio leaves it.
@Suite struct ClassScheduleTests {
    /// A flow of one part, `seconds` alone, whose connection events take `share` of the radio.
    static func flow(_ seconds: Int64, share: Double = 0) -> ClassSchedule.Flow {
        ClassSchedule.Flow(parts: [
            .init(name: "part", duration: .seconds(seconds), air: .milliseconds(Int64(Double(seconds * 1000) * share)))
        ])
    }

    @Test func oneUnlimitedAdapterStartsEveryBoardAtOnce() {
        let boards = ClassSchedule.schedule(Array(repeating: Self.flow(10), count: 5), adapters: [.unlimited])
        #expect(boards.count == 5)
        #expect(boards.allSatisfy { $0.start == .zero && $0.duration == .seconds(10) && $0.wave == 1 })
        #expect(ClassEstimate(boards: boards, adapters: [.unlimited]).classTime == .seconds(10))
    }

    @Test func noAdapterGivenMeansOneUnlimitedAdapter() {
        let boards = ClassSchedule.schedule(Array(repeating: Self.flow(12), count: 3), adapters: [])
        #expect(boards.map(\.adapter) == [0, 0, 0])
        #expect(boards.map(\.finish) == [.seconds(12), .seconds(12), .seconds(12)])
    }

    @Test func aConnectionLimitMakesWaves() {
        // 7 boards, at most 3 at once: waves of 3, 3 and 1 board(s).
        let adapter = ClassEstimator.Adapter(name: "hci0", connectionLimit: 3)
        let boards = ClassSchedule.schedule(Array(repeating: Self.flow(10), count: 7), adapters: [adapter])
        #expect(boards.map(\.wave) == [1, 1, 1, 2, 2, 2, 3])
        #expect(boards.map(\.start) == [0, 0, 0, 10, 10, 10, 20].map { Duration.seconds($0) })
        let estimate = ClassEstimate(boards: boards, adapters: [adapter])
        #expect(estimate.classTime == .seconds(30))
        #expect(estimate.slowestBoard == .seconds(10))
        #expect(estimate.waves == 3)
    }

    @Test func boardsAreSpreadOverAdaptersWithinTheirLimits() {
        let a = ClassEstimator.Adapter(name: "hci0", connectionLimit: 2)
        let b = ClassEstimator.Adapter(name: "hci1")
        let boards = ClassSchedule.schedule(Array(repeating: Self.flow(10, share: 0.5), count: 6), adapters: [a, b])
        // hci0 takes two boards, hci1 (no limit) the four others; all start at once.
        #expect(boards.filter { $0.adapter == 0 }.count == 2)
        #expect(boards.filter { $0.adapter == 1 }.count == 4)
        #expect(boards.allSatisfy { $0.start == .zero && $0.wave == 1 })
        // Each radio is its own: two boards at half a radio each fit, four need two radios' time.
        #expect(boards.filter { $0.adapter == 0 }.allSatisfy { $0.duration == .seconds(10) })
        #expect(boards.filter { $0.adapter == 1 }.allSatisfy { $0.duration == .seconds(20) })
    }

    @Test func aWaitingBoardStartsOnTheAdapterThatFreesUpFirst() {
        // With limits 1 and 1, boards 0 and 1 start at once; board 2 waits for the first to end.
        let limited = [
            ClassEstimator.Adapter(name: "hci0", connectionLimit: 1),
            ClassEstimator.Adapter(name: "hci1", connectionLimit: 1)
        ]
        let boards = ClassSchedule.schedule([Self.flow(30), Self.flow(10), Self.flow(10)], adapters: limited)
        #expect(boards[0].adapter == 0 && boards[1].adapter == 1)
        #expect(boards[2].adapter == 1)
        #expect(boards[2].start == .seconds(10) && boards[2].wave == 2)
        #expect(ClassEstimate(boards: boards, adapters: limited).classTime == .seconds(30))
    }

    @Test func aBoardStartingLateIsSlowedOnlyWhileTheBoardsBesideItLast() {
        // Flows that fill the radio alone: two at once go at half pace. Board 0 (10 s alone) and
        // board 1 (4 s) start together; board 1 ends at 8 s with 4 s of board 0's flow done.
        // Board 2 (10 s) takes its place: both at half pace until board 0 ends at 20 s, then
        // board 2 alone finishes its last 4 s.
        let adapter = ClassEstimator.Adapter(name: "hci0", connectionLimit: 2)
        let boards = ClassSchedule.schedule(
            [Self.flow(10, share: 1), Self.flow(4, share: 1), Self.flow(10, share: 1)], adapters: [adapter])
        #expect(boards.map(\.finish) == [.seconds(20), .seconds(8), .seconds(24)])
        #expect(boards[2].start == .seconds(8) && boards[2].duration == .seconds(16))
        #expect(boards.map(\.wave) == [1, 1, 2])
    }

    @Test func aRadioWithRoomSlowsNobodyAndAFullOneSlowsEveryBoardThatSends() {
        // Three boards taking 0.3 of the radio each fit; four (1.2) go at 1 / 1.2 of their pace.
        let three = ClassSchedule.schedule(Array(repeating: Self.flow(10, share: 0.3), count: 3), adapters: [])
        #expect(three.allSatisfy { $0.duration == .seconds(10) })
        let four = ClassSchedule.schedule(Array(repeating: Self.flow(10, share: 0.3), count: 4), adapters: [])
        #expect(four.allSatisfy { $0.duration == .seconds(12) })
    }

    @Test func aQuietPartKeepsItsTimeWhileOthersFillTheRadio() {
        // Board 0 waits 10 s without sending (a reboot) while boards 1 and 2 each fill the radio:
        // it is not slowed; they share the radio at half pace.
        let boards = ClassSchedule.schedule(
            [Self.flow(10), Self.flow(5, share: 1), Self.flow(5, share: 1)], adapters: [.unlimited])
        #expect(boards.map(\.duration) == [.seconds(10), .seconds(10), .seconds(10)])
    }

    @Test func boardsInSecureDFUsObjectLoopSendTheirPacketsInStep() {
        // Two objects, each 1 s of Create and erase (quiet) and 1 s of packets filling the
        // radio; board 1 enters the loop 1 s after board 0. As a fluid each would send while
        // the other erases (4 s and 5 s); in step each object's packets wait for the other
        // board's: board 0 takes 1 + 2 + 1 + 2 s, board 1 ends half a second after it.
        func loop(after delay: Int64) -> ClassSchedule.Flow {
            var demand = RadioDemand(
                path: .nordicDFU,
                parts: [
                    .init(name: "enter", duration: .seconds(delay), air: .zero),
                    .init(name: "data objects", duration: .seconds(2), air: .zero, idle: .seconds(2)),
                    .init(name: "packets", duration: .seconds(2), air: .seconds(2))
                ])
            let alone = demand.alone, air = demand.air
            demand.alternate(1, count: 2)
            #expect(demand.parts.map(\.name) == ["enter", "data objects", "packets", "data objects", "packets"])
            #expect(demand.alone == alone && demand.air == air)
            #expect(demand.parts.dropFirst().allSatisfy { $0.asks == 1 })
            return demand.flow
        }
        let boards = ClassSchedule.schedule([loop(after: 0), loop(after: 1)], adapters: [.unlimited])
        #expect(boards.map(\.duration) == [.seconds(6), .milliseconds(6500)])
    }

    /// A part of `seconds` alone that makes a connection as `advertising` at its start, its
    /// whole time being the connection's setup.
    static func connecting(_ advertising: Advertising, _ seconds: Int64 = 1) -> RadioDemand.Part {
        .init(
            name: "connect", duration: .seconds(seconds), air: .zero,
            connection: .init(advertising: advertising, setup: .seconds(seconds)))
    }

    @Test func aBoardRestartedInPairingModeWaitsForEveryBoardStillWaitingInApplicationMode() {
        // Board 0 asks first, but in pairing mode (200 ms); the 20 boards after it run their
        // programs (50 ms). The controller hears the application boards first, one at a time,
        // so board 0's connection is made after all of theirs.
        let pairing = ClassSchedule.Flow(
            parts: [
                .init(
                    name: "restart", duration: .seconds(2), air: .zero,
                    connection: .init(advertising: .pairing, setup: .seconds(1)))
            ])
        let application = ClassSchedule.Flow(parts: [Self.connecting(.application)])
        let boards = ClassSchedule.schedule([pairing] + Array(repeating: application, count: 20), adapters: [])
        var created = Duration.zero
        var waiting = [Advertising.pairing] + Array(repeating: .application, count: 20)
        var applicationFinishes: [Duration] = []
        while waiting.count > 1 {
            created += Advertising.firstHeard(among: waiting.map(\.interval)) + .milliseconds(50)
            waiting.removeLast()
            // The rest of an application board's setup: 1 s less a lone board's creation (75 ms).
            applicationFinishes.append(created + .milliseconds(925))
        }
        let pairingCreated = created + .milliseconds(300)
        func near(_ a: Duration, _ b: Duration) -> Bool { abs((a - b).seconds) < 1e-5 }
        #expect(zip(boards.dropFirst().map(\.finish), applicationFinishes).allSatisfy(near))
        // Then its own creation (100 ms until heard, 200 ms), the rest of its setup and its last second.
        #expect(near(boards[0].finish, pairingCreated + .milliseconds(700) + .seconds(1)))
    }

    @Test func aConnectionMadeAfterAResetWaitsForTheReset() {
        // 0.5 s of reset before the board asks: alone the part takes its time alone.
        let flow = ClassSchedule.Flow(
            parts: [
                .init(
                    name: "reset and reconnect", duration: .milliseconds(1500), air: .zero,
                    connection: .init(advertising: .bootloader, after: .milliseconds(500), setup: .seconds(1)))
            ])
        #expect(ClassSchedule.schedule([flow], adapters: []).map(\.duration) == [.milliseconds(1500)])
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
        func time(_ n: Int) -> Duration { ClassEstimator.estimate(demand, boards: n, adapters: []).classTime }
        #expect(time(1) == .seconds(2))
        #expect(time(10) == .seconds(2))
        #expect(time(20) == .seconds(3))
        #expect(time(40) == .seconds(5))
    }

    @Test func boardsStartingTogetherWaitForTheControllerToConnectThemOneByOne() {
        // Three boards in pairing mode (200 ms) on a 15 ms link, 1 s each alone, no air time.
        // The controller hears one after 50, then 66.7, then 100 ms, and connects each at its
        // next advertisement (200 ms) and one interval (15 ms) later; the rest of a board's
        // setup (1 s less a lone board's 315 ms) follows. The first is heard sooner than a lone
        // board would be.
        let demand = RadioDemand(
            path: .partial, parts: [Self.connecting(.pairing)], connectionInterval: .milliseconds(15))
        let estimate = ClassEstimator.estimate(demand, boards: 3, adapters: [.unlimited])
        let millis = estimate.boards.map { Double($0.duration.wholeMicroseconds) / 1000 }
        #expect(abs(millis[0] - 950) < 0.01 && abs(millis[1] - 1231.667) < 0.01 && abs(millis[2] - 1546.667) < 0.01)
        // On two adapters each controller connects its own boards: board 1, alone on the
        // second, takes its time alone.
        let two = ClassEstimator.estimate(demand, boards: 3, adapters: [.init(name: "hci0"), .init(name: "hci1")])
        #expect(two.boards.map(\.adapter) == [0, 1, 0])
        #expect(two.boards[1].duration == .seconds(1))
        #expect(two.boards[0].duration < two.boards[2].duration)
    }
}
