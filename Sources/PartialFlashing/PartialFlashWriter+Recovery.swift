import Diagnostics
import PartialFlashingFrames
import Transport

/// Timeouts, link losses and the reboot at the end.
extension PartialFlashWriter {
    mutating func timerFired() -> [FlowAction] {
        switch state {
        case .awaitingAck:
            // A write the driver could not hand to the link explains the silence better.
            var problem = WriteProblem.noAcknowledgement(settings.blockTimeout)
            if let error = writeFailure { problem = .writeFailed(error) }
            let address = Hex.address(plan.blocks[index].address)
            if fillIns < settings.fillIns {
                // A lost packet, a lost block or a board still erasing: the same packets again
                // complete the block on the board or are ignored by it (see `PartialFlashWriter`).
                if let error = countRetry(problem, ofBlock: false) { return fail(error) }
                fillIns += 1
                return [
                    .report(
                        .retry(
                            "block \(index + 1) at \(address): \(problem); sending its packets \(group)-\(group &+ 3) "
                                + "again (the board ignores those it has)"))
                ] + fillIn()
            }
            if let error = countRetry(problem) { return fail(error) }
            // A lost 4th packet, a lost block, a lost `01 FF` or `01 AA`, or an answer still on its
            // way: the same recovery for all, the fence (see `PartialFlashWriter`).
            lateAnswerPending = true
            rewindAfterBarrier = true
            return [
                .report(
                    .retry(
                        "block \(index + 1) at \(address): \(problem); restarting the board behind its "
                            + "pending work (FF 00) and going on from its page on a fresh connection"))
            ]
                + fence(sends: 1)
        case let .fencing(sends):
            guard sends < 2 else {
                // FF 00 waits behind a flash operation that never ends: the board is hung. The
                // session resets it with FF 01 before anything else (`BoardReset`).
                return fail(
                    .rebootNotObserved(
                        after: "the fence (FF 00) after block \(index + 1); its flash work may hang",
                        waited: settings.rebootTimeout))
            }
            // The write command may have been lost; a second FF 00 behind the first changes nothing.
            return [.report(.retry("the board did not restart after FF 00; sending it again"))]
                + fence(sends: sends + 1)
        case .stepping:
            return stepTimedOut()
        case .checkingRestart:
            // Neither `01 AA` nor STATUS's answer: nothing shows a restart, so the loss counts.
            return notRestarted("no answer to the check within \(settings.answerTimeout.shortText)")
        case let .syncing(attempt):
            guard attempt < settings.requestAttempts else {
                lastProblem = .noResyncAnswer(settings.answerTimeout)
                return fail(gaveUp(.resyncAttempts(settings.requestAttempts)))
            }
            if let error = countRetry(.noResyncAnswer(settings.answerTimeout)) { return fail(error) }
            return [.report(.retry("no answer to REGION_INFO 2; asking again"))] + resync(attempt: attempt + 1)
        case let .ending(sends):
            guard sends < 2 else {
                return fail(.rebootNotObserved(after: "END_OF_TRANSMISSION (02)", waited: settings.rebootTimeout))
            }
            // Harmless to repeat: the board burns its buffer (the last block) at the same address again.
            return [.report(.retry("the board did not restart after 02; sending it again"))]
                + sendEndOfTransmission(sends: sends + 1)
        default:
            return []
        }
    }

    /// The fence: `FF 00`. The board raises it as an event behind every flash event already
    /// raised (CODAL and DAL `MicroBitPartialFlashingService::onDataWritten`, `MICROBIT_RESET`;
    /// the message bus runs the listener's events one after another, codal-core `MessageBus`
    /// `MESSAGE_BUS_LISTENER_QUEUE_IF_BUSY`), and restarts into pairing mode only once they ran
    /// (`partialFlashingEvent` → `MicroBitBLEManager::restartInBLEMode`). The link drops; the
    /// writer connects again and goes on from the block that opens the page in progress.
    mutating func fence(sends: Int) -> [FlowAction] {
        state = .fencing(sends: sends)
        fenced = true
        let bytes = PartialFlashingRequest.reset(.pairing).bytes
        return [
            .report(.trace("→ \(Hex.bytes(bytes, separator: " ")) (restart once every pending flash event ran)")),
            .write(characteristic, bytes, .command), arm(PartialFlashTimer.reboot, settings.rebootTimeout)
        ]
    }

