import Foundation
import Testing
import TestSupport

/// `bitflash watch --device` against the fake org.bluez: a file that lands is flashed to the
/// board over D-Bus, partially, and Ctrl-C stops the watch.
@Suite(.enabled(if: Bitflash.available, "dbus-daemon or the bitflash binary missing: BlueZ integration tests skipped"))
struct WatchBlueZTests {
    @Test("a download written in steps is flashed once to the board through BlueZ, partially; SIGINT exits 130")
    func downloadIsFlashedThroughBlueZ() async throws {
        let fake = try FakeBlueZProcess(profile: "microbit-v2")
        let downloads = fake.bus.directory.appendingPathComponent("Downloads")
        try FileManager.default.createDirectory(at: downloads, withIntermediateDirectories: true)
        let bitflash = try #require(Bitflash.url)
        let watch = try ExternalProcess(
            bitflash, ["watch", downloads.path, "--device", "zotig", "--settle", "0.3", "--json", "-v"],
            environment: [
                "DBUS_SYSTEM_BUS_ADDRESS": fake.bus.address,
                "BITFLASH_STATE": fake.bus.directory.appendingPathComponent("bitflash").path
            ])
        #expect(await watch.wait(upTo: .seconds(60)) { $0.stdout.contains("\"watching\"") }, "\(watch.stderr)")
        let source = BlueZCommandTests.sample("sample-r1-counter.hex")
        let bytes = try Data(contentsOf: source)
        let file = downloads.appendingPathComponent("microbit-counter.hex")
        // Firefox: an empty placeholder first, then the data arrives in pieces. Each piece follows
        // once the watch has seen the file settle as it was, not complete firmware yet (`-v`).
        func settled(at size: Int) async -> Bool {
            let line = "\(file.path): settled at \(size) bytes, not complete firmware yet"
            return await watch.wait(upTo: .seconds(60)) { $0.stderr.contains(line) || !$0.isRunning }
        }
        _ = FileManager.default.createFile(atPath: file.path, contents: nil)
        #expect(await settled(at: 0), "\(watch.stderr)")
        let handle = try FileHandle(forWritingTo: file)
        try handle.write(contentsOf: bytes.prefix(bytes.count / 2))
        #expect(await settled(at: bytes.count / 2), "\(watch.stderr)")
        try handle.write(contentsOf: bytes.dropFirst(bytes.count / 2))
        try handle.close()
        let flashed = await watch.wait(upTo: .seconds(120)) { $0.stdout.contains("\"type\":\"flash\"") }
        #expect(flashed, "\(watch.stdout) \(watch.stderr)")
        watch.interrupt()
        #expect(await watch.finish(within: .seconds(60)) == 130)
        let flashes = watch.stdout.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        .filter { $0["type"] as? String == "flash" }
        #expect(flashes.count == 1, "\(watch.stdout)")
        let result = try #require((flashes.first?["results"] as? [[String: Any]])?.first)
        #expect(result["path"] as? String == "partial", "\(result)")
        #expect(result["verified"] as? Bool == true)
        fake.stop()
        try BlueZCommandTests.expectBoardHolds(
            "sample-r1-counter.hex", stateFile: fake.state.appendingPathComponent("sim.json"))
    }

    @Test(
        "Ctrl-C or SIGTERM during a flash through BlueZ: exit 130 or 143, never a success the board did not confirm, the signal named, and the next flash completes",
        arguments: ["Ctrl-C", "SIGTERM"])
    func interruptedFlashIsNeverASuccess(signal: String) async throws {
        let fake = try FakeBlueZProcess(profile: "microbit-v2")
        let state = fake.bus.directory.appendingPathComponent("bitflash")
        let file = fake.bus.directory.appendingPathComponent("prog.hex")
        try FileManager.default.copyItem(at: BlueZCommandTests.sample("sample-r1-counter.hex"), to: file)
        let bitflash = try #require(Bitflash.url)
        // The flash saves its first resume record before the first page is erased: the signal
        // below then comes while the program is written (or, on a fast run, after it was).
        let records = state.appendingPathComponent("resume")
        try FileManager.default.createDirectory(at: records, withIntermediateDirectories: true)
        let recordWritten = try FolderWatch(records)
        // The watched file exists, so it is flashed at the start.
        let watch = try ExternalProcess(
            bitflash, ["watch", file.path, "--device", "zotig", "--settle", "0", "--json"],
            environment: ["DBUS_SYSTEM_BUS_ADDRESS": fake.bus.address, "BITFLASH_STATE": state.path])
        let deadline = ContinuousClock.now + .seconds(60)  // a bound only: the wait ends on the record
        let writing = try await FakeBlueZProcess.offPool { recordWritten.next(before: deadline) }
        #expect(writing, "no resume record: \(watch.stderr)")
        if signal == "SIGTERM" {
            #expect(await watch.stop(within: .seconds(60)) == 143)
        } else {
            watch.interrupt()
            #expect(await watch.finish(within: .seconds(60)) == 130)
        }
        #expect(watch.stderr.contains("bitflash: stopped (\(signal))"), "\(watch.stderr)")
        let objects = watch.stdout.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        let results = objects.filter { $0["type"] as? String == "flash" }.flatMap {
            $0["results"] as? [[String: Any]] ?? []
        }
        #expect(results.count == 1, "\(watch.stdout)")
        for r in results where r["error"] != nil {
            #expect((r["error"] as? String ?? "").contains("stopped by \(signal)"), "\(r)")
            #expect(r["verified"] as? Bool == false)
        }
        for r in results where r["error"] == nil { #expect(r["verified"] as? Bool == true, "\(r)") }
        // Whatever the board was left with, the next flash brings it to the file.
        // (With the same state folder: it may continue the write from the watch's resume record.)
        let again = try await Bitflash.offPoolRun(
            ["flash", file.path, "--device", "zotig", "--json"],
            environment: ["DBUS_SYSTEM_BUS_ADDRESS": fake.bus.address, "BITFLASH_STATE": state.path])
        #expect(again.status == 0, "\(again.stderr)")
        fake.stop()
        try BlueZCommandTests.expectBoardHolds(
            "sample-r1-counter.hex", stateFile: fake.state.appendingPathComponent("sim.json"))
        print("watch stopped by \(signal) after 1 s: \(results.first?["error"] as? String ?? "finished, verified")")
    }
}
