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

    @Test func aFlashRightAfterPairingSurvivesTheBoardsOwnDisconnectAndReset() throws {
        let fake = try FakeBlueZProcess(["--requires-pairing", "--in-pairing-mode", "--time-scale", "0.2"])
        let r = try fake.bitflash([
            "flash", T.sample("sample-r1-counter.hex").path, "--device", "zotig", "--json"
        ])
        #expect(r.status == 0, "\(r.stderr)\n\(r.stdout)")
        let result = try T.result(r)
        #expect(result["verification"] as? String == "verified", "\(result)")
        try T.expectBoardHolds("sample-r1-counter.hex", stateFile: fake.stop())
    }
}
