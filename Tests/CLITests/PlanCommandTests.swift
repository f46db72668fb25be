import FirmwareImage
import Foundation
import SampleFirmware
import Testing
import TestSupport

/// `bitflash flash --dry-run`, `--prefer` and `bitflash plan`, run as a subprocess.
@Suite(.enabled(if: BitflashBinary.url != nil, "bitflash binary not built (.build/debug/bitflash): CLI tests skipped"))
struct PlanCommandTests {
    let state: URL
    init() throws { state = try BitflashBinary.temporaryDirectory() }

    /// A Universal Hex of runtime r1 with the ~128 KiB program (written for the test).
    func hugeFile() throws -> URL {
        let url = state.appendingPathComponent("sample-r1-huge.hex")
        let sections = [(UInt16(0x9900), ChipFamily.nrf51), (UInt16(0x9903), ChipFamily.nrf52833)].map { id, family in
            UniversalHexWriter.Section(
                boardID: id, image: SampleFirmware.image(family: family, runtime: .r1, program: .huge))
        }
        try Data(UniversalHexWriter.write(sections)).write(to: url)
        return url
    }

    func run(_ arguments: [String]) throws -> BitflashBinary.Result {
        try BitflashBinary.run(arguments + ["--sim-state", state.path])
    }

    func json(_ line: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
    }

    /// What `sim show --json` says the board holds: the application's SHA-256 and the program hash.
    func boardContents() throws -> (sha: String, program: String) {
        let r = try run(["sim", "show", "--json"])
        #expect(r.status == 0, "\(r.stderr)")
        let boards = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [[String: Any]])
        let board = try #require(boards.first)
        let regions = try #require(board["regions"] as? [[String: Any]])
        return (try #require(board["applicationSHA256"] as? String), try #require(regions.last?["hash"] as? String))
    }

