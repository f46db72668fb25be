import FirmwareImage
import McuMgr
import NordicDFU
import PartialFlashing
import Transport
import PartialFlashingFrames
import SMP

/// How a whole session ended: the path, why, and what it cost.
public struct SessionOutcome: Sendable, Equatable {
    public var path: FlashPath
    public var reason: FlashReason
    /// True when partial flashing was tried, gave up, and the full update followed.
    public var fallback: Bool
    public var partial: PartialFlashStats?
    public var full: McuMgrResult?
    /// The estimates of the possible paths and the choice among them, once made.
    public var decision: PathDecision?
    /// True when the session only planned (`FlashOptions.dryRun`): nothing was written.
    public var dryRun = false
    /// The program region partial flashing writes (or would write), when the board's map was read.
    public var region: Range<UInt32>?
    /// Set when the full update was a Nordic DFU.
    public var nordic: NordicDFUResult? = nil
    /// What reading the board back found, when that decided the verification: an up-to-date
    /// board, or the board after a full update (`ProgramCheck`). Nil for a partial write, whose
    /// stats say it, and for a full update that was not read back this way.
    public var readBack: Verification? = nil
    /// The page rewrites that cleared `flashIncomplete` after a full update (nil when none).
    public var rewrites: PartialFlashStats? = nil
    /// How an up-to-date board was confirmed (nil on the other paths).
    public var confirmation: UpToDateConfirmation? = nil
    /// The program (hex of its program hash) the board was read back running in application
    /// mode at the end of the session; nil when the session did not verify one.
    public var verifiedProgram: String? = nil

    /// The finish record to save for `board` after this session (`ResumeRecordStore.saveFinish`),
    /// stamped `at`; nil when the session did not verify the board running its program, and
    /// the board's record must then be forgotten.
    public func finishRecord(board: String, at: String) -> FinishRecord? {
        guard !dryRun, verified, let hash = verifiedProgram else { return nil }
        return FinishRecord(board: board, programHash: hash, finishedAt: at)
    }

    /// Which full-update path ran, if any.
    public var fullPath: FullUpdatePath? { nordic != nil ? .nordic : (full != nil ? .mcumgr : nil) }
    public var bytesSent: Int {
        (partial?.bytes ?? 0) + (full?.bytesSent ?? 0) + (nordic?.bytesSent ?? 0) + (rewrites?.bytes ?? 0)
    }
    public var retries: Int {
        (partial?.retries ?? 0) + (full?.retries ?? 0) + (nordic?.retries ?? 0) + (rewrites?.retries ?? 0)
    }
    /// True when the board was read back running the new program in application mode (see
    /// `FlashVerification.verified`).
    public var verified: Bool {
        if dryRun { return false }
        if let readBack { return readBack == .verified }
        switch path {
        case .upToDate: return true
        case .partial: return partial?.verified ?? false
        case .full: return full.map { !$0.finalSlots.isEmpty } ?? nordic?.verified ?? false
        }
    }
    /// Why the result is not verified (nil when it is, and for a dry run).
    public var unverifiedReason: String? {
        guard !dryRun, !verified else { return nil }
        if case let .unverified(why)? = readBack { return why }
        // A partial write says why itself; none said is a writer's fault, left for checks to find.
        if path == .partial { return partial?.unverifiedReason }
        return "the board was not read back after the update"
    }
}

/// One board's whole flash as a state machine: read the memory map, flash partially or
/// restart an up-to-date board, and fall back to a full update on the same connection (or a
/// new one) when the runtime differs or partial flashing gives up: McuMgr when the board
/// offers SMP, Nordic DFU otherwise (SessionFlow+Nordic.swift), which also recovers a board
/// found in its bootloader ("DfuTarg").
public struct SessionFlow: FlowMachine {
    public typealias Output = SessionOutcome
    public typealias Report = SessionReport
    public private(set) var outcome: Result<SessionOutcome, any Error>?

