import PartialFlashingFrames
import Transport

/// Sending blocks and reacting to the board's answers.
extension PartialFlashWriter {
    /// The 4 FLASH_DATA packets of the block at `index`, numbered from `first`.
    func packets(of block: BlockPlan.Block, from first: UInt8) -> [[UInt8]] {
        let offsets: [UInt16] = [UInt16(block.address & 0xFFFF), UInt16(block.address >> 16), 0, 0]
        return (0..<4).map { k in
            let start = k * 16
            let data = Array(block.data[start..<(start + 16)])
            return PartialFlashingRequest.flashData(offsetField: offsets[k], packetNumber: first &+ UInt8(k),
                                                    data: data).bytes
        }
    }

    /// Sends the block at `index` numbered from `first`. `newGroup` is false only for the
    /// same-number resend after a timeout.
    mutating func sendBlock(from first: UInt8, newGroup: Bool) -> [FlowAction] {
        let block = plan.blocks[index]
        group = first
        sentAt = clock
        sentOnAnswer = lastAnswerAt == clock
        if index == plan.sealIndex { sealSent = true }
        writeFailure = nil
        if newGroup { resentSameNumbers = false }
        state = .awaitingAck
        var actions: [FlowAction] = [.report(.trace(
            "block \(index + 1)/\(plan.blockCount) at \(hex32(block.address)), packets \(first)-\(first &+ 3)"))]
        for bytes in packets(of: block, from: first) {
            actions.append(.report(.trace("→ \(bytes.spacedHex)")))
            actions.append(.write(characteristic, bytes, .command))
        }
        actions.append(arm(PartialFlashTimer.block, settings.blockTimeout))
        return startHold(for: block) + actions
    }

    /// Sends REGION_INFO 2 to reset the board's packet counters.
    mutating func resync(attempt: Int) -> [FlowAction] {
        if attempt == 1 { stats.resyncs += 1 }
        sentAt = clock
        let held = endHold()
        state = .syncing(attempt: attempt)
        outOfOrderSeen = false
        let bytes = PartialFlashingRequest.regionInfo(2).bytes
        return held + [.report(.trace("→ \(bytes.spacedHex) (resynchronise packet numbers)")),
                .write(characteristic, bytes, .command), arm(PartialFlashTimer.answer, settings.answerTimeout)]
    }

    mutating func sendEndOfTransmission(sends: Int) -> [FlowAction] {
        state = .ending(sends: sends)
        sentAt = clock
        let bytes = PartialFlashingRequest.endOfTransmission.bytes
        return [.report(.phase(.reset)), .report(.trace("→ \(bytes.spacedHex) (end of transmission)")),
                .write(characteristic, bytes, .command), arm(PartialFlashTimer.reboot, settings.rebootTimeout)]
    }

    mutating func sendVerification(attempt: Int) -> [FlowAction] {
        state = .verifying(attempt: attempt)
        let bytes = PartialFlashingRequest.regionInfo(2).bytes
        return [.report(.trace("→ \(bytes.spacedHex) (verify)")), .write(characteristic, bytes, .command),
                arm(PartialFlashTimer.answer, settings.answerTimeout)]
    }

    // MARK: - Answers

    /// True when an answer now cannot be the answer to the last write (see `PartialFlashSettings.minimumAnswerDelay`).
    /// That delay (1.5 intervals) holds for a block sent right after a connection event, at the
    /// instant an answer arrived; a block sent at any other moment (after a timeout or a held
    /// answer) may go out in the very next event, and its answer comes just over one interval later.
    var answerIsTooEarly: Bool {
        guard settings.rejectSimultaneousAnswers, let sentAt else { return false }
        var floor = settings.minimumAnswerDelay
        if !sentOnAnswer, let connectionInterval { floor = min(floor, connectionInterval) }
        return clock - sentAt <= floor
    }

    mutating func received(_ bytes: [UInt8]) -> [FlowAction] {
        lastAnswerAt = clock
        let trace = FlowAction.report(.trace("← \(bytes.spacedHex)"))
        let notification: PartialFlashingNotification
        do {
            notification = try PartialFlashingNotification(bytes: bytes)
        } catch {
            switch state {
            case .awaitingAck, .syncing, .verifying:
                let problem = (error as? FrameError) ?? .badValue("\(error)")
                return [trace] + fail(.malformedNotification(bytes: bytes, problem: problem))
            default:
                return [trace, .report(.trace("ignored: not a partial-flashing answer"))]
            }
        }
        switch (notification, state) {
        case (.writeSuccess, _) where answerIsTooEarly, (.writeFail, _) where answerIsTooEarly:
            guard clock != sentAt else {
                return [trace, .report(.trace("ignored: arrived at the instant of the last write (a duplicate)"))]
            }
            if state == .awaitingAck, index > 0 { doubtedBlock = index - 1 }
            return [trace, .report(.trace("ignored: arrived too soon after the last write to answer it (a late answer)"))]
        case (.writeSuccess, .awaitingAck) where holdingAnswers, (.writeFail, .awaitingAck) where holdingAnswers:
            return hold(notification, trace: trace)
        case (.writeSuccess, .awaitingAck):
            return [trace] + afterHold() + acknowledged()
        case (.writeFail, .awaitingAck):
            return [trace] + afterHold() + outOfOrder()
        case let (.regionInfo(region), .syncing) where region.id == 2:
            // The barrier: the board's counters are 0 and every earlier answer has arrived.
            return [trace] + disarm() + sendBlock(from: 0, newGroup: true)
        case let (.regionInfo(region), .verifying) where region.id == 2:
            return [trace] + disarm() + verify(region)
        case (.writeSuccess, .ending), (.writeFail, .ending):
            // Every transmission yields at most one answer and the last one was consumed, so this
            // one is extra: an earlier answer was duplicated and taken for a later block's.
            unaccountedAnswers += 1
            return [trace, .report(.trace("unexpected answer after the last block: a block may have been skipped"))]
        case (.writeSuccess, .syncing), (.writeFail, .syncing):
            // A resynchronisation starts only after the block's answers were consumed or lost (two
            // timeouts, or a second `01 AA`), so an answer now is one too many: an earlier answer was
            // duplicated and taken for a later block's, which may therefore never have been written.
            return [trace] + fail(.unaccountedAnswers(count: unaccountedAnswers + 1))
        default:
            return [trace, .report(.trace("ignored: stray notification"))]
        }
    }

