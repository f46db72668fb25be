import Diagnostics
import FirmwareImage
import PartialFlashing
import Transport

extension FlashReason {
    /// The reason for a board that cannot take a partial flash, with the values that decided it.
    init(_ why: FullFlashReason) {
        self.init(code: why.code, message: why.description, details: Self.details(of: why))
    }

    static func details(of why: FullFlashReason) -> FlashReasonDetails? {
        switch why {
        case let .runtimeDiffers(board, file):
            return FlashReasonDetails(boardRuntimeHash: board.hexString, fileRuntimeHash: file.hexString)
        case let .programMoved(board, file):
            return FlashReasonDetails(boardProgramStart: Hex.address(board), fileProgramStart: Hex.address(file))
        case let .boardHasNoProgram(region):
            return FlashReasonDetails(boardRuntimeHash: nil, boardProgramStart: Hex.address(region.start))
        case let .regionDoesNotFit(program, _):
            return FlashReasonDetails(fileProgramStart: Hex.address(program.lowerBound))
        case let .programLeftBehind(_, start):
            return FlashReasonDetails(boardProgramStart: Hex.address(start))
        case .fileHasNoProgram, .unsupportedProtocol:
            return nil
        }
    }

    /// Partial flashing gave up (or failed otherwise) and a full update follows.
    ///
    /// The reason names what went wrong without the error's advice ("try again"): when a full
    /// update follows, the advice no longer applies, and when none could follow, the result's
    /// error carries it.
    static func partialFailed(_ error: any Error, fullFollows: Bool = true) -> FlashReason {
        let problem = (error as? PartialFlashError)?.problem ?? describe(error)
        var details = FlashReasonDetails(lastError: problem)
        var words = "partial flashing failed (\(problem))"
        if let e = error as? PartialFlashError, case let .gaveUp(block, address, retries, _, last) = e {
            details = FlashReasonDetails(
                block: block + 1, address: Hex.address(address), retries: retries,
                lastError: last.map { "\($0)" } ?? problem)
            words =
                "partial flashing failed at block \(block + 1) (\(Hex.address(address))) after \(retries) "
                + "retr\(retries == 1 ? "y" : "ies")" + (last.map { " (last error: \($0))" } ?? "")
        }
        return FlashReason(
            code: "partial-failed", message: words + (fullFollows ? ", so a full update follows" : ""), details: details
        )
    }

    /// The reason of a failed flash: `partial-failed` with where and why when partial flashing
    /// gave up (and no full update could follow), `failed` otherwise.
    public static func failure(_ error: any Error) -> FlashReason {
        if let e = error as? PartialFlashError {
            return partialFailed(e, fullFollows: false)
        }
        // A full update that followed partial flashing failed: partial flashing's reason, with
        // where and why it gave up, and the full update's error (the result's `error`).
        if let e = error as? FlashError, let reason = e.fullUpdateReason, reason.code == "partial-failed" {
            var details = reason.details ?? FlashReasonDetails()
            if details.board == nil { details.board = mcuMgrFailureDetails(error)?.board }
            let words = reason.message.replacingOccurrences(of: ", so a full update follows", with: "")
            return FlashReason(
                code: "partial-failed", message: words + ", and the full update that followed failed", details: details)
        }
        if let details = mcuMgrFailureDetails(error) {
            return FlashReason(code: "failed", message: "the flash failed", details: details)
        }
        return FlashReason(code: "failed", message: "the flash failed")
    }

    /// A partial flash of `program` that matched the board.
    static func runtimeMatches(_ program: MakeCodeProgram?, stats: PartialFlashStats) -> FlashReason {
        var message = "runtime matches"
        if let p = program { message += " (\(p.runtimeHash.hexString))" }
        message += ": \(stats.blocks) blocks, \(stats.pages) page\(stats.pages == 1 ? "" : "s")"
        if let at = stats.resumedAtBlock { message += "; continued an unfinished write at block \(at + 1)" }
        let details = FlashReasonDetails.sameProgram(program, resumedAtBlock: stats.resumedAtBlock)
        return FlashReason(code: "runtime-matches", message: message, details: details)
    }

    /// The board reported the file's program but came back in pairing mode from a restart into
    /// it (`flashIncomplete`): the whole program was written again.
    static func flashIncomplete(_ program: MakeCodeProgram?, stats: PartialFlashStats) -> FlashReason {
        let message =
            "the board held this program but kept starting in pairing mode (a flash that was not finished "
            + "left flashIncomplete), so the program was written again: \(stats.blocks) blocks, "
            + "\(stats.pages) page\(stats.pages == 1 ? "" : "s")"
        let details = FlashReasonDetails.sameProgram(program)
        return FlashReason(code: "flash-incomplete", message: message, details: details)
    }

    /// The report that announces this reason before anything is written.
    var decision: FlowAction { .report(.decision(code: code, message: message)) }
}

extension FlashError {
    /// For a full update that was under way when the session failed: the reason it ran for.
    var fullUpdateReason: FlashReason? {
        switch self {
        case let .fullUpdateFailed(reason, _), let .nordicDFUFailed(reason, _): return reason
        default: return nil
        }
    }

    /// The protocol of the full update that failed.
    var fullUpdatePath: FullUpdatePath? {
        switch self {
        case .fullUpdateFailed: return .mcumgr
        case .nordicDFUFailed: return .nordic
        default: return nil
        }
    }
}

extension FlashReasonDetails {
    /// The details of a partial flash of `program` onto a board that held its runtime and
    /// program start: board and file alike, and the block it continued from (0-based), if any.
    static func sameProgram(_ program: MakeCodeProgram?, resumedAtBlock: Int? = nil) -> FlashReasonDetails {
        FlashReasonDetails(
            boardRuntimeHash: program?.runtimeHash.hexString,
            fileRuntimeHash: program?.runtimeHash.hexString,
            boardProgramStart: program.map { Hex.address($0.magicAddress) },
            fileProgramStart: program.map { Hex.address($0.magicAddress) },
            programHash: program?.programHash.hexString,
            resumedAtBlock: resumedAtBlock.map { $0 + 1 })
    }
}
