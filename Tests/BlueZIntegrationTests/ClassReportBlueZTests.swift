import Foundation
import Testing
import TestSupport

/// The class report and `--retry-failed` with real boards, against the fake org.bluez.
@Suite(.enabled(if: Bitflash.available, "dbus-daemon or the bitflash binary missing: BlueZ integration tests skipped"))
struct ClassReportBlueZTests {
    @Test(
        "a board out of range is FAILED with its fix; --retry-failed looks only for it, and the record keeps it failed")
    func retryLooksOnlyForTheMissingBoard() async throws {
        let fake = try FakeBlueZProcess(profile: "microbit-v2")
        let state = fake.bus.directory.appendingPathComponent("bitflash")
        let env = ["DBUS_SYSTEM_BUS_ADDRESS": fake.bus.address, "BITFLASH_STATE": state.path]
        let file = BlueZCommandTests.sample("sample-r1-counter.hex").path
        let run = try await Bitflash.offPoolRun(
            ["flash", file, "--device", "zotig", "--device", "F0:0D:00:00:00:99", "--scan-timeout", "1"],
            environment: env)
        #expect(run.status == 69, "\(run.stderr)")
        #expect(
            run.lines.contains { $0.hasPrefix("zotig              BBC micro:bit [zotig]  F0:0D:00:00:00:01  ok") },
            "\(run.stdout)")
        let missing = try #require(run.lines.first { $0.hasPrefix("F0:0D:00:00:00:99") })
        #expect(
            missing.contains("FAILED") && missing.contains("switch the board on and into pairing mode"), "\(missing)")
        #expect(FileManager.default.fileExists(atPath: state.appendingPathComponent("last-class-run.json").path))

        let retry = try await Bitflash.offPoolRun(
            ["flash", file, "--retry-failed", "--scan-timeout", "1", "--json"], environment: env)
        #expect(retry.status == 69)
        #expect(retry.stderr.contains("retrying 1 of 2 boards that failed: F0:0D:00:00:00:99"), "\(retry.stderr)")
        let boards = retry.lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
            .filter { $0["type"] as? String == "result" }.map { $0["board"] as? String }
        #expect(boards == ["F0:0D:00:00:00:99"])
        let record = try #require(
            try JSONSerialization.jsonObject(
                with: Data(contentsOf: state.appendingPathComponent("last-class-run.json"))) as? [String: Any])
        let rows = try #require(record["boards"] as? [[String: Any]])
        #expect(rows.map { $0["result"] as? String } == ["ok", "failed"])
        #expect(rows.first?["address"] as? String == FakeBlueZProcess.address)
    }

    @Test(
        "a class of real boards starts with its estimate: the adapters the flash uses, 5 at once, the board kind assumed"
    )
    func aRealClassStartsWithItsEstimate() async throws {
        let fake = try FakeBlueZProcess(profile: "microbit-v2")
        let state = fake.bus.directory.appendingPathComponent("bitflash")
        let env = ["DBUS_SYSTEM_BUS_ADDRESS": fake.bus.address, "BITFLASH_STATE": state.path]
        let file = BlueZCommandTests.sample("sample-r1-counter.hex").path
        // hci0 named twice is one adapter.
        let run = try await Bitflash.offPoolRun(
            [
                "flash", file, "--device", "zotig", "--device", "F0:0D:00:00:00:99", "--adapter", "hci0", "--adapter",
                "hci0", "--scan-timeout", "1", "--json"
            ],
            environment: env)
        #expect(run.status == 69, "\(run.stderr)")
        let first = try #require(
            try run.lines.first.flatMap { try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] })
        #expect(first["type"] as? String == "class-estimate", "\(run.stdout)")
        #expect(first["boards"] as? Int == 2)
        #expect(first["link"] as? String == "linux-default")
        let adapters = try #require(first["adapters"] as? [[String: Any]])
        #expect(adapters.count == 1)
        #expect(adapters.first?["name"] as? String == "hci0")
        #expect(adapters.first?["connectionLimit"] as? Int == 5)
        #expect((first["assumes"] as? String)?.hasSuffix("every board a micro:bit V2") == true, "\(first)")
        let classSeconds = try #require(first["classSeconds"] as? Double)
        let alone = try #require(first["aloneSeconds"] as? Double)
        #expect(classSeconds >= alone)
    }

    /// Two MCUboot boards: zotig runs the sample's runtime r1 (partial flashing of an r1 file),
    /// vavit runtime r2 (a full update over McuMgr).
    static var mixedRuntimes: String {
        """
        {"timeScale": 0.2, "boards": [
            {"name": "BBC micro:bit [zotig]", "address": "F0:0D:00:00:00:01"},
            {"name": "BBC micro:bit [vavit]", "address": "F0:0D:00:00:00:02",
             "from": "\(BlueZCommandTests.sample("sample-r2-heart.hex").path)"}]}
        """
    }

    @Test(
        "a mixed class of real boards is estimated from each board's own decision, read before the class starts"
    )
    func aMixedRealClassIsEstimatedPerBoard() throws {
        // Two MCUboot boards: one runs the file's runtime (partial), one another runtime (McuMgr).
        let fake = try FakeBlueZProcess(scenario: ClassReportBlueZTests.mixedRuntimes)
        let file = BlueZCommandTests.sample("sample-r1-counter.hex").path
        let run = try fake.bitflash(["flash", file, "--device", "zotig", "--device", "vavit", "--json"])
        #expect(run.status == 0 || run.status == 3, "\(run.stderr)")
        let lines = try BlueZCommandTests.json(run)
        let first = try #require(lines.first)
        #expect(first["type"] as? String == "class-estimate", "\(run.stdout)")
        #expect(first["path"] as? String == "mixed", "\(first)")
        #expect(
            (first["assumes"] as? String)?.hasPrefix("each board's path read from the board before the class starts")
                == true, "\(first)")
        // The forecast's paths are the paths the boards then took.
        let forecast = try #require(first["paths"] as? [String: Int])
        var taken: [String: Int] = [:]
        for result in lines where result["type"] as? String == "result" {
            let path = result["path"] as? String
            let name = path == "full" ? (result["fullPath"] as? String == "nordic" ? "nordic-dfu" : "mcumgr") : path
            taken[name ?? "-", default: 0] += 1
        }
        #expect(forecast == taken, "forecast \(forecast), taken \(taken)")
        #expect(forecast == ["partial": 1, "mcumgr": 1])
    }

    @Test("a class of a V1 and a V2 is estimated for each board's own kind, as its dry run found it")
    func aClassOfTwoKindsIsEstimatedPerKind() throws {
        let fake = try FakeBlueZProcess(
            scenario: """
                {"timeScale": 0.2, "boards": [
                    {"name": "BBC micro:bit [zotig]", "address": "F0:0D:00:00:00:01", "profile": "microbit-v2"},
                    {"name": "BBC micro:bit [vavit]", "address": "F0:0D:00:00:00:02", "profile": "microbit-v1"}]}
                """)
        let file = BlueZCommandTests.sample("sample-r1-counter.hex").path
        let run = try fake.bitflash(["flash", file, "--device", "zotig", "--device", "vavit", "--json"])
        #expect(run.status == 0, "\(run.stderr)")
        let lines = try BlueZCommandTests.json(run)
        let first = try #require(lines.first)
        #expect(first["type"] as? String == "class-estimate", "\(run.stdout)")
        #expect(first["kinds"] as? [String: Int] == ["micro:bit V2": 1, "micro:bit V1": 1], "\(first)")
        let assumes = try #require(first["assumes"] as? String)
        #expect(
            assumes.hasSuffix("; 1 micro:bit V2, 1 micro:bit V1") && !assumes.contains("every board a"), "\(assumes)")
        // The boards are what the estimate took them for.
        let results = lines.filter { $0["type"] as? String == "result" }
        #expect(results.count == 2 && results.allSatisfy { $0["verified"] as? Bool == true }, "\(results)")
    }
}
