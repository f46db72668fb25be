import Foundation

/// The flash benchmark as a Markdown report, with the SVG chart beside it.
public enum BenchMarkdown {
    public static func table(_ rows: [[String]]) -> String {
        guard let header = rows.first else { return "" }
        func line(_ r: [String]) -> String {
            "| " + r.map { $0.replacingOccurrences(of: "|", with: "\\|") }.joined(separator: " | ") + " |"
        }
        return
            ([line(header), "|" + header.map { _ in "---" }.joined(separator: "|") + "|"] + rows.dropFirst().map(line))
            .joined(separator: "\n")
    }

    /// The report; `chart` is the SVG's file name next to it, `command` the command line that made it.
    public static func render(_ report: BenchReport, chart: String, command: String) -> String {
        var out: [String] = []
        out.append("# bitflash flash benchmark: partial versus full")
        out.append("")
        out.append(
            "Made with `\(command)`. Every figure is modelled time on the simulated link and boards, "
                + "deterministic: the same command gives the same modelled figures (host CPU aside).")
        out.append("")
        out.append("![modelled time per scenario and profile](\(chart))")
        out.append("")
        out.append("![partial against full updates by program size](size-chart.svg)")
        out.append("")
        out.append("## Summary (speedup of auto over each full configuration)")
        out.append("")
        out.append(table(BenchTable.speedupCells(report)))
        out.append("")
        out.append("## Goals")
        out.append("")
        out.append(
            BenchTable.goalSummary(report).split(separator: "\n").map { "- " + $0.trimmingCharacters(in: .whitespaces) }
                .joined(separator: "\n"))
        out.append("")
        out.append("## Modelled time over bound, per configuration and link profile")
        out.append("")
        out.append("Least and largest `achieved / bound` of the runs (how many runs).")
        out.append("")
        out.append(table(BenchTable.boundRatioCells(report)))
        for profile in report.profiles {
            let ci = report.runs.first { $0.profile == profile }?.connectionIntervalMilliseconds ?? 0
            out.append("")
            out.append("## \(profile) (CI \(String(format: "%g", ci)) ms)")
            out.append("")
            out.append(table(BenchTable.cells(report, profile: profile)))
        }
        out.append("")
        out.append("## Reasons (auto runs)")
        out.append("")
        var seen = Set<String>()
        for run in report.runs where run.strategy == .auto && seen.insert(run.scenario).inserted {
            out.append("- **\(run.scenario)**: \(run.path ?? "failed") — \(run.error ?? run.reasonMessage)")
        }
        out.append("")
        out.append("## How the figures are made")
        out.append("")
        out.append(report.notes.map { "- " + $0 }.joined(separator: "\n"))
        out.append("")
        return out.joined(separator: "\n")
    }
}
