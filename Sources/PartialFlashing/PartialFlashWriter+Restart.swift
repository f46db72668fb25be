import Diagnostics
import PartialFlashingFrames
import Transport

/// Whether the loss after `FF 00` was the board's restart, shown by the board itself.
///
/// The restart (`MicroBitBLEManager::restartInBLEMode` → `microbit_reset()`, CODAL and DAL) does
/// not disconnect first: the central sees the link time out, as after any drop. A drop just
/// before the restart, or one that took `FF 00` with it, looks the same. What differs is the
/// partial-flashing service's RAM, which a restart clears: `packetCount` starts at 0. A board
/// that did not restart still expects a packet of the block in doubt, numbered `g … g+4`
/// (`g` its first packet: nothing of it arrived, part of it, or all of it).
///
/// The check sends one FLASH_DATA packet numbered `g-1`, then STATUS (CODAL and DAL
/// `MicroBitPartialFlashingService::flashData` and `onDataWritten`; both answer from the write
/// handler, in the order the writes came):
/// * a board that did not restart is 1-5 numbers ahead of it: "a packet from a previous batch",
///   dropped without an answer and without touching `offset` or the block buffer; STATUS answers
///   first (or the late `01 FF` of a flash event still pending: the board never restarted);
/// * a restarted board expects 0, so `g-1` is out of order (unless it is 1-7 behind 0): `01 AA`,
///   before STATUS's answer, and only its counters move, which the barrier resets next.
///
/// `01 AA` first: the loss was the restart, free as one fence allows. Anything else first (or
/// nothing within `answerTimeout`): the loss counts against `reconnectLimit` as a drop without
/// the fence would, and the board, which did not restart, is fenced again.
///
/// For `g` of 252 no packet can tell (`step(_:)`), and the writer numbers no block from
/// it. For `g` of 0, `g-1` is 1 behind 0 and a restarted board drops it too; the check turns
/// round: packet 249 is 7 behind 0, dropped silently by a restarted board, but out of order
/// for a board that has part or all of the block (it expects 1-4, or 4 and more after a
/// `01 AA`), which answers `01 AA` first. STATUS's answer first then shows the restart, or a
/// board that has none of the block: in both nothing is pending, so the barrier that follows
/// holds; only such a loss is taken for the restart without proof.
extension PartialFlashWriter {
    /// The packet that tells a restarted board from one that still expects the block in doubt,
    /// numbered from `group`, and whether `01 AA` to it means the restart (nil: no packet can
    /// tell, `group` 252).
    static func restartProbe(for group: UInt8) -> (number: UInt8, aaMeansRestart: Bool)? {
        switch group {
        case 252: return nil
        case 0: return (249, false)
        default: return (group &- 1, true)
        }
    }

    /// Checks whether the loss after `FF 00` (for `lost`) was the restart, for the block in doubt
    /// of `fence`.
    mutating func checkRestart(_ fence: Fence, lost: DisconnectReason) -> [FlowAction] {
        guard let (number, aaMeansRestart) = Self.restartProbe(for: fence.group) else {
            // Not reached (`step(_:)` keeps blocks away from 252). Were it, nothing would
            // show a restart, so the loss counts: a board whose link keeps dropping falls back.
            return notRestarted(.noProbe(group: fence.group), fence, lost: lost)
        }
        state = .checkingRestart(fence, lost: lost)
        // Never taken by either board (see above): its bytes are those of the block's last packet.
        let data = Array(plan.blocks[progress.index].data[48..<64])
        let probe = PartialFlashingRequest.flashData(offsetField: 0, packetNumber: number, data: data).bytes
        let status = PartialFlashingRequest.status.bytes
        return [
            Self.report(.sent(probe, .restartProbe(aaMeansRestart: aaMeansRestart))),
            .write(characteristic, probe, .command),
            Self.report(.sent(status, .statusAfterProbe)),
            .write(characteristic, status, .command), arm(PartialFlashTimer.answer, settings.answerTimeout)
        ]
    }

    /// The answer to the check (or to the block in doubt, late).
    mutating func answerWhileChecking(
        _ answer: PartialFlashingNotification, _ fence: Fence, lost: DisconnectReason
    ) -> [FlowAction] {
        let aaMeansRestart = Self.restartProbe(for: fence.group)?.aaMeansRestart ?? true
        switch answer {
        case .writeFail where aaMeansRestart:
            return restarted(.expectsPacketZero, fence)
        case .writeFail:
            return notRestarted(.hasPackets(group: fence.group), fence, lost: lost)
        case .writeSuccess:
            // A flash event still pending answered on the new connection: no restart came. (Answers
            // too many are counted from END_OF_TRANSMISSION on, so this one is the first.)
            guard fence.answerDue else { return fail(.unaccountedAnswers(count: 1)) }
            var answered = fence
            answered.answerDue = false
            return notRestarted(.lateAnswer, answered, lost: lost)
        case .status where aaMeansRestart:
            return notRestarted(.statusFirst, fence, lost: lost)
        case .status:
            return restarted(.statusFirst, fence)
        case .regionInfo:
            return [Self.said(.ignoredStray)]
        }
    }

    /// The loss that followed `FF 00` was the restart (or, for a block numbered from 0, the board
    /// has none of the block): free, and the barrier follows (a rewind after it if `fence` asks).
    mutating func restarted(_ sign: PartialFlashRestartSign, _ fence: Fence) -> [FlowAction] {
        let timer = disarm()
        return timer + [Self.report(.restarted(sign))] + resync(attempt: 1, .afterRestart(rewind: fence.rewind))
    }

    /// The loss that followed `FF 00` was not the restart: it counts as a drop, and the board
    /// is fenced again on this connection. `timerStopped`: the check's timer fired.
    mutating func notRestarted(
        _ sign: PartialFlashNoRestartSign, _ fence: Fence, lost: DisconnectReason, timerStopped: Bool = false
    ) -> [FlowAction] {
        let timer = timerStopped ? [] : disarm()
        let note = Self.report(.notRestarted(sign))
        if let error = countRetry(.linkLost(lost)) { return timer + [note] + fail(error, timerStopped: true) }
        stats.reconnects += 1
        switch recovery.lateCount(lost) {
        case let .failure(error): return timer + [note] + fail(error, timerStopped: true)
        case let .success(actions): return timer + [note] + actions + self.fence(sends: 1, fence)
        }
    }
}
