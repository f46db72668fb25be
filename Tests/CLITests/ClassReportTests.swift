import Foundation
import Testing
import TestSupport

/// The report that closes a class set, and `--retry-failed`, on simulated boards.
@Suite(.enabled(if: BitflashBinary.url != nil, "bitflash binary not built (.build/debug/bitflash): CLI tests skipped"))
struct ClassReportTests {
    static func objects(_ r: BitflashBinary.Result) -> [[String: Any]] {
        r.lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    /// Three boards, of which the first two already hold `file`, flashed with bitflash stopped
    /// (`--sim-kill-at`) before the third one's partial flash can finish.
    static func classWithOneFailure(_ state: URL, file: String) throws -> BitflashBinary.Result {
        let other = BitflashBinary.sample("sample-r1-counter.hex").path
        let base = ["--simulate", "microbit-v2", "--sim-state", state.path]
        #expect(try BitflashBinary.run(["flash", other, "--boards", "3"] + base).status == 0)
        #expect(try BitflashBinary.run(["flash", file, "--boards", "2"] + base).status == 0)
        return try BitflashBinary.lab(["flash", file, "--boards", "3", "--sim-kill-at", "5"] + base)
    }

    @Test(
        "A class set ends with a table of name, address, result, path, time and a fix per failure; --json gives the same summary"
    )
    func classReportNamesEachBoardAndTheFix() throws {
        let file = BitflashBinary.sample("sample-r1-heart.hex").path
        let state = try BitflashBinary.temporaryDirectory()
        let run = try Self.classWithOneFailure(state, file: file)
        #expect(run.status == 74, "\(run.stderr)")
        let header = try #require(run.lines.first { $0.hasPrefix("board ") })
        #expect(
            header.split(separator: " ").map(String.init) == [
                "board", "name", "address", "result", "path", "time", "verified", "fix"
            ])
        #expect(
            run.lines.contains { $0.hasPrefix("sim-1  sim-1  F0:0D:00:00:00:01  ok      up-to-date") }, "\(run.stdout)")
        let failed = try #require(run.lines.first { $0.hasPrefix("sim-3") })
        #expect(failed.contains("F0:0D:00:00:00:03  FAILED"), "\(failed)")
        #expect(failed.contains("--retry-failed"), "\(failed)")
        #expect(run.stdout.contains("2 of 3 boards flashed, 1 failed: run the same command with --retry-failed"))

        // The same class as JSON: the last line is the summary, with the same rows.
        let again = try BitflashBinary.temporaryDirectory()
        _ = try Self.classWithOneFailure(again, file: file)
        let json = try BitflashBinary.lab([
            "flash", file, "--simulate", "microbit-v2", "--boards", "3", "--sim-kill-at", "0.5",
            "--sim-state", again.path, "--json"
        ])
        let summary = try #require(Self.objects(json).last)
        #expect(summary["type"] as? String == "summary")
        let rows = try #require(summary["boards"] as? [[String: Any]])
        #expect(rows.map { $0["board"] as? String } == ["sim-1", "sim-2", "sim-3"])
        #expect(
            rows.map { $0["address"] as? String } == ["F0:0D:00:00:00:01", "F0:0D:00:00:00:02", "F0:0D:00:00:00:03"])
        #expect(rows.allSatisfy { $0["result"] as? String == "failed" && ($0["fix"] as? String)?.isEmpty == false })
        #expect(summary["failed"] as? Int == 3 && summary["flashed"] as? Int == 0)
    }

    @Test("--retry-failed flashes only the boards that failed last time, then finds nothing to retry")
    func retryFailedFlashesOnlyTheFailedBoards() throws {
        let file = BitflashBinary.sample("sample-r1-heart.hex").path
        let state = try BitflashBinary.temporaryDirectory()
        let base = ["--simulate", "--sim-state", state.path]
        // No record yet.
        let none = try BitflashBinary.run(["flash", file, "--retry-failed"] + base)
        #expect(none.status == 64)
        #expect(none.stderr.contains("no class run of simulated boards recorded"), "\(none.stderr)")

        #expect(try Self.classWithOneFailure(state, file: file).status == 74)
        // Another file than the class run's.
        let other = try BitflashBinary.run(
            ["flash", BitflashBinary.sample("sample-r1-counter.hex").path, "--retry-failed"] + base)
        #expect(other.status == 64)
        #expect(other.stderr.contains("the last class run flashed"), "\(other.stderr)")

        let retry = try BitflashBinary.run(["flash", file, "--retry-failed", "--json"] + base)
        #expect(retry.status == 0, "\(retry.stderr)")
        #expect(retry.stderr.contains("retrying 1 of 3 boards that failed: sim-3"), "\(retry.stderr)")
        let results = Self.objects(retry).filter { $0["type"] as? String == "result" }
        #expect(results.map { $0["board"] as? String } == ["sim-3"])
        #expect(results.first?["verified"] as? Bool == true)

        let nothing = try BitflashBinary.run(["flash", file, "--retry-failed"] + base)
        #expect(nothing.status == 0)
        #expect(nothing.stderr.contains("nothing to retry: all 3 boards"), "\(nothing.stderr)")
        #expect(nothing.stdout.isEmpty)
    }
}
