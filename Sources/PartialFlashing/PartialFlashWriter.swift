import FirmwareImage
import PartialFlashingFrames
import Transport

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
    /// REGION_INFO requests sent to reset the board's packet numbering.
    public var resyncs: Int
    /// Connections made again after an unexpected link loss (the reboot at the end is not counted).
    public var reconnects: Int
    /// True when the board reported the new program after its reboot. False when verification
    /// was turned off, or when the board restarted into a program that does not accept
    /// connections (MakeCode programs without the Bluetooth extension), so nothing could be read back.
    public var verified: Bool
    /// Set when this run continued a write an earlier run left unfinished: the block (0-based)
    /// it started from. Blocks before it were not sent again.
    public var resumedAtBlock: Int?

    public init(blocks: Int = 0, bytes: Int = 0, pages: Int = 0, skippedBlocks: Int = 0, retries: Int = 0,
                resyncs: Int = 0, reconnects: Int = 0, verified: Bool = false, resumedAtBlock: Int? = nil) {
        self.resumedAtBlock = resumedAtBlock
        self.blocks = blocks
        self.bytes = bytes
        self.pages = pages
        self.skippedBlocks = skippedBlocks
        self.retries = retries
        self.resyncs = resyncs
        self.reconnects = reconnects
        self.verified = verified
    }
}

/// Writes a `BlockPlan` with the partial-flashing protocol, one block in flight at a time.
///
/// A block goes out as 4 FLASH_DATA packets with consecutive packet numbers (mod 256):
/// packet 0 carries the low 16 bits of the block address, packet 1 the high 16 bits,
/// packets 2 and 3 carry 0x0000 (the board ignores the field there). The writer then
/// waits for the block's notification:
///
/// * `01 FF`: the block is written; the next block continues the numbering.
/// * `01 AA` (first time for this block): the board dropped the block and now expects
///   the group's first number + 4; the block is resent with those numbers.
///   A second `01 AA` for the same block means the writer's idea of the board's numbering
///   can no longer be trusted (one transmission can yield two AAs when it runs ahead of
///   the board, §3.2), so it resynchronises instead.
/// * timeout (first time for this group): resend with the *same* numbers. The board
///   ignores the packets it already has and takes the missing tail, which recovers a lost
///   4th packet. If the notification itself was lost the board ignores the whole resend.
///   A same-number resend never produces a second notification, so a late `01 FF` that
///   turns up after it is the one answer of this block and cannot confirm a later block.
/// * timeout again: resynchronise with REGION_INFO 2 (it resets the board's counters) and
///   resend the block numbered from 0. The REGION_INFO answer is a barrier: notifications
///   of earlier transmissions arrive before it and are ignored, so nothing sent before
///   the resynchronisation can be mistaken for the answer to the block sent after it.
///
/// Answers carry no block id, so a *duplicated* answer could be taken for the next block's.
/// Every transmission yields at most one answer, so an answer that arrives while
/// resynchronising or after END_OF_TRANSMISSION is one too many: the writer then reports
/// `PartialFlashError.unaccountedAnswers` (a block may have been skipped) instead of success.
/// With `rejectSimultaneousAnswers` it also ignores an answer that arrives at the instant of its
/// own last write (it cannot answer that write), which stops a duplicate delivered together
/// with its original.
///
/// END_OF_TRANSMISSION (`02`) goes only after the last block was acknowledged (by a
/// notification received after the last REGION_INFO, so the board's buffer and offset hold
/// that block). Then the writer waits for the reboot, connects again, reads REGION_INFO 2
/// and checks the board now reports the program's start and hash.
///
/// Every retry counts against `blockRetryLimit` and `runRetryLimit`, and the whole write
/// has a deadline; when one is exhausted the writer finishes with
/// `PartialFlashError.gaveUp`, the signal to fall back to a full flash.
public struct PartialFlashWriter: FlowMachine {
    public typealias Output = PartialFlashStats

    public internal(set) var outcome: Result<PartialFlashStats, any Error>?
    /// The counters so far.
    public internal(set) var stats: PartialFlashStats
    /// The plan being written.
    public let plan: BlockPlan

    enum State: Sendable, Equatable {
        case idle
        /// Waiting for the answer to REGION_INFO 2 sent to reset the board's counters.
        case syncing(attempt: Int)
        /// The block at `index` is in flight.
        case awaitingAck
        /// END_OF_TRANSMISSION sent `sends` times; waiting for the reboot.
        case ending(sends: Int)
        case reconnecting(afterReboot: Bool)
        /// Waiting for REGION_INFO 2 after the reboot.
        case verifying(attempt: Int)
        case finished
    }

