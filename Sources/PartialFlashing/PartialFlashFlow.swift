import Diagnostics
import FirmwareImage
import PartialFlashingFrames
import Transport

/// How a partial-flashing run ended.
public enum PartialFlashResult: Sendable, Equatable {
    /// The board already held this program; nothing was written. Verified when this computer
    /// had finished the program on this board and found it running in application mode (left
    /// running, untouched), or when the board was restarted into its program and read back
    /// there (`PartialFlashFlow.confirmation` says which).
    case upToDate(Verification)
    /// The program was written; `stats.verified` tells whether the board was read back running it
    /// in application mode, `stats.unverifiedReason` why not.
    case flashed(stats: PartialFlashStats)
    /// Nothing was written: the board needs a full flash, for this reason.
    case fullRequired(FullFlashReason)
}

/// A whole partial flash: read the board's memory map in whatever mode it is in, decide, and
/// only then act.
///
/// Runs `MemoryMapReader` and `PartialFlashDecision`, then:
/// - the board needs a full update: `.fullRequired(reason)`, nothing written, the board left
///   in its mode (every full-update path starts from there);
/// - up to date in application mode, and this computer finished this program on this board
///   (`FinishRecord`): nothing sent at all, the board keeps running;
/// - up to date otherwise (pairing mode, or no record vouches for the board): `ProgramCheck`
///   restarts it into its program (`FF 01`); a board that comes back in pairing mode has
///   `flashIncomplete` set and a program that may be half written although it reports this
///   program's hash, so the whole program is written again;
/// - partial: a board running its program is restarted into pairing mode first
///   (`PairingModeSwitch`), then `PartialFlashWriter` writes the `BlockPlan`, and `ProgramCheck`
///   reads the board back after END_OF_TRANSMISSION, clearing a `flashIncomplete` that
///   survived it by rewriting one page.
/// Errors of any step end the flow with that step's error.
public struct PartialFlashFlow: FlowMachine {
    public typealias Output = PartialFlashResult
    public typealias Report = PartialFlashReport

    public private(set) var outcome: Result<PartialFlashResult, any Error>?
    /// What the board reported, once read.
    public private(set) var boardMap: BoardMemoryMap?
    /// The decision, once made.
    public private(set) var decision: PartialFlashDecision?
    /// The plan, when the board takes a partial flash.
    public private(set) var plan: BlockPlan?
    /// The board reported this program but came back in pairing mode from a restart into it
    /// (`flashIncomplete`), so the whole program was written again.
    public private(set) var rewroteIncompleteProgram = false
    /// True once the writer started: blocks may have been sent, and one whose answer never came
    /// may be a flash operation the board waits on for ever (`BoardReset`).
    public private(set) var sentBlocks = false
    /// How an up-to-date board was confirmed, once it was.
    public private(set) var confirmation: UpToDateConfirmation?
    /// When the restart that confirms an up-to-date board began.
    private var confirmStarted: Duration?

    private enum Stage: Sendable {
        case reading(MemoryMapReader)
        /// The decision is made and nothing is written yet: waiting for `resume(now:)`.
        case paused(Paused)
        /// Restarting a board that runs its program into pairing mode, then writing with the writer.
        case switching(PairingModeSwitch, then: PartialFlashWriter, from: Int?)
        case writing(PartialFlashWriter)
        /// Reading the board back (after a write, or restarting an up-to-date board).
        case checking(ProgramCheck, after: AfterCheck)
        case done
    }

    /// What `resume(now:)` does.
    private enum Paused: Sendable {
        case upToDate
        /// Write with `writer` from `block` (nil: the first), after reporting `announce`.
        case write(PartialFlashWriter, from: Int?, announce: [FlowAction])
    }

    /// Whether a saved point can be continued: the plan, or why not.
    private enum Resumption {
        case resumable(BlockPlan)
        case refused(ResumeMismatch)
    }

    /// What a `ProgramCheck` follows.
    private enum AfterCheck: Sendable {
        case written(PartialFlashStats)
        /// Written and read back in application mode, then restarted into its program (`FF 01`)
        /// to prove that the flash ended (`restartUnproven`).
        case provingRestart(PartialFlashStats)
        case upToDate
    }

    /// When true, the flow stops after the memory map is read and the decision made (and the
    /// blocks planned), before its first write: `isPaused` turns true and nothing happens until
    /// `resume(now:)`. A caller uses the pause to compare paths or to plan without writing.
    public var pauseBeforeWriting = false

