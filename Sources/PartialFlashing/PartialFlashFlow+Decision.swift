import Diagnostics
import FirmwareImage
import PartialFlashingFrames
import Transport

/// The decision after the memory map is read: up to date (left running, or confirmed by a
/// restart into the program), a full update, or a partial flash from the start or from where an
/// earlier write of this program stopped.
extension PartialFlashFlow {
    /// True when an up-to-date board is taken at its word: it runs in application mode and this
    /// computer finished the file's program on it (`FinishRecord`).
    var vouchedFor: Bool {
        guard let program, let finished, boardMap?.mode == .application else { return false }
        return finished.vouches(for: program)
    }

    /// An up-to-date board: one in application mode that this computer finished keeps running,
    /// untouched; any other is restarted into its program and read back there (`ProgramCheck`):
    /// one in pairing mode has `flashIncomplete` or `RebootMode` set, and one in application mode
    /// that nothing vouches for may hold another client's unfinished flash of this program (its
    /// hash is written first), which only its next boot reveals.
    mutating func upToDate(now: Duration) -> [FlowAction] {
        guard let program else { return finish(.success(.upToDate(.verified))) }
        if vouchedFor, let finished {
            confirmation = .finishedHere(at: finished.finishedAt)
            return [Self.report(.leftRunning(finishedAt: finished.finishedAt))] + finish(.success(.upToDate(.verified)))
        }
        var check = ProgramCheck(
            image: image, program: program, family: family, settings: settings,
            start: .restart, knownComplete: false)
        let actions = check.begin(now: now)
        stage = .checking(check, after: .upToDate)
        confirmStarted = now
        return [Self.report(.confirmingUpToDate(inPairingMode: boardMap?.mode == .pairing))] + actions
    }

    /// The up-to-date decision: the program's hash, and who vouches for the board.
    func upToDateReport(_ program: MakeCodeProgram) -> FlowAction {
        Self.report(.upToDate(programHash: program.programHash, finishedHere: vouchedFor ? finished?.finishedAt : nil))
    }

    mutating func readerFinished(
        _ result: Result<BoardMemoryMap, any Error>,
        reader: MemoryMapReader, now: Duration
    ) -> [FlowAction] {
        let map: BoardMemoryMap
        switch result {
        case let .failure(error): return finish(.failure(error))
        case let .success(m): map = m
        }
        boardMap = map
        readerLinkLosses = reader.linkLosses
        var resumeNotes: [FlowAction] = []
        if resumePoint != nil, map.mode == .application {
            // Every flash that left something unfinished left `flashIncomplete`, which sends every
            // boot to pairing mode: a board running its program has nothing unfinished.
            resumeNotes = [
                Self.report(.nothingUnfinished),
                .report(.checkpoint(nil))
            ]
        } else if let point = resumePoint, let program, point.block > 0 || !map.hasProgram {
            switch resumablePlan(point, map: map, program: program) {
            case let .resumable(plan):
                self.decision = .partial
                let decided: PartialFlashReport =
                    map.hasProgram
                    ? .continuing(PlannedWrite(program, plan: plan), block: point.block)
                    : .continuingTornWrite(
                        block: point.block, regionStart: point.regionStart, regionEnd: point.regionEnd)
                return startWriting(
                    plan: plan, program: program, base: point, from: point.block, announce: [Self.report(decided)],
                    now: now)
            case let .refused(why):
                resumeNotes = [
                    Self.report(.notContinuing(why)),
                    .report(.checkpoint(nil))
                ]
            }
        }
        let decision = PartialFlashDecision(board: map, program: program, family: family)
        self.decision = decision
        switch decision {
        case let .fullRequired(reason):
            return resumeNotes + [Self.report(.fullRequired(reason))]
                + finish(.success(.fullRequired(reason)))
        case .upToDate:
            guard let program else { return finish(.success(.fullRequired(.fileHasNoProgram))) }
            let decided = resumeNotes + [upToDateReport(program)]
            if pauseBeforeWriting {
                stage = .paused(.upToDate)
                return decided
            }
            return decided + upToDate(now: now)
        case .partial:
            guard let program else { return finish(.success(.fullRequired(.fileHasNoProgram))) }
            let plan: BlockPlan
            switch planWholeProgram(program, on: map) {
            case let .success(p): plan = p
            case let .failure(doesNotFit):
                self.decision = .fullRequired(doesNotFit.reason)
                return resumeNotes + [Self.report(.planFailed(doesNotFit.reason, doesNotFit.error))]
                    + finish(.success(.fullRequired(doesNotFit.reason)))
            }
            return resumeNotes
                + startWriting(
                    plan: plan, program: program, base: .base(program: program, board: map, plan: plan), from: nil,
                    announce: [Self.report(.partial(PlannedWrite(program, plan: plan)))],
                    now: now)
        }
    }

    /// Why a program's blocks cannot be planned into the board's program region.
    struct PlanDoesNotFit: Error {
        let reason: FullFlashReason
        let error: PartialFlashError
    }

    /// The blocks of the whole program in the board's program region, or why they do not fit.
    func planWholeProgram(_ program: MakeCodeProgram, on map: BoardMemoryMap) -> Result<BlockPlan, PlanDoesNotFit> {
        do throws(PartialFlashError) {
            return .success(
                try BlockPlan(
                    image: image, program: program, boardRegion: map.program, family: family,
                    skipErasedBlocks: settings.skipErasedBlocks, sealProgramHash: settings.sealProgramHash))
        } catch {
            let reason = FullFlashReason.regionDoesNotFit(
                program: program.region, board: PartialFlashDecision.writableRange(of: map.program, family: family))
            return .failure(PlanDoesNotFit(reason: reason, error: error))
        }
    }

    /// The plan for continuing at `point`, or why that is not possible.
    func resumablePlan(_ point: ResumePoint, map: BoardMemoryMap, program: MakeCodeProgram) -> Resumption {
        let plan: BlockPlan
        do throws(PartialFlashError) {
            plan = try BlockPlan(
                image: image, program: program, boardRegion: map.hasProgram ? map.program : point.region,
                family: family, skipErasedBlocks: settings.skipErasedBlocks,
                sealProgramHash: settings.sealProgramHash)
        } catch {
            return .refused(.programDoesNotFit(error))
        }
        let why =
            map.hasProgram
            ? point.mismatch(board: map, plan: plan, program: program)
            : point.mismatch(emptyBoard: map, plan: plan, program: program)
        if let why { return .refused(why) }
        return .resumable(plan)
    }
}
