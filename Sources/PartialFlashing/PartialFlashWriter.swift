import Diagnostics
import FirmwareImage
import PartialFlashingFrames
import Transport

/// Writes a `BlockPlan` with the partial-flashing protocol, one block in flight at a time.
///
/// A block goes out as 4 FLASH_DATA packets with consecutive packet numbers (mod 256):
/// packet 0 carries the low 16 bits of the block address, packet 1 the high 16 bits,
/// packets 2 and 3 carry 0x0000 (the board ignores the field there).
///
/// # Which answer belongs to which block: by order, never by time
///
/// Answers carry no block id. What ties an answer to its block is order:
///
/// * The link delivers each PDU once and in order. The BLE link layer acknowledges every data
///   PDU with its 1-bit SN/NESN scheme and resends it until acknowledged; a receiver takes a
///   PDU only when its SN equals its own NESN and drops a resent copy (Bluetooth Core
///   Specification, Vol 6 Part B §4.5.9 "Acknowledgement and flow control"; e.g. Zephyr's
///   controller, `lll_conn.c` `isr_rx_pdu`). The boards serve ATT on one bearer
///   (`sd_ble_gatts_hvx` takes only the connection) and send their notifications in the order
///   they were made; BlueZ hands each ATT notification to a subscriber once
///   (`src/shared/gatt-client.c` `notify_cb` → `src/gatt-client.c` `notify_cb`, one
///   `PropertiesChanged` per subscribed D-Bus client). Write commands reach the board's write
///   handler in the order they were written.
/// * Losses do happen: a write command dropped before it reaches the board's GATT server, a
///   notification the board could not queue (CODAL's `MicroBitBLEChar::notifyChrValue` returns
///   false when `sd_ble_gatts_hvx` fails and the partial-flashing service ignores it), a link
///   that drops. And any answer may be late: BlueZ queues write commands, other connections
///   push events back, D-Bus adds its own latency.
///
/// So answers arrive in the order the board made them, at most once, and may be lost or late.
/// From a synchronised state (the board expects packet `g`, holds no partial block and has no
/// flash event pending), one transmission of `g … g+3` ends in one of these
/// (docs/protocols/partial-flashing.md §3.1-§3.2; CODAL and DAL `flashData`, `partialFlashingEvent`):
///
/// | what reaches the board                          | what the board does                                   | answer           | board then expects |
/// |-------------------------------------------------|-------------------------------------------------------|------------------|--------------------|
/// | all 4 packets                                   | 4th raises the flash event: erase if the block starts a page (CODAL: if not blank), burn | one `01 FF`, after the burn | `g+4` |
/// | a prefix `g … g+k`, k < 3 (the 4th, or the tail, lost) | keeps the partial block                        | none             | `g+k+1`            |
/// | nothing                                         | —                                                     | none             | `g`                |
/// | a packet after a gap (one before it lost)       | that packet: `01 AA`, block dropped; the later ones are 1-3 behind `g+4`: ignored | one `01 AA` | `g+4` |
/// | as in any row above, and the answer lost        | the same                                              | none arrives     | as above           |
///
/// Exactly one answer, or none. The writer therefore takes the first write answer after a
/// transmission as that transmission's answer, whenever it arrives:
///
/// * `01 FF`: the block is written; the next block continues the numbering (`g+4`).
/// * `01 AA`: the board dropped the block and expects `g+4`; the block is resent numbered
///   from there. A second `01 AA` for the same block (two lossy transmissions in a row, or
///   numbering that is off) goes through the recovery below instead, as after a timeout.
/// * no answer within `blockTimeout`: the board is in one of the rows above, the answer may
///   still come, and the writer cannot tell which. First the same packets `g … g+3` go again
///   (a fill-in, one retry each, at most `PartialFlashSettings.fillIns` times): a board that
///   holds a prefix or nothing takes the packets it lacks, identical bytes, and completes the
///   block; a board that has all 4 (its flash event still erasing, or done) ignores them, being
///   1-4 numbers ahead (CODAL and DAL `flashData`: a packet 1-7 behind is dropped silently). So
///   a lost write command or a slow erase still ends with exactly one answer, the block's, taken
///   by order whenever it comes; a packet lost from a fill-in makes a prefix again or an `01 AA`.
///   A fill-in also never moves the board's `offset` or block buffer while a flash event may be
///   pending, which a barrier or a renumbered block could. No answer after the fill-ins means
///   the answer itself was lost (or the board is slower still), and one recovery covers that,
///   the fence, ordered by the firmware and not by a timer:
///   1. `FF 00`. The write handler does not act on it: it raises an event, which the message
///      bus queues behind every flash event already raised and runs after them, one after
///      another (CODAL and DAL `MicroBitPartialFlashingService::onDataWritten`,
///      `partialFlashingEvent`; codal-core `MessageBus::send`, `idle` and `async_callback` with
///      `MESSAGE_BUS_LISTENER_QUEUE_IF_BUSY`). The write commands before it reached the board
///      before it or never will. So the board restarts into pairing mode
///      (`MicroBitBLEManager::restartInBLEMode`) only after the block's flash event, if it
///      had one, erased, burned and answered.
///   2. The link drops with the restart. A late answer that arrives before the drop is the
///      block's one answer; it changes nothing.
///   3. A fresh connection (its notifications are the new boot's: no answer made before the
///      restart can arrive on it), REGION_INFO 2 on a board whose counters start at 0, and the
///      block again, numbered from 0. The restart came after the block's flash event ended, so
///      the block was burnt whole or not at all, and sending it again writes identical bytes
///      over them: one more write of its words, allowed while they stay within nWRITE with the
///      writes still to come. Past that (a second recovery of the same block, the last block,
///      which END_OF_TRANSMISSION burns again, a block the program hash overlaps) the write
///      goes on from the block that opens the page in progress, which erases it, or from the
///      first block once the program hash may be written (`rewindIfRecovering(_:)`,
///      `rewindTarget(for:)`).
///   If the board does not restart within `rebootTimeout` (after a second `FF 00`, in case the
///   first write command was lost), its flash work may hang (a flash operation that never ends
///   starves the event fiber, and `FF 00` waits behind it): the writer gives up with
///   `PartialFlashError.rebootNotObserved`, and the session resets the board with `FF 01`
///   before any fallback (`BoardReset`). The timers decide when the writer acts, never whether
///   an answer counts.
///
/// A lost 4th packet, a lost block and a late answer thus each cost one retry (the timeout and the
/// fill-in); a lost `01 FF` or `01 AA` costs the fill-ins, the board's restart, a connection,
/// one REGION_INFO round trip and the block (or the page in progress up to it, see step 3).
/// A link that drops with a block in flight leaves the board with a flash event that may still
/// run and answer on the next connection: that connection starts with the fence too, and the
/// write goes on from the block that opens the page (the board may have reset mid-burn).
///
/// # Answers no transmission accounts for
///
/// Every transmission yields at most one answer and the writer consumes it, so a second write
/// answer while recovering, a write answer while resynchronising after a reconnection or
/// before the barrier that precedes the program hash, or one after END_OF_TRANSMISSION is one
/// too many: an answer was duplicated
/// on its way. The writer then stops with `PartialFlashError.unaccountedAnswers` (a block may
/// have been skipped) instead of reporting success. A BLE link cannot duplicate a notification;
/// a second D-Bus client that subscribed to the same characteristic makes BlueZ emit one
/// `PropertiesChanged` per subscriber, which every match on the signal sees.
///
/// What no client of this protocol can prevent: a duplicated `01 FF` of block k taken for the
/// answer of block k+1 while k+1 is still in the board's hands. If k+1 opens a page, block
/// k+2 then reaches the board during that page's erase, its packets overwrite the one block
/// buffer and `offset`, and the erase is followed by a burn of k+2's bytes at k+2's address:
/// k+1 is never written (§3.1). From then on every answer is taken for the block after its
/// own; the one answer too many shows up during a recovery or after END_OF_TRANSMISSION and
/// the writer fails, unless a later loss swallows it (a lost answer, or a lost packet that
/// leaves two transmissions with one answer between them).
/// The link model injects duplicates only as a hostile fault (`sim campaign --hostile`).
///
/// # The end
///
/// END_OF_TRANSMISSION (`02`) goes only after the last block was acknowledged (by an answer
/// received after the last REGION_INFO, so the board's buffer and offset hold that block:
/// END_OF_TRANSMISSION burns the buffer at `offset` again, and after a REGION_INFO that offset is
/// 0, where the burn never completes and the board hangs, docs/protocols/partial-flashing.md §3.5).
/// The writer finishes when the board drops the link as it restarts; reading the board back is
/// `ProgramCheck`'s. With `sealProgramHash` the hash is written by a last block (see
/// `BlockPlan.sealed` and `rewindTarget(for:)`), sent after a REGION_INFO barrier: once every
/// other block is acknowledged nothing may answer before the barrier, so an answer too many (a
/// duplicate taken for a later block's answer) stops the write before the board can report the
/// new program over an incomplete one.
///
/// # Rewriting one page
///
/// `init(rewritingPageOf:settings:)` writes only the cheapest page of a plan
/// (`BlockPlan.cheapestPage`), opener first, and then END_OF_TRANSMISSION: the one way to make a
/// board whose flash already holds the program remove `flashIncomplete` and leave pairing mode
/// (docs/protocols/board-storage.md §7). A whole page, because its first block erases it.
///
/// Every retry counts against `blockRetryLimit` and `runRetryLimit`, and the whole write
/// has a deadline; when one is exhausted the writer finishes with
/// `PartialFlashError.gaveUp`, the signal to fall back to a full flash.
///
/// # States
///
/// Each state holds the data that means something in it (`PartialFlashWriter+State`): the
/// transmission in flight (its packet numbers, fill-ins, an earlier `01 AA`, a failed write), the
/// step, the fence under way (the block in doubt's packet numbers, whether its late answer is
/// still due, whether the write may rewind to its page), the loss the restart check weighs, what
/// the barrier is followed by, the END_OF_TRANSMISSION sends and the answers too many after them.
/// What spans states is one `Progress` (the first block not yet acknowledged, the block's
/// retries and burns in doubt, whether the hash block went out) beside `stats` and the link's
/// `LinkRecovery`.
public struct PartialFlashWriter: FlowMachine {
    public typealias Output = PartialFlashStats
    public typealias Report = PartialFlashWriterReport