    /// A write answer while waiting for the fence's restart, or before the barrier's answer. The
    /// first one after a block timeout is that transmission's one answer, late; the page is
    /// written again from its opener all the same (see `PartialFlashWriter`). Any other is one
    /// answer too many.
    mutating func answerWhileRecovering(_ answer: PartialFlashingNotification) -> [FlowAction] {
        guard lateAnswerPending else {
            // A barrier or a fence starts only after the block's answer was consumed or could no
            // longer come (a new connection, every block but the hash block acknowledged, or the
            // late answer already in), so an answer now is one too many: an earlier answer was
            // duplicated and taken for a later block's, which may therefore never have been written.
            return fail(.unaccountedAnswers(count: unaccountedAnswers + 1))
        }
        lateAnswerPending = false
        let what = answer == .writeSuccess ? "written" : "dropped (01 AA)"
        return [
            .report(
                .trace(
                    "the late answer to block \(index + 1): \(what); its page is written again after "
                        + "the restart all the same"))
        ]
    }

    mutating func deadlinePassed() -> [FlowAction] {
        switch state {
        case .idle, .finished: return []
        default: return fail(gaveUp(.deadline(settings.deadline(blocks: plan.blockCount))))
        }
    }

    mutating func linkLost(_ reason: DisconnectReason) -> [FlowAction] {
        switch state {
        case .fencing:
            // The board restarts as FF 00 asks, after every flash event it had queued; or the link
            // dropped before that, and FF 00 may have been lost with it. Nothing in the loss tells
            // them apart: the next connection does (`checkRestart()`).
            let timer = disarm()
            lossInDoubt = reason
            state = .reconnecting
            return timer + [
                .report(
                    .trace("the link dropped after FF 00 (\(reason)): the restart, or a drop before it; checking"))
            ] + recovery.expectedLoss()
        case .checkingRestart:
            // A drop during the check: it counts, and the loss in doubt is checked on the next
            // connection (`fenced` stays set).
            let timer = disarm()
            if let error = countRetry(.linkLost(reason)) { return timer + fail(error) }
            state = .reconnecting
            fenced = true
            return timer + settle(recovery.unexpectedLoss(reason))
        case .awaitingAck, .syncing, .stepping:
            let timer = disarm()
            // A block in flight may have a flash event pending on a board that did not restart:
            // its answer would come on the next connection. The fence goes first there.
            fenceOnReconnect = fenceOnReconnect || state == .awaitingAck
            lateAnswerPending = false
            fenced = false
            if let error = countRetry(.linkLost(reason)) { return timer + fail(error) }
            state = .reconnecting
            return timer + settle(recovery.unexpectedLoss(reason))
        case .ending:
            // The board restarts as END_OF_TRANSMISSION asks (or the link dropped before it got
            // there: `ProgramCheck` finds out which when it reads the board back).
            let timer = disarm()
            if unaccountedAnswers > 0 { return timer + fail(.unaccountedAnswers(count: unaccountedAnswers)) }
            outcome = .success(stats)
            state = .finished
            return timer + [
                .report(.trace("the link dropped after END_OF_TRANSMISSION: \(reason)")),
                .cancelTimer(PartialFlashTimer.deadline), .finish
            ]
        default:
            return []
        }
    }

    mutating func connected(_ info: ConnectionInfo) -> [FlowAction] {
        recovery.connected()
        stepAfterBarrier = true
        guard !fenced else {
            // After the loss that followed FF 00: first whether it was the restart.
            fenced = false
            return [.report(.trace("connected again after FF 00")), .subscribe(characteristic)] + checkRestart()
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
        let (resume, why) = rewindTarget(for: index)
        let note = FlowAction.report(
            .trace(
                "connected again; resuming at block \(resume + 1) (\(Hex.address(plan.blocks[resume].address))): \(why), "
                    + "for block \(index + 1)"))
        index = resume
        burnsInDoubt = 0
        rewindAfterBarrier = false
        guard fenceOnReconnect else { return [note, .subscribe(characteristic)] + resync(attempt: 1) }
        // The block in flight when the link dropped may still answer, on this connection.
        fenceOnReconnect = false
        lateAnswerPending = true
        return [
            note, .subscribe(characteristic),
            .report(.trace("the block in flight may still be pending on the board: the fence first"))
        ] + fence(sends: 1)
    }
}

extension PartialFlashWriter {
    /// Where the writer goes back to when the page holding block `i` must be written again, and
    /// what it writes, in words. Normally the block that opens that page. Once the block that
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
    func rewindTarget(for i: Int) -> (index: Int, why: String) {
        if sealSent, plan.sealIndex != nil {
            return (0, "the whole program, as the program hash may be written already")
        }
        return (plan.pageOpenerIndex(of: i), "the first block of its page")
    }
}
