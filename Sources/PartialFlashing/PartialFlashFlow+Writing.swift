import Diagnostics
import FirmwareImage
import PartialFlashingFrames
import Transport

/// Writing and reading back: the switch to pairing mode, the writer, the read-back after it, the
/// restart that proves the flash ended, and the rewrite of a program a restart found unfinished.
extension PartialFlashFlow {
    /// Makes the writer for `plan` and starts it, or, with `pauseBeforeWriting`, parks it until
    /// `resume(now:)`. `announce` (the decision) is reported just before the first write, so a
    /// caller that decides otherwise at the pause never sees a partial decision.
    mutating func startWriting(
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
    mutating func switchThenWrite(_ writer: PartialFlashWriter, from block: Int?, now: Duration) -> [FlowAction] {
        guard let map = boardMap, map.mode == .application, settings.switchToPairingMode else {
            return begin(writer, from: block, now: now)
        }
        var modeSwitch = PairingModeSwitch(decided: map, family: family, settings: settings)
        let actions = modeSwitch.begin()
        stage = .switching(modeSwitch, then: writer, from: block)
        return actions
    }

    mutating func begin(_ writer: PartialFlashWriter, from block: Int?, now: Duration) -> [FlowAction] {
        sentBlocks = true
        var writer = writer
        let actions = writer.beginAfterRegionInfo(now: now, from: block)
        stage = .writing(writer)
        return withoutFinish(actions) + writerFinished(writer, now: now)
    }

    mutating func writerFinished(_ writer: PartialFlashWriter, now: Duration) -> [FlowAction] {
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

    mutating func checkFinished(
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
    mutating func proveRestart(_ stats: PartialFlashStats, now: Duration) -> [FlowAction] {
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
    mutating func rewriteWholeProgram(_ map: BoardMemoryMap, now: Duration) -> [FlowAction] {
        guard let program else { return finish(.success(.fullRequired(.fileHasNoProgram))) }
        boardMap = map
        rewroteIncompleteProgram = true
        let plan: BlockPlan
        switch planWholeProgram(program, on: map) {
        case let .success(p): plan = p
        case let .failure(doesNotFit):
            return [Self.report(.rewriteDoesNotFit(doesNotFit.reason, doesNotFit.error))]
                + finish(.success(.fullRequired(doesNotFit.reason)))
        }
        self.plan = plan
        self.decision = .partial
        var writer = PartialFlashWriter(plan: plan, program: program, settings: settings)
        writer.checkpointBase = .base(program: program, board: map, plan: plan)
        // `ProgramCheck` read the board last, ending with REGION_INFO 2.
        return [Self.report(.flashIncomplete(blocks: plan.blockCount))] + begin(writer, from: nil, now: now)
    }
}
