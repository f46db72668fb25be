import Crypto
import Flashing
import Foundation
import Transport

/// The first line of a trace file (`"kind": "meta"`): what was flashed and how, so that
/// `bitflash sim replay` can run the same client flow again.
struct TraceHeader: Codable, Equatable {
    /// The trace format (2: with `input` lines, a `meta` line and `result` lines).
    var format = 2
    /// The firmware file's name and SHA-256 (hex).
    var file: String
    var sha256: String
    /// The board the plan was made for (`microbit-v2`...), and the simulated profile.
    var board: String
    var profile: String?
    var mode: String
    var upgradeMode: String
    var verbosity: Int
    /// The name of the `--dfu-image` file, when one was given.
    var dfuImage: String?
    /// The saved points the boards' flashes continued from, by board name.
    var resume: [String: ResumePoint]?

    static func sha256(of path: String) -> String {
        guard let data = try? Data(contentsOf: URL(fileURLWithPath: path)) else { return "" }
        return SHA256.hash(data: data).map { String(format: "%02x", $0) }.joined()
    }
}

/// The last lines of a trace file (`"kind": "result"`): how each board's flash ended.
struct TraceResult: Codable, Equatable {
    var path: String?
    var code: String
    var error: String?

    init(_ r: FlashResult) {
        path = r.path?.rawValue
        code = r.reason.code
        error = r.error
    }

    var summary: String {
        (path ?? "failed") + " (\(code))" + (error.map { ": \($0)" } ?? "")
    }
}

extension FlashCommand {
    func traceHeader(profile: SimProfile, plans: [(name: String, resume: ResumePoint?)]) -> TraceHeader {
        let points = Dictionary(plans.compactMap { p in p.resume.map { (p.name, $0) } }, uniquingKeysWith: { a, _ in a })
        return TraceHeader(file: (file as NSString).lastPathComponent, sha256: TraceHeader.sha256(of: file),
                    board: board ?? profile.board.rawValue, profile: "\(profile)", mode: mode.rawValue,
                    upgradeMode: upgradeMode.rawValue, verbosity: output.verbose,
                    dfuImage: dfuImage.map { ($0 as NSString).lastPathComponent }, resume: points.isEmpty ? nil : points)
    }
}
