import Laboratory
import LinkModel
import SimulatedBoard
import SimulatedFlashing
import Synchronization
import Testing
import Transport

@testable import Flashing

/// The progress rate measured on the link as a flash runs, attached to its progress events.
@Suite struct ProgressRateTests {
    static func progress(_ meter: ProgressRateMeter, _ ms: Int64, _ done: Int, total: Int = 100) -> ProgressRate? {
        meter.event(board: "b", elapsed: .milliseconds(ms), report: .progress(done: done, total: total, unit: .blocks))
            .rate
    }

    @Test func aSteadyLinkGivesItsRateAndTheTimeLeft() throws {
        let meter = ProgressRateMeter()
        #expect(Self.progress(meter, 1000, 0) == nil)
        // 20 blocks a second.
        for i in 1...40 { _ = Self.progress(meter, 1000 + Int64(i) * 50, i) }
        let rate = try #require(Self.progress(meter, 3050, 41))
        #expect(abs(rate.perSecond - 20) < 0.01)
        #expect(rate.unit == .blocks)
        #expect(abs(rate.remaining.seconds - 59.0 / 20) < 0.01)
    }

    @Test func theRateFollowsALinkThatSlowsDown() throws {
        let meter = ProgressRateMeter(window: .seconds(2))
        var t: Int64 = 0
        for i in 1...40 {
            t += 50
            _ = Self.progress(meter, t, i, total: 200)
        }
        // Then 5 blocks a second for 4 s: the window holds only the slow part.
        var rate: ProgressRate?
        for i in 41...60 {
            t += 200
            rate = Self.progress(meter, t, i, total: 200)
        }
        let slow = try #require(rate)
        #expect(abs(slow.perSecond - 5) < 0.3)
        #expect(abs(slow.remaining.seconds - 140.0 / 5) < 2)
    }

    @Test func aNewPhaseOrAResendStartsTheMeasurementAgain() {
        let meter = ProgressRateMeter()
        for i in 1...10 { _ = Self.progress(meter, Int64(i) * 100, i) }
        #expect(Self.progress(meter, 1100, 11) != nil)
        // Back to block 3 (a resend): no rate until there is new progress to measure.
        #expect(Self.progress(meter, 1200, 3) == nil)
        _ = meter.event(board: "b", elapsed: .milliseconds(1300), report: .phase(.verify))
        #expect(Self.progress(meter, 1400, 1) == nil)
        // Another board is measured on its own.
        #expect(
            meter.event(board: "other", elapsed: .seconds(2), report: .progress(done: 5, total: 10, unit: .bytes)).rate
                == nil)
    }

    @Test func aSimulatedClassReportsTheBlockRateItsSharedLinkGives() throws {
        // 16 boards on a 7.5 ms link share the radio: a board's measured rate is well below what
        // one board gets, and the time left it gives at mid-flash is close to what is left. The
        // controller connects the boards one after another, so the one watched is in the middle
        // of that order: the first has the radio much to itself before the others connect, and
        // the last speeds up as the others finish.
        func run(boards: Int) throws -> (rate: Double, predicted: Double, actual: Double) {
            let plan = try ClassBench.samplePlan(.partial)
            let scenario = BenchScenario.samples(boards: [.microbitV2]).first { $0.kind == .edit }!
            let app = try #require(try FlashPlan.make(firmware: scenario.running, board: .microbitV2).fullImage)
            var sim = Simulation(link: .fast)
            sim.recordsTrace = false
            var entries: [(plan: FlashPlan, board: BoardID, name: String)] = []
            for i in 0..<boards {
                entries.append(
                    (plan, sim.addBoard(try SimulatedBoard.mcuMgrBoard(.microbitV2, primary: app.bytes)), "b\(i)"))
            }
            let seen = Mutex<[(Duration, Int, Int, ProgressRate?)]>([])
            _ = SimulatedFlash.runAll(
                entries, options: FlashOptions(mode: .partial), in: &sim,
                onEvent: { e in
                    guard e.board == "b\(boards / 2)", case let .progress(done, total, .blocks) = e.report else {
                        return
                    }
                    seen.withLock { $0.append((e.elapsed, done, total, e.rate)) }
                })
            let events = seen.withLock { $0 }
            let end = try #require(events.last).0
            let middle = try #require(events.first { $0.1 * 2 >= $0.2 && $0.3 != nil })
            let rate = try #require(middle.3)
            return (rate.perSecond, rate.remaining.seconds, (end - middle.0).seconds)
        }
        let one = try run(boards: 1)
        let class16 = try run(boards: 16)
        print("measured block rate: one board \(one), 16 boards \(class16)")
        #expect(class16.rate < one.rate * 0.7, "16 boards \(class16.rate) blocks/s, one board \(one.rate)")
        #expect(abs(class16.predicted / class16.actual - 1) < 0.25, "\(class16)")
    }
}
