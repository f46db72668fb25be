import Diagnostics
import PartialFlashing
import Transport

/// The path a flash took.
public enum FlashPath: String, Codable, Sendable, Equatable {
    /// Only the changed MakeCode program region was sent (partial-flashing protocol).
    case partial
    /// The whole application was replaced (McuMgr or Nordic DFU).
    case full
    /// The board already runs this program; nothing was written.
    case upToDate = "up-to-date"
}

/// Why a path was taken, in words and as a stable code for scripts.
public struct FlashReason: Codable, Sendable, Equatable, CustomStringConvertible {
    /// Stable, machine-readable: `runtime-matches`, `runtime-differs`, `program-moved`,
    /// `up-to-date`, `partial-failed`, `no-partial-service`, `no-program-region`, `forced`, ...
    public let code: String
    /// One sentence for people, with the values that mattered.
    public let message: String
    /// The values behind the decision, for scripts (absent when there are none).
    public var details: FlashReasonDetails?

    public init(code: String, message: String, details: FlashReasonDetails? = nil) {
        self.code = code
        self.message = message
        self.details = details
    }

    public var description: String { message }
}

/// The values behind a `FlashReason`. Only the fields that apply to the reason are present
/// (hashes as 16 hex digits, addresses as `0x` and 8 hex digits, blocks counted from 1).
public struct FlashReasonDetails: Codable, Sendable, Equatable {
    /// `runtime-differs`, `runtime-matches`: region 1's hash on the board and in the file.
    public var boardRuntimeHash: String?
    public var fileRuntimeHash: String?
    /// `program-moved`, `runtime-matches`: where the program starts on the board and in the file.
    public var boardProgramStart: String?
    public var fileProgramStart: String?
    /// `up-to-date`, `runtime-matches`: the file's program hash.
    public var programHash: String?
    /// `partial-failed`: the block (from 1) and address partial flashing gave up at, the retries
    /// spent on it and the last thing that went wrong.
    public var block: Int?
    public var address: String?
    public var retries: Int?
    public var lastError: String?
    /// `runtime-matches`: the block (from 1) an unfinished earlier write was continued at.
    public var resumedAtBlock: Int?
    /// `forced`: the option that forced the path.
    public var option: String?
    /// `failed` after a full update over McuMgr: the board's slots as read back after the failure.
    public var board: BoardSlotsDetails?

    public init(
        boardRuntimeHash: String? = nil, fileRuntimeHash: String? = nil, boardProgramStart: String? = nil,
        fileProgramStart: String? = nil, programHash: String? = nil, block: Int? = nil, address: String? = nil,
        retries: Int? = nil, lastError: String? = nil, resumedAtBlock: Int? = nil, option: String? = nil,
        board: BoardSlotsDetails? = nil
    ) {
        self.boardRuntimeHash = boardRuntimeHash
        self.fileRuntimeHash = fileRuntimeHash
        self.boardProgramStart = boardProgramStart
        self.fileProgramStart = fileProgramStart
        self.programHash = programHash
        self.block = block
        self.address = address
        self.retries = retries
        self.lastError = lastError
        self.resumedAtBlock = resumedAtBlock
        self.option = option
        self.board = board
    }
}

/// How far the result of a flash was confirmed: the `verification` word of `--json`.
public enum FlashVerification: String, Codable, Sendable, Equatable {
    /// Read back after the board's last restart: it runs the new program in application mode
    /// (STATUS and the program's hashes; after a full update without a MakeCode program, the
    /// active image's hash from McuMgr or the bootloader's check of the whole image).
    case verified
    /// The program is on the board (every block acknowledged and END_OF_TRANSMISSION sent, a
    /// full update completed, or found up to date), but the board could not be read back running
    /// it in application mode; `verificationNote` says why. Exit status 2.
    case unverified
    /// The flash failed (`error` says why and what to do).
    case failed
    /// A dry run: nothing was written, so there is nothing to verify.
    case dryRun = "dry-run"
}

/// What happened to one board. This is the stable result object of `--json`.
public struct FlashResult: Codable, Sendable, Equatable {
    /// The board's name or address (`simulated:microbit-v2` for a simulated board).
    public var board: String
    /// The path taken; nil when the flash failed before a path was chosen.
    public var path: FlashPath?
    public var reason: FlashReason
    /// True when partial flashing was tried and given up, and a full update followed.
    public var fallback: Bool
    /// Payload bytes written to the board (program blocks or image chunks).
    public var bytesSent: Int
    /// Modelled seconds on a simulated board, real seconds otherwise.
    public var seconds: Double
    /// True when the board was read back running the new program in application mode
    /// (`verification` is `verified`).
    public var verified: Bool
    /// `verified`, `unverified`, `failed` or `dry-run` (see `FlashVerification`).
    public var verification: FlashVerification
    /// Why the result is not verified, when it is not (and not a failure or a dry run).
    public var verificationNote: String?
    public var retries: Int
    /// Set when the flash failed: what went wrong and what to do.
    public var error: String?
    /// The estimate of each possible path and the choice among them (absent when none was made).
    public var decision: PathDecision?
    /// The protocol of a full update (`mcumgr` or `nordic`); nil for other paths.
    public var fullPath: FullUpdatePath? = nil
    /// What kind of failure ended the flash, when it failed (`error` is set): the error's own kind
    /// (board not found, Bluetooth unavailable, a file for another board, ...), else a failed
    /// flash. Nil for a flash that did not fail. Not part of the JSON object.
    public var failureKind: FailureKind?