    let settings: PartialFlashSettings
    let expectedStart: UInt32
    let expectedHash: [UInt8]
    let characteristic = KnownGATT.partialFlashing
    var state = State.idle
    /// The first block not yet acknowledged.
    var index = 0
    /// The first packet number of the transmission in flight.
    var group: UInt8 = 0
    /// The group in flight was already resent with the same numbers after a timeout.
    var resentSameNumbers = false
    /// The block in flight already had one `01 AA` since the last resynchronisation.
    var outOfOrderSeen = false
    var blockRetries = 0
    var lastProblem: WriteProblem?
    /// The most blocks acknowledged at once (progress never goes backwards).
    var progress = 0
    var runningTimer: TimerID?
    /// `01 FF` / `01 AA` received after END_OF_TRANSMISSION: evidence of a duplicated answer.
    var unaccountedAnswers = 0
    /// An answer came too soon to be the block's own while a block was awaited: the answer
    /// taken for the block before (this index) may have been a late one, so its page is
    /// written again, unless the writer went back over it anyway.
    var doubtedBlock: Int?
    /// The block that writes the program hash was handed to the link, and no first block
    /// (whose page holds the hash) was acknowledged since: the board may report the new
    /// program already, so no page may be erased again before the hash's page is.
    var sealSent = false
    /// When the last notification arrived; a block sent at that instant went out right after
    /// a connection event (its answer needs two more), any other send may go out at once.
    var lastAnswerAt: Duration?
    /// The block in flight was sent at the instant an answer arrived.
    var sentOnAnswer = false
    /// The connection interval, when the transport reports it.
    public var connectionInterval: Duration?
    /// A write of the transmission in flight that the driver could not hand to the link.
    var writeFailure: TransportError?
    /// The `now` of the event being handled.
    var clock: Duration = .zero
    /// The `now` of the last block, REGION_INFO or END_OF_TRANSMISSION handed to the driver.
    var sentAt: Duration?
    var recovery: LinkRecovery
    /// How long the answers to a page-opening block are held (zero: not held). See
    /// `PartialFlashWriter+PageOpeners.swift`.
    public var pageOpenerHold: Duration = .zero
    /// When the hold of the page opener in flight ends.
    var holdUntil: Duration?
    /// The latest answer held.
    var heldAnswer: PartialFlashingNotification?
    /// Answers to page openers that a later answer within the hold showed to be late copies.
    public internal(set) var heldCopies = 0
    /// What a checkpoint says besides the block (nil: report no checkpoints).
    public var checkpointBase: ResumePoint?
    /// The resume block of the last checkpoint reported.
    var lastCheckpoint: Int?

    /// - Parameters:
    ///   - plan: the blocks to write.
    ///   - expectedStart: the program start REGION_INFO 2 must report after the reboot.
    ///   - expectedHash: the program hash REGION_INFO 2 must report after the reboot.
    ///   - settings: `blockTimeout`, `blockRetryLimit`, `runRetryLimit`, `deadlineBase`,
    ///     `deadlinePerBlock`, `answerTimeout`, `requestAttempts`, `rebootTimeout`,
    ///     `reconnectDelay`, `reconnectAttempts`, `reconnectLimit`, `verifyAfterFlash`.
    public init(plan: BlockPlan, expectedStart: UInt32, expectedHash: [UInt8],
                settings: PartialFlashSettings = PartialFlashSettings()) {
        self.plan = plan
        self.expectedStart = expectedStart
        self.expectedHash = expectedHash
        self.settings = settings
        self.recovery = LinkRecovery(settings: settings)
        self.stats = PartialFlashStats(blocks: plan.blockCount, bytes: plan.byteCount, pages: plan.pagesOpened,
                                       skippedBlocks: plan.skippedBlocks)
    }

    /// Writes `plan` and verifies that the board then reports `program`.
    public init(plan: BlockPlan, program: MakeCodeProgram, settings: PartialFlashSettings = PartialFlashSettings()) {
        self.init(plan: plan, expectedStart: program.magicAddress, expectedHash: program.programHash, settings: settings)
    }

    /// Starts writing on a connection where notifications are enabled and a REGION_INFO
    /// was just answered (so the board expects packet 0): the first block goes out at once.
    /// `MemoryMapReader` leaves the board in that state. Use the `.start` event instead on a
    /// fresh connection: the writer then subscribes and resynchronises first.
    ///
    /// `block` continues an earlier, interrupted write (see `resume(from:)`); nil starts afresh.
    public mutating func beginAfterRegionInfo(now: Duration = .zero, from block: Int? = nil) -> [FlowAction] {
        guard state == .idle else { return [] }
        clock = now
        guard !plan.blocks.isEmpty else { return fail(.nothingToWrite) }
        let notes = block.map { resume(from: $0) } ?? []
        return opening() + notes + checkpoint() + sendBlock(from: 0, newGroup: true)
    }

    public mutating func handle(_ event: FlowEvent, now: Duration) -> [FlowAction] {
        guard outcome == nil else { return [] }
        clock = now
        switch event {
        case .start:
            guard state == .idle else { return [] }
            guard !plan.blocks.isEmpty else { return fail(.nothingToWrite) }
            return opening() + checkpoint() + [.subscribe(characteristic)] + resync(attempt: 1)
        case let .notification(c, bytes):
            guard c == characteristic else { return [.report(.trace("ignored notification from \(c)"))] }
            return received(bytes)
        case let .timerFired(id):
            if id == PartialFlashTimer.deadline { return deadlinePassed() }
            if id == PartialFlashTimer.pageOpenerHold { return holdEnded() }
            guard id == runningTimer else { return [] }
            runningTimer = nil
            return timerFired()
        case let .disconnected(reason):
            return linkLost(reason)
        case let .connected(info):
            guard case let .reconnecting(afterReboot) = state else { return [] }
            return connected(info, afterReboot: afterReboot)
        case let .connectFailed(error):
            guard case let .reconnecting(afterReboot) = state else { return [] }
            let result = recovery.connectFailed(error)
            if afterReboot, case .failure = result { return finishUnverified(error) }
            return settle(result)
        case let .writeFailed(_, error):
            // The block or answer timer notices the loss; remember why.
            if state == .awaitingAck { writeFailure = error }
            return [.report(.trace("write failed: \(error)"))]
        }
    }

    private mutating func opening() -> [FlowAction] {
        [.report(.phase(.partial)),
         .report(.note("writing \(plan.blockCount) blocks (\(plan.byteCount) bytes, \(plan.pagesOpened) pages)")),
         .startTimer(PartialFlashTimer.deadline, settings.deadline(blocks: plan.blockCount))]
    }
}