    enum Stage: Sendable {
        case idle
        case partial(ChildFlow<PartialFlashFlow>)
        /// Waiting for a connection before the full update starts.
        case reconnecting(reason: FlashReason, fallback: Bool, attempts: Int)
        case full(ChildFlow<McuMgrUpgrade>, reason: FlashReason, fallback: Bool)
        /// Waiting for a connection before the Nordic DFU starts (SessionFlow+Nordic.swift).
        case nordicReconnecting(reason: FlashReason, fallback: Bool, attempts: Int)
        case nordic(ChildFlow<NordicDFUFlow>, reason: FlashReason, fallback: Bool)
        /// After a full update: reading the board back, ending an unfinished flash that keeps it
        /// in pairing mode (SessionFlow+Check.swift).
        case checking(ChildFlow<ProgramCheck>, SessionOutcome)
        /// Partial flashing gave up after a block whose answer never came: resetting the board
        /// with `FF 01` before the full update (SessionFlow+Reset.swift).
        case resetting(ChildFlow<BoardReset>, reason: FlashReason)
        /// A full update that found its image already active left the program region not the
        /// file's: waiting for a connection, then partial-flashing it (SessionFlow+Repair.swift).
        /// `error`: the read-back's, the session's error should the repair be impossible.
        case repairConnecting(SessionOutcome, error: any Error, attempts: Int)
        case repairing(ChildFlow<PartialFlashFlow>, SessionOutcome, error: any Error)
        case done
    }

    private var stage: Stage = .idle
    /// What the session did so far, counted from its reports (SessionProgress.swift).
    private var recorded = SessionProgress()
    /// What the session did so far, and the path it was on: where it failed, or where its
    /// driver stopped it (a stack violation, a cancellation) while it still ran.
    public var progress: SessionProgress {
        guard outcome == nil else { return recorded }
        var p = recorded
        Self.notePath(of: stage, in: &p)
        return p
    }
    let plan: FlashPlan
    let options: FlashOptions
    private(set) var connection: ConnectionInfo?
    private(set) var linkUp = false
    private(set) var partialStats: PartialFlashStats?
    /// Round trips of the memory-map read, for the connection interval.
    private var meter = IntervalMeter()
    private(set) var decision: PathDecision?
    var region: Range<UInt32>?
    /// The board offered the partial-flashing service when the session began: its program can
    /// be read back over it after a full update.
    private(set) var offeredPartialFlashing = false
    /// The read-back after a full update found the board in its Nordic bootloader and a Nordic
    /// DFU recovered it (once per session: SessionFlow+Check.swift).
    var recoveredAtReadBack = false
    /// The program region was partial-flashed after a full update that found its image already
    /// active (once per session: SessionFlow+Repair.swift).
    var repairedActiveImage = false

    public init(plan: FlashPlan, options: FlashOptions = FlashOptions()) {
        self.plan = plan
        self.options = options
    }

    public mutating func handle(_ event: FlowEvent, now: Duration) -> [FlowAction] {
        let measuring: Bool
        switch stage {
        case .idle, .partial: measuring = decision == nil
        default: measuring = false
        }
        guard measuring else {
            let actions = step(event, now: now)
            recorded.observe(actions)
            return actions
        }
        switch event {
        case .notification(PartialFlashingGATT.characteristic, _): meter.answerReceived(at: now)
        case .connected, .disconnected: meter.linkChanged()
        default: break
        }
        let actions = step(event, now: now)
        if actions.contains(where: {
            if case .write(PartialFlashingGATT.characteristic, _, _) = $0 { return true }; return false
        }) {
            meter.requestSent(at: now)
        }
        recorded.observe(actions)
        return actions
    }

