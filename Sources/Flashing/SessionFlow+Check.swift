import FirmwareImage
import NordicDFUFrames
import PartialFlashing
import Transport

/// The end of a full update: the board restarts into the new program, and the session reads it
/// back (`ProgramCheck`). A `flashIncomplete` left by an earlier partial flash survives every
/// full-update path (the Nordic bootloaders keep the runtime's key-value page, an MCUboot swap
/// touches only its slots: docs/protocols/board-storage.md §4, §6), so such a board comes up in
/// pairing mode; its flash now holds the whole program, so one page is written again as it is
/// and the flash ended, which leaves it in application mode.
extension SessionFlow {
    /// A full update completed with `outcome`: read the board back when the file has a MakeCode
    /// program (the only kind the partial-flashing service can report) and the board offered that
    /// service (a board found in its bootloader is assumed to: its runtime is unknown until it
    /// runs), else finish with the full path's own check (the active slot's hash, the
    /// bootloader's check of the image).
    mutating func fullUpdateDone(_ outcome: SessionOutcome, now: Duration) -> [FlowAction] {
        let inBootloader = outcome.nordic?.recoveredFromBootloader ?? false
        // A McuMgr update of an image the user gave runs that image, not the file's program.
        let runsTheProgram = outcome.nordic != nil || plan.fullImageHoldsTheProgram
        guard let program = plan.program, runsTheProgram, offeredPartialFlashing || inBootloader else {
            return succeed(outcome)
        }
        guard options.partial.verifyAfterFlash else {
            var o = outcome
            o.readBack = .unverified("reading the board back after the flash was turned off")
            return succeed(o)
        }
        let start: ProgramCheck.Start
        if let nordic = outcome.nordic, nordic.dfuProtocol == .secure, !nordic.endedOnApplication {
            // The secure bootloader resets into the new application after its last answer.
            start = .restarting
        } else {
            // McuMgr and legacy DFU end on a connection to the restarted application, and so does
            // a Secure DFU whose last answer was lost (`endedOnApplication`): the board has
            // already restarted, there is no restart to wait for.
            start = linkUp ? .connected : .restarted
        }
        // An update that found its image already active wrote nothing: it says nothing of the
        // program region, which a partial flash may have left unfinished. Where the session can
        // rewrite that region by partial flashing, the check does not take it for complete
        // (SessionFlow+Repair.swift); where it cannot (a forced full update, a board without
        // partial flashing), ending the unfinished flash is all that is left to try, as before.
        var check = ChildFlow(
            ProgramCheck(
                image: plan.image, program: program, family: plan.family, settings: partialSettings,
                start: start, knownComplete: !mayRepairByPartialFlash(outcome)), scope: "check.")
        let (childActions, result) = check.perform { $0.begin(now: now, connection: connection) }
        enter(.checking(check, outcome))
        let actions = Self.withoutDonePhase(childActions)
        guard let result else { return actions }
        return actions + checkFinished(result, outcome: outcome, now: now)
    }

    mutating func checking(
        _ child: ChildFlow<ProgramCheck>, outcome: SessionOutcome, event: FlowEvent,
        now: Duration
    ) -> [FlowAction] {
        var child = child
        let (childActions, result) = child.handle(event, now: now)
        enter(.checking(child, outcome))
        let actions = Self.withoutDonePhase(childActions)
        guard let result else { return actions }
        return actions + checkFinished(result, outcome: outcome, now: now)
    }

    /// The read-back reached the board in its Nordic bootloader ("DfuTarg"): it holds the new
    /// application and only needs to leave the bootloader, as a board found there at the start
    /// of a session (`recoverFromBootloader`). It gets the file by Nordic DFU on this link, and
    /// is then read back again; once per session. Nil when the board is not in its bootloader.
    private mutating func recoverAtReadBack(_ outcome: SessionOutcome, now: Duration) -> [FlowAction]? {
        guard !recoveredAtReadBack, linkUp, let info = connection,
            let target = NordicDFUTarget(info), target.isBootloader, options.fullPath != .mcumgr
        else { return nil }
        recoveredAtReadBack = true
        let note = Self.report(.bootloaderAtReadBack(secure: target.isSecure))
        return [note] + startNordic(info, reason: outcome.reason, fallback: outcome.fallback, now: now)
    }

    private mutating func checkFinished(
        _ result: Result<ProgramCheckResult, any Error>, outcome: SessionOutcome, now: Duration
    ) -> [FlowAction] {
        var o = outcome
        if repairsByPartialFlash(outcome, check: result) {
            let error: any Error
            if case let .failure(e) = result {
                error = e
            } else {
                error = PartialFlashError.staysInPairingMode(rewrites: 0)
            }
            return repairByPartialFlash(outcome, error: error, now: now)
        }
        switch result {
        case let .success(.verified(_, rewrites)):
            o.readBack = .verified
            o.rewrites = rewrites
        case let .success(.unverified(why, rewrites)):
            if let recovery = recoverAtReadBack(outcome, now: now) { return recovery }
            o.readBack = .unverified(why)
            o.rewrites = rewrites
        case .success(.flashIncomplete):
            return fail(
                FlashError.notFinishedAfterFullUpdate(
                    reason: outcome.reason, error: PartialFlashError.staysInPairingMode(rewrites: 0)))
        case let .failure(error):
            return fail(FlashError.notFinishedAfterFullUpdate(reason: outcome.reason, error: error))
        }
        return succeed(o)
    }
}
