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
/// For `g` of 0 and 252, `g-1` is 1 and 5 behind 0, so a restarted board drops it silently
/// too: there the check cannot tell, and the loss is taken for the restart, as before the check.
extension PartialFlashWriter {
    /// The packet number that tells a restarted board from one that still expects the block in
    /// doubt, or nil when no single packet can (`group` 0 or 252).
    var restartProbeNumber: UInt8? {
        let number = group &- 1
        let behindZero = 0 &- number
        return number == 0 || (1...7).contains(behindZero) ? nil : number
    }

    mutating func checkRestart() -> [FlowAction] {
        guard let number = restartProbeNumber else {
            lossInDoubt = nil
            lateAnswerPending = false
            return [
                .report(
                    .trace(
                        "packets numbered from \(group): a restarted board and one that was not cannot be "
                            + "told apart; the loss is taken for the restart"))
            ] + resync(attempt: 1)
        }
        state = .checkingRestart
        // Never taken by either board (see above): its bytes are those of the block's last packet.
        let data = Array(plan.blocks[index].data[48..<64])
        let probe = PartialFlashingRequest.flashData(offsetField: 0, packetNumber: number, data: data).bytes
        let status = PartialFlashingRequest.status.bytes
        return [
            .report(.trace("→ \(Hex.bytes(probe, separator: " ")) (did the board restart? 01 AA if it did)")),
            .write(characteristic, probe, .command),
            .report(.trace("→ \(Hex.bytes(status, separator: " ")) (its answer comes after any 01 AA)")),
            .write(characteristic, status, .command), arm(PartialFlashTimer.answer, settings.answerTimeout)
        ]
    }

    /// The answer to the check (or to the block in doubt, late).
    mutating func answerWhileChecking(_ answer: PartialFlashingNotification) -> [FlowAction] {
        switch answer {
        case .writeFail:
            let timer = disarm()
            lossInDoubt = nil
            lateAnswerPending = false
            return timer + [.report(.trace("the board expects packet 0: it restarted, as FF 00 asked"))]
                + resync(attempt: 1)
        case .writeSuccess:
            // A flash event still pending answered on the new connection: no restart came.
            guard lateAnswerPending else { return fail(.unaccountedAnswers(count: unaccountedAnswers + 1)) }
            lateAnswerPending = false
            return notRestarted("the block's late answer came on the new connection")
        case .status:
            return notRestarted("STATUS answered with no 01 AA before it")
        case .regionInfo:
            return [.report(.trace("ignored: stray notification"))]
        }
    }

    /// The loss that followed `FF 00` was not the restart: it counts as a drop, and the board
    /// is fenced again on this connection.
    mutating func notRestarted(_ why: String) -> [FlowAction] {
        let timer = disarm()
        let reason = lossInDoubt ?? .supervisionTimeout
        lossInDoubt = nil
        let note = FlowAction.report(.trace("the board did not restart: \(why)"))
        if let error = countRetry(.linkLost(reason)) { return timer + [note] + fail(error) }
        stats.reconnects += 1
        switch recovery.lateCount(reason) {
        case let .failure(error): return timer + [note] + fail(error)
        case let .success(actions): return timer + [note] + actions + fence(sends: 1)
        }
    }
}
