import Foundation

/// The flash benchmark as text tables: one per link profile, then the speedups.
public enum BenchTable {
    /// Formats seconds with three decimals.
    public static func seconds(_ s: Double) -> String { String(format: "%.3f", s) }
    public static func ratio(_ r: Double) -> String { r > 0 ? String(format: "%.3f", r) : "-" }
    public static func times(_ x: Double?) -> String { x.map { String(format: "%.2f×", $0) } ?? "-" }
    public static func percent(_ x: Double?) -> String { x.map { String(format: "%+.1f%%", $0 * 100) } ?? "-" }

    /// The rows of one profile as cells (header first), shared by the terminal and Markdown tables.
    static func cells(_ report: BenchReport, profile: String) -> [[String]] {
        var rows = [
            [
                "scenario", "board", "strategy", "path", "reason", "modelled s", "bound s", "achieved/bound",
                "estimate s", "estimate error", "on air B", "blocks/chunks", "retries", "host CPU ms"
            ]
        ]
        for run in report.runs where run.profile == profile {
            let mark = BenchReport.goal(of: run).map { run.ratio > $0 ? " !" : "" } ?? ""
            rows.append([
                run.scenario, run.board, run.strategy.title, run.path ?? "failed", run.reason,
                seconds(run.modelledSeconds), seconds(run.boundSeconds), ratio(run.ratio) + mark,
                run.estimatedSeconds.map(seconds) ?? "-", percent(run.estimateError), String(run.bytesOnAir),
                "\(run.transfers) \(run.transferUnit)", String(run.retries),
                String(format: "%.1f", run.hostCPUMilliseconds)
            ])
        }
        return rows
    }

    static func speedupCells(_ report: BenchReport, profile: String? = nil) -> [[String]] {
        var rows = [
            [
                "scenario", "profile", "auto path", "speedup vs full (reference)", "speedup vs full (bitflash)",
                "speedup vs partial", "auto took the faster path"
            ]
        ]
        for s in report.speedups where profile == nil || s.profile == profile {
            rows.append([
                s.scenario, s.profile, s.autoPath ?? "failed", times(s.overReference), times(s.overBest),
                times(s.overPartial), s.autoWasFastest.map { $0 ? "yes" : "NO" } ?? "-"
            ])
        }
        return rows
    }

    /// Columns padded to their widest cell; numbers right-aligned.
    static func aligned(_ rows: [[String]], rightAligned: Set<Int>) -> String {
        guard let header = rows.first else { return "" }
        var widths = header.map(\.count)
        for row in rows {
            for (i, cell) in row.enumerated() where i < widths.count { widths[i] = max(widths[i], cell.count) }
        }
        func line(_ row: [String]) -> String {
            row.enumerated().map { i, cell in
                let pad = String(repeating: " ", count: max(0, widths[i] - cell.count))
                return rightAligned.contains(i) ? pad + cell : cell + pad
            }.joined(separator: "  ")
        }
        var out = [line(header), widths.map { String(repeating: "-", count: $0) }.joined(separator: "  ")]
        out += rows.dropFirst().map(line)
        return out.joined(separator: "\n")
    }

    /// The whole report for a terminal.
    public static func render(_ report: BenchReport) -> String {
        var out: [String] = []
        for profile in report.profiles {
            let ci = report.runs.first { $0.profile == profile }?.connectionIntervalMilliseconds ?? 0
            out.append("link profile \(profile) (CI \(String(format: "%g", ci)) ms)")
            out.append(aligned(cells(report, profile: profile), rightAligned: [5, 6, 7, 8, 9, 10, 11, 12, 13]))
            out.append("")
        }
        out.append("speedup of auto over each full configuration (modelled time)")
        out.append(aligned(speedupCells(report), rightAligned: [3, 4, 5]))
        out.append("")
        out.append(goalSummary(report))
        out.append(estimateSummary(report))
        return out.joined(separator: "\n")
    }

    /// One line on the estimates: the largest error, and whether auto took the fastest path everywhere.
    public static func estimateSummary(_ report: BenchReport) -> String {
        let slower = report.speedups.filter { $0.autoWasFastest == false }
        let error = report.largestEstimateError.map { String(format: "%.1f%%", $0 * 100) } ?? "-"
        let compared = report.speedups.filter { $0.autoWasFastest != nil }.count
        return "estimates: largest error \(error) against the modelled time; auto took the faster path in "
            + (slower.isEmpty
                ? "all \(compared) scenarios with two possible paths"
                : "all but \(slower.count): " + slower.map { "\($0.scenario) / \($0.profile)" }.joined(separator: ", "))
    }

    /// One line on the goals, and one per row that misses its goal.
    public static func goalSummary(_ report: BenchReport) -> String {
        let missing = report.rowsMissingTheirGoal
        let head =
            "goals: partial and up-to-date rows ≤ \(BenchReport.partialGoal) × bound, best-full rows ≤ \(BenchReport.fullGoal) × bound, "
            + "Secure DFU rows ≤ \(BenchReport.secureDFUGoal) × bound: "
        guard !missing.isEmpty else { return head + "all \(report.runs.count) runs met" }
        return head + "\(missing.count) missed (marked !)\n"
            + missing.map {
                "  \($0.scenario) / \($0.profile) / \($0.strategy.title): \($0.error ?? String(format: "%.3f", $0.ratio))"
            }.joined(separator: "\n")
    }

    /// Modelled time over bound per configuration and board (rows) and link profile (columns):
    /// the least and the largest `achieved / bound` of the runs, and how many runs.
    public static func boundRatioCells(_ report: BenchReport) -> [[String]] {
        let profiles = report.profiles
        var keys: [String] = []
        var ratios: [String: [String: [Double]]] = [:]
        for run in report.runs where run.boundSeconds > 0 && run.error == nil {
            let key = "\(run.strategy.title), \(run.board)"
            if ratios[key] == nil { keys.append(key) }
            ratios[key, default: [:]][run.profile, default: []].append(run.ratio)
        }
        var rows = [["configuration, board"] + profiles]
        for key in keys {
            rows.append(
                [key]
                    + profiles.map { profile in
                        guard let r = ratios[key]?[profile], let low = r.min(), let high = r.max() else { return "-" }
                        let (a, b) = (String(format: "%.3f", low), String(format: "%.3f", high))
                        let range = a == b ? a : "\(a)–\(b)"
                        return "\(range) (\(r.count))"
                    })
        }
        return rows
    }
}
