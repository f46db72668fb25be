import FirmwareImage
import Testing
import Transport
@testable import PartialFlashing

/// No answer is too early or too late: whatever its delay, every answer is taken for its block.
/// The board answers each block between 0.5 ms after its last write (a CODAL board behind BlueZ
/// can answer within the same connection event) and three connection intervals, with seeded
/// jitter, order kept; on a micro:bit V1 (1 KB pages, DAL erases every page start) and a V2
/// (4 KB pages, CODAL skips blank pages), over an older program and over blank flash.
@Suite struct AnswerTimingTests {
    struct Sweep: Sendable, CustomTestStringConvertible {
        var family: ChipFamily
        var interval: Duration
        var blankBoard: Bool
        var testDescription: String {
            "\(family == .nrf51 ? "V1" : "V2"), \(interval) interval, \(blankBoard ? "blank pages" : "pages to erase")"
        }
    }

    static let sweeps: [Sweep] = [ChipFamily.nrf51, .nrf52833].flatMap { family in
        [Duration.microseconds(7_500), .milliseconds(15), .milliseconds(30)].flatMap { interval in
            [false, true].map { Sweep(family: family, interval: interval, blankBoard: $0) }
        }
    }

    @Test(arguments: sweeps)
    func everyAnswerCountsWhateverItsDelayWithNoRetryAndAByteExactBoard(_ sweep: Sweep) {
        let start: UInt32 = sweep.family == .nrf52833 ? 0x47000 : 0x35400
        for seed in UInt64(1)...6 {
            // Programs of 2 to 4 pages, so that page openers and their erases are on the way.
            let (image, program) = makeProgram(
                at: start, bodySize: Int(sweep.family.pageSize) * 2 + Int(seed) * 700, seed: seed)
            var board =
                sweep.blankBoard
                ? ModelBoard(family: sweep.family) : boardWithOldProgram(family: sweep.family, at: start, seed: seed)
            if sweep.blankBoard {
                // Only the program's header page holds the old program; the rest of the region is blank.
                board.load(MakeCodeProgram.magic + runtimeHash + oldProgramHash, at: start)
            }
            var driver = LoopbackDriver(
                flow: PartialFlashFlow(image: image, program: program, family: sweep.family),
                board: board, seed: seed &* 7919)
            driver.answerDelays = .microseconds(500)...(sweep.interval * 3)
            let finished = driver.run()
            #expect(finished, "seed \(seed): the flow stalled")
            guard case let .success(.flashed(stats))? = driver.flow.outcome else {
                Issue.record("seed \(seed): \(String(describing: driver.flow.outcome))")
                continue
            }
            #expect(stats.retries == 0 && stats.resyncs == 0, "seed \(seed): \(stats)")
            #expect(stats.verified)
            #expect(
                boardHolds(driver.board, image: image, program: program, pageSize: sweep.family.pageSize),
                "seed \(seed)")
            #expect(driver.board.violations.isEmpty, "seed \(seed): \(driver.board.violations)")
        }
    }
}
