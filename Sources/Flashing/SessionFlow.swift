import FirmwareImage
import McuMgr
import NordicDFU
import PartialFlashing
import Transport
import PartialFlashingFrames
import SMP

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

    var stage: Stage = .idle
    /// What the session did so far, counted from its reports (SessionProgress.swift).
    var recorded = SessionProgress()
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
    var connection: ConnectionInfo?
    var linkUp = false
    var partialStats: PartialFlashStats?
    /// Round trips of the memory-map read, for the connection interval.
    var meter = IntervalMeter()
    var decision: PathDecision?
    var region: Range<UInt32>?
    /// The board offered the partial-flashing service when the session began: its program can
    /// be read back over it after a full update.
    var offeredPartialFlashing = false
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
            let (actions, result) = child.handle(event, now: now)
            stage = .full(child, reason: reason, fallback: fallback)
            return Self.withoutDonePhase(actions)
                + (result.map { mcuMgrFinished($0, reason: reason, fallback: fallback, now: now) } ?? [])
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
