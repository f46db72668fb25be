import Foundation
import Testing
import TestSupport

/// A board in pairing mode drops the link about 2 s after a new pairing and resets 15 s later
/// (CODAL `MicroBitBLEManager.cpp` `pairingComplete`, `idleCallback`, `pairingMode`; the fake
/// plays it at time scale 0.2). bitflash must still leave the board running the new program and
/// read it back, whatever part of the flash the disconnect and the reset fall on.
@Suite(
    .serialized,
    .enabled(if: Bitflash.available, "dbus-daemon or the bitflash binary missing: BlueZ integration tests skipped"))
struct PairingResetFlashTests {
    typealias T = BlueZCommandTests

    /// micro:bit V2 (tick 15 s), Calliope mini 3 (tick 2 s: the reset falls in the flash) and
    /// micro:bit V1 (DAL: disconnect 0.5 s after the pairing), as stock boards and with MCUboot.
    @Test(arguments: ["microbit-v2-mcuboot", "microbit-v2", "calliope-mini-3", "microbit-v1"])
    func aFlashRightAfterPairingSurvivesTheBoardsOwnDisconnectAndReset(profile: String) async throws {
        let fake = try FakeBlueZProcess(
            ["--requires-pairing", "--in-pairing-mode", "--time-scale", "0.2"], profile: profile)
        let r = try await fake.bitflashAsync([
            "flash", T.sample("sample-r1-counter.hex").path, "--device", "zotig", "--json"
        ])
        #expect(r.status == 0, "\(r.stderr)\n\(r.stdout)")
        // The board's own disconnect fell in the flash (it needs longer than the 2 s quiet time).
        #expect(try T.json(r).contains { $0["type"] as? String == "retry" }, "\(r.stdout)")
        let result = try T.result(r)
        #expect(result["verification"] as? String == "verified", "\(result)")
        try T.expectBoardHolds("sample-r1-counter.hex", stateFile: fake.stop())
    }
}
