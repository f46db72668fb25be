import Diagnostics
import Transport

/// Continuing an interrupted write, and the checkpoints that make it possible across runs.
///
/// Where a write may continue (docs/protocols/partial-flashing.md §3.4): the board erases a page only
/// when the block at the page's start arrives (CODAL only when the page is not blank, DAL
/// always). So the write continues from the first block of the page that holds the first
/// unacknowledged block, never from that block itself:
///
/// * Blocks before that page were acknowledged: the board burned them and said so. Nothing
///   touches their pages again, so they stay as written.
/// * The page that was being written is in an unknown state past its last acknowledged
///   block. The block in flight may have been burned without its answer reaching us (lost
///   notification, link loss), or half burned when the board reset (on real flash an
///   interrupted word program leaves undefined bits, and burning again can only clear
///   bits), or the reset came while the page itself was being erased, leaving it partly
///   erased. Continuing in the middle of that page would burn over whatever is there.
/// * Sending the page's first block again makes the board erase the page (CODAL sees it is
///   not blank because earlier blocks or a torn erase left data in it; if it is blank, there
///   is nothing to erase) before burning, and every later block of the page then follows in
///   order. The page ends exactly as if it had been written in one go.
/// * A page is therefore never erased after any of its other blocks was written in the pass
///   that finishes it, which is the rule a fresh write follows too.
///
/// The cost is at most one page sent again (16 blocks on a 1 KB-page board, 64 on a 4 KB one).
/// With the program hash written last but one (`BlockPlan.sealed`), a write that may have
/// reached the block that writes it continues from the first block: that block's words were
/// written twice already, and only an erase of their page allows another write (nWRITE).
extension PartialFlashWriter {
    /// Where a write continues that stopped with `acknowledged` blocks acknowledged: the block
    /// that opens the page holding the first unacknowledged one (the last block's page when
    /// every block was acknowledged but END_OF_TRANSMISSION may not have arrived).
    public static func resumeBlock(acknowledged: Int, plan: BlockPlan) -> Int {
        guard plan.blockCount > 0 else { return 0 }
        // The hash block may have been burnt: its words take no further write before their page
        // is erased again (nWRITE, see `rewindTarget(for:)`), so from the first block.
        if let seal = plan.sealIndex, acknowledged >= seal { return 0 }
        return plan.pageOpenerIndex(of: min(max(0, acknowledged), plan.blockCount - 1))
    }

    /// Starts at `block` (clamped to a page-opening block) instead of 0, as the continuation of
    /// an earlier write.
    mutating func resume(from block: Int) -> [FlowAction] {
        let start = Self.resumeBlock(acknowledged: block, plan: plan)
        progress.index = start
        progress.furthest = start
        stats.resumedAtBlock = start
        // What this run writes: the blocks from `start` on.
        let rest = plan.blocks[start...]
        stats.blocks = rest.count
        stats.bytes = rest.count * Int(BlockPlan.blockSize)
        stats.pages = rest.reduce(0) { $0 + ($1.opensPage ? 1 : 0) }
        return [Self.report(.continuingWrite(block: start, of: plan.blockCount, address: plan.blocks[start].address))]
    }

    /// A checkpoint when the block a later run would continue from moved (nothing when it did not).
    /// The first one (block 0) is reported before the first page is erased: a reset while that
    /// page is erased or written can leave a board that shows no program at all, which only this
    /// record explains (see `ResumePoint.mismatch(emptyBoard:plan:program:)`).
    mutating func checkpoint() -> [FlowAction] {
        guard let base = checkpointBase else { return [] }
        let block = Self.resumeBlock(acknowledged: progress.index, plan: plan)
        guard block != progress.lastCheckpoint else { return [] }
        progress.lastCheckpoint = block
        var point = base
        point.blockCount = plan.blockCount
        point.block = block
        point.address = plan.blocks[block].address
        // A page rewrite runs over a program whose every block was written before.
        point.acknowledged = rewritesOnePage ? plan.blockCount : progress.index
        return [.report(.checkpoint(point))]
    }
}