    @Test func aDryRunPrintsThePlanAsJSONAndLeavesTheBoardAsItWas() throws {
        #expect(try run(["sim", "reset"]).status == 0)
        let before = try boardContents()
        let r = try run([
            "flash", BitflashBinary.sample("sample-r1-counter.hex").path, "--simulate", "--dry-run", "--json"
        ])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.lines.count == 1, "one plan object per board, no events: \(r.stdout)")
        let plan = try json(try #require(r.lines.first))
        #expect(plan["type"] as? String == "plan")
        #expect(plan["path"] as? String == "partial")
        #expect((plan["reason"] as? [String: Any])?["code"] as? String == "runtime-matches")
        let blocks = try #require(plan["blocks"] as? Int)
        #expect(blocks > 100 && plan["bytes"] as? Int == blocks * 64)
        #expect((plan["pages"] as? Int ?? 0) >= 2)
        #expect((plan["region"] as? [String: Any])?["start"] as? Int == 0x47000)
        let decision = try #require(plan["decision"] as? [String: Any])
        #expect(decision["chosen"] as? String == "partial")
        #expect(decision["basis"] as? String == "fastest")
        #expect((decision["marginSeconds"] as? Double ?? 0) > 5)
        let estimates = try #require(decision["estimates"] as? [[String: Any]])
        #expect(Set(estimates.compactMap { $0["path"] as? String }) == ["partial", "mcumgr"])
        #expect((decision["link"] as? [String: Any])?["source"] as? String == "measured")
        #expect((decision["link"] as? [String: Any])?["connectionIntervalMilliseconds"] as? Double == 15)
        let profiles = try #require(decision["byProfile"] as? [[String: Any]])
        #expect(profiles.compactMap { $0["profile"] as? String } == ["linux-default", "device-requested", "fast"])
        let after = try boardContents()
        #expect(after.sha == before.sha && after.program == before.program, "a dry run changed the board")
        // The same file, really flashed, is then written (nothing had been).
        let real = try run(["flash", BitflashBinary.sample("sample-r1-counter.hex").path, "--simulate", "--json"])
        let result = try json(try #require(real.lines.last))
        #expect(result["path"] as? String == "partial")
        #expect((result["decision"] as? [String: Any])?["chosen"] as? String == "partial")
    }

    @Test func aDryRunInTextShowsPathRegionAndEstimates() throws {
        let r = try run([
            "flash", BitflashBinary.sample("sample-r1-counter.hex").path, "--simulate", "--dry-run", "--link",
            "linux-default"
        ])
        #expect(r.status == 0, "\(r.stderr)")
        for text in [
            "dry run: nothing was written", "path:     partial", "region:   0x00047000-", "blocks,",
            "decision: partial",
            "connection interval 30 ms, measured", "this connection", "linux-default", "device-requested", "fast"
        ] {
            #expect(r.stdout.contains(text), "missing '\(text)' in:\n\(r.stdout)")
        }
    }

    @Test func aHugeProgramGoesFullByEstimateUnlessPartialIsPreferred() throws {
        let file = try hugeFile().path
        let auto = try run(["flash", file, "--simulate", "--link", "fast", "--json"])
        #expect(auto.status == 0, "\(auto.stderr)")
        let result = try json(try #require(auto.lines.last))
        #expect(result["path"] as? String == "full")
        #expect((result["reason"] as? [String: Any])?["code"] as? String == "full-is-faster")
        let estimates = try #require((result["decision"] as? [String: Any])?["estimates"] as? [[String: Any]])
        #expect(estimates.first?["path"] as? String == "mcumgr", "fastest first")
        #expect(auto.lines.contains { $0.contains("\"type\":\"note\"") && $0.contains("decision: mcumgr") })

        #expect(try run(["sim", "reset"]).status == 0)
        let preferred = try run(["flash", file, "--simulate", "--link", "fast", "--prefer", "partial", "--json"])
        #expect(preferred.status == 0, "\(preferred.stderr)")
        let p = try json(try #require(preferred.lines.last))
        #expect(p["path"] as? String == "partial")
        #expect((p["decision"] as? [String: Any])?["basis"] as? String == "preferred")
        #expect((p["seconds"] as? Double ?? 0) > (result["seconds"] as? Double ?? .infinity))
    }

    @Test func preferWithAForcedModeIsAUsageError() throws {
        let r = try run([
            "flash", BitflashBinary.sample("sample-r1-counter.hex").path, "--simulate", "--mode", "full", "--prefer",
            "partial"
        ])
        #expect(r.status == 64)
        #expect(r.stderr.contains("--prefer partial chooses among paths in auto mode"), "\(r.stderr)")
    }

    @Test func planWithoutABoardEstimatesEachPathForEachBoardAndProfile() throws {
        let r = try BitflashBinary.run(["plan", try hugeFile().path, "--json"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.lines.count == 2, "a V2 and a V1 section: \(r.stdout)")
        let plans = try r.lines.map(json)
        #expect(plans.compactMap { $0["board"] as? String } == ["micro:bit V2", "micro:bit V1"])
        for plan in plans {
            #expect(plan["type"] as? String == "plan")
            let partial = try #require(plan["partial"] as? [String: Any])
            #expect((partial["blocks"] as? Int ?? 0) > 300)
            #expect((plan["fullImageBytes"] as? Int ?? 0) > 100_000)
            #expect((plan["nordicApplicationBytes"] as? Int ?? 0) > 100_000)
            let profiles = try #require(plan["byProfile"] as? [[String: Any]])
            #expect(profiles.count == 3)
            for p in profiles {
                let paths = (p["estimates"] as? [[String: Any]])?.compactMap { $0["path"] as? String } ?? []
                #expect(Set(paths) == ["partial", "mcumgr", "nordic-dfu"])
            }
        }
        // On V2 the huge program is faster as a full update (McuMgr or Nordic DFU) on every profile.
        let v2 = try #require(plans.first?["byProfile"] as? [[String: Any]])
        #expect(v2.allSatisfy { (($0["estimates"] as? [[String: Any]])?.first?["path"] as? String) != "partial" })

        let text = try BitflashBinary.run([
            "plan", BitflashBinary.sample("sample-r1-counter.hex").path, "--board", "calliope-mini-3"
        ])
        #expect(text.status == 0, "\(text.stderr)")
        #expect(text.stdout.contains("on a Calliope mini 3 (nRF52833), without a board"))
        #expect(text.stdout.components(separatedBy: "without a board").count == 2, "one board only")
        #expect(text.stdout.contains("partial") && text.stdout.contains("mcumgr") && text.stdout.contains("fastest"))
        #expect(
            text.stdout.contains("nordic-dfu") && text.stdout.contains("nordic:   application of"), "\(text.stdout)")
    }

    @Test func planRefusesAnUnknownBoard() throws {
        let r = try BitflashBinary.run([
            "plan", BitflashBinary.sample("sample-r1-counter.hex").path, "--board", "arduino"
        ])
        #expect(r.status == 64)
        #expect(r.stderr.contains("unknown board 'arduino'"))
    }

    /// The partial estimate of `plan`'s `key` (`byProfile` or `fromProgram`) on `profile`.
    func partialSeconds(_ plan: [String: Any], _ key: String, _ profile: String) throws -> Double {
        let rows = try #require(plan[key] as? [[String: Any]], "\(key) missing")
        let row = try #require(rows.first { $0["profile"] as? String == profile })
        let estimates = try #require(row["estimates"] as? [[String: Any]])
        return try #require(estimates.first { $0["path"] as? String == "partial" }?["seconds"] as? Double)
    }

    @Test("plan without a board estimates a board in pairing mode and a board running its program, each near its flash")
    func planGivesBothStartingModes() throws {
        let file = BitflashBinary.sample("sample-r1-counter.hex").path
        let r = try BitflashBinary.run(["plan", file, "--board", "microbit-v2", "--json"])
        #expect(r.status == 0, "\(r.stderr)")
        let plan = try json(try #require(r.lines.first))
        let text = try BitflashBinary.run(["plan", file, "--board", "microbit-v2"])
        #expect(
            text.stdout.contains("a board in pairing mode:") && text.stdout.contains("a board that runs its program:"))
        for (mode, key) in [("pairing", "byProfile"), ("application", "fromProgram")] {
            // A simulated stock micro:bit V2 holding the runtime, in that mode, flashed with the file.
            let folder = state.appendingPathComponent(mode)
            let reset = try BitflashBinary.run(
                [
                    "sim", "reset", "--profile", "microbit-v2", "--from",
                    BitflashBinary.sample("sample-r1-heart.hex").path,
                    "--sim-state", folder.path
                ] + (mode == "pairing" ? ["--pairing-mode"] : []))
            #expect(reset.status == 0, "\(reset.stderr)")
            let flash = try BitflashBinary.run([
                "flash", file, "--simulate", "--sim-state", folder.path, "--link", "device-requested", "--json"
            ])
            let result = try #require(flash.lines.map(json).first { $0["type"] as? String == "result" })
            #expect(result["path"] as? String == "partial", "\(flash.stderr)")
            let modelled = try #require(result["seconds"] as? Double)
            let estimate = try partialSeconds(plan, key, "device-requested")
            #expect(
                abs(estimate - modelled) / modelled < 0.10, "\(mode): estimated \(estimate) s, modelled \(modelled) s")
        }
        for profile in ["linux-default", "device-requested", "fast"] {
            #expect(try partialSeconds(plan, "fromProgram", profile) > partialSeconds(plan, "byProfile", profile))
        }
    }
}
