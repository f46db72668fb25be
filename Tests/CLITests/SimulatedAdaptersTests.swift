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
}