    public internal(set) var outcome: Result<PartialFlashStats, any Error>?
    /// The counters so far.
    public internal(set) var stats: PartialFlashStats
    /// The plan being written.
    public let plan: BlockPlan

    let settings: PartialFlashSettings
    /// The blocks of the plan this writer sends: all of them, or one page (`init(rewritingPageOf:settings:)`).
    public let range: Range<Int>
    let characteristic = PartialFlashingGATT.characteristic
    /// Where the write stands, with the data that means something there (`PartialFlashWriter+State`).
    var state = State.idle
    /// What spans states: the first block not yet acknowledged, the furthest progress, the block's
    /// retries and burns in doubt, whether the hash block went out, the last checkpoint.
    var progress: Progress
    /// The link's unexpected losses and the connection attempts for the current one.
    var recovery: LinkRecovery
    /// What a checkpoint says besides the block (nil: report no checkpoints).
    public var checkpointBase: ResumePoint?

    /// - Parameters:
    ///   - plan: the blocks to write.
    ///   - settings: `blockTimeout`, `blockRetryLimit`, `runRetryLimit`, `deadlineBase`,
    ///     `deadlinePerBlock`, `answerTimeout`, `requestAttempts`, `rebootTimeout`,
    ///     `reconnectDelay`, `reconnectAttempts`, `reconnectLimit`, `rebootReconnectDelay`.
    public init(plan: BlockPlan, settings: PartialFlashSettings = PartialFlashSettings()) {
        self.init(plan: plan, range: 0..<plan.blockCount, settings: settings)
    }

