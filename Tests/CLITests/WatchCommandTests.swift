import Foundation
import Testing
import TestSupport

/// `bitflash watch` on a simulated board: the built binary, run as a child, fed files the way an
/// editor and a browser write them, stopped with SIGINT. A test learns that nothing more is coming
/// from a sentinel: a complete file, older than the others, dropped into a watched folder once the
/// test has seen what it waits for. The watch flashes it only once nothing newer waits (a file
/// waiting would be tried first, and would pass the older sentinel over), so the sentinel's flash
/// closes the run.
@Suite(.enabled(if: BitflashBinary.url != nil, "bitflash binary not built (.build/debug/bitflash): CLI tests skipped"))
struct WatchCommandTests {
    static func objects(_ p: ExternalProcess) -> [[String: Any]] {
        p.stdout.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
    }

    static func flashes(_ p: ExternalProcess) -> [[String: Any]] {
        objects(p).filter { $0["type"] as? String == "flash" }
    }

    static func start(_ arguments: [String]) throws -> ExternalProcess {
        let bitflash = try #require(BitflashBinary.url)
        return try ExternalProcess(bitflash, ["watch"] + arguments + ["--json"])
    }

    /// The application region's hash of the simulated boards in `state`, as `sim show` gives it.
    static func applicationHashes(_ state: URL) throws -> [String] {
        let show = try BitflashBinary.run(["sim", "show", "--json", "--sim-state", state.path])
        let boards = try #require(try JSONSerialization.jsonObject(with: Data(show.stdout.utf8)) as? [[String: Any]])
        return boards.compactMap { $0["applicationSHA256"] as? String }
    }

    /// The hash a stock micro:bit V2 holds once given `file`.
    static func expectedHash(_ file: URL) throws -> String {
        let reference = try BitflashBinary.temporaryDirectory()
        let reset = try BitflashBinary.run([
            "sim", "reset", "--profile", "microbit-v2", "--from", file.path, "--sim-state", reference.path
        ])
        #expect(reset.status == 0, "\(reset.stderr)")
        return try #require(try applicationHashes(reference).first)
    }

    /// Drops a copy of `source` into `folder` as `sentinel.hex`, written beside and renamed in,
    /// dated an hour back; returns its path.
    static func dropSentinel(_ source: URL, into folder: URL) throws -> URL {
        let target = folder.appendingPathComponent("sentinel.hex")
        let beside = folder.deletingLastPathComponent().appendingPathComponent(".sentinel-\(UUID().uuidString)")
        try FileManager.default.copyItem(at: source, to: beside)
        try FileManager.default.setAttributes(
            [.modificationDate: Date().addingTimeInterval(-3600)], ofItemAtPath: beside.path)
        try FileManager.default.moveItem(at: beside, to: target)
        return target
    }

    /// Waits until `file` has been flashed (bounded, as a safety net).
    static func waitForFlash(of file: URL, in watch: ExternalProcess) async -> Bool {
        await watch.wait(upTo: .seconds(120)) { p in
            flashes(p).contains { $0["file"] as? String == file.path } || !p.isRunning
        }
    }

