import LinkModel
import PartialFlashing

/// Estimates partial flashing: the blocks of the program region, one acknowledged block at
/// a time, each block that opens a page waiting for the page's erase.
///
/// Per block, with board work `W` (16 word writes, plus the erase for a page-opening block):
/// `(⌊W / CI⌋ + 2) · CI` — the block's writes leave in one event, the `01 FF` in the first
/// event after the work, the next block in the event after that (the link model's partial
/// bound). Then END_OF_TRANSMISSION (one event and the last write again), the reboot, and the
/// verification on a new connection (setup and one REGION_INFO round trip).
public struct PartialEstimator: PathEstimator {
    public var path: EstimatedPath { .partial }
    /// Blocks to send.
    public var blocks: Int
    /// Blocks that open (and so erase) a page.
    public var pagesOpened: Int
    /// Whether the session reconnects after the reboot to check the program hash.
    public var verifies: Bool

    public init(blocks: Int, pagesOpened: Int, verifies: Bool = true) {
        self.blocks = max(blocks, 0)
        self.pagesOpened = min(max(pagesOpened, 0), max(blocks, 0))
        self.verifies = verifies
    }

    /// The blocks and pages of a block plan.
    public init(plan: BlockPlan, verifies: Bool = true) {
        self.init(blocks: plan.blockCount, pagesOpened: plan.pagesOpened, verifies: verifies)
    }

    public func estimate(_ context: EstimateContext) -> PathEstimate {
        let profile = context.link.profile
        let ci = max(profile.connectionIntervalMicroseconds, 1)
        let t = context.board.timing
        let plainWork = t.blockWrite.wholeMicroseconds
        let openingWork = plainWork + t.pageErase.wholeMicroseconds
        func blockCost(_ work: Int64) -> Int64 { (work / ci + 2) * ci }
        let transfer = Int64(blocks - pagesOpened) * blockCost(plainWork) + Int64(pagesOpened) * blockCost(openingWork)
        var parts: [PathEstimate.Part] = [
            context.beforeDecision,
            .init(name: "blocks", duration: .microseconds(transfer)),
            .init(name: "end of transmission and reboot", duration: .microseconds(ci + plainWork) + t.reboot),
        ]
        if verifies {
            parts.append(.init(name: "verify on a new connection", duration: profile.connectionSetup + .microseconds(2 * ci)))
        }
        return PathEstimate(path: .partial, parts: parts,
                            counts: ["blocks": blocks, "pages": pagesOpened, "bytes": blocks * Int(BlockPlan.blockSize)])
    }
}
