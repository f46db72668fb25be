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
/// leaves: no packet or request can tell the two boards apart (`checkRestart(_:lost:)`), and the block's
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
    mutating func sendBlockOrStep(from first: UInt8, outOfOrderSeen: Bool) -> [FlowAction] {
        guard first == 252 else { return sendBlock(from: first, outOfOrderSeen: outOfOrderSeen) }
        return step(Step(expected: first, outOfOrderSeen: outOfOrderSeen))
    }

    /// One out-of-order packet to a board that expects packet `step.expected` and has nothing
    /// pending.
    mutating func step(_ step: Step) -> [FlowAction] {
        let expected = step.expected
        state = .stepping(step)
        let number = expected &+ 128
        let bytes = PartialFlashingRequest.flashData(
            offsetField: 0, packetNumber: number, data: [UInt8](repeating: 0xFF, count: 16)
        ).bytes
        return [
            Self.report(.sent(bytes, .step(expects: expected &+ 4))),
            .write(characteristic, bytes, .command), arm(PartialFlashTimer.answer, settings.answerTimeout)
        ]
    }

    /// An answer while stepping: `01 AA` is the step's own; nothing else is due.
    mutating func answerWhileStepping(_ answer: PartialFlashingNotification, _ step: Step) -> [FlowAction] {
        switch answer {
        case .writeFail:
            return disarm() + sendBlock(from: step.expected &+ 4, outOfOrderSeen: step.outOfOrderSeen)
        case .writeSuccess:
            // Nothing is pending when a step goes out (after a barrier or an acknowledged block),
            // so this answer is one too many: an earlier one was taken for a later block's. (Answers
            // too many are counted from END_OF_TRANSMISSION on, so this is the first.)
            return fail(.unaccountedAnswers(count: 1))
        case .status, .regionInfo:
            return [Self.said(.ignoredStray)]
        }
    }

    /// No `01 AA` within `answerTimeout`: resynchronise (the barrier resets the counters; the
    /// step's answer, if it is only late, comes before the barrier's and is taken as such).
    /// Its timer fired: a failure cancels none.
    mutating func stepTimedOut() -> [FlowAction] {
        if let error = countRetry(.noAcknowledgement(settings.answerTimeout)) {
            return fail(error, timerStopped: true)
        }
        return [Self.report(.stepUnanswered)]
            + resync(attempt: 1, .afterStep(answerDue: true))
    }
}
