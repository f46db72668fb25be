/// What a partial flash did.
public struct PartialFlashStats: Sendable, Equatable, Codable {
    /// Blocks written (each acknowledged at least once).
    public var blocks: Int
    /// Bytes written: 64 per block.
    public var bytes: Int
    /// Flash pages erased and written.
    public var pages: Int
    /// All-0xFF blocks left out of the plan.
    public var skippedBlocks: Int
    /// Block resends, resynchronisations and reconnections counted against the retry limits.
    public var retries: Int
    /// REGION_INFO requests sent to reset the board's packet numbering: one per recovery (after the
    /// `FF 00` fence's restart, or after a reconnection).
    public var resyncs: Int
    /// Connections made again after an unexpected link loss (the reboot at the end is not counted).
    public var reconnects: Int
    /// True when the board was read back after its last restart: in application mode, reporting
    /// the program's start and hash (`ProgramCheck`). A writer alone never sets it.
    public var verified: Bool
    /// Why the result was not read back, when it was not (the new program keeps Bluetooth off,
    /// verification was turned off, ...).
    public var unverifiedReason: String?
    /// Set when this run continued a write an earlier run left unfinished: the block (0-based)
    /// it started from. Blocks before it were not sent again.
    public var resumedAtBlock: Int?
    /// Pages rewritten (each followed by END_OF_TRANSMISSION) to clear `flashIncomplete` from a
    /// board that came back in pairing mode; their blocks and bytes are counted above.
    public var pageRewrites: Int

    public init(
        blocks: Int = 0, bytes: Int = 0, pages: Int = 0, skippedBlocks: Int = 0, retries: Int = 0,
        resyncs: Int = 0, reconnects: Int = 0, verified: Bool = false, unverifiedReason: String? = nil,
        resumedAtBlock: Int? = nil, pageRewrites: Int = 0
    ) {
        self.resumedAtBlock = resumedAtBlock
        self.unverifiedReason = unverifiedReason
        self.pageRewrites = pageRewrites
        self.blocks = blocks
        self.bytes = bytes
        self.pages = pages
        self.skippedBlocks = skippedBlocks
        self.retries = retries
        self.resyncs = resyncs
        self.reconnects = reconnects
        self.verified = verified
    }

    /// Adds the blocks, bytes, pages and retries of `other` (a page rewrite after this write).
    public mutating func add(_ other: PartialFlashStats) {
        blocks += other.blocks
        bytes += other.bytes
        pages += other.pages
        retries += other.retries
        resyncs += other.resyncs
        reconnects += other.reconnects
    }
}
