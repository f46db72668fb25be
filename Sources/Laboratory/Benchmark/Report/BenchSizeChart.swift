import Foundation

/// Partial flashing against the full updates by program size, as an SVG: one panel per link
/// profile, the program's bytes (what partial flashing writes, from the forced partial run of
/// each edit scenario) across, modelled seconds up, one line per configuration and board
/// (solid for the first board, dashed for the others).
public enum BenchSizeChart {
    static let panelWidth = 420.0
    static let panelHeight = 300.0
    static let margin = 60.0
    static let shown: [BenchStrategy] = [.partialOnly, .fullBest, .nordic, .fullReference]

    typealias Line = [(bytes: Int, seconds: Double)]

    /// Per profile, configuration and board, the points (program bytes, modelled seconds), by size.
    static func points(_ report: BenchReport) -> [String: [BenchStrategy: [String: Line]]] {
        var out: [String: [BenchStrategy: [String: Line]]] = [:]
        for profile in report.profiles {
            for scenario in report.scenarios {
                let runs = report.runs.filter { $0.profile == profile && $0.scenario == scenario && $0.error == nil }
                guard let partial = runs.first(where: { $0.strategy == .partialOnly }), partial.payloadBytes > 0
                else { continue }
                for run in runs where shown.contains(run.strategy) {
                    out[profile, default: [:]][run.strategy, default: [:]][run.board, default: []].append(
                        (partial.payloadBytes, run.modelledSeconds))
                }
            }
        }
        for (profile, strategies) in out {
            for (strategy, boards) in strategies {
                for (board, line) in boards { out[profile]?[strategy]?[board] = line.sorted { $0.bytes < $1.bytes } }
            }
        }
        return out
    }

    public static func render(_ report: BenchReport) -> String {
        let data = points(report)
        let profiles = report.profiles.filter { data[$0] != nil }
        let all = data.values.flatMap { $0.values.flatMap { $0.values.flatMap { $0 } } }
        let boards = report.runs.map(\.board).uniqued()
        let maxBytes = Double(max(all.map(\.bytes).max() ?? 1, 1))
        let maxSeconds = max(all.map(\.seconds).max() ?? 1, 1)
        let n = BenchChart.n
        var body: [String] = []
        for (i, profile) in profiles.enumerated() {
            let left = margin + Double(i) * (panelWidth + margin)
            let top = 70.0
            func x(_ bytes: Int) -> Double { left + panelWidth * Double(bytes) / maxBytes }
            func y(_ seconds: Double) -> Double { top + panelHeight * (1 - seconds / maxSeconds) }
            body.append(
                #"<text x="\#(n(left))" y="\#(n(top - 10))" font-size="14" font-weight="bold">\#(BenchChart.escape(profile))</text>"#
            )
            body.append(
                #"<rect x="\#(n(left))" y="\#(n(top))" width="\#(n(panelWidth))" height="\#(n(panelHeight))" fill="none" stroke="gray"/>"#
            )
            body.append(
                #"<text x="\#(n(left + panelWidth))" y="\#(n(top + panelHeight + 16))" font-size="10" text-anchor="end">\#(Int(maxBytes / 1024)) KiB</text>"#
            )
            body.append(
                #"<text x="\#(n(left - 4))" y="\#(n(top + 10))" font-size="10" text-anchor="end">\#(BenchTable.seconds(maxSeconds)) s</text>"#
            )
            for strategy in shown {
                for (b, board) in boards.enumerated() {
                    guard let points = data[profile]?[strategy]?[board], !points.isEmpty else { continue }
                    let color = BenchChart.colors[strategy] ?? "#888"
                    let path = points.map { "\(n(x($0.bytes))),\(n(y($0.seconds)))" }.joined(separator: " ")
                    let dash = b == 0 ? "" : #" stroke-dasharray="6 4""#
                    body.append(
                        #"<polyline points="\#(path)" fill="none" stroke="\#(color)" stroke-width="2"\#(dash)/>"#)
                    for p in points {
                        body.append(
                            #"<circle cx="\#(n(x(p.bytes)))" cy="\#(n(y(p.seconds)))" r="3" fill="\#(color)"><title>\#(BenchChart.escape("\(strategy.title), \(board): \(p.bytes) bytes, \(BenchTable.seconds(p.seconds)) s"))</title></circle>"#
                        )
                    }
                }
            }
        }
        var legend: [String] = []
        var lx = margin
        for strategy in shown {
            legend.append(
                #"<rect x="\#(n(lx))" y="30" width="14" height="10" fill="\#(BenchChart.colors[strategy] ?? "#888")"/>"#
            )
            legend.append(
                #"<text x="\#(n(lx + 20))" y="39" font-size="12">\#(BenchChart.escape(strategy.title))</text>"#)
            lx += 150
        }
        if boards.count > 1 {
            let text = "solid: \(boards[0]); dashed: \(boards.dropFirst().joined(separator: ", "))"
            legend.append(#"<text x="\#(n(lx))" y="39" font-size="12">\#(BenchChart.escape(text))</text>"#)
        }
        let width = margin + Double(max(profiles.count, 1)) * (panelWidth + margin)
        let height = 70 + panelHeight + 40
        return
            ([
                #"<?xml version="1.0" encoding="UTF-8"?>"#,
                #"<svg xmlns="http://www.w3.org/2000/svg" width="\#(Int(width))" height="\#(Int(height))" viewBox="0 0 \#(Int(width)) \#(Int(height))" font-family="sans-serif">"#,
                #"<rect width="100%" height="100%" fill="white"/>"#,
                #"<text x="10" y="20" font-size="16" font-weight="bold">bitflash: partial against full updates by program size (modelled seconds)</text>"#
            ] + legend + body + ["</svg>", ""]).joined(separator: "\n")
    }
}
