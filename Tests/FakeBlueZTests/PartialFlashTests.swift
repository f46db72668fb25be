import DBus
import FakeBlueZ
import Foundation
import PartialFlashing
import PartialFlashingFrames
import SimulatedBoard
import Testing
import TestSupport
import Transport

/// Partial-flashing frames written through D-Bus reach the simulated board's flash.
@Suite(.enabled(if: PrivateBus.isAvailable, Comment(rawValue: PrivateBus.skipMessage)))
struct PartialFlashTests {
    static let characteristic = "org.bluez.GattCharacteristic1"

    /// Writes one partial-flashing frame as a write command.
    static func send(_ fixture: FakeBus, _ pf: String, _ request: PartialFlashingRequest) async throws {
        try await fixture.call(
            pf, characteristic, "WriteValue", [.bytes(request.bytes), .propertyMap(["type": .string("command")])])
    }

    @Test(
        "Region info, two blocks and END_OF_TRANSMISSION: the board acknowledges each block, resets, and its flash and state file hold the blocks"
    )
    func blocksReachTheFlash() async throws {
        let state = FileManager.default.temporaryDirectory.appendingPathComponent(
            "fake-bluez-\(UUID().uuidString.prefix(8)).json")
        defer { try? FileManager.default.removeItem(at: state) }
        let fixture = try await FakeBus.start([FakeBoard(board: try TestBoards.microbit(), stateFile: state)])
        let device = try #require(try await fixture.discover().keys.first)
        let pf = try #require(try await fixture.connectAndResolve(device)[TestBoards.pfCharacteristic])
        let values = try await fixture.signals(
            .propertiesChanged(sender: "org.bluez", path: pf, interface: Self.characteristic))
        try await fixture.call(pf, Self.characteristic, "StartNotify")

        try await Self.send(fixture, pf, .regionInfo(2))
        let info = try await values.next { $0.changed["Value"] != nil }
        guard
            case .regionInfo(let program) = try PartialFlashingNotification(
                bytes: try info.changed["Value"]?.bytes() ?? [])
        else {
            Issue.record("no REGION_INFO answer")
            return
        }
        #expect(program.id == 2)
        #expect(program.start > 0x1C000)

        var generator = SeededGenerator(seed: 5)
        let data = (0..<128).map { _ in UInt8.random(in: 0...255, using: &generator) }
        for block in 0..<2 {
            let address = program.start + UInt32(block * 64)
            let offsets: [UInt16] = [UInt16(address & 0xFFFF), UInt16(address >> 16), 0, 0]
            for k in 0..<4 {
                let chunk = Array(data[(block * 64 + k * 16)..<(block * 64 + k * 16 + 16)])
                try await Self.send(
                    fixture, pf, .flashData(offsetField: offsets[k], packetNumber: UInt8(block * 4 + k), data: chunk))
            }
            let ack = try await values.next { $0.changed["Value"] != nil }
            #expect(try ack.changed["Value"]?.bytes() == PartialFlashingNotification.writeSuccess.bytes)
        }

        let link = try await fixture.signals(
            .propertiesChanged(sender: "org.bluez", path: device, interface: "org.bluez.Device1"))
        let removed = try await fixture.signals(.objectManager(sender: "org.bluez", member: "InterfacesRemoved"))
        try await Self.send(fixture, pf, .endOfTransmission)
        #expect(
            try await link.next { $0.changed["ServicesResolved"] != nil }.changed["ServicesResolved"]?.bool() == false)
        #expect(try await link.next { $0.changed["Connected"] != nil }.changed["Connected"]?.bool() == false)
        let gone = try await removed.next { try $0.arguments.argument(0).objectPath() == pf }
        #expect(try gone.arguments.argument(1).strings().contains(Self.characteristic))

        let range = program.start..<(program.start + 128)
        #expect(try fixture.fake.boards[0].readFlash(range) == data)
        #expect(fixture.fake.boards[0].flashIncomplete == false)
        let saved = try SimulatedBoard.load(from: state)
        #expect(try saved.readFlash(range) == data)
        let application = saved.profile.layout.application
        #expect(try saved.readFlash(application) == fixture.fake.boards[0].readFlash(application))

