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
        let watch = try ExternalProcess(bitflash, ["watch", downloads.path, "--device", "zotig", "--settle", "0.3", "--json"],
                                        environment: ["DBUS_SYSTEM_BUS_ADDRESS": fake.bus.address,
                                                      "BITFLASH_STATE": fake.bus.directory.appendingPathComponent("bitflash").path])
        #expect(await watch.wait(upTo: .seconds(60)) { $0.stdout.contains("\"watching\"") }, "\(watch.stderr)")
        let source = BlueZCommandTests.sample("sample-r1-counter.hex")
        let bytes = try Data(contentsOf: source)
        let file = downloads.appendingPathComponent("microbit-counter.hex")
        // Firefox: an empty placeholder first, then the data arrives in pieces.
        FileManager.default.createFile(atPath: file.path, contents: nil)
        try await Task.sleep(for: .milliseconds(600))
        let handle = try FileHandle(forWritingTo: file)
        try handle.write(contentsOf: bytes.prefix(bytes.count / 2))
        try await Task.sleep(for: .milliseconds(600))
        try handle.write(contentsOf: bytes.dropFirst(bytes.count / 2))
        try handle.close()
        let flashed = await watch.wait(upTo: .seconds(120)) { $0.stdout.contains("\"type\":\"flash\"") }
        #expect(flashed, "\(watch.stdout) \(watch.stderr)")
        watch.interrupt()
        #expect(await watch.finish(within: .seconds(60)) == 130)
        let flashes = watch.stdout.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
            .filter { $0["type"] as? String == "flash" }
        #expect(flashes.count == 1, "\(watch.stdout)")
        let result = try #require((flashes.first?["results"] as? [[String: Any]])?.first)
        #expect(result["path"] as? String == "partial", "\(result)")
        #expect(result["verified"] as? Bool == true)
        fake.stop()
        try BlueZCommandTests.expectBoardHolds("sample-r1-counter.hex", stateFile: fake.state.appendingPathComponent("sim.json"))
    }
}