    /// True while the flow waits for `resume(now:)` (see `pauseBeforeWriting`).
    public var isPaused: Bool {
        if case .paused = stage { return true }
        return false
    }

    private var stage: Stage
    private let image: MemoryImage
    private let program: MakeCodeProgram?
    private let family: ChipFamily
    private let settings: PartialFlashSettings
    /// Unexpected link losses while reading, added to the writer's reconnections.
    private var readerLinkLosses = 0
    /// True when a read-back in application mode after END_OF_TRANSMISSION proves nothing: the
    /// write may have run in application mode, where the board keeps running after a lost
    /// END_OF_TRANSMISSION, reporting the new program's hash with `flashIncomplete` set (CODAL
    /// and DAL build the memory map at each REGION_INFO). So it is when the writer connected
    /// again during the write (a reset may have brought the board back in application mode: it
    /// boots there until a block's flash work sets `flashIncomplete`), or when a board found in
    /// application mode was written without the switch to pairing mode.
    private var restartUnproven = false
    /// The writer's reconnections, for the note of the proving restart.
    private var writerReconnects = 0
    /// Where an earlier, interrupted write of this program to this board stopped.
    private let resumePoint: ResumePoint?
    /// This computer's record of the program it finished on this board, if any.
    private let finished: FinishRecord?

    /// - Parameters:
    ///   - image: the board image of the firmware file (one chip family's section).
    ///   - program: the file's MakeCode program, or nil when it has none.
    ///   - family: the board's chip family (page size, memory layout).
    ///   - settings: timeouts and limits for every step.
    ///   - resume: where an earlier run's write of this program to this board stopped; used only
    ///     when the board still shows exactly what that unfinished write left (`ResumePoint.mismatch`).
    ///   - finished: this computer's record of the program it finished on this board; only when
    ///     it names the file's program is a board in application mode that reports it left
    ///     untouched.
    public init(
        image: MemoryImage, program: MakeCodeProgram?, family: ChipFamily,
        settings: PartialFlashSettings = PartialFlashSettings(), resume: ResumePoint? = nil,
        finished: FinishRecord? = nil
    ) {
        self.resumePoint = resume
        self.finished = finished
        self.image = image
        self.program = program
        self.family = family
        self.settings = settings
        self.stage = .reading(MemoryMapReader(family: family, settings: settings))
    }

    public mutating func handle(_ event: FlowEvent, now: Duration) -> [FlowAction] {
        guard outcome == nil else { return [] }
        switch stage {
        case var .reading(reader):
            if case .start = event, program == nil {
                // Nothing on the board can make a file without a program partially flashable.
                return finish(.success(.fullRequired(.fileHasNoProgram)))
            }
            let actions = reader.handle(event, now: now)
            stage = .reading(reader)
            guard let result = reader.outcome else { return actions }
            return withoutFinish(actions) + readerFinished(result, reader: reader, now: now)
        case .switching(var modeSwitch, let writer, let block):
            let actions = modeSwitch.handle(event, now: now)
            stage = .switching(modeSwitch, then: writer, from: block)
            guard let result = modeSwitch.outcome else { return actions }
            readerLinkLosses += modeSwitch.linkLosses
            switch result {
            case .failure(let error): return withoutFinish(actions) + finish(.failure(error))
            case .success: return withoutFinish(actions) + begin(writer, from: block, now: now)
            }
        case var .writing(writer):
            let actions = writer.handle(event, now: now)
            stage = .writing(writer)
            return withoutFinish(actions) + writerFinished(writer, now: now)
        case .checking(var check, let after):
            let actions = check.handle(event, now: now)
            stage = .checking(check, after: after)
            guard let result = check.outcome else { return actions }
            return withoutFinish(actions) + checkFinished(result, after: after, now: now)
        case .paused, .done:
            return []
        }
    }

    /// Continues a paused flow: writes the planned blocks (restarting a board that runs its
    /// program into pairing mode first), or finishes with an up-to-date board.
    public mutating func resume(now: Duration) -> [FlowAction] {
        guard case let .paused(next) = stage else { return [] }
        switch next {
        case .upToDate:
            return upToDate(now: now)
        case let .write(writer, block, announce):
            return announce + switchThenWrite(writer, from: block, now: now)
        }
    }

