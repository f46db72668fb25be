import FirmwareImage
import PartialFlashingFrames
import Transport

/// What partial flashing tells the user, as values: the bytes sent and received, the board's
/// answers, the request that went unanswered, the decision with its facts (hashes, addresses,
/// blocks), without the words. `FlowWords` in the Flashing module words them; tests assert the
/// values. (The writer's own reports follow it.)
public enum PartialFlashReport: FlowReportValue {
    // The link and the bytes (traces)

    /// A request sent to the board (trace).
    case sent([UInt8])
    /// A notification received from the board (trace).
    case received([UInt8])
    /// Bytes that are no partial-flashing answer, ignored (trace).
    case ignoredNotPartialFlashing
    /// An answer nobody waits for, ignored (trace).
    case ignoredStray
    /// REGION_INFO `region` answered again while the next region is awaited, ignored (trace).
    case ignoredRepeatedAnswer(region: UInt8)
    /// A notification of another characteristic, ignored (trace).
    case ignoredNotification(from: GATTCharacteristic)
    /// A write could not be handed to the link (trace).
    case writeFailed(TransportError)
    /// The link is up again after a loss (trace).
    case connectedAgain
    /// The link dropped as the board restarted (trace).
    case boardRestarts(DisconnectReason)
    /// The link dropped as the board reset after `FF 01` (trace).
    case boardResets(DisconnectReason)
    /// The board kept the link `waited` after a restart was asked for: closing it (trace).
    case noDisconnect(waited: Duration)
    /// The board kept the link `waited` after `FF 01`: closing it (trace).
    case noDisconnectAfterReset(waited: Duration)
    /// The board kept the link after `FF 00`: closing it (trace).
    case noDisconnectAfterPairingSwitch

    // Retries

    /// STATUS went unanswered: asking again (retry).
    case noAnswerToStatus
    /// REGION_INFO `region` went unanswered: asking again (retry).
    case noAnswerToRegionInfo(UInt8)
    /// Connecting failed; attempt `attempt` of `of` follows (retry).
    case connectFailed(TransportError, attempt: Int, of: Int)
    /// After `FF 00` the board came back in application mode: switching again (retry).
    case backInApplicationMode

    // What the board reported (traces)

    /// The memory map read (trace).
    case memoryMap(BoardMemoryMap)
    /// In pairing mode with the runtime and program of `map`, as before the switch (trace).
    case inPairingMode(BoardMemoryMap)
    /// Read back after a restart: the board's mode and program region (trace).
    case readBack(mode: BoardMode, program: RegionInfo)
    /// Read back in application mode with the program (trace).
    case verified(program: RegionInfo)
    /// A board in application mode had nothing unfinished: the saved point is forgotten (trace).
    case nothingUnfinished

    // Notes

    /// Resetting the board with `FF 01` before anything else: a block may hang it (note).
    case resettingHungBoard
    /// The board is back after its reset (note).
    case backAfterReset
    /// The board runs its program: restarting it in pairing mode to write it (note).
    case switchingToPairingMode
    /// Restarting the board into its program (`FF 01`) (note).
    case restartingIntoProgram
    /// The board already runs the program this computer finished on it, at `finishedAt` (note).
    case leftRunning(finishedAt: String)
    /// An up-to-date board is restarted into its program to confirm it; `inPairingMode`: it
    /// waits in pairing mode, else nothing vouches for it (note).
    case confirmingUpToDate(inPairingMode: Bool)
    /// The restart confirmed the program; it and the read-back took `cost` (note).
    case confirmedAfterRestart(cost: Duration)
    /// The board was read back in application mode after END_OF_TRANSMISSION, but the write may
    /// have run in application mode (`reconnects` reconnections during it, or no switch to
    /// pairing mode), where application mode proves no restart: restarting it into its program
    /// (`FF 01`) to prove it (note).
    case provingRestart(reconnects: Int)
    /// A saved resume point is not used (note).
    case notContinuing(ResumeMismatch)
    /// The board came back in pairing mode and nothing says its program is whole (note).
    case cameBackInPairingMode
    /// The board's flash holds the whole program: one page is written again to end the flash (note).
    case rewritingPage
    /// The board could not be reached after its restart within `window` (note).
    case notReadBack(window: Duration, lastError: TransportError?)
    /// The program written again does not fit the board's region (note).
    case rewriteDoesNotFit(FullFlashReason, PartialFlashError)

    // Decisions

