import Diagnostics
import PartialFlashingFrames
import Transport

/// Keeping the board's packet counters away from where a restart leaves them.
///
/// A board that restarts (`FF 00`, or any reset) starts the partial-flashing service with
/// `packetCount`, `blockPacketCount` and `blockNum` at 0 (CODAL and DAL
/// `MicroBitPartialFlashingService.h` initialisers); so does REGION_INFO (`onDataWritten`). A
/// board that did not restart and holds the block in doubt numbered from `g` expects one of
/// `g … g+4`. For a block numbered from 252 that arrived whole, that is 0, the state a restart
/// leaves: no packet or request can tell the two boards apart (`checkRestart()`), and the block's
/// flash event may still be pending. The same holds for a block numbered from 0 of which nothing
/// arrived (nothing is pending then).
///
/// So no block is numbered from 252, and none from 0 after a reconnection. There the writer
/// steps the board's counters on by one block: one FLASH_DATA packet numbered 128 away from
/// the number the board expects is out of order (neither that number nor 1-7 behind it), so
/// the board answers `01 AA` from the write handler, drops the packet without touching `offset`
/// or its block buffer, and sets `packetCount = blockPacketCount += 4` (CODAL and DAL
/// `MicroBitPartialFlashingService::flashData`). No flash event is raised, so no `01 FF`
/// follows. From 0 a step gives 4; from 252 it gives 0.
///
/// What remains numbered from 0: the first block after the opening barrier, after the
/// planned barrier before the hash block, and after a step from 252. Their check (`restartProbe`) tells a restart from a
/// board that has any of the block; from one that has none of it (no flash event pending) it
/// cannot, and that loss is taken for the restart.
extension PartialFlashWriter {
    /// Sends the block numbered from `first`, or steps the board's counters on first.
    mutating func sendBlockOrStep(from first: UInt8) -> [FlowAction] {
        first == 252 ? step(expecting: first) : sendBlock(from: first)
    }

    /// One out-of-order packet to a board that expects packet `expected` and has nothing pending.
    mutating func step(expecting expected: UInt8) -> [FlowAction] {
        group = expected
        lateAnswerPending = false
        state = .stepping
        let number = expected &+ 128
        let bytes = PartialFlashingRequest.flashData(
            offsetField: 0, packetNumber: number, data: [UInt8](repeating: 0xFF, count: 16)
        ).bytes
        return [
            .report(
                .trace(
                    "→ \(Hex.bytes(bytes, separator: " ")) (out of order on purpose: the board answers 01 AA and "
                        + "expects \(expected &+ 4), away from the numbers a restart leaves)")),
            .write(characteristic, bytes, .command), arm(PartialFlashTimer.answer, settings.answerTimeout)
        ]
    }

    /// An answer while stepping: `01 AA` is the step's own; nothing else is due.
    mutating func answerWhileStepping(_ answer: PartialFlashingNotification) -> [FlowAction] {
        switch answer {
        case .writeFail:
            return disarm() + sendBlock(from: group &+ 4)
        case .writeSuccess:
            // Nothing is pending when a step goes out (after a barrier or an acknowledged block),
            // so this answer is one too many: an earlier one was taken for a later block's.
            return fail(.unaccountedAnswers(count: unaccountedAnswers + 1))
        case .status, .regionInfo:
            return [.report(.trace("ignored: stray notification"))]
        }
    }

    /// No `01 AA` within `answerTimeout`: resynchronise (the barrier resets the counters; the
    /// step's answer, if it is only late, comes before the barrier's and is taken as such).
    mutating func stepTimedOut() -> [FlowAction] {
        if let error = countRetry(.noAcknowledgement(settings.answerTimeout)) { return fail(error) }
        lateAnswerPending = true
        stepAfterBarrier = true
        return [.report(.retry("no 01 AA to the out-of-order packet; resynchronising with REGION_INFO 2"))]
            + resync(attempt: 1)
    }
}
