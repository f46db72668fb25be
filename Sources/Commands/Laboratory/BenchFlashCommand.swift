import ArgumentParser
import Diagnostics
import Flashing
import Foundation
import Laboratory
import LinkModel

/// `bitflash-lab bench [flash]`: partial flashing against full updates on simulated boards, beside the lower bounds.
struct BenchFlashCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "flash",
        abstract: "Compare partial flashing with full McuMgr updates on the link model, against the lower bounds.",
        discussion: """
            Scenarios: edit loops (the board runs program A, program B with the same runtime is flashed), \
            a new runtime, and the same file again, on the real MakeCode files of the shared corpus \
            (../shared/testdata or BITFLASH_TESTDATA) when present, else on the project's samples. \
            Each runs with auto and with two forced full-update configurations: the reference mobile \
            library's default (one request in flight, no reassembly) and bitflash's (pipelining and \
            reassembly). Times are modelled seconds; two runs give the same modelled figures.
            """)

    enum ScenarioSet: String, ExpressibleByArgument, CaseIterable {
        /// The corpus when present, else the samples.
        case all
        case corpus
        case samples
        /// The samples' edit loops and one real pair per family: quick.
        case quick
    }

    @Option(help: "Scenarios: all (the corpus, else samples), corpus, samples, quick.")
    var scenarios: ScenarioSet = .all

    @OptionGroup var link: BenchLinkOptions

    @Option(
        name: .customLong("ci"), parsing: .unconditionalSingleValue,
        help: ArgumentHelp(
            "Also a profile with this connection interval in ms, \(Limits.connectionIntervalMilliseconds.text) in steps of 1.25 ms (repeatable).",
            valueName: "MS"),
        transform: OptionValues.connectionInterval)
    var intervals: [Double] = []

    @Flag(help: "Print the report as JSON instead of tables.")
    var json = false

    @Option(
        help: ArgumentHelp(
            "Write report.md, chart.svg, size-chart.svg and report.json into this folder.", valueName: "DIR"))
    var report: String?

    func validate() throws {
        _ = try linkProfiles()
    }

    func run() throws {
        let links = try linkProfiles()
        let chosen = scenarioList()
        guard !chosen.isEmpty else {
            throw CLIError(
                .cannotRead, "no scenarios: the corpus was not found (set BITFLASH_TESTDATA) — try --scenarios samples")
        }
        if !json {
            print(
                "flash benchmark: \(chosen.count) scenarios × \(links.count) profiles (\(chosen.first?.source ?? "")); modelled time"
            )
        }
        let result = BenchRunner.runAll(chosen, profiles: links)
        if json {
            print(try Self.encode(result))
        } else {
            print(BenchTable.render(result))
        }
        if let report {
            try write(result, to: report)
            if !json { print("\nreport written to \(report)/report.md, chart.svg, size-chart.svg, report.json") }
        }
    }

    static func encode(_ report: BenchReport) throws -> String {
        try JSONText.document(report)
    }

    private func linkProfiles() throws -> [LinkProfile] {
        var out: [LinkProfile] = []
        do {
            out = try link.links()
            out += try intervals.map {
                try LinkProfile.custom(connectionIntervalMicroseconds: Int64(($0 * 1000).rounded()))
            }
        } catch {
            throw ValidationError(describe(error))
        }
        return out
    }

    private func scenarioList() -> [BenchScenario] {
        let corpus = CorpusLocator.directory()
        func real() -> [BenchScenario] {
            guard let corpus else { return [] }
            return BenchScenario.corpus { path in
                (try? Data(contentsOf: corpus.appendingPathComponent(path))).map { [UInt8]($0) }
            }
        }
        switch scenarios {
        case .all:
            let r = real()
            return r.isEmpty ? BenchScenario.samples() : r
        case .corpus: return real()
        case .samples: return BenchScenario.samples()
        case .quick:
            return BenchScenario.samples().filter { $0.kind == .edit }
                + real().filter { $0.name.hasSuffix("small-heart → serial-counter") }
        }
    }

    private func write(_ result: BenchReport, to folder: String) throws {
        let dir = URL(fileURLWithPath: folder)
        let command = (["bitflash"] + CommandLine.arguments.dropFirst()).joined(separator: " ")
        do {
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        } catch {
            throw CLIError(
                .cannotWrite,
                "could not make the report folder \(folder): \((error as NSError).localizedFailureReason ?? "it is not a folder or cannot be created"); choose a writable folder"
            )
        }
        try OutputFile.write(
            Array(BenchMarkdown.render(result, chart: "chart.svg", command: command).utf8),
            to: dir.appendingPathComponent("report.md").path, what: "the report")
        try OutputFile.write(
            Array(BenchChart.render(result).utf8), to: dir.appendingPathComponent("chart.svg").path, what: "the chart")
        try OutputFile.write(
            Array(BenchSizeChart.render(result).utf8), to: dir.appendingPathComponent("size-chart.svg").path,
            what: "the chart by program size")
        try OutputFile.write(
            Array(Self.encode(result).utf8), to: dir.appendingPathComponent("report.json").path, what: "the report")
    }
}
