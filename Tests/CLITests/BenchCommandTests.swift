import Foundation
#if canImport(FoundationXML)
    import FoundationXML
#endif
import Testing
import TestSupport

/// `bitflash-lab bench`, run as a subprocess on the quick scenario set: the table, the JSON, and the
/// report folder (Markdown and a well-formed SVG chart).
@Suite(.enabled(if: BitflashBinary.url != nil, "bitflash binary not built (.build/debug/bitflash): CLI tests skipped"))
struct BenchCommandTests {
    static let quick = ["bench", "--scenarios", "quick", "--profile", "device-requested", "--ci", "11.25"]

    @Test func writesATableAMarkdownReportAndAWellFormedSVGChart() throws {
        if !Corpus.isAvailable { print(Corpus.skipMessage + " (the benchmark runs on the samples only)") }
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bitflash-bench-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: dir) }
        let r = try BitflashBinary.lab(Self.quick + ["--report", dir.path])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("link profile device-requested (CI 15 ms)"))
        #expect(r.stdout.contains("link profile custom-11.25ms (CI 11.25 ms)"))
        #expect(r.stdout.contains("achieved/bound"))
        #expect(r.stdout.contains("speedup of auto over each full configuration"))

        let markdown = try String(contentsOf: dir.appendingPathComponent("report.md"), encoding: .utf8)
        #expect(markdown.hasPrefix("# bitflash flash benchmark"))
        #expect(markdown.contains("![modelled time per scenario and profile](chart.svg)"))
        #expect(markdown.contains("| scenario | board | strategy |"))
        #expect(markdown.contains("## device-requested (CI 15 ms)"))

        let svg = try Data(contentsOf: dir.appendingPathComponent("chart.svg"))
        let parser = XMLParser(data: svg)
        #expect(parser.parse(), "chart.svg is not well-formed XML: \(String(describing: parser.parserError))")
        let text = String(decoding: svg, as: UTF8.self)
        #expect(text.contains("<svg xmlns=\"http://www.w3.org/2000/svg\""))
        #expect(text.contains("lower bound"))

        let json = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: dir.appendingPathComponent("report.json")))
                as? [String: Any])
        let runs = try #require(json["runs"] as? [[String: Any]])
        #expect(runs.count >= 2 * 2 * 3)
        #expect(text.components(separatedBy: "<rect x=").count - 1 >= runs.count)
    }

    @Test func autoTakesTheFasterPathInEveryEditLoopOfTheJSON() throws {
        let r = try BitflashBinary.lab(Self.quick + ["--json"])
        #expect(r.status == 0, "\(r.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        let speedups = try #require(json["speedups"] as? [[String: Any]])
        #expect(!speedups.isEmpty)
        for s in speedups {
            // The huge program is faster as a full update; every other edit loop partially.
            let huge = (s["scenario"] as? String ?? "").hasSuffix("huge")
            #expect(s["autoPath"] as? String == (huge ? "full" : "partial"), "\(s)")
            #expect(s["autoWasFastest"] as? Bool == true, "\(s)")
            #expect((s["overReference"] as? Double ?? 0) > 1, "\(s)")
            if !huge { #expect((s["overBest"] as? Double ?? 0) > 1, "\(s)") }
        }
        let runs = try #require(json["runs"] as? [[String: Any]])
        for run in runs {
            #expect((run["ratio"] as? Double ?? 0) >= 1, "\(run)")
            #expect(run["hostCPUMilliseconds"] is Double)
            // Every run is estimated within 10 % of its modelled time, Nordic DFU's too.
            #expect(abs(run["estimateError"] as? Double ?? 1) <= 0.10, "\(run)")
        }
    }

    @Test func theClassBenchGivesEveryBoardsFinishForOnePath() throws {
        // Two stock boards at 15 ms, Secure DFU only: one JSON row with both boards' finishes.
        let r = try BitflashBinary.lab([
            "bench", "class", "--path", "nordic-dfu", "--boards", "2", "--profile", "device-requested", "--json",
            "--per-board"
        ])
        #expect(r.status == 0, "\(r.stderr)")
        let lines = r.stdout.split(separator: "\n")
        #expect(lines.count == 1)
        let row = try #require(try JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as? [String: Any])
        #expect(row["path"] as? String == "nordic-dfu" && row["failures"] as? Int == 0)
        let finishes = try #require(row["boardFinishes"] as? [[String: Double]])
        #expect(finishes.count == 2)
        let modelled = finishes.compactMap { $0["modelled"] }
        #expect(modelled.max() == row["modelledClassSeconds"] as? Double)
        for f in finishes { #expect(abs((f["estimated"] ?? 0) / (f["modelled"] ?? 1) - 1) <= 0.10, "\(f)") }

        let table = try BitflashBinary.lab(["bench", "class", "--path", "nordic-dfu", "--per-board"])
        #expect(table.status == 64)
        #expect(table.stderr.contains("--per-board needs --json"))
    }

    @Test func rejectsAConnectionIntervalBLEDoesNotAllow() throws {
        let r = try BitflashBinary.lab(["bench", "--ci", "3"])
        #expect(r.status == 64)
        #expect(r.stderr.contains("1.25 ms"))
    }
}
