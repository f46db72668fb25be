import FirmwareImage
import McuMgr
import NordicDFU
import PartialFlashing
import PartialFlashingFrames
import SMP
import Transport

/// What follows partial flashing: an up-to-date or flashed board, or a full update when it
/// gives up; and the comparison of paths at the pause after its decision.
extension SessionFlow {
    mutating func partialFinished(
        _ result: Result<PartialFlashResult, any Error>, flow: PartialFlashFlow,
        now: Duration
    ) -> [FlowAction] {
        switch result {
        case let .success(.upToDate(verification)):
            var o = SessionOutcome(
                path: .upToDate, reason: upToDateReason(flow.confirmation), fallback: false)
            o.readBack = verification
            o.confirmation = flow.confirmation
            return succeed(o)
        case let .success(.flashed(stats)):
            partialStats = stats
            let reason =
                flow.rewroteIncompleteProgram
                ? FlashReason.flashIncomplete(plan.program, stats: stats)
                : .runtimeMatches(plan.program, stats: stats)
            return succeed(SessionOutcome(path: .partial, reason: reason, fallback: false, partial: stats))
        case let .success(.fullRequired(why)):
            let reason = FlashReason(why)
            if options.mode == .partial { return fail(FlashError.partialImpossible(why.description)) }
            return goFull(reason, fallback: false, now: now)
        case let .failure(error):
            guard options.mode == .auto, fullUpdateCanFollow(error) else { return fail(error) }
            let reason = FlashReason.partialFailed(error)
            guard flow.sentBlocks else { return [reason.decision] + goFull(reason, fallback: true, now: now) }
            return [reason.decision] + resetBeforeFallback(reason, now: now)
        }
    }

    /// The up-to-date reason, saying how the board was confirmed and what that cost.
    func upToDateReason(_ confirmation: UpToDateConfirmation? = nil) -> FlashReason {
        let hash = plan.program?.programHash.hexString
        var message = "the board already runs this program (program hash \(hash ?? "?"))"
        switch confirmation {
        case let .finishedHere(at)?:
            message += "; this computer finished it on this board (\(at)): left running, untouched, nothing sent"
        case let .restarted(cost)?:
            message +=
                "; confirmed by a restart into its program (FF 01) and a read-back, which took "
                + Self.tenthsText(cost)
        case nil:
            break
        }
        return FlashReason(code: "up-to-date", message: message, details: FlashReasonDetails(programHash: hash))
    }

    /// The partial flow stopped after its decision and plan: compare the possible paths, then
    /// write, go full, or (dry run) finish with the plan.
    mutating func decideAtPause(_ child: ChildFlow<PartialFlashFlow>, now: Duration) -> [FlowAction] {
        var child = child
        var note: [FlowAction] = []
        if let blocks = child.machine.plan, child.machine.decision == .partial {
            region = plan.program?.region
            let switches = child.machine.boardMap?.mode == .application && options.partial.switchToPairingMode
            decision = SessionDecision.decide(
                partial: PartialEstimator(
                    plan: blocks, verifies: options.partial.verifyAfterFlash,
                    switchesToPairingMode: switches),
                full: fullEstimators(), excluded: excludedFullPaths, options: options,
                family: plan.family, connection: connection, meter: meter, now: now)
            note = decision.map { [Self.report(.estimated($0))] } ?? []
            if let d = decision, d.chosen != .partial {
                let reason = FlashReason(
                    code: "full-is-faster", message: "a full update is estimated faster: \(d.summary)")
                return note + [reason.decision] + goFull(reason, fallback: false, now: now)
            }
            if options.dryRun {
                return note
                    + finishDryRun(path: .partial, reason: SessionDecision.partialReason(plan.program, blocks: blocks))
            }
        } else if options.dryRun {
            return finishDryRun(path: .upToDate, reason: upToDateReason())
        }
        let (childActions, result) = child.perform { $0.resume(now: now) }
        stage = .partial(child)
        let actions = note + Self.withoutDonePhase(childActions)
        guard let result else { return actions }
        return actions + partialFinished(result, flow: child.machine, now: now)
    }
}
