import Foundation
import Testing
import TestSupport

/// The class's estimate shown before a class set starts, in words and as a JSON event.
@Suite(.enabled(if: BitflashBinary.url != nil, "bitflash binary not built (.build/debug/bitflash): CLI tests skipped"))
struct ClassEstimateLineTests {
    @Test func aClassSetStartsWithItsEstimateAsJSONAndTheEstimateHolds() throws {
        let file = BitflashBinary.sample("sample-r1-counter.hex").path
        let state = try BitflashBinary.temporaryDirectory()
        let run = try BitflashBinary.run(
            [
                "flash", file, "--simulate", "microbit-v2", "--boards", "16", "--link", "fast", "--json", "--sim-state",
                state.path
            ])
        #expect(run.status == 0, "\(run.stderr)")
        let objects = try run.lines.map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        let first = try #require(objects.first)
        #expect(first["type"] as? String == "class-estimate")
        #expect(first["boards"] as? Int == 16)
        #expect(first["path"] as? String == "partial")
        #expect(first["link"] as? String == "fast")
        let adapters = try #require(first["adapters"] as? [[String: Any]])
        #expect(adapters.count == 1 && adapters[0]["boards"] as? Int == 16)
        // The simulated adapter is a controller of unknown capacity: 5 connections at once.
        #expect(adapters[0]["connectionLimit"] as? Int == 5)
        let estimate = try #require(first["classSeconds"] as? Double)
        let alone = try #require(first["aloneSeconds"] as? Double)
        // Sixteen boards in four waves of at most 5 sharing the radio of a 7.5 ms link: the class takes
        // much longer than one board.
        #expect(estimate > alone * 1.3)
        let seconds = objects.filter { $0["type"] as? String == "result" }.compactMap { $0["seconds"] as? Double }
        #expect(seconds.count == 16)
        let modelled = try #require(seconds.max())
        #expect(abs(estimate / modelled - 1) <= 0.10, "estimate \(estimate) s, modelled \(modelled) s")
        #expect(objects.filter { $0["type"] as? String == "class-estimate" }.count == 1)
    }

    @Test func plainOutputSaysTheClassEstimateInOneLineFirst() throws {
        let file = BitflashBinary.sample("sample-r1-counter.hex").path
        let state = try BitflashBinary.temporaryDirectory()
        let run = try BitflashBinary.run(
            ["flash", file, "--simulate", "microbit-v2", "--boards", "8", "--sim-state", state.path])
        #expect(run.status == 0, "\(run.stderr)")
        let line = try #require(run.lines.first)
        #expect(line.hasPrefix("class: 8 boards on 1 adapter (at most 5 at once) in 2 waves, partial: estimated "))
        #expect(line.contains("for the class, the longest board "))
        #expect(line.contains("device-requested link, 15 ms"))
    }

    @Test func aDryRunOfSeveralBoardsStartsWithTheClassEstimate() throws {
        let file = BitflashBinary.sample("sample-r1-counter.hex").path
        let state = try BitflashBinary.temporaryDirectory()
        let text = try BitflashBinary.run(
            ["flash", file, "--simulate", "microbit-v2", "--boards", "3", "--dry-run", "--sim-state", state.path])
        #expect(text.status == 0, "\(text.stderr)")
        #expect(text.lines.first?.hasPrefix("class: 3 boards on 1 adapter") == true, "\(text.stdout)")
        let json = try BitflashBinary.run(
            [
                "flash", file, "--simulate", "microbit-v2", "--boards", "3", "--dry-run", "--json", "--sim-state",
                state.path
            ])
        let first = try #require(json.lines.first)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(first.utf8)) as? [String: Any])
        #expect(object["type"] as? String == "class-estimate" && object["boards"] as? Int == 3)
        #expect(json.lines.count == 4)
    }

    @Test func oneBoardHasNoClassEstimate() throws {
        let file = BitflashBinary.sample("sample-r1-counter.hex").path
        let state = try BitflashBinary.temporaryDirectory()
        let run = try BitflashBinary.run(
            ["flash", file, "--simulate", "microbit-v2", "--json", "--sim-state", state.path])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(!run.stdout.contains("class-estimate"))
    }

    /// A class of `boards` boards of `profile` holding runtime r1's heart program, `old` of them
    /// (spread through the class) on runtime r2, flashed with the r1 counter over `link`: the
    /// class-estimate event and the modelled time of the last board.
    static func mixedClass(profile: String, boards: Int, old: Int, link: String) throws -> (
        estimate: [String: Any], modelled: Double
    ) {
        let dir = try BitflashBinary.temporaryDirectory()
        let state = dir.appendingPathComponent("class")
        for (folder, file) in [
            (state, "sample-r1-heart.hex"), (dir.appendingPathComponent("old"), "sample-r2-heart.hex")
        ] {
            let r = try BitflashBinary.run([
                "sim", "reset", "--profile", profile, "--boards", "\(boards)", "--from",
                BitflashBinary.sample(file).path,
                "--sim-state", folder.path
            ])
            #expect(r.status == 0, "\(r.stderr)")
        }
        for i in 0..<old {
            let name = "sim-\(i * boards / max(old, 1) + 1).json"
            let target = state.appendingPathComponent(name)
            try FileManager.default.removeItem(at: target)
            try FileManager.default.copyItem(
                at: dir.appendingPathComponent("old").appendingPathComponent(name), to: target)
        }
        let run = try BitflashBinary.run([
            "flash", BitflashBinary.sample("sample-r1-counter.hex").path, "--simulate", profile, "--boards",
            "\(boards)",
            "--link", link, "--json", "--sim-state", state.path
        ])
        #expect(run.status == 0, "\(run.stderr)")
        let objects = run.lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        let estimate = try #require(objects.first { $0["type"] as? String == "class-estimate" })
        let seconds = objects.filter { $0["type"] as? String == "result" }.compactMap { $0["seconds"] as? Double }
        #expect(seconds.count == boards)
        return (estimate, try #require(seconds.max()))
    }

    @Test(
        "a class whose boards take different paths is estimated by each board's own path, within 10 %",
        arguments: [
            ("microbit-v2-mcuboot", 12, 4, "device-requested", ["mcumgr": 4, "partial": 8]),
            ("microbit-v2-mcuboot", 6, 6, "linux-default", ["mcumgr": 6]),
            ("microbit-v2", 12, 4, "device-requested", ["nordic-dfu": 4, "partial": 8])
        ])
    func aMixedClassIsEstimatedBoardByBoard(
        profile: String, boards: Int, old: Int, link: String, paths: [String: Int]
    ) throws {
        let (estimate, modelled) = try Self.mixedClass(profile: profile, boards: boards, old: old, link: link)
        #expect(estimate["paths"] as? [String: Int] == paths)
        #expect(estimate["path"] as? String == (paths.count == 1 ? paths.keys.first : "mixed"))
        let seconds = try #require(estimate["classSeconds"] as? Double)
        #expect(abs(seconds / modelled - 1) <= 0.10, "estimate \(seconds) s, modelled \(modelled) s")
    }
}
