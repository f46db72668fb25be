import DBus
import FakeBlueZ
import Foundation
import SimulatedBoard
import Testing
import TestSupport
import Transport

/// After a new pairing in pairing mode a board disconnects once the security events stop and
/// resets after its tick (CODAL `MicroBitBLEManager.cpp` `pairingComplete`, `idleCallback`,
/// `pairingMode`; DAL `pairingComplete`, `idleTick`). The fake runs at a hundredth of real time.
@Suite(.enabled(if: PrivateBus.isAvailable, Comment(rawValue: PrivateBus.skipMessage)))
struct PairingResetTests {
    static let device1 = "org.bluez.Device1"
    static let characteristic = "org.bluez.GattCharacteristic1"

    /// In pairing mode a Just Works build; in application mode an open build (a whitelisted one
    /// would advertise only to the hosts it is already bonded with).
    static func pairingBoard(startsInPairingMode: Bool) throws -> FakeBoard {
        var behaviour = FakeBoardBehaviour()
        behaviour.requiresPairing = startsInPairingMode
        behaviour.startsInPairingMode = startsInPairingMode
        return FakeBoard(board: try TestBoards.microbit(), behaviour: behaviour)
    }

    @Test(.timeLimit(.minutes(2)))
    func aNewPairingInPairingModeEndsWithADisconnectAndAResetIntoTheProgram() async throws {
        let (notes, noteSink) = AsyncStream<String>.makeStream()
        let fixture = try await FakeBus.start(
            [try Self.pairingBoard(startsInPairingMode: true)], timeScale: 0.01, notes: noteSink)
        let device = try #require(try await fixture.discover().keys.first)
        let changes = try await fixture.signals(
            .propertiesChanged(sender: "org.bluez", path: device, interface: Self.device1))
        try await fixture.call(device, Self.device1, "Pair")
        #expect(try await changes.next { $0.changed["Paired"] != nil }.changed["Paired"]?.bool() == true)
        // Nobody asked for it: the board drops the link once the pairing has settled.
        #expect(try await changes.next { $0.changed["Connected"] != nil }.changed["Connected"]?.bool() == false)
        // Then the tick and `microbit_reset()`: the board comes back, connectable, in its program.
        var rebooted = false
        for await note in notes where note.contains("resets after the pairing") {
            rebooted = true
            break
        }
        #expect(rebooted)
        for await note in notes where note.contains("booted into") {
            #expect(note.hasSuffix("booted into its program"), "\(note)")
            break
        }
        let boards = await fixture.stop()
        #expect(boards[0].mode == .application)
    }

    @Test func aPairingInApplicationModeStartsNoDisconnectAndNoReset() async throws {
        let fixture = try await FakeBus.start([try Self.pairingBoard(startsInPairingMode: false)], timeScale: 0.01)
        let device = try #require(try await fixture.discover().keys.first)
        try await fixture.call(device, Self.device1, "Pair")
        // 1 s real is 100 s modelled: longer than the quiet time, the tick and the reboot together.
        try await Task.sleep(for: .seconds(1))
        let connected = try await fixture.call(
            device, DBusStandard.properties, "Get", [.string(Self.device1), .string("Connected")])
        #expect(try connected.argument(0).bool() == true)
        let boards = await fixture.stop()
        #expect(boards[0].mode == .application)
    }
}
