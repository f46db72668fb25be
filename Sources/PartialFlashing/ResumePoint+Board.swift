import FirmwareImage
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
        return ResumePoint(programHash: program.programHash.hexString, runtimeHash: board.runtime.hash.hexString,
                           regionStart: board.program.start, regionEnd: board.program.end,
                           hashWhileWriting: whileWriting.hexString, blockCount: plan.blockCount, block: 0,
                           address: first?.address ?? 0, acknowledged: 0)
    }

    /// Why this point cannot be continued on a board that reported `board`, writing `plan` of
    /// `program`; nil when it can. Anything the board shows that an unfinished write of this
    /// program would not leave there makes the point useless.
    public func mismatch(board: BoardMemoryMap, plan: BlockPlan, program: MakeCodeProgram) -> String? {
        guard version == Self.currentVersion else { return "it was saved in format \(version), this tool reads \(Self.currentVersion)" }
        guard programHash == program.programHash.hexString else {
            return "it belongs to another program (\(programHash), the file's is \(program.programHash.hexString))"
        }
        guard runtimeHash == board.runtime.hash.hexString, runtimeHash == program.runtimeHash.hexString else {
            return "the board's runtime is \(board.runtime.hash.hexString), the saved write was for \(runtimeHash)"
        }
        guard board.program.start == regionStart, board.program.end == regionEnd else {
            return "the board's program region is \(hex32(board.program.start))-\(hex32(board.program.end)), "
                + "the saved write was for \(hex32(regionStart))-\(hex32(regionEnd))"
        }
        let reported = board.program.hash.hexString
        // Every block acknowledged except perhaps the one writing the hash: it may be written.
        let hashMayBeFinal = acknowledged >= blockCount - 1 && reported == programHash
        guard reported == hashWhileWriting || hashMayBeFinal else {
            return "the board reports program hash \(reported), an unfinished write leaves \(hashWhileWriting) there"
        }
        guard blockCount == plan.blockCount, block > 0, block < plan.blockCount,
              plan.blocks[block].address == address, plan.blocks[block].opensPage,
              acknowledged >= block, acknowledged <= plan.blockCount
        else {
            return "it does not fit this file's plan of \(plan.blockCount) blocks (saved: block \(block + 1) of \(blockCount) "
                + "at \(hex32(address)))"
        }
        return nil
    }
}
