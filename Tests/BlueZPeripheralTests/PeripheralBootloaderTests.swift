import BlueZPeripheral
import DBus
import FirmwareImage
import Foundation
import NordicDFUFrames
import SampleFirmware
import SimulatedBoard
import Testing
import TestSupport
import Transport
import PartialFlashingFrames

/// A stock board served on the real BlueZ's side that resets into its Nordic bootloader: the
/// peripheral replaces its GATT application by the bootloader's, advertises as "DfuTarg", and
/// goes back to the application's table when the board leaves the bootloader.
@Suite(.enabled(if: PrivateBus.isAvailable, Comment(rawValue: PrivateBus.skipMessage)), .serialized)
struct PeripheralBootloaderTests {
    typealias P = PeripheralApplicationTests
    static let app = "/org/bitflash/peripheral"
    static let characteristic = "org.bluez.GattCharacteristic1"

    static func uuids(_ peripheral: SimulatedPeripheral) -> Set<String> {
        Set(peripheral.application.characteristics.map(\.characteristic.characteristic.uuidString))
    }

    static func advertisement(_ bluez: P.BlueZSide, _ peripheral: SimulatedPeripheral) async throws -> [String:
        DBusValue]
    {
        try await bluez.call(
            peripheral.connection.uniqueName, "\(app)/advertisement0", DBusStandard.properties, "GetAll",
            [.string("org.bluez.LEAdvertisement1")]
        ).argument(0).properties()
    }

    @Test("the buttonless entry switches the registered application to the bootloader's and the name to DfuTarg")
    func entersTheBootloader() async throws {
        let bluez = try await P.BlueZSide()
        let image = SampleFirmware.image(family: .nrf52833, runtime: .r1, program: .heart)
        let board = try SimulatedBoard(profile: SimulatedBoard.stockProfile(.microbitV2), image: image)
        let peripheral = try await P.start(bluez, board: board)
        #expect(
            Self.uuids(peripheral) == [
                PartialFlashingGATT.characteristic.characteristic.uuidString,
                NordicGATT.buttonlessBonded.characteristic.uuidString
            ])
        let me = peripheral.connection.uniqueName
        let buttonless = try #require(peripheral.application.characteristic(for: NordicGATT.buttonlessBonded)).path
        #expect(peripheral.application.characteristic(for: NordicGATT.buttonlessBonded)?.flags == ["write", "indicate"])
        _ = try await bluez.call(me, buttonless, Self.characteristic, "StartNotify")
        let options: DBusValue = .propertyMap(["type": .string("request"), "device": .objectPath(P.central)])
        _ = try await bluez.call(me, buttonless, Self.characteristic, "WriteValue", [.bytes([0x01]), options])
        let calls = try await bluez.calls(count: 7)
        #expect(
            Array(calls.suffix(5)) == [
                "UnregisterAdvertisement \(Self.app)/advertisement0", "Disconnect \(P.central)",
                "UnregisterApplication \(Self.app)", "RegisterApplication \(Self.app)",
                "RegisterAdvertisement \(Self.app)/advertisement0"
            ], "\(calls)")
        #expect(peripheral.board.inNordicBootloader)
        #expect(
            Self.uuids(peripheral) == [
                NordicGATT.secureControlPoint.characteristic.uuidString,
                NordicGATT.securePacket.characteristic.uuidString
            ])
        // The tree BlueZ reads at the new registration holds only the bootloader's service.
        let objects = try await bluez.call(me, Self.app, DBusStandard.objectManager, "GetManagedObjects").argument(0)
            .managedObjects()
        let services = objects.compactMapValues { $0["org.bluez.GattService1"] }
        #expect(try services.values.map { try #require($0["UUID"]).string() } == [NordicGATT.secureService.uuidString])
        let ad = try await Self.advertisement(bluez, peripheral)
        #expect(ad["LocalName"] == .string("DfuTarg"))
        #expect(ad["ServiceUUIDs"] == .strings([NordicGATT.secureService.uuidString]))
        _ = await peripheral.stop()
    }

    @Test(
        "a board served stuck in its bootloader offers the bootloader's table; a reset without a valid application keeps it"
    )
    func leavesTheBootloader() async throws {
        let bluez = try await P.BlueZSide()
        var board = try SimulatedBoard(
            profile: SimulatedBoard.stockProfile(.microbitV1),
            image: SampleFirmware.image(family: .nrf51, runtime: .r1, program: .heart))
        try board.strandInBootloader()
        let peripheral = try await P.start(bluez, board: board)
        #expect(
            Self.uuids(peripheral)
                == [NordicGATT.legacyControlPoint, NordicGATT.legacyPacket, NordicGATT.legacyRevision]
                .map(\.characteristic.uuidString).reduce(into: Set<String>()) { $0.insert($1) })
        #expect(try await Self.advertisement(bluez, peripheral)["LocalName"] == .string("DfuTarg"))
        // Reset (06): the application is still invalid, so the board comes back in its bootloader: no switch.
        let me = peripheral.connection.uniqueName
        let cp = try #require(peripheral.application.characteristic(for: NordicGATT.legacyControlPoint)).path
        _ = try await bluez.call(me, cp, Self.characteristic, "StartNotify")
        let options: DBusValue = .propertyMap(["type": .string("request"), "device": .objectPath(P.central)])
        _ = try await bluez.call(me, cp, Self.characteristic, "WriteValue", [.bytes([0x06]), options])
        let calls = try await bluez.calls(count: 5)
        #expect(calls.filter { $0.hasPrefix("RegisterApplication") }.count == 1, "\(calls)")
        #expect(peripheral.board.inNordicBootloader)
        _ = await peripheral.stop()
    }
}
