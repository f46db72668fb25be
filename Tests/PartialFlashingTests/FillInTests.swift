import FirmwareImage
import PartialFlashingFrames
import Testing
import Transport
@testable import PartialFlashing

/// After a block timeout the writer sends the block's packets again with the same numbers (a
/// fill-in): a board that lacks some takes them and completes the block, a board still working on
/// the block ignores them (CODAL and DAL `flashData`: 1 to 7 numbers behind, no answer). Either
/// way the first write answer after it is the block's, whenever it comes; no fence is sent.
@Suite struct FillInTests {
    let block = PartialFlashTimer.block

    func started() throws -> PartialFlashWriter {
        let (plan, program) = try makePlan(bodySize: 4000)
        var writer = PartialFlashWriter(plan: plan, program: program)
        _ = writer.beginAfterRegionInfo()
        _ = writer.run([ack, ack])  // block 3 (packets 8-11) in flight
        return writer
    }

    @Test func aBlockTimeoutSendsTheSamePacketsAgainAndTheNextAnswerIsTheBlocks() throws {
        var writer = try started()
        let fillIn = writer.handle(.timerFired(block), now: .seconds(1))
        #expect(packetNumbers(fillIn) == [8, 9, 10, 11])
        #expect(writes(fillIn).first?.prefix(3) == [0x01, 0x70, 0x80], "block 3 again, at 0x47080")
        #expect(effects(fillIn).last == .startTimer(block, .seconds(1)))
        #expect(!writes(fillIn).contains([0xFF, 0x00]) && !writes(fillIn).contains([0x00, 0x02]))
        // The answer, late or for the fill-in: block 4 goes on with packets 12-15.
        #expect(packetNumbers(writer.handle(ack, now: .milliseconds(1400))) == [12, 13, 14, 15])
        #expect(writer.stats.retries == 1 && writer.stats.resyncs == 0)
    }

    @Test func anOutOfOrderAnswerAfterAFillInResendsTheBlockAfterIt() throws {
        // The fill-in lost a packet before the last: the board dropped the block and expects 12.
        var writer = try started()
        _ = writer.handle(.timerFired(block), now: .seconds(1))
        let resent = writer.handle(notify([0x01, 0xAA]), now: .milliseconds(1100))
        #expect(packetNumbers(resent) == [12, 13, 14, 15])
        #expect(writes(resent).first?.prefix(3) == [0x01, 0x70, 0x80], "still block 3")
    }

    @Test func afterTheFillInsTheRecoveryGoesThroughTheFence() throws {
        // No answer to the block nor to two fill-ins: its answer was lost (the board expects 12 and
        // ignores 8-11), or the board is slower still.
        var writer = try started()
        #expect(packetNumbers(writer.handle(.timerFired(block), now: .seconds(1))) == [8, 9, 10, 11])
        #expect(packetNumbers(writer.handle(.timerFired(block), now: .seconds(2))) == [8, 9, 10, 11])
        let fence = writer.handle(.timerFired(block), now: .seconds(3))
        #expect(writes(fence) == [[0xFF, 0x00]])
        #expect(writer.stats.retries == 3)
    }

    @Test func fillInsCountAgainstTheRunsRetryLimitAndTheRecoveryAfterThemAgainstTheBlocks() throws {
        let (plan, program) = try makePlan(bodySize: 4000)
        var writer = PartialFlashWriter(plan: plan, program: program, settings: PartialFlashSettings(runRetryLimit: 1))
        _ = writer.beginAfterRegionInfo()
        _ = writer.handle(.timerFired(block), now: .seconds(1))
        #expect(writer.partialFlashError == nil && writer.progress.blockRetries == 0 && writer.stats.retries == 1)
        _ = writer.handle(.timerFired(block), now: .seconds(2))
        guard
            case .gaveUp(block: 0, address: _, retries: 0, budget: .run(limit: 1), lastProblem: _) =
                writer.partialFlashError
        else {
            Issue.record("expected the run's limit: \(String(describing: writer.partialFlashError))")
            return
        }
        var other = PartialFlashWriter(plan: plan, program: program, settings: PartialFlashSettings(blockRetryLimit: 0))
        _ = other.beginAfterRegionInfo()
        _ = other.run([.timerFired(block), .timerFired(block)])
        #expect(other.partialFlashError == nil, "two fill-ins are within a block limit of 0")
        _ = other.handle(.timerFired(block), now: .seconds(3))
        #expect(other.partialFlashError != nil, "the recovery after them is not")
    }
}
