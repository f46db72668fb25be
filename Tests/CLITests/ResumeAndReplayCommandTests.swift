import Foundation
import Testing
import TestSupport

/// Continuing an interrupted partial flash across bitflash runs, the decision before and after a
/// flash, and traces replayed with `bitflash sim replay`, all through the built binary.
@Suite(.enabled(if: BitflashBinary.url != nil, "bitflash binary not built (.build/debug/bitflash): CLI tests skipped"))
struct ResumeAndReplayCommandTests {
    let state: URL
    init() throws { state = try BitflashBinary.temporaryDirectory() }

    let counter = BitflashBinary.sample("sample-r1-counter.hex").path

    func flash(_ file: String, state dir: URL? = nil, _ extra: [String]) throws -> BitflashBinary.Result {
        // Fault injection and traces are the laboratory's (`bitflash-lab`).
        let lab = extra.contains {
            $0.hasPrefix("--sim-drop") || $0.hasPrefix("--sim-reset") || $0.hasPrefix("--sim-kill") || $0 == "--trace"
        }
        return try (lab ? BitflashBinary.lab : BitflashBinary.run)(
            ["flash", file, "--simulate", "microbit-v2", "--sim-state", (dir ?? state).path] + extra, [:])
    }

    func objects(_ r: BitflashBinary.Result) throws -> [[String: Any]] {
        try r.lines.map { try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) }
    }

    func traceLines(_ url: URL) throws -> [[String: Any]] {
        try String(contentsOf: url, encoding: .utf8).split(separator: "\n").map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
    }

    /// The modelled second at which the flow got the `n`th block acknowledgement, from a clean run's trace.
    func secondOfAck(_ n: Int) throws -> Double {
        let dir = try BitflashBinary.temporaryDirectory()
        let trace = dir.appendingPathComponent("clean.trace")
        let r = try flash(counter, state: dir, ["--trace", trace.path])
        #expect(r.status == 0, "\(r.stderr)")
        let acks = try traceLines(trace).filter {
            ($0["kind"] as? String) == "input" && (($0["text"] as? String)?.hasSuffix(" 01FF") ?? false)
        }
        return Double(try #require(acks[n - 1]["t"] as? Int)) / 1e6
    }

    @Test func aFlashKilledAfterAResetIsContinuedByTheNextRun() throws {
        let t = try secondOfAck(70)  // in the program's second page
        let killed = try flash(counter, ["--sim-reset-at", String(t + 0.001), "--sim-kill-at", String(t + 0.1)])
        #expect(killed.status == 74)
        #expect(killed.stdout.contains("run the same command again to continue"), "\(killed.stdout)")
        let saved = state.appendingPathComponent("resume/sim.json")
        let point = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: saved)) as? [String: Any])
        #expect(point["block"] as? Int == 64)
        #expect(point["programHash"] as? String != nil)

        let next = try flash(counter, ["--json"])
        #expect(next.status == 0, "\(next.stderr)")
        let all = try objects(next)
        let decision = try #require(all.first { $0["type"] as? String == "decision" })
        #expect((decision["message"] as? String)?.contains("continuing the unfinished write at block 65") == true)
        let result = try #require(all.first { $0["type"] as? String == "result" })
        #expect(result["path"] as? String == "partial")
        #expect(result["verified"] as? Bool == true)
        let reason = try #require(result["reason"] as? [String: Any])
        let details = try #require(reason["details"] as? [String: Any])
        #expect(details["resumedAtBlock"] as? Int == 65)
        #expect(!FileManager.default.fileExists(atPath: saved.path), "a finished flash forgets its saved point")
        // The board now holds the program: the same file again is up to date.
        let again = try flash(counter, ["--json"])
        #expect(try objects(again).last?["path"] as? String == "up-to-date")
    }

    @Test func noResumeStartsOverAndForgetsTheSavedPoint() throws {
        let t = try secondOfAck(70)
        _ = try flash(counter, ["--sim-kill-at", String(t + 0.01)])
        #expect(FileManager.default.fileExists(atPath: state.appendingPathComponent("resume/sim.json").path))
        let r = try flash(counter, ["--json", "--no-resume"])
        #expect(r.status == 0, "\(r.stderr)")
        let result = try #require(try objects(r).last)
        let details = (result["reason"] as? [String: Any])?["details"] as? [String: Any]
        #expect(details?["resumedAtBlock"] == nil)
        #expect(result["bytesSent"] as? Int ?? 0 > 64 * 100, "the whole program was sent again")
    }

    @Test func theDecisionIsPrintedBeforeTheFlashAndCarriedByTheResult() throws {
        let plain = try flash(counter, [])
        #expect(plain.status == 0, "\(plain.stderr)")
        let decision = try #require(
            plain.lines.firstIndex { $0.contains("decision: ") && $0.contains("[runtime-matches]") })
        let writing = try #require(plain.lines.firstIndex { $0.hasSuffix("sim: partial") })
        #expect(decision < writing)

        // A new runtime on an MCUboot board: both hashes in the details; --mode full: forced.
        let mcuboot = try BitflashBinary.temporaryDirectory()
        let newRuntime = BitflashBinary.sample("sample-r2-heart.hex").path
        let differs = try BitflashBinary.run(["flash", newRuntime, "--simulate", "--sim-state", mcuboot.path, "--json"])
        #expect(differs.status == 0, "\(differs.stderr)")
        let all = try objects(differs)
        #expect(all.contains { $0["type"] as? String == "decision" && $0["code"] as? String == "runtime-differs" })
        let reason = try #require(all.last?["reason"] as? [String: Any])
        #expect(reason["code"] as? String == "runtime-differs")
        let details = try #require(reason["details"] as? [String: Any])
        let board = try #require(details["boardRuntimeHash"] as? String),
            file = try #require(details["fileRuntimeHash"] as? String)
        #expect(board.count == 16 && file.count == 16 && board != file)

        let forced = try BitflashBinary.run([
            "flash", newRuntime, "--simulate", "--sim-state", mcuboot.path, "--json", "--mode", "full"
        ])
        let forcedReason = try #require(try objects(forced).last?["reason"] as? [String: Any])
        #expect(forcedReason["code"] as? String == "forced")
        #expect((forcedReason["details"] as? [String: Any])?["option"] as? String == "--mode full")
    }

    @Test func aRecordedFlashWithAFaultReplaysAsRecordedAndATamperedOneShowsWhereItDiffers() throws {
        let trace = state.appendingPathComponent("drop.trace")
        let r = try flash(counter, ["--sim-drop-at-write", "200", "--trace", trace.path])
        #expect(r.status == 0, "\(r.stderr)")
        let lines = try traceLines(trace)
        #expect(lines.first?["kind"] as? String == "meta")
        #expect(lines.last?["kind"] as? String == "result")
        #expect(lines.contains { $0["kind"] as? String == "fault" })
        #expect(lines.contains { ($0["text"] as? String)?.hasPrefix("decision: runtime-matches") == true })
        #expect(!lines.contains { $0["kind"] as? String == "timer" }, "compact unless -v")

        let replay = try BitflashBinary.lab(["sim", "replay", trace.path, counter])
        #expect(replay.status == 0, "\(replay.stderr)")
        #expect(replay.stdout.contains("outcome: partial (runtime-matches), as recorded"), "\(replay.stdout)")

        // Turn the 30th acknowledgement into "out of order": the client must part from the recording there.
        var text = try String(contentsOf: trace, encoding: .utf8).split(separator: "\n").map(String.init)
        let acks = text.indices.filter { text[$0].contains("\"kind\":\"input\"") && text[$0].contains(" 01FF\"") }
        text[acks[29]] = text[acks[29]].replacingOccurrences(of: " 01FF\"", with: " 01AA\"")
        let tampered = state.appendingPathComponent("tampered.trace")
        try (text.joined(separator: "\n") + "\n").write(to: tampered, atomically: true, encoding: .utf8)
        let diverged = try BitflashBinary.lab(["sim", "replay", tampered.path, counter])
        #expect(diverged.status == 65)
        #expect(
            diverged.stderr.contains("the client differs from the recording at tampered.trace line"),
            "\(diverged.stderr)")
        #expect(diverged.stderr.contains("the recording has write command 01"))
    }

    @Test func replayRefusesATraceWithoutAHeader() throws {
        let file = state.appendingPathComponent("old.trace")
        try Data(#"{"board":0,"kind":"write","name":"sim","t":0,"text":"command EE"}"#.utf8 + [0x0A]).write(to: file)
        let r = try BitflashBinary.lab(["sim", "replay", file.path, counter])
        #expect(r.status == 65)
        #expect(r.stderr.contains("no header line"))
    }
}
