import Transport

/// What `PartialFlashWriter` (and the reconnection policy the partial-flashing flows share,
/// `LinkRecovery`) tells the user, as values: the block, its address, its packet numbers, the
/// problem, the restart check's evidence. `FlowWords` in the Flashing module words them; tests
/// assert the values. Bytes sent without a purpose, bytes received and answers ignored are
/// `PartialFlashReport`'s.
public enum PartialFlashWriterReport: FlowReportValue {
    // Notes

    /// Writing `blocks` blocks of `bytes` bytes that open `pages` pages (note).
    case writing(blocks: Int, bytes: Int, pages: Int)
    /// Rewriting the page at `address` as it is (`blocks` blocks), then END_OF_TRANSMISSION, to
    /// clear `flashIncomplete` (note).
    case rewritingOnePage(address: UInt32, blocks: Int)
    /// Continuing an unfinished write at `block` (0-based) of `of`, at `address`; the blocks
    /// before it were written by an earlier run (note).
    case continuingWrite(block: Int, of: Int, address: UInt32)

    // Traces

    /// Block `block` (0-based) of `of`, at `address`, goes out as packets `firstPacket` to
    /// `firstPacket + 3` (trace).
    case sendingBlock(block: Int, of: Int, address: UInt32, firstPacket: UInt8)
    /// A request sent for `purpose` (trace).
    case sent([UInt8], PartialFlashRequestPurpose)
    /// A write answer after END_OF_TRANSMISSION: one too many, a block may have been skipped (trace).
    case answerAfterLastBlock
    /// Every block but the one that writes the program hash is acknowledged: a barrier first (trace).
    case barrierBeforeHash
    /// After a recovery, the write goes on at block `block` (0-based, at `address`) for block
    /// `inDoubt`, whose words would be written `writes` times otherwise (trace).
    case rewinding(block: Int, address: UInt32, PartialFlashRewind, inDoubt: Int, writes: Int)
    /// The late answer to block `block` (0-based) came during a recovery; `written`: `01 FF`,
    /// else `01 AA` (trace).
    case lateAnswer(block: Int, written: Bool)
    /// The link dropped after `FF 00`: the restart, or a drop before it (trace).
    case droppedAfterFence(DisconnectReason)
    /// The link dropped after END_OF_TRANSMISSION, as the board restarts (trace).
    case droppedAfterEnd(DisconnectReason)
    /// Connected again after the loss that followed `FF 00` (trace).
    case connectedAfterFence
    /// Connected again after an unexpected loss: the write goes on at block `block` (0-based, at
    /// `address`) for block `inDoubt` (trace).
    case reconnectedResuming(block: Int, address: UInt32, PartialFlashRewind, inDoubt: Int)
    /// The block in flight when the link dropped may still be pending: the fence first (trace).
    case fenceFirst
    /// The restart check showed the restart `FF 00` asked for (trace).
    case restarted(PartialFlashRestartSign)
    /// The restart check showed no restart: the loss counts (trace).
    case notRestarted(PartialFlashNoRestartSign)

    // Retries

    /// Block `block` (0-based, at `address`) went unanswered for `problem`: its packets go again
    /// numbered from `firstPacket` (a fill-in) (retry).
    case fillingIn(block: Int, address: UInt32, WriteProblem, firstPacket: UInt8)
    /// Block `block` went unanswered for `problem`: the fence, then a fresh connection (retry).
    case fencing(block: Int, address: UInt32, WriteProblem)
    /// Block `block` was dropped (`01 AA`) a second time: the fence, then a fresh connection (retry).
    case outOfOrderAgain(block: Int, address: UInt32)
    /// Block `block` was dropped (`01 AA`): resent as packets `firstPacket` to `firstPacket + 3` (retry).
    case outOfOrder(block: Int, address: UInt32, firstPacket: UInt8)
    /// The board did not restart after `FF 00`: sending it again (retry).
    case fenceAgain
    /// The board did not restart after END_OF_TRANSMISSION: sending it again (retry).
    case endAgain
    /// No `01 AA` to the step: resynchronising (retry).
    case stepUnanswered
    /// The link dropped by surprise: connecting again (retry).
    case linkDropped(DisconnectReason)
    /// A loss first taken for the restart after `FF 00` was a drop before it: it counts (retry).
    case droppedBeforeRestart(DisconnectReason)

    public var kind: FlowReportKind {
        switch self {
        case .writing, .rewritingOnePage, .continuingWrite:
            return .note
        case .sendingBlock, .sent, .answerAfterLastBlock, .barrierBeforeHash, .rewinding, .lateAnswer,
            .droppedAfterFence, .droppedAfterEnd, .connectedAfterFence, .reconnectedResuming, .fenceFirst, .restarted,
            .notRestarted:
            return .trace
        case .fillingIn, .fencing, .outOfOrderAgain, .outOfOrder, .fenceAgain, .endAgain, .stepUnanswered,
            .linkDropped, .droppedBeforeRestart:
            return .retry
        }
    }
}

/// Why the writer sent a request, beside its bytes.
public enum PartialFlashRequestPurpose: Sendable, Equatable {
    /// A packet of the transmission in flight, again with the same number (a fill-in).
    case again
    /// REGION_INFO 2: the barrier that resets the board's packet numbers.
    case resynchronise
    /// END_OF_TRANSMISSION.
    case endOfTransmission
    /// `FF 00`: restart once every pending flash event ran (the fence).
    case fence
    /// The out-of-order packet that steps the board's counters on: it then expects `expects`.
    case step(expects: UInt8)
    /// The restart probe; `aaMeansRestart`: `01 AA` to it shows the restart (else its absence).
    case restartProbe(aaMeansRestart: Bool)
    /// STATUS after the restart probe: its answer comes after any `01 AA`.
    case statusAfterProbe
}

/// Where the write goes back to when a page must be written again (`rewindTarget(for:)`).
public enum PartialFlashRewind: Sendable, Equatable {
    /// The block that opens the page.
    case pageOpener
    /// The first block: the program hash may be written already.
    case wholeProgram
}

/// What showed the restart after `FF 00`.
public enum PartialFlashRestartSign: Sendable, Equatable {
    /// `01 AA` to the probe: the board expects packet 0.
    case expectsPacketZero
    /// STATUS answered first to probe 249: the board restarted, or has none of the block.
    case statusFirst
}

/// What showed that the board did not restart after `FF 00`.
public enum PartialFlashNoRestartSign: Sendable, Equatable {
    /// No probe can tell for packets numbered from `group`.
    case noProbe(group: UInt8)
    /// `01 AA` to packet 249: it has packets of the block numbered from `group`.
    case hasPackets(group: UInt8)
    /// The block's late `01 FF` came on the new connection.
    case lateAnswer
    /// STATUS answered with no `01 AA` before it.
    case statusFirst
    /// Nothing answered within `waited`.
    case noAnswer(waited: Duration)
}
