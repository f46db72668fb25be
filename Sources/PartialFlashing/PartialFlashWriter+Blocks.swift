import Diagnostics
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
            return PartialFlashingRequest.flashData(
                offsetField: offsets[k], packetNumber: first &+ UInt8(k),
                data: data
            ).bytes
        }
    }

    /// Sends the block at `index` numbered from `first`.
    mutating func sendBlock(from first: UInt8) -> [FlowAction] {
        let block = plan.blocks[index]
        group = first
        if index == plan.sealIndex { sealSent = true }
        writeFailure = nil
        lateAnswerPending = false
        fillIns = 0
        state = .awaitingAck
        var actions: [FlowAction] = [
            .report(
                .trace(
                    "block \(index + 1)/\(plan.blockCount) at \(Hex.address(block.address)), packets \(first)-\(first &+ 3)"
                ))
        ]
        for bytes in packets(of: block, from: first) {
            actions.append(.report(.trace("→ \(Hex.bytes(bytes, separator: " "))")))
            actions.append(.write(characteristic, bytes, .command))
        }
        actions.append(arm(PartialFlashTimer.block, settings.blockTimeout))
        return actions
    }

    /// Sends the packets of the transmission in flight again with the same numbers, after a
    /// block timeout: the board takes the ones it lacks and ignores those it has (CODAL and DAL
    /// `MicroBitPartialFlashingService::flashData`: a packet up to 7 numbers behind the one
    /// expected is dropped without an answer). Changes neither `group` nor the state.
    mutating func fillIn() -> [FlowAction] {
        writeFailure = nil
        var actions: [FlowAction] = []
        for bytes in packets(of: plan.blocks[index], from: group) {
            actions.append(.report(.trace("→ \(Hex.bytes(bytes, separator: " ")) (again)")))
            actions.append(.write(characteristic, bytes, .command))
        }
        actions.append(arm(PartialFlashTimer.block, settings.blockTimeout))
        return actions
    }

    /// Sends REGION_INFO 2 to reset the board's packet counters: the barrier. Call it only when
    /// no flash event can be pending on the board (see `PartialFlashWriter`). `counted`: false
    /// for the planned barrier before the block that writes the program hash.
    mutating func resync(attempt: Int, counted: Bool = true) -> [FlowAction] {
        if attempt == 1, counted { stats.resyncs += 1 }
        state = .syncing(attempt: attempt)
        outOfOrderSeen = false
        let bytes = PartialFlashingRequest.regionInfo(2).bytes
        return [
            .report(.trace("→ \(Hex.bytes(bytes, separator: " ")) (resynchronise packet numbers)")),
            .write(characteristic, bytes, .command), arm(PartialFlashTimer.answer, settings.answerTimeout)
        ]
    }

    mutating func sendEndOfTransmission(sends: Int) -> [FlowAction] {
        state = .ending(sends: sends)
        let bytes = PartialFlashingRequest.endOfTransmission.bytes
        return [
            .report(.phase(.reset)), .report(.trace("→ \(Hex.bytes(bytes, separator: " ")) (end of transmission)")),
            .write(characteristic, bytes, .command), arm(PartialFlashTimer.reboot, settings.rebootTimeout)
        ]
    }

    // MARK: - Answers

    /// Takes a notification in order: a write answer is the answer of the one transmission
    /// that has not answered yet, whenever it arrives.
    mutating func received(_ bytes: [UInt8]) -> [FlowAction] {
        let trace = FlowAction.report(.trace("← \(Hex.bytes(bytes, separator: " "))"))
        let notification: PartialFlashingNotification
        do {
            notification = try PartialFlashingNotification(bytes: bytes)
        } catch {
            switch state {
            case .awaitingAck, .syncing, .stepping, .fencing, .checkingRestart:
                let problem = (error as? FrameError) ?? .badValue("\(error)")
                return [trace] + fail(.malformedNotification(bytes: bytes, problem: problem))
            default:
                return [trace, .report(.trace("ignored: not a partial-flashing answer"))]
            }
        }
        switch (notification, state) {
        case (_, .checkingRestart):
            return [trace] + answerWhileChecking(notification)
        case (_, .stepping):
            return [trace] + answerWhileStepping(notification)
        case (.writeSuccess, .awaitingAck):
            return [trace] + acknowledged()
        case (.writeFail, .awaitingAck):
            return [trace] + outOfOrder()
        case (.writeSuccess, .fencing), (.writeFail, .fencing), (.writeSuccess, .syncing), (.writeFail, .syncing):
            return [trace] + answerWhileRecovering(notification)
        case let (.regionInfo(region), .syncing) where region.id == 2:
            // The barrier: the board's counters are 0 and every earlier answer has arrived. After a
            // reconnection, a step moves them on before the first block (`step(expecting:)`).
            let next = rewindIfRecovering()
            guard stepAfterBarrier else { return [trace] + disarm() + next + sendBlock(from: 0) }
            stepAfterBarrier = false
            return [trace] + disarm() + next + step(expecting: 0)
        case (.writeSuccess, .ending), (.writeFail, .ending):
            // Every transmission yields at most one answer and the last one was consumed, so this
            // one is extra: an earlier answer was duplicated and taken for a later block's.
            unaccountedAnswers += 1
            return [trace, .report(.trace("unexpected answer after the last block: a block may have been skipped"))]
        default:
            return [trace, .report(.trace("ignored: stray notification"))]
        }
    }

    /// After the fence's restart: the block in doubt may have been burnt (its answer lost; the
    /// restart came only after its flash event ended, so it was burnt whole or not at all), so
    /// sending it again is one more write of its words without an erase. That is allowed while
    /// no word goes past `BlockPlan.writesPerWordLimit` (nWRITE), counting the writes still to
    /// come: END_OF_TRANSMISSION burns the last block once more, and the hash block overlaps
    /// the blocks before it. Past that, the write goes on from the block that opens the page,
    /// which erases it (`rewindTarget(for:)`). A page opener sent again erases its page anyway.
    mutating func rewindIfRecovering() -> [FlowAction] {
        guard rewindAfterBarrier else { return [] }
        rewindAfterBarrier = false
        burnsInDoubt &+= 1
        let block = plan.blocks[index]
        let writes = Int(burnsInDoubt) + 1 + writesStillToCome(index)
        if !sealSent, block.opensPage || writes <= BlockPlan.writesPerWordLimit { return [] }
        let (resume, why) = rewindTarget(for: index)
        burnsInDoubt = 0
        guard resume != index else { return [] }
        let note = FlowAction.report(
            .trace(
                "resuming at block \(resume + 1) (\(Hex.address(plan.blocks[resume].address))): \(why), for block "
                    + "\(index + 1), whose words may be written \(writes) times otherwise"))
        index = resume
        return [note]
    }

    /// Writes of block `i`'s words the plan makes after its own: END_OF_TRANSMISSION's re-burn
    /// of the last block, and the hash block over the blocks it overlaps.
    func writesStillToCome(_ i: Int) -> Int {
        var count = i == range.upperBound - 1 ? 1 : 0
        if let seal = plan.sealIndex, i < seal {
            let a = plan.blocks[i].address
            let s = plan.blocks[seal].address
            if a < s + BlockPlan.blockSize && s < a + BlockPlan.blockSize { count += 1 }
        }
        return count
    }

    mutating func acknowledged() -> [FlowAction] {
        let timer = disarm()
        if index == 0 { sealSent = false }
        burnsInDoubt = 0
        index += 1
        progress = max(progress, index)
        blockRetries = 0
        outOfOrderSeen = false
        lastProblem = nil
        let report =
            [FlowAction.report(.progress(done: progress - range.lowerBound, total: range.count, unit: .blocks))]
            + checkpoint()
        if index == range.upperBound { return timer + report + sendEndOfTransmission(sends: 1) }
        if index == plan.sealIndex {
            // Every other block is acknowledged and its answer consumed, so no flash event is
            // pending and no answer is due: an answer before the barrier's is one too many (a
            // duplicate taken for a later block's answer), and it shows before the program hash
            // is written, so a board whose program may be incomplete never reports the new hash.
            return timer + report + [.report(.trace("every block but the program hash is written: a barrier first"))]
                + resync(attempt: 1, counted: false)
        }
        return timer + report + sendBlockOrStep(from: group &+ 4)
    }

    mutating func outOfOrder() -> [FlowAction] {
        let timer = disarm()
        if let error = countRetry(.outOfOrder) { return timer + fail(error) }
        let address = Hex.address(plan.blocks[index].address)
        if outOfOrderSeen {
            // Two lossy transmissions in a row, or numbering that is off. From a synchronised
            // board each `01 AA` answers its own transmission and nothing is pending; but a board
            // whose numbering is off (an answer was duplicated and taken for a later block's)
            // answers one transmission with two `01 AA`s, and then the resend may be complete on
            // the board with its flash event pending. So the same recovery as after a timeout, the
            // fence: the resend may still answer.
            lateAnswerPending = true
            rewindAfterBarrier = true
            return timer + [
                .report(
                    .retry(
                        "block \(index + 1) at \(address): out of order again; restarting the board behind "
                            + "its pending work (FF 00) and going on from its page on a fresh connection"))
            ]
                + fence(sends: 1)
        }
        outOfOrderSeen = true
        let next = group &+ 4
        let first: UInt8 = next == 252 ? 0 : next
        return timer + [
            .report(
                .retry(
                    "block \(index + 1) at \(address): packet out of order; resending as "
                        + "packets \(first)-\(first &+ 3)"))
        ]
            + sendBlockOrStep(from: next)
    }

    // MARK: - Bookkeeping

    /// Counts one retry of the block in flight; returns the error when a limit is exceeded.
    /// `ofBlock` false counts it against the run's limit only (a fill-in: bounded per
    /// transmission by `PartialFlashSettings.fillIns`).
    mutating func countRetry(_ problem: WriteProblem, ofBlock: Bool = true) -> PartialFlashError? {
        lastProblem = problem
        if ofBlock { blockRetries += 1 }
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
        outcome = .failure(error)
        let wasRunning = state != .idle
        state = .finished
        return disarm() + (wasRunning ? [.cancelTimer(PartialFlashTimer.deadline)] : []) + [.finish]
    }
}
