import Diagnostics
import PartialFlashingFrames
import Transport

/// Timeouts, link losses and the reboot at the end.
extension PartialFlashWriter {
    /// The state's timer fired (it runs no longer: a failure cancels none).
    mutating func timerFired() -> [FlowAction] {
        switch state {
        case let .awaitingAck(flight):
            // A write the driver could not hand to the link explains the silence better.
            var problem = WriteProblem.noAcknowledgement(settings.blockTimeout)
            if let error = flight.writeFailure { problem = .writeFailed(error) }
            let index = progress.index
            let group = flight.group
            let address = plan.blocks[index].address
            if flight.fillIns < settings.fillIns {
                // A lost packet, a lost block or a board still erasing: the same packets again
                // complete the block on the board or are ignored by it (see `PartialFlashWriter`).
                if let error = countRetry(problem, ofBlock: false) { return fail(error, timerStopped: true) }
                return [Self.report(.fillingIn(block: index, address: address, problem, firstPacket: group))]
                    + fillIn(flight)
            }
            if let error = countRetry(problem) { return fail(error, timerStopped: true) }
            // A lost 4th packet, a lost block, a lost `01 FF` or `01 AA`, or an answer still on its
            // way: the same recovery for all, the fence (see `PartialFlashWriter`).
            return [Self.report(.fencing(block: index, address: address, problem))]
                + fence(sends: 1, Fence(group: group, answerDue: true, rewind: true))
        case let .fencing(sends, fence):
            guard sends < 2 else {
                // FF 00 waits behind a flash operation that never ends: the board is hung. The
                // session resets it with FF 01 before anything else (`BoardReset`).
                return fail(
                    .rebootNotObserved(
                        after: "the fence (FF 00) after block \(progress.index + 1); its flash work may hang",
                        waited: settings.rebootTimeout), timerStopped: true)
            }
            // The write command may have been lost; a second FF 00 behind the first changes nothing.
            return [Self.report(.fenceAgain)]
                + self.fence(sends: sends + 1, fence)
        case .stepping:
            return stepTimedOut()
        case let .checkingRestart(fence, lost):
            // Neither `01 AA` nor STATUS's answer: nothing shows a restart, so the loss counts.
            return notRestarted(.noAnswer(waited: settings.answerTimeout), fence, lost: lost, timerStopped: true)
        case let .syncing(attempt, barrier):
            guard attempt < settings.requestAttempts else {
                progress.lastProblem = .noResyncAnswer(settings.answerTimeout)
                return fail(gaveUp(.resyncAttempts(settings.requestAttempts)), timerStopped: true)
            }
            if let error = countRetry(.noResyncAnswer(settings.answerTimeout)) {
                return fail(error, timerStopped: true)
            }
            return [Self.said(.noAnswerToRegionInfo(2))]
                + resync(attempt: attempt + 1, barrier)
        case let .ending(end):
            guard end.sends < 2 else {
                return fail(
                    .rebootNotObserved(after: "END_OF_TRANSMISSION (02)", waited: settings.rebootTimeout),
                    timerStopped: true)
            }
            // Harmless to repeat: the board burns its buffer (the last block) at the same address again.
            var again = end
            again.sends += 1
            return [Self.report(.endAgain)]
                + sendEndOfTransmission(again)
        case .idle, .reconnecting, .finished:
            return []
        }
    }

    /// The fence: `FF 00`. The board raises it as an event behind every flash event already
    /// raised (CODAL and DAL `MicroBitPartialFlashingService::onDataWritten`, `MICROBIT_RESET`;
    /// the message bus runs the listener's events one after another, codal-core `MessageBus`
    /// `MESSAGE_BUS_LISTENER_QUEUE_IF_BUSY`), and restarts into pairing mode only once they ran
    /// (`partialFlashingEvent` → `MicroBitBLEManager::restartInBLEMode`). The link drops; the
    /// writer connects again and goes on from the block that opens the page in progress.
    /// `fence`: the block in doubt and what is due of it.
    mutating func fence(sends: Int, _ fence: Fence) -> [FlowAction] {
        state = .fencing(sends: sends, fence)
        let bytes = PartialFlashingRequest.reset(.pairing).bytes
        return [
            Self.report(.sent(bytes, .fence)),
            .write(characteristic, bytes, .command), arm(PartialFlashTimer.reboot, settings.rebootTimeout)
        ]
    }

    /// A write answer while waiting for the fence's restart, or before the barrier's answer. The
    /// first one after a block timeout is that transmission's one answer, late; the page is
    /// written again from its opener all the same (see `PartialFlashWriter`). Any other is one
    /// answer too many.
    mutating func answerWhileRecovering(_ answer: PartialFlashingNotification) -> [FlowAction] {
        switch state {
        case var .fencing(sends, fence) where fence.answerDue:
            fence.answerDue = false
            state = .fencing(sends: sends, fence)
        case let .syncing(attempt, .afterStep(answerDue: true)):
            state = .syncing(attempt: attempt, .afterStep(answerDue: false))
        default:
            // A barrier or a fence starts only after the block's answer was consumed or could no
            // longer come (a new connection, every block but the hash block acknowledged, or the
            // late answer already in), so an answer now is one too many: an earlier answer was
            // duplicated and taken for a later block's, which may therefore never have been written.
            // (Answers too many are counted from END_OF_TRANSMISSION on, so this one is the first.)
            return fail(.unaccountedAnswers(count: 1))
        }
        return [Self.report(.lateAnswer(block: progress.index, written: answer == .writeSuccess))]
    }

