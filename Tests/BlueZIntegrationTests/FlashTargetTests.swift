import Foundation
import Testing
import TestSupport

/// `bitflash flash FILE` with no board named flashes the board this computer flashed last when
/// it is in range, and otherwise stops with the boards in range (64); never a simulated board.
/// Options for the other kind of target are refused by name.
@Suite(
    .serialized,
    .enabled(if: Bitflash.available, "dbus-daemon or the bitflash binary missing: BlueZ integration tests skipped"))
struct FlashTargetTests {
    typealias C = BlueZCommandTests

    static func run(_ arguments: [String], bus: String, state: URL) async throws -> Bitflash.Result {
        try await Bitflash.offPoolRun(
            arguments, environment: ["DBUS_SYSTEM_BUS_ADDRESS": bus, "BITFLASH_STATE": state.path])
    }

    static func folder() throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bitflash-target-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir
    }

    @Test("with no board named and none flashed before, flash lists the boards in range and exits 64")
    func noTargetListsTheBoardsInRange() async throws {
        let fake = try FakeBlueZProcess()
        let state = try Self.folder()
        let file = C.sample("sample-r1-counter.hex").path
        let r = try await Self.run(["flash", file, "--scan-timeout", "2"], bus: fake.bus.address, state: state)
        #expect(r.status == 64, "\(r.stderr)")
        #expect(r.stderr.contains("no board given: name one with --device ADDR|NAME"), "\(r.stderr)")
        #expect(r.stderr.contains("in range: BBC micro:bit [zotig] (F0:0D:00:00:00:01)"), "\(r.stderr)")
        #expect(!r.stdout.contains("verified") && !r.stdout.contains("sim"), "\(r.stdout)")
        try C.expectBoardHolds("sample-r1-heart.hex", stateFile: fake.stop())
    }

    @Test("with no Bluetooth and no board named, flash says how to name one and exits 64, flashing nothing")
    func noTargetWithoutBluetoothFlashesNothing() async throws {
        let state = try Self.folder()
        let r = try await Self.run(
            ["flash", C.sample("sample-r1-counter.hex").path], bus: "unix:path=/nonexistent/bus", state: state)
        #expect(r.status == 64, "\(r.stderr)")
        #expect(r.stderr.contains("no board given") && r.stderr.contains("--simulate"), "\(r.stderr)")
        #expect(r.stdout.isEmpty, "\(r.stdout)")
        #expect(!FileManager.default.fileExists(atPath: state.appendingPathComponent("sim").path))
    }

    @Test("after a flash with --device, flash with no board named takes that board again and names it first")
    func noTargetTakesTheBoardFlashedLast() async throws {
        let fake = try FakeBlueZProcess()
        let state = try Self.folder()
        let first = try await Self.run(
            ["flash", C.sample("sample-r1-counter.hex").path, "--device", "zotig"], bus: fake.bus.address,
            state: state)
        #expect(first.status == 0, "\(first.stderr)")
        let again = try await Self.run(
            ["flash", C.sample("sample-r1-heart.hex").path], bus: fake.bus.address, state: state)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(
            again.stderr.hasPrefix(
                "bitflash: flashing BBC micro:bit [zotig] (F0:0D:00:00:00:01), the board this computer flashed last"),
            "\(again.stderr)")
        #expect(again.stdout.contains("verified"), "\(again.stdout)")
        try C.expectBoardHolds("sample-r1-heart.hex", stateFile: fake.stop())
    }

    @Test("a board flashed last that is not in range is named, with the boards that are, and nothing is flashed")
    func theBoardFlashedLastOutOfRangeIsNamed() async throws {
        let fake = try FakeBlueZProcess()
        let state = try Self.folder()
        try #"{"address":"AA:BB:CC:DD:EE:01","name":"BBC micro:bit [gone]","when":"2026-11-27T10:00:00Z"}"#
            .write(to: state.appendingPathComponent("last-board.json"), atomically: true, encoding: .utf8)
        let r = try await Self.run(
            ["flash", C.sample("sample-r1-counter.hex").path, "--scan-timeout", "2"], bus: fake.bus.address,
            state: state)
        #expect(r.status == 64, "\(r.stderr)")
        #expect(
            r.stderr.contains(
                "BBC micro:bit [gone] (AA:BB:CC:DD:EE:01), the board this computer flashed last, is not in range"),
            "\(r.stderr)")
        #expect(r.stderr.contains("in range: BBC micro:bit [zotig]"), "\(r.stderr)")
        try C.expectBoardHolds("sample-r1-heart.hex", stateFile: fake.stop())
    }

    @Test(
        "options for simulated boards are refused with a real board, and options for real boards with --simulate",
        arguments: [
            (["--device", "zotig", "--link", "fast"], "--link"),
            (["--device", "zotig", "--sim-drop-at-write", "60"], "--sim-drop-at-write"),
            (["--device", "zotig", "--sim-kill-at", "3"], "--sim-kill-at"),
            (["--all-in-range", "--sim-adapter", "pi"], "--sim-adapter"),
            (["--sim-state", "/tmp/x"], "--sim-state"),
            (["--simulate", "--adapter", "hci1"], "--adapter"),
            (["--simulate", "--scan-timeout", "3"], "--scan-timeout"),
            (["--simulate", "--no-pair"], "--no-pair")
        ])
    func optionsForTheOtherKindOfTargetAreRefused(extra: [String], option: String) async throws {
        let state = try Self.folder()
        // Fault injection is the laboratory's: bitflash refuses it outright, bitflash-lab for a real board.
        let fault = option.hasPrefix("--sim-drop") || option.hasPrefix("--sim-kill")
        let r = try await Bitflash.offPoolRun(
            lab: fault, ["flash", C.sample("sample-r1-counter.hex").path] + extra,
            environment: ["DBUS_SYSTEM_BUS_ADDRESS": "unix:path=/nonexistent/bus", "BITFLASH_STATE": state.path])
        #expect(r.status == 64, "\(extra): \(r.stderr)")
        #expect(r.stderr.contains("\(option) is for"), "\(extra): \(r.stderr)")
    }
}
