import FirmwareImage
import Foundation
import SimulatedBoard
import Testing
import TestSupport

/// `bitflash flash --device` on stock boards behind the fake BlueZ: a new runtime goes by
/// Nordic DFU (Secure DFU on micro:bit V2 and Calliope mini 3, legacy DFU on micro:bit V1 and
/// Calliope mini 1/2),
/// through the bonded buttonless entry, the reset, BlueZ's cached table of the application and
/// the reconnection to the bootloader (at the same address, or at the next one); a board found
/// in its bootloader is recovered. Each board is checked byte for byte in the fake's saved state.
@Suite(
    .serialized,
    .enabled(if: Bitflash.available, "dbus-daemon or the bitflash binary missing: BlueZ integration tests skipped"))
struct NordicDFUOverBlueZTests {
    typealias C = BlueZCommandTests
    static let newRuntime = "sample-r2-heart.hex"
    /// A stock board as CODAL builds it: Just Works (a bond for the buttonless entry), bonded with
    /// this computer in pairing mode earlier (its whitelist then lets it advertise to this
    /// computer in application mode), BlueZ's GATT cache on.
    static let stock = ["--requires-pairing", "--bonded", "--gatt-cache", "--time-scale", "0.2"]

    /// Flashes the new runtime, checks the result, waits for the board to run it and checks its flash.
    static func flashNewRuntime(
        _ fake: FakeBlueZProcess, device: String = "zotig", reason: String = "runtime-differs",
        expect: String, options: [String] = []
    ) async throws -> [[String: Any]] {
        let r = try await fake.bitflashAsync(
            ["flash", C.sample(newRuntime).path, "--device", device, "--json"] + options)
        #expect(r.status == 0, "\(r.stderr)")
        let result = try C.result(r)
        #expect(result["path"] as? String == "full")
        #expect(result["fullPath"] as? String == "nordic")
        #expect(result["verified"] as? Bool == true)
        #expect((result["reason"] as? [String: Any])?["code"] as? String == reason)
        let notes = try C.json(r).compactMap { $0["message"] as? String }
        #expect(notes.contains { $0.contains(expect) }, "\(notes.prefix(12))")
        // The bootloader resets into the new application once it has checked it.
        _ = try await fake.waitForBoard { !$0.inNordicBootloader && $0.nordicSettings.applicationValid }
        try C.expectBoardHolds(newRuntime, stateFile: fake.stop())
        return try C.json(r)
    }

    @Test("a new runtime on a stock micro:bit V2 goes by Secure DFU through the bonded buttonless entry")
    func secureDFUMicrobitV2() async throws {
        let fake = try FakeBlueZProcess(Self.stock, profile: "microbit-v2")
        let events = try await Self.flashNewRuntime(fake, expect: "Nordic Secure DFU")
        let phases = events.compactMap { $0["phase"] as? String }
        #expect(phases.contains("reset") && phases.contains("full upload") && phases.last == "done")
        let board = try SimulatedBoard.load(from: fake.stateFile)
        #expect(board.nordicStatistics?.inactivityResets == 0)
    }

    @Test("a new runtime on a Calliope mini 3 goes by Secure DFU too")
    func secureDFUCalliopeMini3() async throws {
        let fake = try FakeBlueZProcess(Self.stock, profile: "calliope-mini-3", name: "Calliope mini [gapoz]")
        _ = try await Self.flashNewRuntime(fake, device: "gapoz", expect: "Nordic Secure DFU")
        #expect(try SimulatedBoard.load(from: fake.stateFile).profile.board == .calliopeMini3)
    }

    @Test("a new runtime on a micro:bit V1 goes by legacy DFU through the DFU control service")
    func legacyDFUMicrobitV1() async throws {
        let fake = try FakeBlueZProcess(Self.stock, profile: "microbit-v1")
        _ = try await Self.flashNewRuntime(fake, expect: "Nordic legacy DFU")
    }

    @Test(
        "a new runtime on a Calliope mini 1 or 2 (DAL, nRF51) goes by legacy DFU too",
        arguments: [Board.calliopeMini1, .calliopeMini2])
    func legacyDFUCalliopeMini(board: Board) async throws {
        let fake = try FakeBlueZProcess(Self.stock, profile: board.rawValue, name: "Calliope mini [tovag]")
        _ = try await Self.flashNewRuntime(fake, device: "tovag", expect: "Nordic legacy DFU")
        #expect(try SimulatedBoard.load(from: fake.stateFile).profile.board == board)
    }

    @Test("a bootloader at the address + 1 (a build without bonds) is found by scanning for it")
    func bootloaderAtNextAddress() async throws {
        let fake = try FakeBlueZProcess(Self.stock + ["--bootloader-at-next-address"], profile: "microbit-v2")
        let events = try await Self.flashNewRuntime(fake, device: FakeBlueZProcess.address, expect: "Nordic Secure DFU")
        let result = try #require(events.last { $0["type"] as? String == "result" })
        #expect(result["board"] as? String == FakeBlueZProcess.address)
    }

    @Test("through a second adapter, the bootloader at the address + 1 is found under that adapter")
    func bootloaderAtNextAddressThroughSecondAdapter() async throws {
        let fake = try FakeBlueZProcess(
            Self.stock + ["--bootloader-at-next-address", "--adapters", "2"], profile: "microbit-v2")
        let events = try await Self.flashNewRuntime(
            fake, device: FakeBlueZProcess.address, expect: "Nordic Secure DFU", options: ["--adapter", "hci1"])
        let result = try #require(events.last { $0["type"] as? String == "result" })
        #expect(result["board"] as? String == FakeBlueZProcess.address)
    }

    @Test(
        "a board found in its bootloader (DfuTarg) is recovered with the file's application",
        arguments: ["microbit-v2", "microbit-v1", "calliope-mini-2"])
    func recoversDfuTarg(profile: String) async throws {
        let fake = try FakeBlueZProcess(["--gatt-cache", "--time-scale", "0.2"], profile: profile) { state in
            let r = try Bitflash.run(
                ["sim", "reset", "--profile", profile, "--stuck-in-bootloader", "--sim-state", state.path],
                bus: "unix:path=/nonexistent")
            #expect(r.status == 0, "\(r.stderr)")
        }
        #expect(try SimulatedBoard.load(from: fake.stateFile).inNordicBootloader)
        let events = try await Self.flashNewRuntime(
            fake, device: "DfuTarg", reason: "in-bootloader", expect: "recovering it")
        #expect(events.contains { $0["code"] as? String == "in-bootloader" })
    }
}
