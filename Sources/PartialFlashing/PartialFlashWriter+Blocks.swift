import Diagnostics
import PartialFlashingFrames
import Transport

/// Sending blocks and reacting to the board's answers.
extension PartialFlashWriter {
    /// The 4 FLASH_DATA packets of `block`, numbered from `first`.
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

    /// Sends the block at `progress.index` numbered from `first`; `outOfOrderSeen`: the block had
    /// one `01 AA` since the board's numbering was last reset (`InFlight`).
    mutating func sendBlock(from first: UInt8, outOfOrderSeen: Bool) -> [FlowAction] {
        let index = progress.index
        let block = plan.blocks[index]
        if index == plan.sealIndex { progress.sealSent = true }
        state = .awaitingAck(InFlight(group: first, outOfOrderSeen: outOfOrderSeen))
        var actions: [FlowAction] = [
            Self.report(.sendingBlock(block: index, of: plan.blockCount, address: block.address, firstPacket: first))
        ]
        for bytes in packets(of: block, from: first) {
            actions.append(Self.said(.sent(bytes)))
            actions.append(.write(characteristic, bytes, .command))
        }
        actions.append(arm(PartialFlashTimer.block, settings.blockTimeout))
        return actions
    }

    /// Sends the packets of the transmission in flight again with the same numbers, after a
    /// block timeout: the board takes the ones it lacks and ignores those it has (CODAL and DAL
    /// `MicroBitPartialFlashingService::flashData`: a packet up to 7 numbers behind the one
    /// expected is dropped without an answer). The block stays in flight, one fill-in more.
    mutating func fillIn(_ flight: InFlight) -> [FlowAction] {
        var flight = flight
        flight.fillIns += 1
        flight.writeFailure = nil
        state = .awaitingAck(flight)
        var actions: [FlowAction] = []
        for bytes in packets(of: plan.blocks[progress.index], from: flight.group) {
            actions.append(Self.report(.sent(bytes, .again)))
            actions.append(.write(characteristic, bytes, .command))
        }
        actions.append(arm(PartialFlashTimer.block, settings.blockTimeout))
        return actions
    }

    /// Sends REGION_INFO 2 to reset the board's packet counters: the barrier. Call it only when
    /// no flash event can be pending on the board (see `PartialFlashWriter`). `counted`: false
    /// for the planned barrier before the block that writes the program hash. `barrier`: what
    /// follows it.
    mutating func resync(attempt: Int, _ barrier: Barrier, counted: Bool = true) -> [FlowAction] {
        if attempt == 1, counted { stats.resyncs += 1 }
        state = .syncing(attempt: attempt, barrier)
        let bytes = PartialFlashingRequest.regionInfo(2).bytes
        return [
            Self.report(.sent(bytes, .resynchronise)),
            .write(characteristic, bytes, .command), arm(PartialFlashTimer.answer, settings.answerTimeout)
        ]
    }

    /// Sends END_OF_TRANSMISSION; `end` counts it.
    mutating func sendEndOfTransmission(_ end: End) -> [FlowAction] {
        state = .ending(end)
        let bytes = PartialFlashingRequest.endOfTransmission.bytes
        return [
            .report(.phase(.reset)), Self.report(.sent(bytes, .endOfTransmission)),
            .write(characteristic, bytes, .command), arm(PartialFlashTimer.reboot, settings.rebootTimeout)
        ]
    }

    // MARK: - Answers

