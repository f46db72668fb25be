import Foundation

/// The flash benchmark as an SVG bar chart: one panel per link profile, one group of bars per
/// scenario (auto beside both full configurations), each bar's lower bound marked. The time
/// axis is logarithmic, so that a 3 s partial flash and a 90 s full update both stay readable.
public enum BenchChart {
    static let width = 1400.0
    static let labelWidth = 300.0
    static let rightMargin = 170.0
    static let barHeight = 11.0
    static let groupGap = 9.0
    static let panelHeader = 34.0
    static let colors: [BenchStrategy: String] = [
        .auto: "#2a9d8f", .fullReference: "#e76f51", .fullBest: "#f4a261",
        .partialOnly: "#8ab17d", .nordic: "#6a4c93"
    ]

    static func escape(_ s: String) -> String {
        s.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }

    static func n(_ v: Double) -> String { String(format: "%.1f", v) }

    public static func render(_ report: BenchReport) -> String {
        let times = report.runs.flatMap { [$0.modelledSeconds, $0.boundSeconds] }.filter { $0 > 0 }
        let low = pow(10, floor(log10(max(times.min() ?? 1, 0.1))))
        let high = pow(10, ceil(log10(max(times.max() ?? 10, low * 10))))
        let plotWidth = width - labelWidth - rightMargin
        func x(_ seconds: Double) -> Double {
            labelWidth + plotWidth * (log10(max(seconds, low)) - log10(low)) / (log10(high) - log10(low))
        }
        var ticks: [Double] = []
        var decade = low
        while decade <= high * 1.001 {
            for m in [1.0, 2, 5] where decade * m <= high * 1.001 { ticks.append(decade * m) }
            decade *= 10
        }
        var body: [String] = []
        var y = 70.0
        for profile in report.profiles {
            let ci = report.runs.first { $0.profile == profile }?.connectionIntervalMilliseconds ?? 0
            body.append(
                #"<text x="10" y="\#(n(y + 20))" font-size="16" font-weight="bold">\#(escape(profile)) (CI \#(String(format: "%g", ci)) ms)</text>"#
            )
            y += panelHeader
            let top = y
            var groups: [String] = []
            for scenario in report.scenarios {
                let runs = report.runs.filter { $0.profile == profile && $0.scenario == scenario }
                guard !runs.isEmpty else { continue }
                let groupTop = y
                for run in runs {
                    let color = colors[run.strategy] ?? "#888"
                    let end = x(run.modelledSeconds)
                    groups.append(
                        #"<rect x="\#(n(labelWidth))" y="\#(n(y))" width="\#(n(max(end - labelWidth, 1)))" height="\#(n(barHeight))" fill="\#(color)"><title>\#(escape("\(scenario), \(run.strategy.title): \(BenchTable.seconds(run.modelledSeconds)) s, bound \(BenchTable.seconds(run.boundSeconds)) s"))</title></rect>"#
                    )
                    if run.boundSeconds > 0 {
                        let bx = x(run.boundSeconds)
                        groups.append(
                            #"<line x1="\#(n(bx))" x2="\#(n(bx))" y1="\#(n(y - 2))" y2="\#(n(y + barHeight + 2))" stroke="black" stroke-width="2"/>"#
                        )
                    }
                    let label =
                        run.error == nil
                        ? "\(BenchTable.seconds(run.modelledSeconds)) s (\(BenchTable.ratio(run.ratio))× bound)"
                        : "failed"
                    groups.append(
                        #"<text x="\#(n(end + 6))" y="\#(n(y + barHeight - 2))" font-size="10">\#(escape(label))</text>"#
                    )
                    y += barHeight + 1
                }
                groups.append(
                    #"<text x="\#(n(labelWidth - 8))" y="\#(n((groupTop + y) / 2 + 4))" font-size="12" text-anchor="end">\#(escape(scenario))</text>"#
                )
                y += groupGap
            }
            for t in ticks {
                let tx = x(t)
                body.append(
                    #"<line x1="\#(n(tx))" x2="\#(n(tx))" y1="\#(n(top - 4))" y2="\#(n(y))" stroke="gainsboro"/>"#)
                body.append(
                    #"<text x="\#(n(tx))" y="\#(n(y + 12))" font-size="10" text-anchor="middle" fill="dimgray">\#(String(format: "%g", t)) s</text>"#
                )
            }
            body += groups
            y += 30
        }
        var legend: [String] = []
        var lx = labelWidth
        for strategy in BenchStrategy.allCases {
            legend.append(#"<rect x="\#(n(lx))" y="36" width="14" height="10" fill="\#(colors[strategy] ?? "#888")"/>"#)
            legend.append(#"<text x="\#(n(lx + 20))" y="45" font-size="12">\#(escape(strategy.title))</text>"#)
            lx += 150
        }
        legend.append(#"<line x1="\#(n(lx))" x2="\#(n(lx))" y1="33" y2="49" stroke="black" stroke-width="2"/>"#)
        legend.append(#"<text x="\#(n(lx + 8))" y="45" font-size="12">lower bound</text>"#)
        let height = y + 10
        return
            ([
                #"<?xml version="1.0" encoding="UTF-8"?>"#,
                #"<svg xmlns="http://www.w3.org/2000/svg" width="\#(Int(width))" height="\#(Int(height))" viewBox="0 0 \#(Int(width)) \#(Int(height))" font-family="sans-serif">"#,
                #"<rect width="100%" height="100%" fill="white"/>"#,
                #"<text x="10" y="22" font-size="18" font-weight="bold">bitflash: modelled flash time per scenario and link profile (log scale)</text>"#
            ]
            + legend + body + ["</svg>", ""]).joined(separator: "\n")
    }
}