    /// Writes `plan` (the program's blocks). Reading the board back afterwards is `ProgramCheck`'s.
    public init(plan: BlockPlan, program: MakeCodeProgram, settings: PartialFlashSettings = PartialFlashSettings()) {
        self.init(plan: plan, settings: settings)
    }

    /// Rewrites only the cheapest page of `plan` (`BlockPlan.cheapestPage`) and ends with
    /// END_OF_TRANSMISSION: for a board whose flash holds the plan's program already, to clear
    /// `flashIncomplete`. Blocks count from the page's opener.
    public init(rewritingPageOf plan: BlockPlan, settings: PartialFlashSettings = PartialFlashSettings()) {
        self.init(plan: plan, range: plan.cheapestPage, settings: settings)
    }

    private init(plan: BlockPlan, range: Range<Int>, settings: PartialFlashSettings) {
        self.plan = plan
        self.range = range
        self.settings = settings
        self.recovery = LinkRecovery(settings: settings)
        let blocks = plan.blocks[range]
        self.stats = PartialFlashStats(
            blocks: blocks.count, bytes: blocks.count * Int(BlockPlan.blockSize),
            pages: blocks.reduce(0) { $0 + ($1.opensPage ? 1 : 0) },
            skippedBlocks: range.count == plan.blockCount ? plan.skippedBlocks : 0)
        self.progress = Progress(from: range.lowerBound)
    }

