import LinkModel
import PartialFlashing

/// Estimates partial flashing: the blocks of the program region, one acknowledged block at
/// a time, each block that opens a page waiting for the page's erase.
///
/// Per block, with board work `W` (16 word writes, plus the erase for a page-opening block):
/// `(⌊W / CI⌋ + 2) · CI` — the block's writes leave in one event, the `01 FF` in the first
/// event after the work, the next block in the event after that (the link model's partial
/// bound). Then END_OF_TRANSMISSION (one event and the last write again), the reboot, and the
/// read-back on a new connection (setup, then STATUS and REGION_INFO 2 one event apart, each
/// answered in the event after its own: 2 CI, `ReadBackReader`). A board that runs
/// its program is first restarted into pairing mode: `FF 00` in one event, the runtime's event,
/// the reboot with its one `RebootMode` step (20 ms), a new connection and the same three round
/// trips again.
public struct PartialEstimator: PathEstimator {
    public var path: EstimatedPath { .partial }
    /// Blocks to send.
    public var blocks: Int
    /// Blocks that open (and so erase) a page.
    public var pagesOpened: Int
    /// Whether the session reconnects after the reboot to read the board back.
    public var verifies: Bool
    /// Whether the board runs its program and is restarted into pairing mode before the write.
    public var switchesToPairingMode: Bool
    /// Whether the plan writes the program hash in a last block (`BlockPlan.sealIndex`): the
    /// writer sends a REGION_INFO barrier before it, one round trip (2 CI).
    public var sealsProgramHash = false

    /// The step of CODAL's boot decision that a `RebootMode` key costs (codal-microbit-v2 `model/MicroBit.cpp`).
    static let rebootModeStep = Duration.milliseconds(20)

    public init(blocks: Int, pagesOpened: Int, verifies: Bool = true, switchesToPairingMode: Bool = false) {
        self.blocks = max(blocks, 0)
        self.pagesOpened = min(max(pagesOpened, 0), max(blocks, 0))
        self.verifies = verifies
        self.switchesToPairingMode = switchesToPairingMode
    }

    /// The blocks and pages of a block plan.
    public init(plan: BlockPlan, verifies: Bool = true, switchesToPairingMode: Bool = false) {
        self.init(
            blocks: plan.blockCount, pagesOpened: plan.pagesOpened, verifies: verifies,
            switchesToPairingMode: switchesToPairingMode)
        self.sealsProgramHash = plan.sealIndex != nil
    }

    /// The name of the part a board running its program adds: it is restarted in pairing mode first.
    public static let pairingModeRestart = "restart in pairing mode and read the memory map again"
    /// The name of the read-back after the reboot, on a new connection.
    public static let readBackPart = "read back on a new connection"

    public func estimate(_ context: EstimateContext) -> PathEstimate {
        let profile = context.link.profile
        let ci = max(profile.connectionIntervalMicroseconds, 1)
        let t = context.board.timing
        let plainWork = t.blockWrite.wholeMicroseconds
        let openingWork = plainWork + t.pageErase.wholeMicroseconds
        func blockCost(_ work: Int64) -> Int64 { (work / ci + 2) * ci }
        let barrier: Int64 = sealsProgramHash ? 2 * ci : 0
        let transfer =
            Int64(blocks - pagesOpened) * blockCost(plainWork) + Int64(pagesOpened) * blockCost(openingWork) + barrier
        let readMap = profile.connectionSetup + .microseconds(3 * 2 * ci)
        var parts: [PathEstimate.Part] = [context.beforeDecision]
        if switchesToPairingMode {
            parts.append(
                .init(
                    name: Self.pairingModeRestart,
                    duration: .microseconds(ci) + t.eventDispatch + t.reboot + Self.rebootModeStep + readMap))
        }
        parts += [
            .init(name: "blocks", duration: .microseconds(transfer)),
            .init(name: "end of transmission and reboot", duration: .microseconds(ci + plainWork) + t.reboot)
        ]
        if verifies {
            let readBack = profile.connectionSetup + .microseconds(2 * ci)
            parts.append(.init(name: Self.readBackPart, duration: readBack))
        }
        // A CODAL board erases a page only when it is not blank (docs/protocols/partial-flashing.md
        // §3.4); every page but the first (which holds the board's program header) may be.
        let skippable =
            context.board.family == .nrf52833 && pagesOpened > 1
            ? Int64(pagesOpened - 1) * (blockCost(openingWork) - blockCost(plainWork)) : 0
        return PathEstimate(
            path: .partial, parts: parts,
            counts: ["blocks": blocks, "pages": pagesOpened, "bytes": blocks * Int(BlockPlan.blockSize)],
            skippableSeconds: Duration.microseconds(skippable).seconds)
    }
}