    /// Writes `bytes` to `url` in `parts` pieces, as a slow editor or download would. With a
    /// `watch` (run with `-v`), each piece but the last waits until the watch says the file settled
    /// at the size written so far and is not complete firmware yet: every pause is then longer than
    /// the settle time, as the watch measured it. Without one, the pieces follow each other at once.
    static func writeInSteps(_ bytes: Data, to url: URL, parts: Int, watch: ExternalProcess? = nil) async throws {
        _ = FileManager.default.createFile(atPath: url.path, contents: nil)
        let handle = try FileHandle(forWritingTo: url)
        defer { try? handle.close() }
        let step = (bytes.count + parts - 1) / parts
        for start in stride(from: 0, to: bytes.count, by: step) {
            let end = min(bytes.count, start + step)
            try handle.write(contentsOf: bytes[start..<end])
            guard let watch, end < bytes.count else { continue }
            let settled = "\(url.path): settled at \(end) bytes, not complete firmware yet"
            #expect(
                await watch.wait(upTo: .seconds(60)) { $0.stderr.contains(settled) || !$0.isRunning },
                "\(watch.stderr)")
        }
    }

    @Test(
        "A file written in several steps, each pause longer than the settle time, is flashed once, complete; Ctrl-C exits 130"
    )
    func fileWrittenInStepsIsFlashedOnceComplete() async throws {
        let dir = try BitflashBinary.temporaryDirectory()
        let state = dir.appendingPathComponent("state")
        let file = dir.appendingPathComponent("prog.hex")
        let sentinels = dir.appendingPathComponent("sentinels")
        try FileManager.default.createDirectory(at: sentinels, withIntermediateDirectories: true)
        // The simulated micro:bit V2 starts with the heart program: the counter is a partial flash.
        let source = BitflashBinary.sample("sample-r1-counter.hex")
        let watch = try Self.start([
            file.path, sentinels.path, "--simulate", "microbit-v2", "--sim-state", state.path,
            "--settle", "0.2", "--incomplete-wait", "60", "-v"
        ])
        #expect(await watch.wait(upTo: .seconds(60)) { $0.stdout.contains("\"watching\"") }, "\(watch.stderr)")
        // Four pieces, each once the watch saw the one before settle as no complete hex yet.
        try await Self.writeInSteps(try Data(contentsOf: source), to: file, parts: 4, watch: watch)
        #expect(await Self.waitForFlash(of: file, in: watch), "\(watch.stdout) \(watch.stderr)")
        // The same program again, as the sentinel: up to date, the board keeps it.
        let sentinel = try Self.dropSentinel(source, into: sentinels)
        #expect(await Self.waitForFlash(of: sentinel, in: watch), "\(watch.stdout) \(watch.stderr)")
        watch.interrupt()
        #expect(await watch.finish(within: .seconds(60)) == 130)
        #expect(watch.stderr.contains("stopped (Ctrl-C)"), "\(watch.stderr)")
        let flashes = Self.flashes(watch).filter { $0["file"] as? String != sentinel.path }
        #expect(flashes.count == 1, "\(watch.stdout)")
        #expect(flashes.first?["file"] as? String == file.path)
        let results = try #require(flashes.first?["results"] as? [[String: Any]])
        #expect(results.count == 1)
        #expect(results.first?["path"] as? String == "partial", "\(results)")
        #expect(results.first?["verified"] as? Bool == true, "\(results)")
        #expect(results.first?["error"] == nil)
        #expect(
            !Self.objects(watch).contains { ["incomplete", "error"].contains($0["type"] as? String) }, "\(watch.stdout)"
        )
        #expect(try Self.applicationHashes(state) == [try Self.expectedHash(source)])
    }

    @Test(
        "Two downloads in quick succession (a renamed .crdownload, then name (1).hex): only the newer is flashed; old files are left alone"
    )
    func twoDownloadsFlashTheNewest() async throws {
        let dir = try BitflashBinary.temporaryDirectory()
        let downloads = dir.appendingPathComponent("Downloads")
        let state = dir.appendingPathComponent("state")
        try FileManager.default.createDirectory(at: downloads, withIntermediateDirectories: true)
        // A download from before the watch started is not flashed.
        try FileManager.default.copyItem(
            at: BitflashBinary.sample("sample-r2-heart.hex"), to: downloads.appendingPathComponent("old.hex"))
        let watch = try Self.start([
            downloads.path, "--simulate", "microbit-v2", "--sim-state", state.path, "--settle", "2"
        ])
        #expect(await watch.wait(upTo: .seconds(60)) { $0.stdout.contains("\"watching\"") }, "\(watch.stderr)")
        // Chrome: the download grows as name.hex.crdownload and is renamed when done.
        let first = downloads.appendingPathComponent("microbit-prog.hex")
        let partial = downloads.appendingPathComponent("microbit-prog.hex.crdownload")
        // (The watch never looks at a .crdownload: its pieces need not wait for anything.)
        try await Self.writeInSteps(
            try Data(contentsOf: BitflashBinary.sample("sample-r1-heart.hex")), to: partial, parts: 3)
        // The second download is ready beside the folder, so that the two renames below follow each
        // other at once, however slowly this test is scheduled: "in quick succession" is then a
        // fact of the file system, not of this test's timing.
        let second = downloads.appendingPathComponent("microbit-prog (1).hex")
        let staged = dir.appendingPathComponent("microbit-prog (1).hex")
        let newest = BitflashBinary.sample("sample-r1-counter.hex")
        try Data(contentsOf: newest).write(to: staged)
        // The second download is the newer one, a second later, whatever the file system's clock granularity.
        let now = Date()
        try FileManager.default.setAttributes([.modificationDate: now], ofItemAtPath: partial.path)
        try FileManager.default.setAttributes([.modificationDate: now.addingTimeInterval(1)], ofItemAtPath: staged.path)
        try FileManager.default.moveItem(at: partial, to: first)
        try FileManager.default.moveItem(at: staged, to: second)
        #expect(await Self.waitForFlash(of: second, in: watch), "\(watch.stdout) \(watch.stderr)")
        let sentinel = try Self.dropSentinel(newest, into: downloads)
        #expect(await Self.waitForFlash(of: sentinel, in: watch), "\(watch.stdout) \(watch.stderr)")
        watch.interrupt()
        #expect(await watch.finish(within: .seconds(60)) == 130)
        let flashes = Self.flashes(watch)
        #expect(flashes.map { $0["file"] as? String } == [second.path, sentinel.path], "\(watch.stdout)")
        let passed = Self.objects(watch).filter { $0["type"] as? String == "passed-over" }
        #expect(passed.map { $0["file"] as? String } == [first.path])
        #expect(passed.first?["newer"] as? String == second.path)
        #expect(try Self.applicationHashes(state) == [try Self.expectedHash(newest)])
    }

    @Test("A file that stays incomplete is reported once and never flashed")
    func incompleteFileIsReportedNotFlashed() async throws {
        let dir = try BitflashBinary.temporaryDirectory()
        let file = dir.appendingPathComponent("prog.hex")
        let sentinels = dir.appendingPathComponent("sentinels")
        try FileManager.default.createDirectory(at: sentinels, withIntermediateDirectories: true)
        let source = BitflashBinary.sample("sample-r1-counter.hex")
        let bytes = try Data(contentsOf: source)
        try bytes.prefix(bytes.count / 2).write(to: file)
        let watch = try Self.start([
            file.path, sentinels.path, "--simulate", "microbit-v2", "--sim-state",
            dir.appendingPathComponent("state").path, "--settle", "0.2", "--incomplete-wait", "1"
        ])
        #expect(
            await watch.wait(upTo: .seconds(60)) { $0.stdout.contains("\"incomplete\"") },
            "\(watch.stdout) \(watch.stderr)")
        let sentinel = try Self.dropSentinel(source, into: sentinels)
        #expect(await Self.waitForFlash(of: sentinel, in: watch), "\(watch.stdout) \(watch.stderr)")
        watch.interrupt()
        #expect(await watch.finish(within: .seconds(60)) == 130)
        #expect(Self.flashes(watch).map { $0["file"] as? String } == [sentinel.path], "\(watch.stdout)")
        let reports = Self.objects(watch).filter { $0["type"] as? String == "incomplete" }
        #expect(reports.count == 1)
        #expect((reports.first?["message"] as? String ?? "").contains("end-of-file record"), "\(reports)")
    }

    @Test(
        "Options watch cannot honour are refused with exit 64 and the reason",
        arguments: [
            (["--dry-run"], "to see a plan"), (["--retry-failed"], "--retry-failed belongs to"),
            (["--trace", "t.jsonl"], "--trace belongs to the laboratory")
        ])
    func refusesWhatItCannotDo(_ extra: [String], _ message: String) throws {
        let dir = try BitflashBinary.temporaryDirectory()
        let r = try BitflashBinary.run(["watch", dir.path, "--simulate", "--sim-state", dir.path] + extra)
        #expect(r.status == 64)
        #expect(r.stderr.contains(message), "\(r.stderr)")
    }
}
