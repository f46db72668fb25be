import FirmwareImage
import McuMgr
import NordicDFU
import PartialFlashing
import PartialFlashingFrames
import SMP
import Transport

/// The full update: the decision between McuMgr and Nordic DFU, and its start.
extension SessionFlow {
    /// Partial-flashing errors after which a full update can still save the board.
    func fullUpdateCanFollow(_ error: any Error) -> Bool {
        guard (hasMcuMgr && plan.fullImage != nil && mcuMgrImageProblem == nil) || hasNordicDFU else { return false }
        return error is PartialFlashError
    }

    mutating func goFull(_ reason: FlashReason, fallback: Bool, now: Duration) -> [FlowAction] {
        if decision == nil {
            decision = SessionDecision.decide(
                partial: nil, full: fullEstimators(), excluded: excludedFullPaths, options: options,
                family: plan.family, connection: connection, meter: meter, now: now)
        }
        let path: FullUpdatePath
        switch chooseFullPath(reason) {
        case let .failure(error): return fail(error)
        case let .success(chosen): path = chosen
        }
        if path == .mcumgr {
            guard plan.fullImage != nil else {
                return fail(FlashError.noFullImage(reason: reason, names: options.optionNames))
            }
            guard hasMcuMgr else { return fail(FlashError.noFullPath(reason: reason)) }
        }
        // A dry run stops here, whichever full path it would take.
        if options.dryRun { return finishDryRun(path: .full, reason: reason) }
        if path == .nordic { return goNordic(reason, fallback: fallback, now: now) }
        // The decision before it gave the reason; this says only which full path follows.
        let note = Self.report(.fullUpdateOverMcuMgr)
        guard linkUp, let info = connection else {
            stage = .reconnecting(reason: reason, fallback: fallback, attempts: 1)
            return [note, .connect(after: options.mcumgr.reconnectDelay)]
        }
        return [note] + startFull(info, reason: reason, fallback: fallback, now: now)
    }

    mutating func startFull(_ info: ConnectionInfo, reason: FlashReason, fallback: Bool, now: Duration)
        -> [FlowAction]
    {
        guard let image = plan.fullImage else {
            return fail(FlashError.noFullImage(reason: reason, names: options.optionNames))
        }
        var upgrade = options.mcumgr
        upgrade.slotSize = mcuMgrSlot
        var child = ChildFlow(McuMgrUpgrade(image: image, options: upgrade), scope: "mcumgr.")
        let (actions, result) = child.handle(.start(info), now: now)
        stage = .full(child, reason: reason, fallback: fallback)
        return Self.withoutDonePhase(actions)
            + (result.map { mcuMgrFinished($0, reason: reason, fallback: fallback, now: now) } ?? [])
    }

    /// The McuMgr upgrade ended: read the board back, or fail with its error.
    mutating func mcuMgrFinished(
        _ result: Result<McuMgrResult, any Error>, reason: FlashReason, fallback: Bool, now: Duration
    ) -> [FlowAction] {
        switch result {
        case let .success(stats):
            return fullUpdateDone(
                SessionOutcome(path: .full, reason: reason, fallback: fallback, partial: partialStats, full: stats),
                now: now)
        case let .failure(error):
            return fail(FlashError.fullUpdateFailed(reason: reason, error: error))
        }
    }

    /// The full-update paths possible on this board, as estimators: McuMgr when the board offers
    /// SMP, Nordic DFU when it offers a Nordic DFU service (SessionFlow+Nordic.swift); `--full-path`
    /// leaves only the one it names.
    func fullEstimators() -> [any PathEstimator] {
        var estimators: [any PathEstimator] = []
        let readsBack = plan.program != nil && options.partial.verifyAfterFlash
        if hasMcuMgr, options.fullPath != .nordic, let image = plan.fullImage, mcuMgrImageProblem == nil {
            var m = McuMgrEstimator(imageBytes: image.bytes.count, options: options.mcumgr)
            m.readsBack = readsBack
            estimators.append(m)
        }
        if options.fullPath != .mcumgr, var nordic = nordicEstimator() {
            nordic.readsBack = readsBack
            estimators.append(nordic)
        }
        return estimators
    }
}
