import Foundation
import Testing
import TestSupport

/// `bitflash watch` where downloads go wrong: a newer file for another board, a file that never
/// stops growing, a folder that is not there or goes away, a stop by SIGTERM. Each waits on what
/// the watch prints, never on time.
@Suite(.enabled(if: BitflashBinary.url != nil, "bitflash binary not built (.build/debug/bitflash): CLI tests skipped"))
struct WatchRobustnessTests {
    let dir: URL
    let downloads: URL
    let state: URL

    init() throws {
        dir = try BitflashBinary.temporaryDirectory()
        downloads = dir.appendingPathComponent("Downloads")
        state = dir.appendingPathComponent("state")
        try FileManager.default.createDirectory(at: downloads, withIntermediateDirectories: true)
    }

    func start(_ extra: [String] = [], settle: String = "0.3") async throws -> ExternalProcess {
        let watch = try WatchCommandTests.start(
            [downloads.path, "--simulate", "microbit-v2", "--sim-state", state.path, "--settle", settle] + extra)
        #expect(await watch.wait(upTo: .seconds(60)) { $0.stdout.contains("\"watching\"") }, "\(watch.stderr)")
        return watch
    }

    /// Puts `source` into the watched folder as `name` in one step (written beside, then renamed),
    /// with the modification time `modified`.
    func land(_ source: URL, as name: String, modified: Date) throws -> URL {
        let target = downloads.appendingPathComponent(name)
        let beside = dir.appendingPathComponent(".landing-\(UUID().uuidString)")
        try FileManager.default.copyItem(at: source, to: beside)
        try FileManager.default.setAttributes([.modificationDate: modified], ofItemAtPath: beside.path)
        try FileManager.default.moveItem(at: beside, to: target)
        return target
    }

    static func flashed(_ watch: ExternalProcess, _ file: URL) -> [String: Any]? {
        WatchCommandTests.flashes(watch).first { $0["file"] as? String == file.path }
    }

    @Test("a good download followed by a newer '(1)' file for another board: the good one is still flashed")
    func aRefusedNewerFileDoesNotLoseTheGoodOne() async throws {
        // A hex for the micro:bit V1 only: a simulated V2 refuses it (65).
        let v1Only = dir.appendingPathComponent("v1-only.hex")
        let convert = try BitflashBinary.run([
            "convert", BitflashBinary.sample("sample-r1-heart.hex").path, "--board", "microbit-v1", "--to", "hex",
            "-o", v1Only.path
        ])
        #expect(convert.status == 0, "\(convert.stderr)")
        let watch = try await start()
        let now = Date()
        let good = try land(BitflashBinary.sample("sample-r1-counter.hex"), as: "microbit-prog.hex", modified: now)
        let other = try land(v1Only, as: "microbit-prog (1).hex", modified: now.addingTimeInterval(1))
        #expect(
            await watch.wait(upTo: .seconds(120)) { Self.flashed($0, good) != nil || !$0.isRunning },
            "\(watch.stdout) \(watch.stderr)")
        watch.interrupt()
        #expect(await watch.finish(within: .seconds(60)) == 130)
        let results = Self.flashed(watch, good)?["results"] as? [[String: Any]] ?? []
        #expect(results.first?["verified"] as? Bool == true, "\(watch.stdout)")
        let errors = WatchCommandTests.objects(watch).filter { $0["type"] as? String == "error" }
        #expect(errors.map { $0["file"] as? String } == [other.path], "\(watch.stdout)")
        #expect(errors.first?["exitCode"] as? Int == 65, "\(errors)")
        #expect(
            !WatchCommandTests.objects(watch).contains { $0["type"] as? String == "passed-over" }, "\(watch.stdout)")
    }

    @Test("a file that keeps growing does not hold back a complete download for ever")
    func aGrowingFileDoesNotWin() async throws {
        // Settling takes four polls (250 ms each): the writer below has three to answer each change.
        let watch = try await start(["--incomplete-wait", "1", "-v"], settle: "1")
        let growing = downloads.appendingPathComponent("stuck.hex")
        _ = FileManager.default.createFile(atPath: growing.path, contents: nil)
        // A writer that never finishes: a data record as soon as the watch has seen the one before
        // (`-v` says so), never the end-of-file record, so the file never stays the same for a settle.
        let writer = Task {
            let handle = try FileHandle(forWritingTo: growing)
            defer { try? handle.close() }
            let record = Data(":10000000FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF00\n".utf8)
            var size = 0
            while !Task.isCancelled && watch.isRunning {
                try handle.write(contentsOf: record)
                size += record.count
                let seen = "\(growing.path): changed (\(size) bytes)"
                _ = await watch.wait(upTo: .seconds(60)) { $0.stderr.contains(seen) || !$0.isRunning }
            }
        }
        defer { writer.cancel() }
        let good = try land(BitflashBinary.sample("sample-r1-counter.hex"), as: "microbit-prog.hex", modified: Date())
        #expect(
            await watch.wait(upTo: .seconds(120)) { Self.flashed($0, good) != nil || !$0.isRunning },
            "\(watch.stdout) \(watch.stderr)")
        writer.cancel()
        watch.interrupt()
        #expect(await watch.finish(within: .seconds(60)) == 130)
        #expect(WatchCommandTests.flashes(watch).map { $0["file"] as? String } == [good.path], "\(watch.stdout)")
    }

    @Test("watching a path that does not exist fails at once with 66 and says so")
    func aMissingPathFailsAtOnce() async throws {
        let missing = dir.appendingPathComponent("nonexistent").path
        let r = try await ExternalProcess.run(
            try #require(BitflashBinary.url), ["watch", missing, "--simulate", "--sim-state", state.path],
            timeout: .seconds(60))
        #expect(r.status == 66, "\(r.status) \(r.stderr)")
        #expect(r.stderr.contains("\(missing): no such file or folder to watch"), "\(r.stderr)")
        #expect(!r.stdout.contains("watching"), "\(r.stdout)")
    }

    @Test("a watched folder that is deleted ends the watch with 66 and says so")
    func aDeletedFolderIsReported() async throws {
        let watch = try await start()
        try FileManager.default.removeItem(at: downloads)
        #expect(await watch.finish(within: .seconds(60)) == 66, "\(watch.stderr)")
        #expect(
            watch.stderr.contains("the watched folder \(downloads.path) was deleted or moved"), "\(watch.stderr)")
    }

    @Test("SIGTERM stops the watch with 143 and says so")
    func sigtermIsReported() async throws {
        let watch = try await start()
        #expect(await watch.stop(within: .seconds(60)) == 143, "\(watch.stderr)")
        #expect(watch.stderr.contains("stopped (SIGTERM)"), "\(watch.stderr)")
    }
}