    /// Takes a notification in order: a write answer is the answer of the one transmission
    /// that has not answered yet, whenever it arrives.
    mutating func received(_ bytes: [UInt8]) -> [FlowAction] {
        let trace = Self.said(.received(bytes))
        let notification: PartialFlashingNotification
        do {
            notification = try PartialFlashingNotification(bytes: bytes)
        } catch {
            switch state {
            case .awaitingAck, .syncing, .stepping, .fencing, .checkingRestart:
                let problem = (error as? FrameError) ?? .badValue("\(error)")
                return [trace] + fail(.malformedNotification(bytes: bytes, problem: problem))
            default:
                return [trace, Self.said(.ignoredNotPartialFlashing)]
            }
        }
        switch (notification, state) {
        case let (_, .checkingRestart(fence, lost)):
            return [trace] + answerWhileChecking(notification, fence, lost: lost)
        case let (_, .stepping(step)):
            return [trace] + answerWhileStepping(notification, step)
        case let (.writeSuccess, .awaitingAck(flight)):
            return [trace] + acknowledged(flight)
        case let (.writeFail, .awaitingAck(flight)):
            return [trace] + outOfOrder(flight)
        case (.writeSuccess, .fencing), (.writeFail, .fencing), (.writeSuccess, .syncing), (.writeFail, .syncing):
            return [trace] + answerWhileRecovering(notification)
        case let (.regionInfo(region), .syncing(_, barrier)) where region.id == 2:
            // The barrier: the board's counters are 0 and every earlier answer has arrived. After a
            // reconnection, a step moves them on before the first block (`step(_:)`).
            let timer = disarm()
            let next = rewindIfRecovering(barrier)
            guard barrier.stepsFirst else { return [trace] + timer + next + sendBlock(from: 0, outOfOrderSeen: false) }
            return [trace] + timer + next + step(Step(expected: 0, outOfOrderSeen: false))
        case (.writeSuccess, .ending(var end)), (.writeFail, .ending(var end)):
            // Every transmission yields at most one answer and the last one was consumed, so this
            // one is extra: an earlier answer was duplicated and taken for a later block's.
            end.unaccountedAnswers += 1
            state = .ending(end)
            return [trace, Self.report(.answerAfterLastBlock)]
        default:
            return [trace, Self.said(.ignoredStray)]
        }
    }

