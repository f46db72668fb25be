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

    public internal(set) var outcome: Result<PartialFlashResult, any Error>?
    /// What the board reported, once read.
    public internal(set) var boardMap: BoardMemoryMap?
    /// The decision, once made.
    public internal(set) var decision: PartialFlashDecision?
    /// The plan, when the board takes a partial flash.
    public internal(set) var plan: BlockPlan?
    /// The board reported this program but came back in pairing mode from a restart into it
    /// (`flashIncomplete`), so the whole program was written again.
    public internal(set) var rewroteIncompleteProgram = false
    /// True once the writer started: blocks may have been sent, and one whose answer never came
    /// may be a flash operation the board waits on for ever (`BoardReset`).
    public internal(set) var sentBlocks = false
    /// How an up-to-date board was confirmed, once it was.
    public internal(set) var confirmation: UpToDateConfirmation?
    /// When the restart that confirms an up-to-date board began.
    var confirmStarted: Duration?

    enum Stage: Sendable {
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
    enum Paused: Sendable {
        case upToDate
        /// Write with `writer` from `block` (nil: the first), after reporting `announce`.
        case write(PartialFlashWriter, from: Int?, announce: [FlowAction])
    }

    /// Whether a saved point can be continued: the plan, or why not.
    enum Resumption {
        case resumable(BlockPlan)
        case refused(ResumeMismatch)
    }

    /// What a `ProgramCheck` follows.
    enum AfterCheck: Sendable {
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

    var stage: Stage
    let image: MemoryImage
    let program: MakeCodeProgram?
    let family: ChipFamily
    let settings: PartialFlashSettings
    /// Unexpected link losses while reading, added to the writer's reconnections.
    var readerLinkLosses = 0
    /// True when a read-back in application mode after END_OF_TRANSMISSION proves nothing: the
    /// write may have run in application mode, where the board keeps running after a lost
    /// END_OF_TRANSMISSION, reporting the new program's hash with `flashIncomplete` set (CODAL
    /// and DAL build the memory map at each REGION_INFO). So it is when the writer connected
    /// again during the write (a reset may have brought the board back in application mode: it
    /// boots there until a block's flash work sets `flashIncomplete`), or when a board found in
    /// application mode was written without the switch to pairing mode.
    var restartUnproven = false
    /// The writer's reconnections, for the note of the proving restart.
    var writerReconnects = 0
    /// Where an earlier, interrupted write of this program to this board stopped.
    let resumePoint: ResumePoint?
    /// This computer's record of the program it finished on this board, if any.
    let finished: FinishRecord?

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

    mutating func finish(_ result: Result<PartialFlashResult, any Error>) -> [FlowAction] {
        outcome = result
        stage = .done
        if case .success = result { return [.report(.phase(.done)), .finish] }
        return [.finish]
    }

    func withoutFinish(_ actions: [FlowAction]) -> [FlowAction] {
        actions.filter { $0 != .finish }
    }
}
