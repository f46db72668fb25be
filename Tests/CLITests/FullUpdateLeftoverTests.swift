import Foundation
import Testing
import TestSupport

/// The story on a simulated micro:bit V1: the Calliope mini demo firmware (no MakeCode
/// program, smaller than the sample runtime) by Nordic DFU, then a sample with the runtime the
/// board had before. The old program above the demo is still found by the runtime's scan, so
/// the board reports the old runtime's hash; the second flash must be a full update.
@Suite(
    .enabled(if: BitflashBinary.url != nil, "bitflash binary not built (.build/debug/bitflash): CLI tests skipped"),
    .enabled(if: Corpus.isAvailable, Comment(rawValue: Corpus.skipMessage)))
struct FullUpdateLeftoverTests {
    @Test("after a smaller application by Nordic DFU, the old runtime's file is a full update, not a partial one")
    func theOldRuntimesFileIsAFullUpdateAfterASmallerApplication() throws {
        let state = try BitflashBinary.temporaryDirectory()
        let base = ["--simulate", "microbit-v1", "--sim-state", state.path, "--json"]
        let demo = Corpus.testdata.appendingPathComponent("real/calliope-mini1-demo-firmware-v3.1.0.hex").path
        let first = try BitflashBinary.run(["flash", demo] + base)
        #expect(first.status == 0 || first.status == 2, "\(first.stderr)")
        let second = try BitflashBinary.run(["flash", BitflashBinary.sample("sample-r1-counter.hex").path] + base)
        #expect(second.status == 0, "\(second.stderr)")
        let result = try #require(
            second.lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
                .last { $0["type"] as? String == "result" })
        #expect(result["path"] as? String == "full", "\(result)")
        #expect((result["reason"] as? [String: Any])?["code"] as? String == "program-left-behind", "\(result)")
        #expect(result["verified"] as? Bool == true, "\(result)")
        // Flashed once more, the board holds the file: nothing to do.
        let third = try BitflashBinary.run(["flash", BitflashBinary.sample("sample-r1-counter.hex").path] + base)
        #expect(third.status == 0 && third.stdout.contains("\"path\":\"up-to-date\""), "\(third.stdout)")
    }
}