    /// True when this writer rewrites one page of an already written program.
    public var rewritesOnePage: Bool { range.count != plan.blockCount }

    /// Starts writing on a connection where notifications are enabled and a REGION_INFO
    /// was just answered (so the board expects packet 0): the first block goes out at once.
    /// `MemoryMapReader` leaves the board in that state. Use the `.start` event instead on a
    /// fresh connection: the writer then subscribes and resynchronises first.
    ///
    /// `block` continues an earlier, interrupted write (see `resume(from:)`); nil starts afresh.
    public mutating func beginAfterRegionInfo(now: Duration = .zero, from block: Int? = nil) -> [FlowAction] {
        guard state.isIdle else { return [] }
        guard !range.isEmpty else { return fail(.nothingToWrite) }
        let notes = block.map { resume(from: $0) } ?? []
        return opening() + notes + checkpoint() + sendBlock(from: 0, outOfOrderSeen: false)
    }

    public mutating func handle(_ event: FlowEvent, now: Duration) -> [FlowAction] {
        guard outcome == nil else { return [] }
        switch event {
        case .start:
            guard state.isIdle else { return [] }
            guard !range.isEmpty else { return fail(.nothingToWrite) }
            return opening() + checkpoint() + [.subscribe(characteristic)] + resync(attempt: 1, .opening)
        case let .notification(c, bytes):
            guard c == characteristic else { return [Self.said(.ignoredNotification(from: c))] }
            return received(bytes)
        case let .timerFired(id):
            if id == PartialFlashTimer.deadline { return deadlinePassed() }
            // Only the timer of the state is running; any other was cancelled.
            guard id == state.timer else { return [] }
            return timerFired()
        case let .disconnected(reason):
            return linkLost(reason)
        case let .connected(info):
            guard case let .reconnecting(reconnection) = state else { return [] }
            return connected(info, reconnection)
        case let .connectFailed(error):
            guard state.isReconnecting else { return [] }
            return settle(recovery.connectFailed(error))
        case let .writeFailed(_, error):
            // The block or answer timer notices the loss; remember why.
            if case var .awaitingAck(flight) = state {
                flight.writeFailure = error
                state = .awaitingAck(flight)
            }
            return [Self.said(.writeFailed(error))]
        }
    }

    private mutating func opening() -> [FlowAction] {
        let what: PartialFlashWriterReport =
            rewritesOnePage
            ? .rewritingOnePage(address: plan.blocks[range.lowerBound].address, blocks: range.count)
            : .writing(blocks: plan.blockCount, bytes: plan.byteCount, pages: plan.pagesOpened)
        return [
            .report(.phase(.partial)), Self.report(what),
            .startTimer(PartialFlashTimer.deadline, settings.deadline(blocks: range.count))
        ]
    }
}

extension PartialFlashWriter {
    /// The action that reports `value`, one of the partial-flashing reports the writer shares with
    /// the other partial-flashing flows (bytes, answers ignored, a failed write, retries of
    /// requests).
    static func said(_ value: PartialFlashReport) -> FlowAction { .report(.flow(AnyFlowReport(value))) }
}
