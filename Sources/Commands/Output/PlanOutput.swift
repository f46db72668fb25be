import Diagnostics
import Flashing
import Foundation

/// What `flash --dry-run` found for one board: the path it would take and why, what it would
/// send, and the estimates. With `--json`, one `{"type":"plan", ...}` object per board.
struct DryRunPlan: Encodable {
    var type = "plan"
    var board: String
    var path: String?
    var reason: FlashReason
    /// The program region partial flashing would write: `start`, `end` (exclusive).
    var region: RegionJSON?
    var blocks: Int?
    var pages: Int?
    var bytes: Int?
    var decision: PathDecision?
    var error: String?

    struct RegionJSON: Encodable {
        var start: UInt32
        var end: UInt32
    }

    init(board: String, outcome: Result<SessionOutcome, any Error>) {
        self.board = board
        switch outcome {
        case let .success(o):
            path = o.path.rawValue
            reason = o.reason
            region = o.region.map { RegionJSON(start: $0.lowerBound, end: $0.upperBound) }
            decision = o.decision
            let counts = o.decision?.estimates.first { $0.path == .partial }?.counts
            blocks = counts?["blocks"]
            pages = counts?["pages"]
            bytes = counts?["bytes"]
        case let .failure(e):
            reason = FlashReason(code: "failed", message: "the plan failed")
            error = describe(e)
        }
    }
}

/// `bitflash plan FILE` for one board: `{"type":"plan", "file", ...BoardlessPlan}`.
struct BoardlessPlanJSON: Encodable {
    var type = "plan"
    var file: String
    var plan: BoardlessPlan
    func encode(to encoder: any Encoder) throws {
        try plan.encode(to: encoder)
        var c = encoder.container(keyedBy: Key.self)
        try c.encode(type, forKey: .type)
        try c.encode(file, forKey: .file)
    }
    enum Key: String, CodingKey { case type, file }
}

/// Text renderings of plans.
enum PlanText {
    static func dryRun(_ p: DryRunPlan, file: String) -> String {
        var out = "plan for \(file) on \(p.board) (dry run: nothing was written)\n"
        if let error = p.error { return out + "  failed: \(error)\n" }
        out += "  path:     \(p.path ?? "-"): \(p.reason.message)\n"
        if let r = p.region { out += "  region:   \(Hex.address(r.start))-\(Hex.address(r.end))\n" }
        if let blocks = p.blocks, let pages = p.pages, let bytes = p.bytes {
            out += "  partial:  \(blocks) blocks, \(pages) pages, \(Figures.grouped(bytes)) bytes\n"
        }
        if let d = p.decision {
            out += "  decision: \(d.summary)\n"
            for e in d.estimates { out += notes(e) }
            out += table(
                [
                    (
                        d.link.profile.name == "this connection" ? "this connection" : d.link.profile.name,
                        d.link.profile.connectionInterval.seconds * 1000, d.estimates
                    )
                ]
                    + d.byProfile.map { ($0.profile, $0.connectionIntervalMilliseconds, $0.estimates) })
        }
        return out
    }

    static func boardless(_ p: BoardlessPlan, file: String) -> String {
        var out = "plan for \(file) on a \(p.board) (\(p.chip)), without a board\n"
        if let r = p.region { out += "  region:   \(Hex.address(r.lowerBound))-\(Hex.address(r.upperBound))\n" }
        if let blocks = p.partial["blocks"], let pages = p.partial["pages"], let bytes = p.partial["bytes"] {
            out += "  partial:  \(blocks) blocks, \(pages) pages, \(Figures.grouped(bytes)) bytes\n"
        }
        if let full = p.fullImageBytes { out += "  mcumgr:   MCUboot image of \(Figures.grouped(full)) bytes\n" }
        if let app = p.nordicApplicationBytes {
            out += "  nordic:   application of \(Figures.grouped(app)) bytes (stock bootloader)\n"
        }
        out += "  a board in pairing mode:\n"
        out += table(p.byProfile.map { ($0.profile, $0.connectionIntervalMilliseconds, $0.estimates) })
        if !p.fromProgram.isEmpty {
            out += "  a board that runs its program:\n"
            out += table(p.fromProgram.map { ($0.profile, $0.connectionIntervalMilliseconds, $0.estimates) })
        }
        for n in p.notes { out += "  note: \(n)\n" }
        return out
    }

    private static func notes(_ e: PathEstimate) -> String {
        e.assumptions.map { "  note:     \(e.path.rawValue): \($0)\n" }.joined()
    }

    /// Estimated seconds per profile and path, and the fastest path.
    static func table(_ rows: [(name: String, ms: Double, estimates: [PathEstimate])]) -> String {
        let paths = EstimatedPath.allCases.filter { p in rows.contains { $0.estimates.contains { $0.path == p } } }
        let header = ["estimate", "CI"] + paths.map(\.rawValue) + ["fastest"]
        let body = rows.map { row -> [String] in
            [row.name, String(format: "%g ms", row.ms)]
                + paths.map { p in row.estimates.first { $0.path == p }.map { Figures.seconds($0.seconds) } ?? "-" }
                + [row.estimates.min { $0.seconds < $1.seconds }?.path.rawValue ?? "-"]
        }
        let widths = header.indices.map { i in ([header[i]] + body.map { $0[i] }).map(\.count).max() ?? 0 }
        func line(_ cells: [String]) -> String {
            "  "
                + zip(cells, widths).map { $0.padding(toLength: $1, withPad: " ", startingAt: 0) }.joined(
                    separator: "  "
                )
                .replacingOccurrences(of: "\\s+$", with: "", options: .regularExpression) + "\n"
        }
        return line(header) + body.map(line).joined()
    }

    static func json<T: Encodable>(_ value: T) throws -> String {
        try JSONText.line(value)
    }
}
