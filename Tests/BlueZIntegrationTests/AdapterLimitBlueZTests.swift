import Foundation
import Testing
import TestSupport

/// Several adapters through BlueZ, each with a connection limit, against the fake org.bluez
/// playing two adapters whose controllers hold two connections each.
@Suite(.enabled(if: Bitflash.available, "dbus-daemon or the bitflash binary missing: BlueZ integration tests skipped"))
struct AdapterLimitBlueZTests {
    static let names = ["zotig", "vavit", "gopez", "tupeg", "pezov", "gavut"]

    /// The fake with six boards on two adapters of `limit` connections each.
    static func fake(limit: Int) throws -> FakeBlueZProcess {
        let boards = names.enumerated().map { i, name in
            "{\"name\": \"BBC micro:bit [\(name)]\", \"address\": \"F0:0D:00:00:00:0\(i + 1)\"}"
        }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent(
            "bitflash-adapters-\(UUID().uuidString).json")
        try "{\"timeScale\": 0.2, \"boards\": [\(boards.joined(separator: ", "))]}".write(
            to: file, atomically: true, encoding: .utf8)
        return try FakeBlueZProcess(
            arguments: ["--scenario", file.path, "--adapters", "2", "--adapter-max-connections", "\(limit)"])
    }

    /// The most connections the fake saw on `adapter` (from its closing lines).
    static func peak(_ adapter: String, in printed: String) -> Int? {
        let line = printed.split(separator: "\n").first { $0.hasPrefix("adapter \(adapter): at most ") }
        return line.flatMap { Int($0.split(separator: " ")[4]) }
    }

    @Test("six boards over two adapters of two connections: all verified, spread, no adapter over its limit")
    func classOverTwoAdaptersStaysWithinTheirLimits() async throws {
        let fake = try Self.fake(limit: 2)
        let file = BlueZCommandTests.sample("sample-r1-counter.hex").path
        let devices = Self.names.flatMap { ["--device", $0] }
        let run = try await fake.bitflashAsync(
            ["flash", file] + devices + ["--adapter", "all", "--max-connections", "2"])
        #expect(run.status == 0, "\(run.stderr)")
        let rows = run.lines.filter { line in Self.names.contains { line.hasPrefix($0 + " ") } }
        #expect(rows.count == 6, "\(run.stdout)")
        #expect(rows.allSatisfy { $0.contains(" ok ") && $0.contains("yes") }, "\(run.stdout)")
        // The first wave fills both adapters; later boards go to whichever frees up first.
        let onFirst = rows.filter { $0.contains(" hci0 ") }.count
        #expect(onFirst >= 2 && 6 - onFirst >= 2 && rows.allSatisfy { $0.contains(" hci0 ") || $0.contains(" hci1 ") })
        _ = fake.stop()
        #expect(Self.peak("hci0", in: fake.printed) == 2, "\(fake.printed)")
        #expect(Self.peak("hci1", in: fake.printed) == 2)
    }

    @Test(
        "asked for more than the controllers hold: a refused connect backs off, lowers the limit, never fails a board")
    func refusedConnectBacksOffInsteadOfFailingTheBoard() async throws {
        let fake = try Self.fake(limit: 2)
        let file = BlueZCommandTests.sample("sample-r1-counter.hex").path
        let devices = Self.names.flatMap { ["--device", $0] }
        let run = try await fake.bitflashAsync(
            ["flash", file] + devices + ["--adapter", "all", "--max-connections", "3"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stderr.contains("refused another connection"), "\(run.stderr)")
        let rows = run.lines.filter { line in Self.names.contains { line.hasPrefix($0 + " ") } }
        #expect(rows.count == 6 && rows.allSatisfy { $0.contains(" ok ") && $0.contains("yes") }, "\(run.stdout)")
        _ = fake.stop()
        #expect((Self.peak("hci0", in: fake.printed) ?? 99) <= 2, "\(fake.printed)")
        #expect((Self.peak("hci1", in: fake.printed) ?? 99) <= 2)
    }
}
