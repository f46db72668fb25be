import Diagnostics
import FirmwareImage
import PartialFlashing
import Transport

/// A full update that could not rewrite the program region, repaired by partial flashing.
///
/// McuMgr sends nothing when the board already runs the file's image, active and confirmed in
/// slot 0 (`McuMgrResult.alreadyInstalled`): MCUboot swaps only an image placed in the secondary
/// slot, and a test of the active slot is refused (docs/protocols/mcumgr-smp.md §4.3, §6.3).
/// Slot 0's hash is the one its image trailer carries, computed when that image was installed
/// (Zephyr `img_mgmt_state_read` reads it, MCUboot does not recompute it for the state), so a
/// partial flash that changed the program region since then, and was cut short, leaves a board
/// whose slot reports the file's image over a program region that is not the file's: a blank
/// or foreign program header, or the file's hash with `flashIncomplete` set. No full update can
/// write that region then; partial flashing, which writes it directly, can. So when the read-back
/// after such an update finds the program not there, the session partial-flashes the file's
/// program region on the same board and reads it back as usual, once.
extension SessionFlow {
    /// Whether the read-back result `check` after the full update `outcome` calls for the repair:
    /// McuMgr sent nothing because the image was already active, the read-back found the program
    /// not there (a program that is not the file's, or an unfinished flash), and partial flashing
    /// may be used (auto mode, a board that offered it, a file with a MakeCode program).
    func repairsByPartialFlash(_ outcome: SessionOutcome, check: Result<ProgramCheckResult, any Error>) -> Bool {
        guard mayRepairByPartialFlash(outcome) else { return false }
        switch check {
        case .success(.flashIncomplete): return true
        case let .failure(error): return error is PartialFlashError
        case .success(.verified), .success(.unverified): return false
        }
    }

    /// Whether the full update `outcome` sent nothing because its image was already active, and
    /// the session may rewrite the program region by partial flashing should the read-back find
    /// it not the file's (auto mode, a board that offered it, a file with a MakeCode program, not
    /// done yet in this session).
    func mayRepairByPartialFlash(_ outcome: SessionOutcome) -> Bool {
        outcome.full?.alreadyInstalled == true && options.mode == .auto && offeredPartialFlashing
            && plan.program != nil && !repairedActiveImage
    }

    /// Starts the partial flash of the file's program region after `outcome`, whose read-back
    /// failed with `error` (the session's error should the repair be impossible).
    mutating func repairByPartialFlash(_ outcome: SessionOutcome, error: any Error, now: Duration) -> [FlowAction] {
        repairedActiveImage = true
        let note = Self.report(.activeImageRewrittenByPartialFlash(found: Self.found(error)))
        guard linkUp, let info = connection else {
            enter(.repairConnecting(outcome, error: error, attempts: 1))
            return [note, .connect(after: options.mcumgr.reconnectDelay)]
        }
        return [note] + startRepair(info, outcome: outcome, error: error, now: now)
    }

    mutating func repairConnecting(
        _ event: FlowEvent, outcome: SessionOutcome, error: any Error, attempts: Int, now: Duration
    ) -> [FlowAction] {
        switch event {
        case let .connected(info): return startRepair(info, outcome: outcome, error: error, now: now)
        case .connectFailed:
            guard attempts < options.mcumgr.reconnectAttempts else { return fail(error) }
            enter(.repairConnecting(outcome, error: error, attempts: attempts + 1))
            return [.connect(after: options.mcumgr.reconnectDelay)]
        default: return []
        }
    }

    private mutating func startRepair(
        _ info: ConnectionInfo, outcome: SessionOutcome, error: any Error, now: Duration
    ) -> [FlowAction] {
        // No finish record: the read-back has just found the board not running the program.
        let flow = PartialFlashFlow(
            image: plan.image, program: plan.program, family: plan.family, settings: partialSettings,
            resume: plan.resume, finished: nil)
        var child = ChildFlow(flow, scope: "repair.")
        let (actions, result) = child.handle(.start(info), now: now)
        enter(.repairing(child, outcome, error: error))
        return Self.withoutDonePhase(actions)
            + (result.map { repairFinished($0, outcome: outcome, error: error) } ?? [])
    }

    mutating func repairing(
        _ child: ChildFlow<PartialFlashFlow>, outcome: SessionOutcome, error: any Error, event: FlowEvent,
        now: Duration
    ) -> [FlowAction] {
        var child = child
        let (actions, result) = child.handle(event, now: now)
        enter(.repairing(child, outcome, error: error))
        return Self.withoutDonePhase(actions)
            + (result.map { repairFinished($0, outcome: outcome, error: error) } ?? [])
    }

    private mutating func repairFinished(
        _ result: Result<PartialFlashResult, any Error>, outcome: SessionOutcome, error: any Error
    ) -> [FlowAction] {
        var o = outcome
        switch result {
        case let .success(.flashed(stats)):
            var total = stats
            if let earlier = partialStats { total.add(earlier) }
            o.path = .partial
            o.partial = total
            o.readBack = nil
            o.reason = .activeImageRewritten(plan.program, stats: stats)
            return succeed(o)
        case let .success(.upToDate(verification)):
            o.readBack = verification
            return succeed(o)
        case .success(.fullRequired):
            // The board's runtime or map does not take the file's program: the read-back's error stands.
            return fail(FlashError.notFinishedAfterFullUpdate(reason: outcome.reason, error: error))
        case let .failure(partialError):
            return fail(partialError)
        }
    }

    /// What the read-back found, from its error.
    private static func found(_ error: any Error) -> ProgramFound {
        if let e = error as? PartialFlashError, case let .verificationFailed(_, _, reported) = e {
            return reported.hash.allSatisfy { $0 == 0xFF }
                ? .blankHeader(address: reported.start) : .otherProgram(address: reported.start)
        }
        return .unfinished
    }
}

extension FlashReason {
    /// McuMgr found the file's image already active and sent nothing; the read-back found the
    /// program region not the file's, and partial flashing wrote it.
    static func activeImageRewritten(_ program: MakeCodeProgram?, stats: PartialFlashStats) -> FlashReason {
        let message =
            "the board's slot 0 already held this image, so the full update sent nothing, but its program region "
            + "was not the file's (an unfinished partial flash had changed it): the program was written by partial "
            + "flashing, \(stats.blocks) blocks, \(stats.pages) page\(stats.pages == 1 ? "" : "s")"
        let details = FlashReasonDetails.sameProgram(program, resumedAtBlock: stats.resumedAtBlock)
        return FlashReason(code: "active-image-rewritten", message: message, details: details)
    }
}
