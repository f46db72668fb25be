import Foundation
#if canImport(Glibc)
    import Glibc
#endif
import Testing
import TestSupport

/// A simulated class stopped by a signal in the middle of its writes, then flashed again: the
/// boards' files and their resume records stay consistent (a record never claims more than its
/// board holds), so every board the next run reports verified holds the file. One signal at a
/// time: the wait for the class's progress must not queue behind the other cases' runs.
@Suite(
    .serialized,
    .enabled(if: BitflashBinary.url != nil, "bitflash binary not built (.build/debug/bitflash): CLI tests skipped"))
struct KilledClassTests {
    static let boards = "24"

    /// The application SHA-256 of each simulated board in `state`, by name.
    static func applications(_ state: URL) throws -> [String: String] {
        let show = try BitflashBinary.run(["sim", "show", "--json", "--sim-state", state.path])
        #expect(show.status == 0, "\(show.stderr)")
        let boards = try #require(try JSONSerialization.jsonObject(with: Data(show.stdout.utf8)) as? [[String: Any]])
        var out: [String: String] = [:]
        for b in boards {
            if let n = b["name"] as? String, let sha = b["applicationSHA256"] as? String { out[n] = sha }
        }
        return out
    }

    @Test(
        "a class killed mid-write by any signal, flashed again: every board reported verified holds the file",
        arguments: [SIGKILL, SIGTERM, SIGINT, SIGHUP])
    func aKilledClassNeverEndsVerifiedOverWrongBytes(signal: Int32) async throws {
        let counter = BitflashBinary.sample("sample-r1-counter.hex").path
        let heart = BitflashBinary.sample("sample-r1-heart.hex").path
        let dir = try BitflashBinary.temporaryDirectory()
        let state = dir.appendingPathComponent("class")
        let reference = dir.appendingPathComponent("reference")
        let profile = ["--simulate", "microbit-v2"]
        for (folder, file, count) in [(state, heart, Self.boards), (reference, counter, "1")] {
            let r = try BitflashBinary.run([
                "sim", "reset", "--profile", "microbit-v2", "--boards", count, "--from", file, "--sim-state",
                folder.path
            ])
            #expect(r.status == 0, "\(r.stderr)")
        }
        let expected = try #require(try Self.applications(reference).values.first)
        // Every board connected at once, as a class on a large adapter.
        let arguments =
            ["flash", counter] + profile + [
                "--boards", Self.boards, "--sim-adapter", Self.boards, "--max-connections", Self.boards,
                "--sim-state", state.path, "--json"
            ]
        // First the boards are left in the middle of their writes, with their resume records
        // (a reset, then bitflash stopped as if killed: the laboratory's fault injection).
        let faulted = try BitflashBinary.lab(arguments + ["--sim-reset-at", "6", "--sim-kill-at", "6.1"])
        #expect(faulted.status == 74, "\(faulted.stderr)")
        let run = try ExternalProcess(try #require(BitflashBinary.url), arguments)
        // Stopped once boards are into their writes (their progress lines say so). The wait blocks
        // this thread rather than awaiting on the shared pool, which other suites' runs may hold.
        // It looks again at each piece of output and at the child's end (600 s only bounds a hang).
        let writing = run.blockingWait(upTo: .seconds(600)) {
            !$0.isRunning || $0.stdout.components(separatedBy: #""type":"progress""#).count > 10
        }
        #expect(
            writing && run.isRunning,
            "the class ended before it could be stopped: \(run.isRunning ? "" : "exit \(run.status)") \(run.stderr.prefix(500))"
        )
        run.send(signal)
        _ = await run.finish(within: .seconds(120))
        let again = try BitflashBinary.run(arguments)
        #expect(again.status == 0, "\(again.stderr)")
        let results = again.lines.compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        .filter { $0["type"] as? String == "result" }
        #expect(results.count == Int(Self.boards))
        let held = try Self.applications(state)
        for r in results where r["verified"] as? Bool == true {
            let board = try #require(r["board"] as? String)
            #expect(held[board] == expected, "\(board) was reported verified but holds \(held[board] ?? "nothing")")
        }
    }
}
