import Transport

/// Where an interrupted partial flash can continue, and what the board must report for that
/// to be safe: the partial flash's `FlowCheckpoint`. A flow reports it as `FlowReport.checkpoint`
/// whenever it changes (`AnyFlowCheckpoint.value(as: ResumePoint.self)` gives it back); a driver keeps
/// the latest one (bitflash: a small JSON file in its state folder) and gives it back to the
/// next run for the same board, which continues from `block` instead of starting over.
///
/// `block` is always a block that opens a flash page: the board erases that page again when
/// it arrives, so whatever state the page was left in (a block half burned, an erase cut
/// short by a reset) is wiped before the page is written again (see `PartialFlashWriter`).
public struct ResumePoint: FlowCheckpoint {
    /// The format of the record; bumped when its meaning changes.
    public var version: Int
    /// The program being written (hex of its 8-byte program hash).
    public var programHash: String
    /// The runtime the board reported (hex of region 1's hash).
    public var runtimeHash: String
    /// Region 2 as the board declared it.
    public var regionStart: UInt32
    public var regionEnd: UInt32
    /// The hash region 2 reports while this write is unfinished (hex): what the first block
    /// put there (all 0xFF when the program hash is written last).
    public var hashWhileWriting: String
    /// The number of blocks in the plan.
    public var blockCount: Int
    /// The block to continue from (0-based; it opens a page) and its address.
    public var block: Int
    public var address: UInt32
    /// Blocks acknowledged so far (at least `block`).
    public var acknowledged: Int
    /// The board it belongs to (name and address), filled in by the driver.
    public var board: String?

    public static let currentVersion = 1

    public init(
        programHash: String, runtimeHash: String, regionStart: UInt32, regionEnd: UInt32,
        hashWhileWriting: String, blockCount: Int, block: Int, address: UInt32, acknowledged: Int,
        board: String? = nil
    ) {
        self.version = Self.currentVersion
        self.programHash = programHash
        self.runtimeHash = runtimeHash
        self.regionStart = regionStart
        self.regionEnd = regionEnd
        self.hashWhileWriting = hashWhileWriting
        self.blockCount = blockCount
        self.block = block
        self.address = address
        self.acknowledged = acknowledged
        self.board = board
    }
}

extension AnyFlowCheckpoint {
    /// The checkpoint as a partial flash's resume point; nil when it is another flow's.
    public var resumePoint: ResumePoint? { value(as: ResumePoint.self) }
}
