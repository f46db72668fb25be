import Foundation
import Testing
import TestSupport

/// `--sim-adapter` and `--max-connections` on simulated boards: waves within each adapter's
/// limit, several adapters, and the adapter each board used in the report.
@Suite(.enabled(if: BitflashBinary.url != nil, "bitflash binary not built (.build/debug/bitflash): CLI tests skipped"))
struct SimulatedAdaptersTests {
    static func summary(_ r: BitflashBinary.Result) -> [[String: Any]] {
        let objects = r.lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        return objects.first { $0["type"] as? String == "summary" }?["boards"] as? [[String: Any]] ?? []
    }

    @Test("a class over two simulated adapters: every board verified, each row names its adapter")
    func classOverTwoAdaptersNamesEachBoardsAdapter() throws {
        let file = BitflashBinary.sample("sample-r1-counter.hex").path
        let state = try BitflashBinary.temporaryDirectory()
        let run = try BitflashBinary.run(
            [
                "flash", file, "--simulate", "microbit-v2", "--boards", "9", "--sim-adapter", "csr8510:2",
                "--sim-adapter", "3", "--json", "--sim-state", state.path
            ])
        #expect(run.status == 0, "\(run.stderr)")
        let rows = Self.summary(run)
        #expect(rows.count == 9)
        #expect(rows.allSatisfy { $0["result"] as? String == "ok" && $0["verified"] as? Bool == true })
        let adapters = rows.compactMap { $0["adapter"] as? String }
        #expect(adapters.count == 9)
        #expect(Set(adapters) == ["hci0 (csr8510:2)", "hci1 (limit-3)"], "\(adapters)")
    }

    @Test("--max-connections 2 flashes six boards in three waves: the last finish about three times later")
    func maxConnectionsFlashesInWaves() throws {
        let file = BitflashBinary.sample("sample-r1-counter.hex").path
        let state = try BitflashBinary.temporaryDirectory()
        let run = try BitflashBinary.run(
            [
                "flash", file, "--simulate", "microbit-v2", "--boards", "6", "--max-connections", "2", "--json",
                "--sim-state", state.path
            ])
        #expect(run.status == 0, "\(run.stderr)")
        let seconds = Self.summary(run).compactMap { $0["seconds"] as? Double }.sorted()
        #expect(seconds.count == 6)
        #expect(seconds[5] > seconds[0] * 2.5 && seconds[1] < seconds[2], "\(seconds)")
        #expect(Self.summary(run).allSatisfy { $0["adapter"] == nil }, "one adapter: no adapter column")
    }

    @Test("an adapter profile that is not known is refused with the ones that are (exit 64)")
    func unknownAdapterProfileIsAUsageError() throws {
        let file = BitflashBinary.sample("sample-r1-counter.hex").path
        let run = try BitflashBinary.run(["flash", file, "--simulate", "--sim-adapter", "ax210"])
        #expect(run.status == 64)
        #expect(run.stderr.contains("csr8510") && run.stderr.contains("--sim-adapter"), "\(run.stderr)")
    }

    @Test(
        "--max-connections above a simulated adapter's limit is refused (64), naming the option, adapter and limit",
        arguments: [
            (["--max-connections", "64"], "hci0 (unknown) holds at most 5"),
            (
                ["--max-connections", "8", "--sim-adapter", "pi", "--sim-adapter", "csr8510"],
                "hci1 (csr8510) holds at most 5"
            ),
            (
                ["--max-connections", "7", "--sim-adapter", "bcm20702", "--sim-adapter", "3"],
                "hci1 (limit-3) holds at most 3"
            )
        ])
    func moreConnectionsThanTheAdapterHoldsAreRefused(_ options: [String], _ said: String) throws {
        let file = BitflashBinary.sample("sample-r1-counter.hex").path
        let state = try BitflashBinary.temporaryDirectory()
        let run = try BitflashBinary.run(
            ["flash", file, "--simulate", "--boards", "8", "--sim-state", state.path] + options)
        #expect(run.status == 64, "\(run.stdout)\n\(run.stderr)")
        #expect(run.stderr.contains("--max-connections \(options[1])") && run.stderr.contains(said), "\(run.stderr)")
        // Refused before anything was flashed: no board was made.
        #expect(try FileManager.default.contentsOfDirectory(atPath: state.path).isEmpty)
    }

    @Test("--max-connections within every simulated adapter's limit is honoured: 64 on an adapter of 64")
    func maxConnectionsWithinTheLimitIsHonoured() throws {
        let file = BitflashBinary.sample("sample-r1-counter.hex").path
        let state = try BitflashBinary.temporaryDirectory()
        let run = try BitflashBinary.run(
            [
                "flash", file, "--simulate", "microbit-v2", "--boards", "6", "--max-connections", "6",
                "--sim-adapter", "64", "--json", "--sim-state", state.path
            ])
        #expect(run.status == 0, "\(run.stderr)")
        let estimate = try #require(
            run.lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
                .first { $0["type"] as? String == "class-estimate" })
        // All six at once: one wave, on an adapter that holds six.
        #expect(estimate["waves"] as? Int == 1, "\(estimate)")
        let adapters = try #require(estimate["adapters"] as? [[String: Any]])
        #expect(adapters.first?["connectionLimit"] as? Int == 6, "\(adapters)")
    }

    @Test("--adapter is for real boards: with --simulate it is refused by name, never ignored")
    func realAdaptersWithSimulatedBoardsAreRefused() throws {
        let file = BitflashBinary.sample("sample-r1-counter.hex").path
        let state = try BitflashBinary.temporaryDirectory()
        let run = try BitflashBinary.run(
            ["flash", file, "--simulate", "--adapter", "hci0", "--adapter", "hci1", "--sim-state", state.path])
        #expect(run.status == 64, "\(run.stdout)\n\(run.stderr)")
        #expect(run.stderr.contains("--adapter is for real boards"), "\(run.stderr)")
    }
}
