import Foundation
import Testing
import TestSupport

/// The McuMgr story from the command line on real MakeCode files: the board runs
/// 3.0.68-small-heart; 8.0.18-small-heart needs a new runtime (full update), then
/// 8.0.11-beating-heart shares that runtime (partial), then the same file is up to date.
@Suite(
    .enabled(
        if: BitflashBinary.url != nil && Corpus.isAvailable,
        "bitflash binary not built, or shared firmware corpus absent: corpus CLI story skipped"))
struct CorpusStoryTests {
    @Test func newRuntimeGoesFullThenAnEditGoesPartialThenUpToDate() throws {
        let state = try BitflashBinary.temporaryDirectory()
        func file(_ name: String) -> String { Corpus.testdata.appendingPathComponent("real/\(name)").path }
        let reset = try BitflashBinary.run([
            "sim", "reset", "--from", file("makecode-universal-3.0.68-small-heart.hex"),
            "--sim-state", state.path
        ])
        #expect(reset.status == 0, "\(reset.stderr)")
        var paths: [String] = []
        var reasons: [String] = []
        for name in [
            "makecode-universal-8.0.18-small-heart.hex", "makecode-universal-8.0.11-beating-heart.hex",
            "makecode-universal-8.0.11-beating-heart.hex"
        ] {
            let r = try BitflashBinary.run(["flash", file(name), "--simulate", "--sim-state", state.path, "--json"])
            #expect(r.status == 0, "\(name): \(r.stderr)")
            let results = r.lines.compactMap { line -> [String: Any]? in
                let o = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
                return o?["type"] as? String == "result" ? o : nil
            }
            let result = try #require(results.first)
            paths.append(result["path"] as? String ?? "failed")
            reasons.append((result["reason"] as? [String: Any])?["code"] as? String ?? "")
            #expect(result["verified"] as? Bool == true, "\(name)")
        }
        #expect(paths == ["full", "partial", "up-to-date"])
        #expect(reasons == ["runtime-differs", "runtime-matches", "up-to-date"])
    }
}