    mutating func acknowledged() -> [FlowAction] {
        let timer = disarm()
        if let doubted = doubtedBlock, doubted < index {
            // The answer that let the block before pass may have been a late one (this block's
            // wait saw an answer too early to be its own): write that block's page again.
            doubtedBlock = nil
            stats.retries += 1
            if stats.retries > settings.runRetryLimit { return timer + fail(gaveUp(.run(limit: settings.runRetryLimit))) }
            let (target, why) = rewindTarget(for: doubted)
            index = target
            return timer + checkpoint() + [.report(.retry("an answer came too early to be block \(doubted + 2)'s, so block "
                                           + "\(doubted + 1) may not be written: writing again from block \(index + 1) at "
                                           + "\(hex32(plan.blocks[index].address)), \(why)"))]
                + sendBlock(from: group &+ 4, newGroup: true)
        }
        // The writer went back over the doubted block since: it is being written again anyway.
        if let doubted = doubtedBlock, doubted >= index { doubtedBlock = nil }
        if index == 0 { sealSent = false }
        index += 1
        progress = max(progress, index)
        blockRetries = 0
        outOfOrderSeen = false
        lastProblem = nil
        let report = [FlowAction.report(.progress(done: progress, total: plan.blockCount, unit: .blocks))] + checkpoint()
        if index == plan.blockCount { return timer + report + sendEndOfTransmission(sends: 1) }
        return timer + report + sendBlock(from: group &+ 4, newGroup: true)
    }

    mutating func outOfOrder() -> [FlowAction] {
        let timer = disarm()
        if let error = countRetry(.outOfOrder) { return timer + fail(error) }
        let address = hex32(plan.blocks[index].address)
        if outOfOrderSeen {
            return timer + [.report(.retry("block \(index + 1) at \(address): out of order again; resynchronising"))]
                + resync(attempt: 1)
        }
        outOfOrderSeen = true
        let next = group &+ 4
        return timer + [.report(.retry("block \(index + 1) at \(address): packet out of order; resending as "
                                       + "packets \(next)-\(next &+ 3)"))]
            + sendBlock(from: next, newGroup: true)
    }

    private mutating func verify(_ region: RegionInfo) -> [FlowAction] {
        guard region.start == expectedStart, region.hash == expectedHash else {
            return fail(.verificationFailed(expectedStart: expectedStart, expectedHash: expectedHash, reported: region))
        }
        if unaccountedAnswers > 0 { return fail(.unaccountedAnswers(count: unaccountedAnswers)) }
        stats.verified = true
        outcome = .success(stats)
        state = .finished
        return [.report(.trace("verified: program \(region.hash.hexString) at \(hex32(region.start))")),
                .cancelTimer(PartialFlashTimer.deadline), .finish]
    }

    // MARK: - Bookkeeping

    /// Counts one retry of the block in flight; returns the error when a limit is exceeded.
    mutating func countRetry(_ problem: WriteProblem) -> PartialFlashError? {
        lastProblem = problem
        blockRetries += 1
        stats.retries += 1
        if blockRetries > settings.blockRetryLimit { return gaveUp(.block(limit: settings.blockRetryLimit)) }
        if stats.retries > settings.runRetryLimit { return gaveUp(.run(limit: settings.runRetryLimit)) }
        return nil
    }

    func gaveUp(_ budget: RetryBudget) -> PartialFlashError {
        let i = min(index, plan.blockCount - 1)
        let address = plan.blocks.indices.contains(i) ? plan.blocks[i].address : 0
        return .gaveUp(block: i, address: address, retries: blockRetries, budget: budget, lastProblem: lastProblem)
    }

    mutating func arm(_ timer: TimerID, _ duration: Duration) -> FlowAction {
        runningTimer = timer
        return .startTimer(timer, duration)
    }

    mutating func disarm() -> [FlowAction] {
        guard let t = runningTimer else { return [] }
        runningTimer = nil
        return [.cancelTimer(t)]
    }

    mutating func settle(_ result: Result<[FlowAction], PartialFlashError>) -> [FlowAction] {
        switch result {
        case let .success(actions): return actions
        case let .failure(error): return fail(error)
        }
    }

    mutating func fail(_ error: PartialFlashError) -> [FlowAction] {
        let held = endHold()
        outcome = .failure(error)
        let wasRunning = state != .idle
        state = .finished
        return held + disarm() + (wasRunning ? [.cancelTimer(PartialFlashTimer.deadline)] : []) + [.finish]
    }
}