    /// True when an up-to-date board is taken at its word: it runs in application mode and this
    /// computer finished the file's program on it (`FinishRecord`).
    private var vouchedFor: Bool {
        guard let program, let finished, boardMap?.mode == .application else { return false }
        return finished.vouches(for: program)
    }

    /// An up-to-date board: one in application mode that this computer finished keeps running,
    /// untouched; any other is restarted into its program and read back there (`ProgramCheck`):
    /// one in pairing mode has `flashIncomplete` or `RebootMode` set, and one in application mode
    /// that nothing vouches for may hold another client's unfinished flash of this program (its
    /// hash is written first), which only its next boot reveals.
    private mutating func upToDate(now: Duration) -> [FlowAction] {
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
    private func upToDateReport(_ program: MakeCodeProgram) -> FlowAction {
        Self.report(.upToDate(programHash: program.programHash, finishedHere: vouchedFor ? finished?.finishedAt : nil))
    }

    private mutating func readerFinished(
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
            do throws(PartialFlashError) {
                plan = try BlockPlan(
                    image: image, program: program, boardRegion: map.program, family: family,
                    skipErasedBlocks: settings.skipErasedBlocks, sealProgramHash: settings.sealProgramHash)
            } catch {
                let reason = FullFlashReason.regionDoesNotFit(
                    program: program.region, board: PartialFlashDecision.writableRange(of: map.program, family: family))
                self.decision = .fullRequired(reason)
                return resumeNotes + [Self.report(.planFailed(reason, error))]
                    + finish(.success(.fullRequired(reason)))
            }
            return resumeNotes
                + startWriting(
                    plan: plan, program: program, base: .base(program: program, board: map, plan: plan), from: nil,
                    announce: [Self.report(.partial(PlannedWrite(program, plan: plan)))],
                    now: now)
        }
    }

