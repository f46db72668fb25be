import Foundation
import Testing
import TestSupport

/// `--simulate [PROFILE]`, parsed by the commands themselves (no rewriting of the command line):
/// the kind may follow the flag before or after the file, or be left out.
@Suite(.enabled(if: BitflashBinary.url != nil, "the bitflash binary is missing: CLI tests skipped"))
struct SimulateOptionTests {
    static func state() throws -> [String] {
        ["--sim-state", try BitflashBinary.temporaryDirectory().appendingPathComponent("s").path]
    }

    @Test("--simulate PROFILE before the file flashes a board of that kind, which the state folder then keeps")
    func profileBeforeTheFile() throws {
        let file = BitflashBinary.sample("sample-r1-counter.hex").path
        let state = try Self.state()
        let flashed = try BitflashBinary.run(["flash", "--simulate", "microbit-v1", file] + state)
        #expect(flashed.status == 0, "\(flashed.stderr)")
        // The saved board is a micro:bit V1: another kind is refused, naming the one there.
        let other = try BitflashBinary.run(["flash", file, "--simulate", "microbit-v2"] + state)
        #expect(other.status != 0)
        #expect(other.stderr.contains("--simulate microbit-v1"), "\(other.stderr)")
        // --simulate alone takes the kind already there.
        let again = try BitflashBinary.run(["flash", file, "--simulate"] + state + ["--json"])
        #expect(again.status == 0, "\(again.stderr)")
        #expect(again.stdout.contains("\"path\":\"up-to-date\""), "\(again.stdout)")
    }

    @Test("--simulate PROFILE after the file, and --simulate at the end, both flash")
    func profileAfterTheFile() throws {
        let file = BitflashBinary.sample("sample-r1-counter.hex").path
        let named = try BitflashBinary.run(["flash", file, "--simulate", "microbit-v2"] + (try Self.state()))
        #expect(named.status == 0, "\(named.stderr)")
        let bare = try BitflashBinary.run(["flash", file] + (try Self.state()) + ["--simulate"])
        #expect(bare.status == 0, "\(bare.stderr)")
    }

    @Test("a board kind without --simulate, or a second file, is refused as an unexpected argument (64)")
    func aKindWithoutTheFlagIsRefused() throws {
        let file = BitflashBinary.sample("sample-r1-counter.hex").path
        let kind = try BitflashBinary.run(["flash", file, "microbit-v1"])
        #expect(kind.status == 64)
        #expect(kind.stderr.contains("a simulated board's kind follows --simulate"), "\(kind.stderr)")
        let second = try BitflashBinary.run(["flash", file, file, "--simulate"] + (try Self.state()))
        #expect(second.status == 64)
        #expect(second.stderr.contains("unexpected argument"), "\(second.stderr)")
        let info = try BitflashBinary.run(["info", "microbit-v1"])
        #expect(info.status == 64, "\(info.stderr)")
    }

    @Test("info --simulate PROFILE asks a board of that kind; --simulate alone the default")
    func infoTakesTheKindAfterTheFlag() throws {
        let v1 = try BitflashBinary.run(["info", "--simulate", "microbit-v1"] + (try Self.state()))
        #expect(v1.status == 0, "\(v1.stderr)")
        #expect(v1.stdout.contains("V1"), "\(v1.stdout)")
        let bare = try BitflashBinary.run(["info", "--simulate"] + (try Self.state()))
        #expect(bare.status == 0, "\(bare.stderr)")
        #expect(bare.stdout.contains("V2"), "\(bare.stdout)")
    }

    @Test("watch A B --simulate PROFILE watches A and B and flashes a board of that kind")
    func watchTakesTheKindAmongItsPaths() async throws {
        let dir = try BitflashBinary.temporaryDirectory()
        let (a, b) = (dir.appendingPathComponent("a"), dir.appendingPathComponent("b"))
        for folder in [a, b] { try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true) }
        let state = dir.appendingPathComponent("state")
        let watch = try WatchCommandTests.start([
            a.path, b.path, "--simulate", "microbit-v1", "--sim-state", state.path, "--settle", "0.2"
        ])
        #expect(await watch.wait(upTo: .seconds(60)) { $0.stdout.contains("\"watching\"") }, "\(watch.stderr)")
        let watching = WatchCommandTests.objects(watch).first { $0["type"] as? String == "watching" }
        #expect(watching?["paths"] as? [String] == [a.path, b.path], "\(watch.stdout)")
        let file = try WatchCommandTests.dropSentinel(BitflashBinary.sample("sample-r1-counter.hex"), into: b)
        #expect(await WatchCommandTests.waitForFlash(of: file, in: watch), "\(watch.stdout) \(watch.stderr)")
        watch.interrupt()
        #expect(await watch.finish(within: .seconds(60)) == 130)
        let show = try BitflashBinary.run(["sim", "show", "--json", "--sim-state", state.path])
        let boards = try #require(try JSONSerialization.jsonObject(with: Data(show.stdout.utf8)) as? [[String: Any]])
        #expect(boards.map { $0["board"] as? String } == ["microbit-v1"], "\(show.stdout)")
    }
}
