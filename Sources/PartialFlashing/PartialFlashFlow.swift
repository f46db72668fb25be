import FirmwareImage
import PartialFlashingFrames
import Transport

/// How a partial-flashing run ended.
public enum PartialFlashResult: Sendable, Equatable {
    /// The board already ran this program; it was restarted into it (`FF 01`).
    case upToDate
    /// The program was written; `stats.verified` tells whether the board reported it after its reboot.
    case flashed(stats: PartialFlashStats)
    /// Nothing was written: the board needs a full flash, for this reason.
    case fullRequired(FullFlashReason)
}

/// A whole partial flash: read the board's memory map, decide, then write the program
/// or restart an up-to-date board.
///
/// Runs `MemoryMapReader`, then `PartialFlashDecision`, then `BlockPlan` and
/// `PartialFlashWriter`. Errors of the reader or the writer end the flow with that
/// `PartialFlashError`; a board that cannot take the file ends it with
/// `.fullRequired(reason)` before anything is written.
public struct PartialFlashFlow: FlowMachine {
    public typealias Output = PartialFlashResult

    public private(set) var outcome: Result<PartialFlashResult, any Error>?
    /// What the board reported, once read.
    public private(set) var boardMap: BoardMemoryMap?
    /// The decision, once made.
    public private(set) var decision: PartialFlashDecision?
    /// The plan, when the board takes a partial flash.
    public private(set) var plan: BlockPlan?
    /// The memory-map read found the board running its program and restarted it into pairing
    /// mode (a caller that ends without writing restarts it into its program again).
    public private(set) var switchedBoardToPairingMode = false

    private enum Stage: Sendable {
        case reading(MemoryMapReader)
        case writing(PartialFlashWriter)
        /// `FF 01` sent to an up-to-date board: waiting for it to drop the link as it restarts.
        case restarting
        /// The decision is made and nothing is written yet: waiting for `resume(now:)`.
        case paused(Paused)
        case done
    }

    /// What `resume(now:)` does.
    private enum Paused: Sendable {
        case restart
        /// Write with `writer` from `block` (nil: the first), after reporting `announce`.
        case write(PartialFlashWriter, from: Int?, announce: [FlowAction])
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
    /// Where an earlier, interrupted write of this program to this board stopped.
    private let resumePoint: ResumePoint?

    /// - Parameters:
    ///   - image: the board image of the firmware file (one chip family's section).
    ///   - program: the file's MakeCode program, or nil when it has none.
    ///   - family: the board's chip family (page size, memory layout).
    ///   - settings: timeouts and limits for every step.
    ///   - resume: where an earlier run's write of this program to this board stopped; used only
    ///     when the board still shows exactly what that unfinished write left (`ResumePoint.mismatch`).
    public init(image: MemoryImage, program: MakeCodeProgram?, family: ChipFamily,
                settings: PartialFlashSettings = PartialFlashSettings(), resume: ResumePoint? = nil) {
        self.resumePoint = resume
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
        case var .writing(writer):
            let actions = writer.handle(event, now: now)
            stage = .writing(writer)
            return withoutFinish(actions) + writerFinished(writer)
        case .restarting:
            switch event {
            case .disconnected:
                return [.cancelTimer(PartialFlashTimer.reboot)] + finish(.success(.upToDate))
            case .timerFired(PartialFlashTimer.reboot):
                return [.report(.trace("the board did not drop the link after FF 01 within \(settings.rebootTimeout)"))]
                    + finish(.success(.upToDate))
            default:
                return []
            }
        case .paused, .done:
            return []
        }
    }

    /// Continues a paused flow: writes the planned blocks, or restarts an up-to-date board.
    public mutating func resume(now: Duration) -> [FlowAction] {
        guard case let .paused(next) = stage else { return [] }
        switch next {
        case .restart:
            return restart()
        case let .write(writer, block, announce):
            return announce + begin(writer, from: block, now: now)
        }
    }

    private mutating func restart() -> [FlowAction] {
        // Wait for the restart's link drop: finishing at once could close the link before
        // the write leaves, and leave the board in pairing mode.
        let bytes = PartialFlashingRequest.reset(.application).bytes
        stage = .restarting
        return [.report(.note("the board already runs this program; restarting it")),
                .report(.trace("→ \(bytes.spacedHex)")), .write(KnownGATT.partialFlashing, bytes, .command),
                .startTimer(PartialFlashTimer.reboot, settings.rebootTimeout)]
    }