    enum CodingKeys: String, CodingKey {
        case board, path, reason, fallback, bytesSent, seconds, verified, verification, verificationNote, retries,
            error,
            decision, fullPath
    }

    /// - Parameters:
    ///   - verification: by default `failed` with an `error`, `verified` when `verified`, else `unverified`.
    ///   - failureKind: what kind of failure `error` is; by default a failed flash when `error` is set.
    public init(
        board: String, path: FlashPath?, reason: FlashReason, fallback: Bool = false,
        bytesSent: Int = 0, seconds: Double = 0, verified: Bool = false, verification: FlashVerification? = nil,
        verificationNote: String? = nil, retries: Int = 0, error: String? = nil, failureKind: FailureKind? = nil
    ) {
        self.board = board
        self.path = path
        self.reason = reason
        self.fallback = fallback
        self.bytesSent = bytesSent
        self.seconds = seconds
        self.verified = verified
        let word = verification ?? (error != nil ? .failed : verified ? .verified : .unverified)
        self.verification = word
        self.verificationNote =
            word == .unverified ? (verificationNote ?? "the board was not read back") : verificationNote
        self.retries = retries
        self.error = error
        self.failureKind = error == nil ? nil : (failureKind ?? .flashFailed)
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        board = try c.decode(String.self, forKey: .board)
        path = try c.decodeIfPresent(FlashPath.self, forKey: .path)
        reason = try c.decode(FlashReason.self, forKey: .reason)
        fallback = try c.decode(Bool.self, forKey: .fallback)
        bytesSent = try c.decode(Int.self, forKey: .bytesSent)
        seconds = try c.decode(Double.self, forKey: .seconds)
        verified = try c.decode(Bool.self, forKey: .verified)
        retries = try c.decode(Int.self, forKey: .retries)
        error = try c.decodeIfPresent(String.self, forKey: .error)
        decision = try c.decodeIfPresent(PathDecision.self, forKey: .decision)
        fullPath = try c.decodeIfPresent(FullUpdatePath.self, forKey: .fullPath)
        // Results written before the word existed: derived as the initialiser derives it.
        verification =
            try c.decodeIfPresent(FlashVerification.self, forKey: .verification)
            ?? (error != nil ? .failed : verified ? .verified : .unverified)
        verificationNote = try c.decodeIfPresent(String.self, forKey: .verificationNote)
        failureKind = error == nil ? nil : .flashFailed
    }

    /// The result for a board the session never ran on: it could not be found, reached or
    /// planned for. The failure's kind is the error's own.
    public init(board: String, unreached error: any Error, seconds: Double) {
        self.init(
            board: board, path: nil, reason: FlashReason(code: "failed", message: "the flash failed"), seconds: seconds,
            error: describe(error), failureKind: FailureKind.of(error))
    }

    /// True when the flash did not fail (it may still be unverified: see `verification`).
    public var succeeded: Bool { error == nil }
}

extension FlashResult {
    /// The user-facing result of a session's outcome.
    /// - Parameter progress: for a failed session, what it did before it failed (its
    ///   `SessionFlow.progress`): the path it was on, the fallback, its retries and bytes.
    public init(
        board: String, outcome: Result<SessionOutcome, any Error>, seconds: Double, progress: SessionProgress? = nil
    ) {
        switch outcome {
        case let .success(o):
            self.init(
                board: board, path: o.path, reason: o.reason, fallback: o.fallback, bytesSent: o.bytesSent,
                seconds: seconds, verified: o.verified, verification: o.dryRun ? .dryRun : nil,
                verificationNote: o.unverifiedReason, retries: o.retries)
            decision = o.decision
            fullPath = o.fullPath
        case let .failure(error):
            // A session's own error says what kind of failure it was: a file or image that cannot
            // be for the board, the Bluetooth stack breaking its protocol; a failed flash otherwise.
            let own = FailureKind.of(error)
            let reason = FlashReason.failure(error)
            // How far the session got: partial flashing's retries, and the full update it was in.
            let full = (error as? FlashError)?.fullUpdateReason
            self.init(
                board: board,
                path: progress?.path ?? (full != nil ? .full : (error is PartialFlashError ? .partial : nil)),
                reason: reason, fallback: progress?.fallback ?? (full?.code == "partial-failed"),
                bytesSent: progress?.bytesSent ?? 0, seconds: seconds,
                retries: max(progress?.retries ?? 0, reason.details?.retries ?? 0), error: describe(error),
                failureKind: (error as? FlashError)?.failureKind
                    ?? (own == .badFirmware || own == .stackViolation ? own : nil))
            fullPath = progress?.fullPath ?? (error as? FlashError)?.fullUpdatePath
        }
    }
}

/// A progress event of one board's flash, for progress bars, plain logs and JSON lines.
public struct FlashEvent: Sendable, Equatable {
    public let board: String
    /// Time since the flash started (modelled on a simulated board).
    public let elapsed: Duration
    public let report: FlowReport
    /// On a progress report, the rate measured on this link so far and the phase's time left at
    /// it (`ProgressRateMeter`); nil until enough progress was seen, and on other reports.
    public let rate: ProgressRate?

    public init(board: String, elapsed: Duration, report: FlowReport, rate: ProgressRate? = nil) {
        self.board = board
        self.elapsed = elapsed
        self.report = report
        self.rate = rate
    }
}

extension Duration {
    /// The duration in seconds, as a Double.
    public var seconds: Double {
        let (s, atto) = components
        return Double(s) + Double(atto) / 1e18
    }
}