        // The board booted again: a new connection resolves a fresh table and answers STATUS.
        let again = try #require(try await fixture.connectAndResolve(device)[TestBoards.pfCharacteristic])
        let fresh = try await fixture.signals(
            .propertiesChanged(sender: "org.bluez", path: again, interface: Self.characteristic))
        try await fixture.call(again, Self.characteristic, "StartNotify")
        try await Self.send(fixture, again, .status)
        let status = try await fresh.next { $0.changed["Value"] != nil }
        #expect(try status.changed["Value"]?.bytes() == [0xEE, 0x01, BoardMode.application.rawValue])
        _ = await fixture.stop()
    }

    @Test("On the modelled clock a Connect made while the board reboots waits for it to advertise again, then succeeds")
    func connectWaitsForTheReboot() async throws {
        let fixture = try await FakeBus.start([FakeBoard(board: try TestBoards.microbit())], timeScale: 1)
        let device = try #require(try await fixture.discover().keys.first)
        let pf = try #require(try await fixture.connectAndResolve(device)[TestBoards.pfCharacteristic])
        let link = try await fixture.signals(
            .propertiesChanged(sender: "org.bluez", path: device, interface: "org.bluez.Device1"))
        try await Self.send(fixture, pf, .reset(.pairing))
        #expect(try await link.next { $0.changed["Connected"] != nil }.changed["Connected"]?.bool() == false)
        let again = try #require(try await fixture.connectAndResolve(device)[TestBoards.pfCharacteristic])
        #expect(again.hasPrefix(device + "/service"))
        #expect(fixture.fake.boards[0].mode == .pairing)
        _ = await fixture.stop()
    }

    @Test(
        "A board whose program has no Bluetooth starts in pairing mode, and after END_OF_TRANSMISSION it is gone: Connect fails"
    )
    func pairingModeOnlyBoardVanishesAfterAFlash() async throws {
        var behaviour = FakeBoardBehaviour()
        behaviour.pairingModeOnly = true
        let fixture = try await FakeBus.start([FakeBoard(board: try TestBoards.microbit(), behaviour: behaviour)])
        #expect(fixture.fake.boards[0].mode == .pairing)
        let device = try #require(try await fixture.discover().keys.first)
        let pf = try #require(try await fixture.connectAndResolve(device)[TestBoards.pfCharacteristic])
        let link = try await fixture.signals(
            .propertiesChanged(sender: "org.bluez", path: device, interface: "org.bluez.Device1"))
        // One block first, the program's first as it is: an END_OF_TRANSMISSION with no block
        // since the board started burns at offset 0, which the SoftDevice refuses, and the
        // board hangs instead of restarting (`PartialFlashingService.refusesProtectedFlash`).
        let program = try #require(fixture.fake.boards[0].memoryMap.first { $0.id == 2 })
        let block = try fixture.fake.boards[0].readFlash(program.start..<(program.start + 64))
        let offsets: [UInt16] = [UInt16(program.start & 0xFFFF), UInt16(program.start >> 16), 0, 0]
        for k in 0..<4 {
            try await Self.send(
                fixture, pf,
                .flashData(
                    offsetField: offsets[k], packetNumber: UInt8(k), data: Array(block[(k * 16)..<(k * 16 + 16)])))
        }
        try await Self.send(fixture, pf, .endOfTransmission)
        #expect(try await link.next { $0.changed["Connected"] != nil }.changed["Connected"]?.bool() == false)
        #expect(fixture.fake.boards[0].mode == .application)
        let error = await FaultScenarioTests.failure { try await fixture.call(device, "org.bluez.Device1", "Connect") }
        #expect(error == DBusError(name: "org.bluez.Error.Failed", message: "le-connection-abort-by-local"))
        _ = await fixture.stop()
    }

    @Test("FF 00 resets the board into pairing mode: the link drops and the board comes back in pairing mode")
    func resetIntoPairingMode() async throws {
        let fixture = try await FakeBus.start([FakeBoard(board: try TestBoards.microbit())])
        let device = try #require(try await fixture.discover().keys.first)
        let pf = try #require(try await fixture.connectAndResolve(device)[TestBoards.pfCharacteristic])
        let link = try await fixture.signals(
            .propertiesChanged(sender: "org.bluez", path: device, interface: "org.bluez.Device1"))
        try await Self.send(fixture, pf, .reset(.pairing))
        #expect(try await link.next { $0.changed["Connected"] != nil }.changed["Connected"]?.bool() == false)
        #expect(fixture.fake.boards[0].mode == .pairing)

        let again = try #require(try await fixture.connectAndResolve(device)[TestBoards.pfCharacteristic])
        let values = try await fixture.signals(
            .propertiesChanged(sender: "org.bluez", path: again, interface: Self.characteristic))
        try await fixture.call(again, Self.characteristic, "StartNotify")
        try await Self.send(fixture, again, .status)
        #expect(
            try await values.next { $0.changed["Value"] != nil }.changed["Value"]?.bytes() == [
                0xEE, 0x01, BoardMode.pairing.rawValue
            ])
        _ = await fixture.stop()
    }
}