    private mutating func step(_ event: FlowEvent, now: Duration) -> [FlowAction] {
        guard outcome == nil else { return [] }
        switch event {
        case let .start(info), let .connected(info): connection = info; linkUp = true
        case .disconnected: linkUp = false
        default: break
        }
        switch stage {
        case .idle:
            guard case let .start(info) = event else { return [] }
            return begin(info, now: now)
        case var .partial(child):
            let (childActions, result) = child.handle(event, now: now)
            let actions = Self.withoutDonePhase(childActions)
            stage = .partial(child)
            if child.machine.isPaused { return actions + decideAtPause(child, now: now) }
            guard let result else { return actions }
            return actions + partialFinished(result, flow: child.machine, now: now)
        case let .reconnecting(reason, fallback, attempts):
            switch event {
            case let .connected(info): return startFull(info, reason: reason, fallback: fallback, now: now)
            case let .connectFailed(error):
                guard attempts < options.mcumgr.reconnectAttempts else {
                    return fail(FlashError.fullUpdateUnreachable(error))
                }
                stage = .reconnecting(reason: reason, fallback: fallback, attempts: attempts + 1)
                return [.connect(after: options.mcumgr.reconnectDelay)]
            default: return []
            }
        case .full(var child, let reason, let fallback):
            let (childActions, result) = child.handle(event, now: now)
            let actions = Self.withoutDonePhase(childActions)
            stage = .full(child, reason: reason, fallback: fallback)
            guard let result else { return actions }
            switch result {
            case let .success(stats):
                return actions
                    + fullUpdateDone(
                        SessionOutcome(
                            path: .full, reason: reason, fallback: fallback,
                            partial: partialStats, full: stats), now: now)
            case let .failure(error):
                return actions + fail(FlashError.fullUpdateFailed(reason: reason, error: error))
            }
        case let .nordicReconnecting(reason, fallback, attempts):
            return nordicReconnecting(event, reason: reason, fallback: fallback, attempts: attempts, now: now)
        case .nordic(var child, let reason, let fallback):
            let (actions, result) = child.handle(event, now: now)
            stage = .nordic(child, reason: reason, fallback: fallback)
            return Self.withoutDonePhase(actions)
                + (result.map { nordicFinished($0, reason: reason, fallback: fallback, now: now) } ?? [])
        case let .checking(child, outcome):
            return checking(child, outcome: outcome, event: event, now: now)
        case let .resetting(child, reason):
            return resetting(child, reason: reason, event: event, now: now)
        case let .repairConnecting(outcome, error, attempts):
            return repairConnecting(event, outcome: outcome, error: error, attempts: attempts, now: now)
        case let .repairing(child, outcome, error):
            return repairing(child, outcome: outcome, error: error, event: event, now: now)
        case .done:
            return []
        }
    }

    private var hasPartialService: Bool { connection?.services.contains(PartialFlashingGATT.service) ?? false }
    var hasMcuMgr: Bool { connection?.services.contains(SMPGATT.service) ?? false }

    /// The partial-flashing settings for this board. On a board with MCUboot (it offers McuMgr)
    /// a reset may swap in an image left marked for test in the secondary slot (by an update
    /// that was cut off, or that another tool started), which MCUboot does before the
    /// application starts (docs/protocols/mcumgr-smp.md §4.3, §6.3); so the window in which the board
    /// is looked for after its restart also covers a swap of the whole primary slot: both slots
    /// erased and rewritten page by page at the chip's datasheet timing. The window only
    /// bounds the wait: a board back sooner is read back at once.
    var partialSettings: PartialFlashSettings {
        var settings = options.partial
        guard hasMcuMgr else { return settings }
        let slot = plan.family.layout.mcubootPrimarySlot
        settings.restartWindow += BoardCosts(family: plan.family).swap(bytes: slot.count)
        return settings
    }

    private mutating func begin(_ info: ConnectionInfo, now: Duration) -> [FlowAction] {
        offeredPartialFlashing = info.services.contains(PartialFlashingGATT.service)
        if let recovery = recoverFromBootloader(info, now: now) { return recovery }
        switch options.mode {
        case .full:
            let reason = FlashReason(
                code: "forced", message: "a full update was asked for (\(options.optionNames.mode(.full)))",
                details: FlashReasonDetails(option: options.optionNames.mode(.full)))
            return [reason.decision] + goFull(reason, fallback: false, now: now)
        case .partial, .auto:
            guard hasPartialService else {
                let why = "the board does not offer the partial-flashing service"
                if options.mode == .partial {
                    return fail(
                        FlashError.partialImpossible(
                            why + "; remove \(options.optionNames.mode(.partial)) to allow a full update"))
                }
                let reason = FlashReason(code: "no-partial-service", message: why)
                return [reason.decision] + goFull(reason, fallback: false, now: now)
            }
            var flow = PartialFlashFlow(
                image: plan.image, program: plan.program, family: plan.family,
                settings: partialSettings, resume: plan.resume, finished: plan.finished)
            flow.pauseBeforeWriting = true
            var child = ChildFlow(flow, scope: "partial.")
            let (childActions, result) = child.handle(.start(info), now: now)
            let actions = Self.withoutDonePhase(childActions)
            stage = .partial(child)
            if child.machine.isPaused { return actions + decideAtPause(child, now: now) }
            guard let result else { return actions }
            return actions + partialFinished(result, flow: child.machine, now: now)
        }
    }

