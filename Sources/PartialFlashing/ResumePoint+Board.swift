import Diagnostics
import FirmwareImage
import PartialFlashingFrames
import Transport

extension ResumePoint {
    /// The point a write of `plan` reports before its blocks are written: everything but the block.
    static func base(program: MakeCodeProgram, board: BoardMemoryMap, plan: BlockPlan) -> ResumePoint {
        let first = plan.blocks.first
        let hashAt = Int(program.magicAddress &+ 24 &- (first?.address ?? 0))
        var whileWriting = program.programHash
        if let first, first.address == program.magicAddress, hashAt + 8 <= first.data.count {
            whileWriting = Array(first.data[hashAt..<(hashAt + 8)])
        }
        return ResumePoint(
            programHash: program.programHash.hexString, runtimeHash: board.runtime.hash.hexString,
            regionStart: board.program.start, regionEnd: board.program.end,
            hashWhileWriting: whileWriting.hexString, blockCount: plan.blockCount, block: 0,
            address: first?.address ?? 0, acknowledged: 0)
    }

    /// Why this point cannot be continued on a board that reported `board`, writing `plan` of
    /// `program`; nil when it can. Anything the board shows that an unfinished write of this
    /// program would not leave there makes the point useless.
    public func mismatch(board: BoardMemoryMap, plan: BlockPlan, program: MakeCodeProgram) -> ResumeMismatch? {
        guard version == Self.currentVersion else {
            return .format(saved: version, reads: Self.currentVersion)
        }
        guard programHash == program.programHash.hexString else {
            return .anotherProgram(saved: programHash, file: program.programHash.hexString)
        }
        guard runtimeHash == board.runtime.hash.hexString, runtimeHash == program.runtimeHash.hexString else {
            return .anotherRuntime(board: board.runtime.hash.hexString, saved: runtimeHash)
        }
        guard board.program.start == regionStart, board.program.end == regionEnd else {
            return .anotherRegion(
                boardStart: board.program.start, boardEnd: board.program.end, savedStart: regionStart,
                savedEnd: regionEnd)
        }
        let reported = board.program.hash.hexString
        // Every block acknowledged except perhaps the one writing the hash: it may be written.
        let hashMayBeFinal = acknowledged >= blockCount - 1 && reported == programHash
        guard reported == hashWhileWriting || hashMayBeFinal else {
            return .programHash(reported: reported, whileWriting: hashWhileWriting)
        }
        guard blockCount == plan.blockCount, block >= 0, block < plan.blockCount,
            plan.blocks[block].address == address, plan.blocks[block].opensPage,
            acknowledged >= block, acknowledged <= plan.blockCount
        else {
            return .plan(blocks: plan.blockCount, savedBlock: block, savedBlocks: blockCount, address: address)
        }
        return nil
    }

    /// The region 2 the unfinished write was for, as the board declared it then.
    public var region: RegionInfo {
        RegionInfo(id: 2, start: regionStart, end: regionEnd, hash: [UInt8](repeating: 0, count: 8))
    }

    /// Why this point cannot be continued on a board that reports no program at all; nil when it
    /// can. That is what a board shows while the program's first page is torn: a reset cut the
    /// erase of that page, or the burn of the block holding the magic, short. The runtime scans
    /// its flash at each REGION_INFO (`MicroBitMemoryMap` is built per request) and finds no
    /// magic, so CODAL reports empty regions and DAL zero hashes until the page is written again.
    /// A point explains such a board:
    /// * at `block` 0 the first page was being written when the reset came; the write starts again
    ///   from block 0 (which erases the page) into the region saved with the point;
    /// * past block 0 the first page was written and acknowledged, and a later reset tore it (a
    ///   reconnection continues at the page being written, and the point only moves past the
    ///   first page once all its blocks were acknowledged), so the write continues at `block`.
    /// The check after END_OF_TRANSMISSION reads the new memory map the board derives at its reboot.
    public func mismatch(emptyBoard board: BoardMemoryMap, plan: BlockPlan, program: MakeCodeProgram) -> ResumeMismatch?
    {
        guard version == Self.currentVersion else {
            return .format(saved: version, reads: Self.currentVersion)
        }
        guard programHash == program.programHash.hexString, runtimeHash == program.runtimeHash.hexString else {
            return .anotherProgramOrRuntime(program: programHash, runtime: runtimeHash)
        }
        guard blockCount == plan.blockCount, plan.blocks.indices.contains(block), plan.blocks[block].address == address,
            plan.blocks[block].opensPage, board.protocolVersion == 1, regionStart == program.magicAddress
        else {
            return .planOnEmptyBoard(blocks: plan.blockCount)
        }
        return nil
    }
}