    /// Only the program is written (`runtime-matches`).
    case partial(PlannedWrite)
    /// Only the program is written, continuing an unfinished write at `block` (0-based)
    /// (`runtime-matches`).
    case continuing(PlannedWrite, block: Int)
    /// The board shows no program since it restarted during this computer's write; continuing
    /// at `block` (0-based) into the region saved with it (`unfinished-write`).
    case continuingTornWrite(block: Int, regionStart: UInt32, regionEnd: UInt32)
    /// The board already runs the program (`up-to-date`); `finishedHere`: when this computer
    /// finished it there, if it vouches for the board.
    case upToDate(programHash: [UInt8], finishedHere: String?)
    /// A full update is needed (the reason's code).
    case fullRequired(FullFlashReason)
    /// A full update is needed: the plan failed with `error` (the reason's code).
    case planFailed(FullFlashReason, PartialFlashError)
    /// A restart showed `flashIncomplete`: the whole program of `blocks` is written again
    /// (`flash-incomplete`).
    case flashIncomplete(blocks: Int)

    public var kind: FlowReportKind {
        switch self {
        case .sent, .received, .ignoredNotPartialFlashing, .ignoredStray, .ignoredRepeatedAnswer, .ignoredNotification,
            .writeFailed, .connectedAgain, .boardRestarts, .boardResets, .noDisconnect, .noDisconnectAfterReset,
            .noDisconnectAfterPairingSwitch, .memoryMap, .inPairingMode, .readBack, .verified, .nothingUnfinished:
            return .trace
        case .noAnswerToStatus, .noAnswerToRegionInfo, .connectFailed, .backInApplicationMode:
            return .retry
        case .resettingHungBoard, .backAfterReset, .switchingToPairingMode, .restartingIntoProgram, .leftRunning,
            .confirmingUpToDate, .confirmedAfterRestart, .provingRestart, .notContinuing, .cameBackInPairingMode,
            .rewritingPage,
            .notReadBack, .rewriteDoesNotFit:
            return .note
        case .partial, .continuing, .continuingTornWrite, .upToDate, .fullRequired, .planFailed, .flashIncomplete:
            return .decision
        }
    }

    public var decisionCode: String? {
        switch self {
        case .partial, .continuing: return "runtime-matches"
        case .continuingTornWrite: return "unfinished-write"
        case .upToDate: return "up-to-date"
        case let .fullRequired(reason), let .planFailed(reason, _): return reason.code
        case .flashIncomplete: return "flash-incomplete"
        default: return nil
        }
    }
}

/// What a partial write will do, as its decision reports it: both hashes and the start match.
public struct PlannedWrite: Sendable, Equatable {
    /// The runtime's hash (the file's, which the board reported).
    public var runtimeHash: [UInt8]
    /// Where the program starts (its magic).
    public var programStart: UInt32
    public var blocks: Int
    /// Flash pages the plan opens (erases).
    public var pages: Int

    public init(runtimeHash: [UInt8], programStart: UInt32, blocks: Int, pages: Int) {
        self.runtimeHash = runtimeHash
        self.programStart = programStart
        self.blocks = blocks
        self.pages = pages
    }

    init(_ program: MakeCodeProgram, plan: BlockPlan) {
        self.init(
            runtimeHash: program.runtimeHash, programStart: program.magicAddress, blocks: plan.blockCount,
            pages: plan.pagesOpened)
    }
}

/// Why a saved resume point cannot be continued on the board (`ResumePoint.mismatch`).
public enum ResumeMismatch: Sendable, Equatable {
    /// The point was saved in format `saved`; this tool reads `reads`.
    case format(saved: Int, reads: Int)
    /// It belongs to another program (hex hashes).
    case anotherProgram(saved: String, file: String)
    /// The board runs another runtime than the saved write was for (hex hashes).
    case anotherRuntime(board: String, saved: String)
    /// The board's program region (start, end) differs from the saved one.
    case anotherRegion(boardStart: UInt32, boardEnd: UInt32, savedStart: UInt32, savedEnd: UInt32)
    /// The board reports a program hash an unfinished write would not leave (hex hashes).
    case programHash(reported: String, whileWriting: String)
    /// The point does not fit this file's plan of `blocks` blocks (saved: `block` 0-based of
    /// `savedBlocks`, at `address`).
    case plan(blocks: Int, savedBlock: Int, savedBlocks: Int, address: UInt32)
    /// The board shows no program, and the point belongs to another program or runtime (hex).
    case anotherProgramOrRuntime(program: String, runtime: String)
    /// The board shows no program, and the point does not fit this file's plan of `blocks` blocks.
    case planOnEmptyBoard(blocks: Int)
    /// The file's program does not fit the board.
    case programDoesNotFit(PartialFlashError)
}