    private mutating func readerFinished(_ result: Result<BoardMemoryMap, any Error>,
                                         reader: MemoryMapReader, now: Duration) -> [FlowAction] {
        let map: BoardMemoryMap
        switch result {
        case let .failure(error): return finish(.failure(error))
        case let .success(m): map = m
        }
        boardMap = map
        readerLinkLosses = reader.linkLosses
        switchedBoardToPairingMode = reader.modeSwitches > 0
        var resumeNotes: [FlowAction] = []
        if let point = resumePoint, let program, point.block > 0 || !map.hasProgram {
            switch resumablePlan(point, map: map, program: program) {
            case let .success(plan):
                self.decision = .partial
                let words = map.hasProgram
                    ? Self.partialMessage(program, plan: plan) + "; continuing the unfinished write at block \(point.block + 1)"
                    : "the board shows no program since it restarted during this computer's earlier write of this program "
                        + "(its first page was torn then); continuing that write at block \(point.block + 1) "
                        + "in \(hex32(point.regionStart))-\(hex32(point.regionEnd))"
                return startWriting(plan: plan, program: program, base: point, from: point.block,
                                    announce: [.report(.decision(code: map.hasProgram ? "runtime-matches" : "unfinished-write", message: words))],
                                    now: now)
            case let .failure(why):
                resumeNotes = [.report(.note("not continuing the earlier unfinished write: \(why); starting over")),
                               .report(.checkpoint(nil))]
            }
        }
        let decision = PartialFlashDecision(board: map, program: program, family: family)
        self.decision = decision
        switch decision {
        case let .fullRequired(reason):
            return resumeNotes + [.report(.note(reason.description)), .report(.decision(code: reason.code, message: reason.description))]
                + finish(.success(.fullRequired(reason)))
        case .upToDate:
            let hash = program?.programHash.hexString ?? "?"
            let decided = resumeNotes + [.report(.decision(code: "up-to-date", message: "the board already runs this program (program hash \(hash))"))]
            if pauseBeforeWriting {
                stage = .paused(.restart)
                return decided
            }
            return decided + restart()
        case .partial:
            guard let program else { return finish(.success(.fullRequired(.fileHasNoProgram))) }
            let plan: BlockPlan
            do {
                plan = try BlockPlan(image: image, program: program, boardRegion: map.program, family: family,
                                     skipErasedBlocks: settings.skipErasedBlocks, sealProgramHash: settings.sealProgramHash)
            } catch {
                let reason = FullFlashReason.regionDoesNotFit(
                    program: program.region, board: PartialFlashDecision.writableRange(of: map.program, family: family))
                self.decision = .fullRequired(reason)
                return resumeNotes + [.report(.note("\(reason) (\(error))")), .report(.decision(code: reason.code, message: reason.description))]
                    + finish(.success(.fullRequired(reason)))
            }
            return resumeNotes + startWriting(plan: plan, program: program, base: .base(program: program, board: map, plan: plan), from: nil,
                                              announce: [.report(.decision(code: "runtime-matches", message: Self.partialMessage(program, plan: plan)))],
                                              now: now)
        }
    }

    /// The words of a partial decision: both hashes and the start match.
    static func partialMessage(_ program: MakeCodeProgram, plan: BlockPlan) -> String {
        "the board runs the same runtime (\(program.runtimeHash.hexString)) with the program at \(hex32(program.magicAddress)), "
            + "so only the program is written: \(plan.blockCount) blocks, \(plan.pagesOpened) page\(plan.pagesOpened == 1 ? "" : "s")"
    }

    /// The plan for continuing at `point`, or why that is not possible.
    private func resumablePlan(_ point: ResumePoint, map: BoardMemoryMap, program: MakeCodeProgram) -> Result<BlockPlan, ResumeRefusal> {
        let plan: BlockPlan
        do {
            plan = try BlockPlan(image: image, program: program, boardRegion: map.hasProgram ? map.program : point.region,
                                 family: family, skipErasedBlocks: settings.skipErasedBlocks,
                                 sealProgramHash: settings.sealProgramHash)
        } catch {
            return .failure(ResumeRefusal("the file's program does not fit the board (\(error))"))
        }
        let why = map.hasProgram ? point.mismatch(board: map, plan: plan, program: program)
            : point.mismatch(emptyBoard: map, plan: plan, program: program)
        if let why { return .failure(ResumeRefusal(why)) }
        return .success(plan)
    }

    /// Makes the writer for `plan` and starts it, or, with `pauseBeforeWriting`, parks it until
    /// `resume(now:)`. `announce` (the decision) is reported just before the first write, so a
    /// caller that decides otherwise at the pause never sees a partial decision.
    private mutating func startWriting(plan: BlockPlan, program: MakeCodeProgram, base: ResumePoint, from block: Int?,
                                       announce: [FlowAction], now: Duration) -> [FlowAction] {
        self.plan = plan
        var writer = PartialFlashWriter(plan: plan, program: program, settings: settings)
        writer.checkpointBase = base
        if pauseBeforeWriting {
            stage = .paused(.write(writer, from: block, announce: announce))
            return []
        }
        return announce + begin(writer, from: block, now: now)
    }

    private mutating func begin(_ writer: PartialFlashWriter, from block: Int?, now: Duration) -> [FlowAction] {
        var writer = writer
        let actions = writer.beginAfterRegionInfo(now: now, from: block)
        stage = .writing(writer)
        return withoutFinish(actions) + writerFinished(writer)
    }

    private mutating func writerFinished(_ writer: PartialFlashWriter) -> [FlowAction] {
        guard let result = writer.outcome else { return [] }
        switch result {
        case let .failure(error): return finish(.failure(error))
        case var .success(stats):
            stats.reconnects += readerLinkLosses
            return finish(.success(.flashed(stats: stats)))
        }
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

/// Why a saved resume point is not used, in words.
struct ResumeRefusal: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