    /// The plan for continuing at `point`, or why that is not possible.
    private func resumablePlan(_ point: ResumePoint, map: BoardMemoryMap, program: MakeCodeProgram) -> Resumption {
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

    /// Makes the writer for `plan` and starts it, or, with `pauseBeforeWriting`, parks it until
    /// `resume(now:)`. `announce` (the decision) is reported just before the first write, so a
    /// caller that decides otherwise at the pause never sees a partial decision.
    private mutating func startWriting(
        plan: BlockPlan, program: MakeCodeProgram, base: ResumePoint, from block: Int?,
        announce: [FlowAction], now: Duration
    ) -> [FlowAction] {
        self.plan = plan
        var writer = PartialFlashWriter(plan: plan, program: program, settings: settings)
        writer.checkpointBase = base
        if pauseBeforeWriting {
            stage = .paused(.write(writer, from: block, announce: announce))
            return []
        }
        return announce + switchThenWrite(writer, from: block, now: now)
    }

    /// Writes with `writer`; a board that runs its program is restarted into pairing mode first.
    private mutating func switchThenWrite(_ writer: PartialFlashWriter, from block: Int?, now: Duration) -> [FlowAction]
    {
        guard let map = boardMap, map.mode == .application, settings.switchToPairingMode else {
            return begin(writer, from: block, now: now)
        }
        var modeSwitch = PairingModeSwitch(decided: map, family: family, settings: settings)
        let actions = modeSwitch.begin()
        stage = .switching(modeSwitch, then: writer, from: block)
        return actions
    }

    private mutating func begin(_ writer: PartialFlashWriter, from block: Int?, now: Duration) -> [FlowAction] {
        sentBlocks = true
        var writer = writer
        let actions = writer.beginAfterRegionInfo(now: now, from: block)
        stage = .writing(writer)
        return withoutFinish(actions) + writerFinished(writer, now: now)
    }

    private mutating func writerFinished(_ writer: PartialFlashWriter, now: Duration) -> [FlowAction] {
        guard let result = writer.outcome else { return [] }
        switch result {
        case let .failure(error): return finish(.failure(error))
        case var .success(stats):
            writerReconnects = stats.reconnects
            restartUnproven = stats.reconnects > 0 || (boardMap?.mode == .application && !settings.switchToPairingMode)
            stats.reconnects += readerLinkLosses
            guard settings.verifyAfterFlash, let program else {
                stats.unverifiedReason = "reading the board back after the flash was turned off"
                return finish(.success(.flashed(stats: stats)))
            }
            // Every block was acknowledged: the flash holds the whole program.
            var check = ProgramCheck(
                image: image, program: program, family: family, settings: settings, start: .restarted,
                knownComplete: true, acceptedHashes: boardMap.map { [$0.program.hash] } ?? [])
            let actions = check.begin(now: now)
            stage = .checking(check, after: .written(stats))
            return actions
        }
    }

    private mutating func checkFinished(
        _ result: Result<ProgramCheckResult, any Error>, after: AfterCheck,
        now: Duration
    ) -> [FlowAction] {
        let found: ProgramCheckResult
        switch result {
        case let .failure(error): return finish(.failure(error))
        case let .success(r): found = r
        }
        switch (after, found) {
        case (.upToDate, .flashIncomplete(let map)):
            return rewriteWholeProgram(map, now: now)
        case (.upToDate, _):
            let cost = now - (confirmStarted ?? now)
            confirmation = .restarted(cost: cost)
            let note = found.verification == .verified ? [Self.report(.confirmedAfterRestart(cost: cost))] : []
            return note + finish(.success(.upToDate(found.verification ?? .verified)))
        case var (.written(stats), _), var (.provingRestart(stats), _):
            switch found {
            case let .verified(_, rewrites):
                if let rewrites { stats.add(rewrites); stats.pageRewrites += rewrites.pageRewrites }
                if case .written = after, restartUnproven { return proveRestart(stats, now: now) }
                stats.verified = true
            case let .unverified(why, rewrites):
                stats.verified = false
                stats.unverifiedReason = why
                if let rewrites { stats.add(rewrites); stats.pageRewrites += rewrites.pageRewrites }
            case .flashIncomplete:
                return finish(.failure(PartialFlashError.staysInPairingMode(rewrites: 0)))
            }
            return finish(.success(.flashed(stats: stats)))
        }
    }

    /// Restarts a board read back in application mode into its program (`FF 01`) and reads it
    /// again (`restartUnproven`): back in application mode, the flash ended; back in pairing mode,
    /// `flashIncomplete` survived, and since every block was acknowledged `ProgramCheck` rewrites
    /// one page and ends the flash.
    private mutating func proveRestart(_ stats: PartialFlashStats, now: Duration) -> [FlowAction] {
        guard let program else { return finish(.success(.flashed(stats: stats))) }
        var check = ProgramCheck(
            image: image, program: program, family: family, settings: settings, start: .restart,
            knownComplete: true, acceptedHashes: boardMap.map { [$0.program.hash] } ?? [])
        // The verify phase is already reported.
        let actions = check.begin(now: now).filter { $0 != .report(.phase(.verify)) }
        stage = .checking(check, after: .provingRestart(stats))
        return [Self.report(.provingRestart(reconnects: writerReconnects))] + actions
    }

    /// The board reported this program but came back in pairing mode from a restart into it:
    /// `flashIncomplete` is set and nothing tells how much of the program its flash holds, so the
    /// whole program is written again.
    private mutating func rewriteWholeProgram(_ map: BoardMemoryMap, now: Duration) -> [FlowAction] {
        guard let program else { return finish(.success(.fullRequired(.fileHasNoProgram))) }
        boardMap = map
        rewroteIncompleteProgram = true
        let plan: BlockPlan
        do throws(PartialFlashError) {
            plan = try BlockPlan(
                image: image, program: program, boardRegion: map.program, family: family,
                skipErasedBlocks: settings.skipErasedBlocks, sealProgramHash: settings.sealProgramHash)
        } catch {
            let reason = FullFlashReason.regionDoesNotFit(
                program: program.region, board: PartialFlashDecision.writableRange(of: map.program, family: family))
            return [Self.report(.rewriteDoesNotFit(reason, error))] + finish(.success(.fullRequired(reason)))
        }
        self.plan = plan
        self.decision = .partial
        var writer = PartialFlashWriter(plan: plan, program: program, settings: settings)
        writer.checkpointBase = .base(program: program, board: map, plan: plan)
        // `ProgramCheck` read the board last, ending with REGION_INFO 2.
        return [Self.report(.flashIncomplete(blocks: plan.blockCount))] + begin(writer, from: nil, now: now)
    }

    private mutating func finish(_ result: Result<PartialFlashResult, any Error>) -> [FlowAction] {
        outcome = result
        stage = .done
        if case .success = result { return [.report(.phase(.done)), .finish] }
        return [.finish]
    }

    private func withoutFinish(_ actions: [FlowAction]) -> [FlowAction] {
        actions.filter { $0 != .finish }
    }
}
