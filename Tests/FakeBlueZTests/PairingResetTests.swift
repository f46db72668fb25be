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
    static func pairingBoard(
        startsInPairingMode: Bool, name: String? = nil, address: String = "F0:0D:00:00:00:01"
    ) throws -> FakeBoard {
        var behaviour = FakeBoardBehaviour()
        behaviour.requiresPairing = startsInPairingMode
        behaviour.startsInPairingMode = startsInPairingMode
        return FakeBoard(board: try TestBoards.microbit(address: address), name: name, behaviour: behaviour)
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

    @Test(.timeLimit(.minutes(2)))
    func aPairingInApplicationModeStartsNoDisconnectAndNoReset() async throws {
        // A witness in pairing mode, paired just after on the same modelled clock: once it has
        // reset and booted into its program, the quiet time, the tick and the reboot have passed
        // for the board in application mode too.
        let (notes, noteSink) = AsyncStream<String>.makeStream()
        let subjectBoard = try Self.pairingBoard(startsInPairingMode: false, name: "subject")
        let fixture = try await FakeBus.start(
            [
                subjectBoard,
                try Self.pairingBoard(
                    startsInPairingMode: true, name: "witness", address: "F0:0D:00:00:00:02")
            ], timeScale: 0.01, notes: noteSink)
        _ = try await fixture.discover(count: 2)
        let device = TestBoards.devicePath("F0:0D:00:00:00:01")
        try await fixture.call(device, Self.device1, "Pair")
        try await fixture.call(TestBoards.devicePath("F0:0D:00:00:00:02"), Self.device1, "Pair")
        var seen: [String] = []
        for await note in notes {
            seen.append(note)
            if note.contains("[witness] booted into") { break }
        }
        #expect(seen.contains { $0.contains("[witness] resets after the pairing") }, "\(seen)")
        let subject = seen.filter { $0.hasPrefix("[subject]") }
        #expect(!subject.contains { $0.contains("pairing complete") || $0.contains("resets") }, "\(subject)")
        let connected = try await fixture.call(
            device, DBusStandard.properties, "Get", [.string(Self.device1), .string("Connected")])
        #expect(try connected.argument(0).bool() == true)
        let boards = await fixture.stop()
        #expect(boards[0].mode == .application)
        #expect(boards[0].device.bootCount == subjectBoard.board.device.bootCount, "it did not reset")
    }
}