    private mutating func partialFinished(
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
    private func upToDateReason(_ confirmation: UpToDateConfirmation? = nil) -> FlashReason {
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

    /// Partial-flashing errors after which a full update can still save the board.
    private func fullUpdateCanFollow(_ error: any Error) -> Bool {
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

    private mutating func startFull(_ info: ConnectionInfo, reason: FlashReason, fallback: Bool, now: Duration)
        -> [FlowAction]
    {
        guard let image = plan.fullImage else {
            return fail(FlashError.noFullImage(reason: reason, names: options.optionNames))
        }
        var upgrade = options.mcumgr
        upgrade.slotSize = mcuMgrSlot
        var child = ChildFlow(McuMgrUpgrade(image: image, options: upgrade), scope: "mcumgr.")
        let (childActions, result) = child.handle(.start(info), now: now)
        let actions = Self.withoutDonePhase(childActions)
        stage = .full(child, reason: reason, fallback: fallback)
        guard let result else { return actions }
        switch result {
        case let .success(stats):
            return actions
                + fullUpdateDone(
                    SessionOutcome(
                        path: .full, reason: reason, fallback: fallback, partial: partialStats,
                        full: stats), now: now)
        case let .failure(error):
            return actions + fail(FlashError.fullUpdateFailed(reason: reason, error: error))
        }
    }

    /// The full-update paths possible on this board, as estimators: McuMgr when the board offers
    /// SMP, Nordic DFU when it offers a Nordic DFU service (SessionFlow+Nordic.swift); `--full-path`
    /// leaves only the one it names.
    private func fullEstimators() -> [any PathEstimator] {
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

    /// The partial flow stopped after its decision and plan: compare the possible paths, then
    /// write, go full, or (dry run) finish with the plan.
    private mutating func decideAtPause(_ child: ChildFlow<PartialFlashFlow>, now: Duration) -> [FlowAction] {
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

    /// Enters a new stage (for the steps in extensions).
    mutating func enter(_ next: Stage) { stage = next }

    mutating func succeed(_ o: SessionOutcome) -> [FlowAction] {
        var o = o
        if o.decision == nil { o.decision = decision }
        if o.region == nil { o.region = region }
        // A full image the user gave (`--dfu-image`) may hold another program: only a read-back
        // of the file's program (up to date, partial, or a full update read back) counts.
        if o.verified, let program = plan.program, o.path != .full || plan.fullImageHoldsTheProgram || o.readBack != nil
        {
            o.verifiedProgram = program.programHash.hexString
        }
        outcome = .success(o)
        stage = .done
        return [.report(.phase(.done)), .finish]
    }

    /// `d` in seconds with one decimal, e.g. `2.4 s`.
    static func tenthsText(_ d: Duration) -> String {
        let (seconds, atto) = d.components
        let tenths = seconds * 10 + (atto + 50_000_000_000_000_000) / 100_000_000_000_000_000
        return "\(tenths / 10).\(tenths % 10) s"
    }

    /// A step's own "done" is not the session's: only the session reports `done`, once.
    static func withoutDonePhase(_ actions: [FlowAction]) -> [FlowAction] {
        actions.filter { $0 != .report(.phase(.done)) }
    }

    mutating func fail(_ error: any Error) -> [FlowAction] {
        Self.notePath(of: stage, in: &recorded)
        outcome = .failure(error)
        stage = .done
        return [.finish]
    }

    /// Notes in `p` the path a session at `stage` is on.
    private static func notePath(of stage: Stage, in p: inout SessionProgress) {
        switch stage {
        // Partial flashing is the path only once it chose to write; a failure at its decision took none.
        case let .partial(child) where child.machine.decision == .partial: p.path = .partial
        case let .reconnecting(_, fallback, _), let .full(_, _, fallback):
            p.path = .full; p.fallback = fallback; p.fullPath = .mcumgr
        case let .nordicReconnecting(_, fallback, _), let .nordic(_, _, fallback):
            p.path = .full; p.fallback = fallback; p.fullPath = .nordic
        case let .checking(_, outcome), let .repairConnecting(outcome, _, _), let .repairing(_, outcome, _):
            p.path = outcome.path; p.fallback = outcome.fallback; p.fullPath = outcome.fullPath
        // Resetting a board partial flashing gave up on, before a full update.
        case .resetting: p.path = .partial
        case .idle, .partial, .done: break
        }
    }
}

func describe(_ error: any Error) -> String {
    String(describing: error)
}