    mutating func deadlinePassed() -> [FlowAction] {
        switch state {
        case .idle, .finished: return []
        default: return fail(gaveUp(.deadline(settings.deadline(blocks: plan.blockCount))))
        }
    }

    mutating func linkLost(_ reason: DisconnectReason) -> [FlowAction] {
        switch state {
        case let .fencing(_, fence):
            // The board restarts as FF 00 asks, after every flash event it had queued; or the link
            // dropped before that, and FF 00 may have been lost with it. Nothing in the loss tells
            // them apart: the next connection does (`checkRestart(_:lost:)`).
            let timer = disarm()
            state = .reconnecting(.afterFence(fence, lost: reason))
            return timer + [Self.report(.droppedAfterFence(reason))] + recovery.expectedLoss()
        case let .checkingRestart(fence, lost):
            // A drop during the check: it counts, and the loss in doubt is checked on the next
            // connection.
            let timer = disarm()
            if let error = countRetry(.linkLost(reason)) { return timer + fail(error, timerStopped: true) }
            state = .reconnecting(.afterFence(fence, lost: lost))
            return timer + settle(recovery.unexpectedLoss(reason))
        case .awaitingAck, .syncing, .stepping:
            let timer = disarm()
            // A block in flight may have a flash event pending on a board that did not restart:
            // its answer would come on the next connection. The fence goes first there.
            var inFlight: UInt8?
            if case let .awaitingAck(flight) = state { inFlight = flight.group }
            if let error = countRetry(.linkLost(reason)) { return timer + fail(error, timerStopped: true) }
            state = .reconnecting(.afterLoss(inFlight: inFlight))
            return timer + settle(recovery.unexpectedLoss(reason))
        case let .ending(end):
            // The board restarts as END_OF_TRANSMISSION asks (or the link dropped before it got
            // there: `ProgramCheck` finds out which when it reads the board back).
            let timer = disarm()
            if end.unaccountedAnswers > 0 {
                return timer + fail(.unaccountedAnswers(count: end.unaccountedAnswers), timerStopped: true)
            }
            outcome = .success(stats)
            state = .finished
            return timer + [
                Self.report(.droppedAfterEnd(reason)),
                .cancelTimer(PartialFlashTimer.deadline), .finish
            ]
        case .idle, .reconnecting, .finished:
            return []
        }
    }

    /// Connected again after a loss; the first barrier on this connection is followed by a step
    /// (`Barrier`).
    mutating func connected(_ info: ConnectionInfo, _ reconnection: Reconnection) -> [FlowAction] {
        recovery.connected()
        guard case let .afterLoss(inFlight) = reconnection else {
            // After the loss that followed FF 00: first whether it was the restart.
            guard case let .afterFence(fence, lost) = reconnection else { return [] }
            return [Self.report(.connectedAfterFence), .subscribe(characteristic)]
                + checkRestart(fence, lost: lost)
        }
        stats.reconnects += 1
        // Resume from the first block of the page that holds the first unacknowledged block,
        // not from that block itself (docs/protocols/partial-flashing.md §3.4):
        // * the link may have dropped because the board reset, possibly in the middle of
        //   erasing that page or burning that block; burning the same data again over a
        //   half-written word cannot set bits back to 1, only an erase can;
        // * a board erases a page only when the block at the page start arrives, so
        //   resending the page's first block erases it again, and every later block of the
        //   page is then resent in order after it. Pages before it stay as acknowledged,
        //   and no page is erased after any of its other blocks was written in this pass.
        // The same reasoning covers the bare resend of the block in flight: without a reset,
        // burning identical data over identical data changes nothing. Once the program hash may
        // be written, `rewindTarget` goes back to the first block instead (see there).
        let index = progress.index
        let (resume, why) = rewindTarget(for: index)
        let note = Self.report(
            .reconnectedResuming(block: resume, address: plan.blocks[resume].address, why, inDoubt: index))
        progress.index = resume
        progress.burnsInDoubt = 0
        guard let group = inFlight else {
            return [note, .subscribe(characteristic)] + resync(attempt: 1, .afterReconnection)
        }
        // The block in flight when the link dropped may still answer, on this connection.
        return [
            note, .subscribe(characteristic),
            Self.report(.fenceFirst)
        ] + fence(sends: 1, Fence(group: group, answerDue: true, rewind: false))
    }
}

extension PartialFlashWriter {
    /// Where the writer goes back to when the page holding block `i` must be written again, and
    /// why. Normally the block that opens that page. Once the block that
    /// writes the program hash was sent, the board may already report the new program: the hash
    /// block alone may be sent again (identical bytes over identical bytes), but any other page
    /// is rewritten only after the hash's page, so the write goes back to the first block,
    /// whose page holds the hash. An interrupted write then never leaves a board that reports
    /// the new program over a page that was erased again.
    ///
    /// Not even the hash block alone is sent again: its words were written by the blocks it
    /// overlaps and by itself, so a third write would exceed what the chip allows between
    /// erases (`BlockPlan.sealed`, nWRITE); only erasing the hash's page again, from the first
    /// block, makes it writable.
    func rewindTarget(for i: Int) -> (index: Int, why: PartialFlashRewind) {
        if progress.sealSent, plan.sealIndex != nil { return (0, .wholeProgram) }
        return (plan.pageOpenerIndex(of: i), .pageOpener)
    }
}