    /// After the fence's restart: the block in doubt may have been burnt (its answer lost; the
    /// restart came only after its flash event ended, so it was burnt whole or not at all), so
    /// sending it again is one more write of its words without an erase. That is allowed while
    /// no word goes past `BlockPlan.writesPerWordLimit` (nWRITE), counting the writes still to
    /// come: END_OF_TRANSMISSION burns the last block once more, and the hash block overlaps
    /// the blocks before it. Past that, the write goes on from the block that opens the page,
    /// which erases it (`rewindTarget(for:)`). A page opener sent again erases its page anyway.
    /// Only after the barrier that follows a fence for a block in doubt (`Barrier.afterRestart`).
    mutating func rewindIfRecovering(_ barrier: Barrier) -> [FlowAction] {
        guard barrier == .afterRestart(rewind: true) else { return [] }
        progress.burnsInDoubt &+= 1
        let index = progress.index
        let block = plan.blocks[index]
        let writes = Int(progress.burnsInDoubt) + 1 + writesStillToCome(index)
        if !progress.sealSent, block.opensPage || writes <= BlockPlan.writesPerWordLimit { return [] }
        let (resume, why) = rewindTarget(for: index)
        progress.burnsInDoubt = 0
        guard resume != index else { return [] }
        let note = Self.report(
            .rewinding(block: resume, address: plan.blocks[resume].address, why, inDoubt: index, writes: writes))
        progress.index = resume
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

    /// The block in flight was written: on to the next one (numbered on from `flight`'s), the
    /// barrier before the hash block, or END_OF_TRANSMISSION.
    mutating func acknowledged(_ flight: InFlight) -> [FlowAction] {
        let timer = disarm()
        if progress.index == 0 { progress.sealSent = false }
        progress.burnsInDoubt = 0
        progress.index += 1
        progress.furthest = max(progress.furthest, progress.index)
        progress.blockRetries = 0
        progress.lastProblem = nil
        let done = progress.furthest - range.lowerBound
        let report = [FlowAction.report(.progress(done: done, total: range.count, unit: .blocks))] + checkpoint()
        if progress.index == range.upperBound { return timer + report + sendEndOfTransmission(End(sends: 1)) }
        if progress.index == plan.sealIndex {
            // Every other block is acknowledged and its answer consumed, so no flash event is
            // pending and no answer is due: an answer before the barrier's is one too many (a
            // duplicate taken for a later block's answer), and it shows before the program hash
            // is written, so a board whose program may be incomplete never reports the new hash.
            return timer + report + [Self.report(.barrierBeforeHash)]
                + resync(attempt: 1, .opening, counted: false)
        }
        return timer + report + sendBlockOrStep(from: flight.group &+ 4, outOfOrderSeen: false)
    }

    /// The board dropped the block in flight (`01 AA`): it goes again numbered on, or through
    /// the fence when it was dropped before.
    mutating func outOfOrder(_ flight: InFlight) -> [FlowAction] {
        let timer = disarm()
        if let error = countRetry(.outOfOrder) { return timer + fail(error, timerStopped: true) }
        let index = progress.index
        let address = plan.blocks[index].address
        if flight.outOfOrderSeen {
            // Two lossy transmissions in a row, or numbering that is off. From a synchronised
            // board each `01 AA` answers its own transmission and nothing is pending; but a board
            // whose numbering is off (an answer was duplicated and taken for a later block's)
            // answers one transmission with two `01 AA`s, and then the resend may be complete on
            // the board with its flash event pending. So the same recovery as after a timeout, the
            // fence: the resend may still answer.
            return timer + [Self.report(.outOfOrderAgain(block: index, address: address))]
                + fence(sends: 1, Fence(group: flight.group, answerDue: true, rewind: true))
        }
        let next = flight.group &+ 4
        let first: UInt8 = next == 252 ? 0 : next
        return timer + [Self.report(.outOfOrder(block: index, address: address, firstPacket: first))]
            + sendBlockOrStep(from: next, outOfOrderSeen: true)
    }

    // MARK: - Bookkeeping

    /// Counts one retry of the block in flight; returns the error when a limit is exceeded.
    /// `ofBlock` false counts it against the run's limit only (a fill-in: bounded per
    /// transmission by `PartialFlashSettings.fillIns`).
    mutating func countRetry(_ problem: WriteProblem, ofBlock: Bool = true) -> PartialFlashError? {
        progress.lastProblem = problem
        if ofBlock { progress.blockRetries += 1 }
        stats.retries += 1
        if progress.blockRetries > settings.blockRetryLimit { return gaveUp(.block(limit: settings.blockRetryLimit)) }
        if stats.retries > settings.runRetryLimit { return gaveUp(.run(limit: settings.runRetryLimit)) }
        return nil
    }

    func gaveUp(_ budget: RetryBudget) -> PartialFlashError {
        let i = min(progress.index, plan.blockCount - 1)
        let address = plan.blocks.indices.contains(i) ? plan.blocks[i].address : 0
        return .gaveUp(
            block: i, address: address, retries: progress.blockRetries, budget: budget,
            lastProblem: progress.lastProblem)
    }

    /// Starts `timer`, the one the state just entered names (`State.timer`).
    func arm(_ timer: TimerID, _ duration: Duration) -> FlowAction {
        .startTimer(timer, duration)
    }

    /// Cancels the timer of the state being left; call it before the state changes.
    func disarm() -> [FlowAction] {
        state.timer.map { [.cancelTimer($0)] } ?? []
    }

    mutating func settle(_ result: Result<[FlowAction], PartialFlashError>) -> [FlowAction] {
        switch result {
        case let .success(actions): return actions
        case let .failure(error): return fail(error)
        }
    }

    /// Ends the write with `error`. `timerStopped`: the state's timer fired or was cancelled
    /// already, so there is none to cancel.
    mutating func fail(_ error: PartialFlashError, timerStopped: Bool = false) -> [FlowAction] {
        outcome = .failure(error)
        let wasRunning = !state.isIdle
        let timer = timerStopped ? [] : disarm()
        state = .finished
        return timer + (wasRunning ? [.cancelTimer(PartialFlashTimer.deadline)] : []) + [.finish]
    }
}
