import Crypto
import Diagnostics
import Foundation
import PartialFlashingFrames
import Transport

/// The first line of a trace file (`"kind": "meta"`): what was flashed and how, so that
/// `bitflash sim replay` can run the same client flow again.
public struct TraceHeader: Codable, Sendable, Equatable {
    /// The trace format (2: with `input` lines, a `meta` line and `result` lines).
    public var format = 2
    /// The firmware file's name and SHA-256 (hex).
    public var file: String
    public var sha256: String
    /// The board the plan was made for (`microbit-v2`...), and the simulated profile.
    public var board: String
    public var profile: String?
    public var mode: String
    public var upgradeMode: String
    public var verbosity: Int
    /// The name of the full-update image file (`--dfu-image`), when one was given.
    public var dfuImage: String?
    /// The saved points the boards' flashes continued from, by board name.
    public var resume: [String: ResumePoint]?

    public init(
        file: String, sha256: String, board: String, profile: String?, mode: String, upgradeMode: String,
        verbosity: Int, dfuImage: String?, resume: [String: ResumePoint]?
    ) {
        self.file = file
        self.sha256 = sha256
        self.board = board
        self.profile = profile
        self.mode = mode
        self.upgradeMode = upgradeMode
        self.verbosity = verbosity
        self.dfuImage = dfuImage
        self.resume = resume
    }

    /// The SHA-256 of the file at `path` in lower-case hex, or "" when it cannot be read.
    public static func sha256(of path: String) -> String {
        guard let data = try? Data(contentsOf: URL(fileURLWithPath: path)) else { return "" }
        return Hex.bytes(SHA256.hash(data: data), uppercase: false)
    }
}

/// The last lines of a trace file (`"kind": "result"`): how each board's flash ended.
public struct TraceResult: Codable, Sendable, Equatable {
    /// The path taken (`partial`, `full`, `up-to-date`), nil when the flash failed first.
    public var path: String?
    /// The reason's code (`runtime-matches`, `failed`, ...).
    public var code: String
    public var error: String?

    public init(path: String?, code: String, error: String?) {
        self.path = path
        self.code = code
        self.error = error
    }

    /// `partial (runtime-matches)`, or `failed (failed): what went wrong`.
    public var summary: String {
        (path ?? "failed") + " (\(code))" + (error.map { ": \($0)" } ?? "")
    }
}
