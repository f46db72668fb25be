import Diagnostics
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

    public init(boardRuntimeHash: String? = nil, fileRuntimeHash: String? = nil, boardProgramStart: String? = nil,
                fileProgramStart: String? = nil, programHash: String? = nil, block: Int? = nil, address: String? = nil,
                retries: Int? = nil, lastError: String? = nil, resumedAtBlock: Int? = nil, option: String? = nil,
                board: BoardSlotsDetails? = nil) {
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
    /// True when the board confirmed the new program's hashes (or image hash) afterwards.
    public var verified: Bool
    public var retries: Int
    /// Set when the flash failed: what went wrong and what to do.
    public var error: String?
    /// The estimate of each possible path and the choice among them (absent when none was made).
    public var decision: PathDecision?
    /// The protocol of a full update (`mcumgr` or `nordic`); nil for other paths.
    public var fullPath: FullUpdatePath? = nil
    /// How a run that ends with this result exits: 0 flashed, 3 flashed after a fallback, 74 the
    /// session failed, or the status of the error that kept the session from running (board
    /// not found, Bluetooth unavailable, ...). Not part of the JSON object.
    public var exitStatus: ExitStatus = .ok

    enum CodingKeys: String, CodingKey {
        case board, path, reason, fallback, bytesSent, seconds, verified, retries, error, decision, fullPath
    }

    /// - Parameter exitStatus: the status of the run; by default 0 (3 after a fallback), or 74
    ///   (flashing failed) when `error` is set.
    public init(board: String, path: FlashPath?, reason: FlashReason, fallback: Bool = false,
                bytesSent: Int = 0, seconds: Double = 0, verified: Bool = false, retries: Int = 0, error: String? = nil,
                exitStatus: ExitStatus? = nil) {
        self.board = board
        self.path = path
        self.reason = reason
        self.fallback = fallback
        self.bytesSent = bytesSent
        self.seconds = seconds
        self.verified = verified
        self.retries = retries
        self.error = error
        self.exitStatus = exitStatus ?? (error != nil ? .flashFailed : fallback ? .okAfterFallback : .ok)
    }

    /// The result for a board the session never ran on: it could not be found, reached or
    /// planned for. The exit status is the error's own.
    public init(board: String, unreached error: any Error, seconds: Double) {
        self.init(board: board, path: nil, reason: FlashReason(code: "failed", message: "the flash failed"), seconds: seconds,
                  error: describe(error), exitStatus: ExitStatus.of(error))
    }

    public var succeeded: Bool { error == nil }
}

extension FlashResult {
    /// The user-facing result of a session's outcome.
    public init(board: String, outcome: Result<SessionOutcome, any Error>, seconds: Double) {
        switch outcome {
        case let .success(o):
            self.init(board: board, path: o.path, reason: o.reason, fallback: o.fallback, bytesSent: o.bytesSent,
                      seconds: seconds, verified: o.verified, retries: o.retries)
            decision = o.decision
            fullPath = o.fullPath
        case let .failure(error):
            // A session's own error says how the run exits (65 for an image that cannot be for the board).
            self.init(board: board, path: nil, reason: FlashReason.failure(error), seconds: seconds, error: describe(error),
                      exitStatus: (error as? FlashError)?.exitStatus)
        }
    }
}

/// A progress event of one board's flash, for progress bars, plain logs and JSON lines.
public struct FlashEvent: Sendable, Equatable {
    public let board: String
    /// Time since the flash started (modelled on a simulated board).
    public let elapsed: Duration
    public let report: FlowReport

    public init(board: String, elapsed: Duration, report: FlowReport) {
        self.board = board
        self.elapsed = elapsed
        self.report = report
    }
}

extension Duration {
    /// The duration in seconds, as a Double.
    public var seconds: Double {
        let (s, atto) = components
        return Double(s) + Double(atto) / 1e18
    }
}
