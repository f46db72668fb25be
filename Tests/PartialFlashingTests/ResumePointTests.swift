import FirmwareImage
import PartialFlashingFrames
import Testing
import Transport
@testable import PartialFlashing

/// Where an interrupted write continues, when a saved point may be used, and the checkpoints a writer reports.
@Suite struct ResumePointTests {
    /// A 3-page program (4 KB pages): blocks 0-63, 64-127, 128-...
    static func plan() throws -> (BlockPlan, MakeCodeProgram, BoardMemoryMap) {
        let (plan, program) = try makePlan(bodySize: 9000)
        let map = BoardMemoryMap(
            protocolVersion: 1, mode: .pairing,
            runtime: RegionInfo(id: 1, start: 0x1C000, end: 0x46B00, hash: runtimeHash),
            program: RegionInfo(id: 2, start: 0x47000, end: 0x73000, hash: oldProgramHash))
        return (plan, program, map)
    }

    @Test func aWriteContinuesAtTheStartOfThePageHoldingTheFirstUnacknowledgedBlock() throws {
        let (plan, _, _) = try Self.plan()
        #expect(plan.pagesOpened == 3)
        #expect(PartialFlashWriter.resumeBlock(acknowledged: 0, plan: plan) == 0)
        #expect(PartialFlashWriter.resumeBlock(acknowledged: 63, plan: plan) == 0)
        #expect(PartialFlashWriter.resumeBlock(acknowledged: 64, plan: plan) == 64)
        #expect(PartialFlashWriter.resumeBlock(acknowledged: 100, plan: plan) == 64)
        // Every block acknowledged: the last page again, so that END_OF_TRANSMISSION follows an acknowledged block.
        #expect(PartialFlashWriter.resumeBlock(acknowledged: plan.blockCount, plan: plan) == 128)
    }

    /// The point the board's unfinished write leaves: the first block put the new program's hash there.
    static func point(at block: Int, plan: BlockPlan, program: MakeCodeProgram, map: BoardMemoryMap) -> ResumePoint {
        var p = ResumePoint.base(program: program, board: map, plan: plan)
        p.block = block
        p.address = plan.blocks[block].address
        p.acknowledged = block + 3
        return p
    }

    @Test func aPointIsUsedOnlyWhileTheBoardShowsWhatTheUnfinishedWriteLeft() throws {
        let (plan, program, map) = try Self.plan()
        let point = Self.point(at: 64, plan: plan, program: program, map: map)
        var midWrite = map
        midWrite.program.hash = newProgramHash  // what the (unsealed) first block wrote
        #expect(point.mismatch(board: midWrite, plan: plan, program: program) == nil)

        var other = midWrite
        other.program.hash = oldProgramHash
        #expect(
            point.mismatch(board: other, plan: plan, program: program)
                == .programHash(reported: oldProgramHash.hexString, whileWriting: point.hashWhileWriting))
        other = midWrite
        other.runtime.hash = [1, 2, 3, 4, 5, 6, 7, 8]
        #expect(
            point.mismatch(board: other, plan: plan, program: program)
                == .anotherRuntime(board: "0102030405060708", saved: point.runtimeHash))
        other = midWrite
        other.program.start = 0x48000
        #expect(
            point.mismatch(board: other, plan: plan, program: program)
                == .anotherRegion(
                    boardStart: 0x48000, boardEnd: other.program.end, savedStart: point.regionStart,
                    savedEnd: point.regionEnd))

        var wrongBlock = point
        wrongBlock.block = 65  // not a page start
        wrongBlock.address = plan.blocks[65].address
        #expect(
            wrongBlock.mismatch(board: midWrite, plan: plan, program: program)
                == .plan(
                    blocks: plan.blockCount, savedBlock: 65, savedBlocks: point.blockCount,
                    address: plan.blocks[65].address))

        let (_, otherProgram) = makeProgram(bodySize: 9000, seed: 2, programHash: oldProgramHash)
        #expect(
            point.mismatch(board: midWrite, plan: plan, program: otherProgram)
                == .anotherProgram(saved: point.programHash, file: otherProgram.programHash.hexString))
    }

    @Test func aWriterReportsACheckpointEachTimeItEntersANewPage() throws {
        let (plan, program, map) = try Self.plan()
        var writer = PartialFlashWriter(plan: plan, program: program)
        writer.checkpointBase = .base(program: program, board: map, plan: plan)
        var actions = writer.beginAfterRegionInfo()
        for answer in blockAnswers(plan.blockCount) { actions += writer.handle(answer, now: .zero) }
        let points = reports(actions).compactMap { r -> ResumePoint?? in
            if case let .checkpoint(p) = r { return .some(p?.resumePoint) } else { return nil }
        }
        #expect(points.map { $0?.block } == [0, 64, 128])
        #expect(points.last??.address == plan.blocks[128].address)
    }

    @Test func aResumedWriterStartsWithThePageOpenerAndCountsOnlyWhatItSends() throws {
        let (plan, program, _) = try Self.plan()
        var writer = PartialFlashWriter(plan: plan, program: program)
        let actions = writer.beginAfterRegionInfo(from: 70)
        let first = try #require(writes(actions).first)
        // FLASH_DATA, low half of the address of block 64 (0x48000), packet 0.
        #expect(Array(first.prefix(4)) == [0x01, 0x80, 0x00, 0x00])
        #expect(writer.stats.resumedAtBlock == 64)
        #expect(writer.stats.blocks == plan.blockCount - 64)
    }
}
