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
}
