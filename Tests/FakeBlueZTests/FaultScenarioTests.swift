import DBus
import FakeBlueZ
import Foundation
import PartialFlashing
import Testing
import TestSupport
import Transport
import PartialFlashingFrames

/// The scenario faults: pairing, connect failures, services that never resolve, a lost
/// link, an absent board, a stale bond.
@Suite(.enabled(if: PrivateBus.isAvailable, Comment(rawValue: PrivateBus.skipMessage)))
struct FaultScenarioTests {
    static let device1 = "org.bluez.Device1"
    static let characteristic = "org.bluez.GattCharacteristic1"
    static let command: DBusValue = .propertyMap(["type": .string("command")])
    static let request: DBusValue = .propertyMap(["type": .string("request")])

    static func board(_ configure: (inout FakeBoardBehaviour) -> Void, address: String = "F0:0D:00:00:00:01") throws
        -> FakeBoard
    {
        var behaviour = FakeBoardBehaviour()
        configure(&behaviour)
        return FakeBoard(board: try TestBoards.microbit(address: address), behaviour: behaviour)
    }

    /// The D-Bus error a call fails with.
    static func failure(_ body: () async throws -> Void) async -> DBusError? {
        do {
            try await body()
            return nil
        } catch let error as DBusError {
            return error
        } catch {
            return nil
        }
    }

    @Test(
        "A board that needs a bond (in pairing mode) refuses StartNotify and write requests with NotPermitted until Pair, then answers"
    )
    func pairingIsRequired() async throws {
        let fixture = try await FakeBus.start([
            try Self.board {
                $0.requiresPairing = true
                $0.startsInPairingMode = true
            }
        ])
        let device = try #require(try await fixture.discover().keys.first)
        let pf = try #require(try await fixture.connectAndResolve(device)[TestBoards.pfCharacteristic])
        let notify = await Self.failure { try await fixture.call(pf, Self.characteristic, "StartNotify") }
        #expect(notify == DBusError(name: "org.bluez.Error.NotPermitted", message: "Not paired"))
        let write = await Self.failure {
            try await fixture.call(pf, Self.characteristic, "WriteValue", [.bytes([0xEE]), Self.request])
        }
        #expect(write?.name == "org.bluez.Error.NotPermitted")

        let changes = try await fixture.signals(
            .propertiesChanged(sender: "org.bluez", path: device, interface: Self.device1))
        try await fixture.call(device, Self.device1, "Pair")
        #expect(try await changes.next { $0.changed["Paired"] != nil }.changed["Paired"]?.bool() == true)
        let repeated = await Self.failure { try await fixture.call(device, Self.device1, "Pair") }
        #expect(repeated?.name == "org.bluez.Error.AlreadyExists")

        let values = try await fixture.signals(
            .propertiesChanged(sender: "org.bluez", path: pf, interface: Self.characteristic))
        try await fixture.call(pf, Self.characteristic, "StartNotify")
        try await fixture.call(pf, Self.characteristic, "WriteValue", [.bytes([0xEE]), Self.request])
        // STATUS in pairing mode: mode byte 0x00 (partial-flashing-protocol.md §2.5).
        #expect(try await values.next { $0.changed["Value"] != nil }.changed["Value"]?.bytes() == [0xEE, 0x01, 0x00])
        _ = await fixture.stop()
    }

    @Test("A board that refuses pairing makes Pair fail with AuthenticationFailed and stays unpaired")
    func pairingIsRefused() async throws {
        let fixture = try await FakeBus.start([try Self.board { $0.refusesPairing = true }])
        let device = try #require(try await fixture.discover().keys.first)
        let error = await Self.failure { try await fixture.call(device, Self.device1, "Pair") }
        #expect(error == DBusError(name: "org.bluez.Error.AuthenticationFailed", message: "Authentication Failed"))
        let paired = try await fixture.call(
            device, DBusStandard.properties, "Get", [.string(Self.device1), .string("Paired")])
        #expect(try paired.argument(0).bool() == false)
        _ = await fixture.stop()
    }

    @Test(
        "Connect fails as configured (InProgress, then le-connection-abort-by-local after a brief Connected), then connects"
    )
    func connectFailuresComeFirst() async throws {
        let fixture = try await FakeBus.start([try Self.board { $0.connectFailures = [.inProgress, .abortByLocal] }])
        let device = try #require(try await fixture.discover().keys.first)
        let first = await Self.failure { try await fixture.call(device, Self.device1, "Connect") }
        #expect(first == DBusError(name: "org.bluez.Error.InProgress", message: "Operation already in progress"))

        let changes = try await fixture.signals(
            .propertiesChanged(sender: "org.bluez", path: device, interface: Self.device1))
        let second = await Self.failure { try await fixture.call(device, Self.device1, "Connect") }
        #expect(second == DBusError(name: "org.bluez.Error.Failed", message: "le-connection-abort-by-local"))
        #expect(try await changes.next().changed["Connected"]?.bool() == true)
        #expect(try await changes.next().changed["Connected"]?.bool() == false)

        let chars = try await fixture.connectAndResolve(device)
        #expect(chars[TestBoards.pfCharacteristic] != nil)
        _ = await fixture.stop()
    }

    @Test("Services that never resolve: the link is up but no GATT objects appear, while another board resolves")
    func servicesNeverResolve() async throws {
        let fixture = try await FakeBus.start([
            try Self.board({ $0.servicesNeverResolve = true }, address: "F0:0D:00:00:00:01"),
            try Self.board({ _ in }, address: "F0:0D:00:00:00:02")
        ])
        let devices = try await fixture.discover(count: 2)
        let stuck = TestBoards.devicePath("F0:0D:00:00:00:01")
        let fine = TestBoards.devicePath("F0:0D:00:00:00:02")
        #expect(devices.count == 2)
        try await fixture.call(stuck, Self.device1, "Connect")
        _ = try await fixture.connectAndResolve(fine)
        let objects = try await fixture.managedObjects()
        #expect(try objects[stuck]?[Self.device1]?["Connected"]?.bool() == true)
        #expect(try objects[stuck]?[Self.device1]?["ServicesResolved"]?.bool() == false)
        #expect(!objects.keys.contains { $0.hasPrefix(stuck + "/") })
        #expect(objects.keys.contains { $0.hasPrefix(fine + "/") })
        _ = await fixture.stop()
    }

    @Test("The link drops once after N writes; the GATT objects go, and after reconnecting writes go through")
    func linkDropsAfterWrites() async throws {
        let fixture = try await FakeBus.start([try Self.board { $0.disconnectAfterWrites = 2 }])
        let device = try #require(try await fixture.discover().keys.first)
        let pf = try #require(try await fixture.connectAndResolve(device)[TestBoards.pfCharacteristic])
        let changes = try await fixture.signals(
            .propertiesChanged(sender: "org.bluez", path: device, interface: Self.device1))
        try await fixture.call(pf, Self.characteristic, "WriteValue", [.bytes([0xEE]), Self.command])
        try await fixture.call(pf, Self.characteristic, "WriteValue", [.bytes([0xEE]), Self.command])
        #expect(try await changes.next { $0.changed["Connected"] != nil }.changed["Connected"]?.bool() == false)
        let after = await Self.failure {
            try await fixture.call(pf, Self.characteristic, "WriteValue", [.bytes([0xEE]), Self.command])
        }
        #expect(after?.hasName(.unknownObject) == true)

        let again = try #require(try await fixture.connectAndResolve(device)[TestBoards.pfCharacteristic])
        for _ in 0..<3 {
            try await fixture.call(again, Self.characteristic, "WriteValue", [.bytes([0xEE]), Self.command])
        }
        let state = try await fixture.call(
            device, DBusStandard.properties, "Get", [.string(Self.device1), .string("Connected")])
        #expect(try state.argument(0).bool() == true)
        _ = await fixture.stop()
    }

    @Test(
        "With the GATT cache the objects stay across a disconnect, calls fail 'Not connected', and notifications resume at the next connection"
    )
    func gattCacheKeepsTheObjects() async throws {
        let fixture = try await FakeBus.start([try Self.board { $0.gattCache = true }])
        let device = try #require(try await fixture.discover().keys.first)
        let pf = try #require(try await fixture.connectAndResolve(device)[TestBoards.pfCharacteristic])
        try await fixture.call(pf, Self.characteristic, "StartNotify")
        let changes = try await fixture.signals(
            .propertiesChanged(sender: "org.bluez", path: device, interface: Self.device1))
        try await fixture.call(device, Self.device1, "Disconnect")
        #expect(try await changes.next { $0.changed["Connected"] != nil }.changed["Connected"]?.bool() == false)
        #expect(try await fixture.characteristics(of: device)[TestBoards.pfCharacteristic] == pf)
        let write = await Self.failure {
            try await fixture.call(pf, Self.characteristic, "WriteValue", [.bytes([0xEE]), Self.command])
        }
        #expect(write == DBusError(name: "org.bluez.Error.Failed", message: "Not connected"))

        #expect(try await fixture.connectAndResolve(device)[TestBoards.pfCharacteristic] == pf)
        let values = try await fixture.signals(
            .propertiesChanged(sender: "org.bluez", path: pf, interface: Self.characteristic))
        try await fixture.call(pf, Self.characteristic, "WriteValue", [.bytes([0xEE]), Self.command])
        #expect(try await values.next { $0.changed["Value"] != nil }.changed["Value"]?.bytes() == [0xEE, 0x01, 0x01])
        _ = await fixture.stop()
    }

    @Test("An absent board is never discovered, while a present one is")
    func absentBoardIsNeverDiscovered() async throws {
        let fixture = try await FakeBus.start([
            try Self.board({ $0.absent = true }, address: "F0:0D:00:00:00:01"),
            try Self.board({ _ in }, address: "F0:0D:00:00:00:02")
        ])
        let found = try await fixture.discover(count: 1)
        #expect(Array(found.keys) == [TestBoards.devicePath("F0:0D:00:00:00:02")])
        let objects = try await fixture.managedObjects()
        #expect(objects[TestBoards.devicePath("F0:0D:00:00:00:01")] == nil)
        let error = await Self.failure {
            try await fixture.call(TestBoards.devicePath("F0:0D:00:00:00:01"), Self.device1, "Connect")
        }
        #expect(error?.hasName(.unknownObject) == true)
        _ = await fixture.stop()
    }

    @Test(
        "A discovery filter on a service shows only boards that advertise it: never a micro:bit, which advertises its name only"
    )
    func discoveryFilterSelectsBoards() async throws {
        let fixture = try await FakeBus.start([
            try Self.board(
                { $0.advertisedUUIDs = [PartialFlashingGATT.service.uuidString] }, address: "F0:0D:00:00:00:01"),
            try Self.board({ _ in }, address: "F0:0D:00:00:00:02")
        ])
        try await fixture.call(
            FakeBus.adapter, "org.bluez.Adapter1", "SetDiscoveryFilter",
            [
                .propertyMap([
                    "UUIDs": .strings([PartialFlashingGATT.service.uuidString]), "Transport": .string("le")
                ])
            ])
        let found = try await fixture.discover(count: 1)
        #expect(Array(found.keys) == [TestBoards.devicePath("F0:0D:00:00:00:01")])
        let bad = await Self.failure {
            try await fixture.call(
                FakeBus.adapter, "org.bluez.Adapter1", "SetDiscoveryFilter",
                [.propertyMap(["RSSI": .string("loud")])])
        }
        #expect(bad?.name == "org.bluez.Error.InvalidArguments")
        _ = await fixture.stop()
    }

    @Test(
        "A stale bond: known and paired from the start, requests fail, notifications never come, until RemoveDevice and a fresh Pair"
    )
    func staleBondNeedsAFreshPairing() async throws {
        let fixture = try await FakeBus.start([try Self.board { $0.staleBond = true }])
        let device = TestBoards.devicePath("F0:0D:00:00:00:01")
        let known = try await fixture.managedObjects()
        #expect(try known[device]?[Self.device1]?["Paired"]?.bool() == true)

        let pf = try #require(try await fixture.connectAndResolve(device)[TestBoards.pfCharacteristic])
        try await fixture.call(pf, Self.characteristic, "StartNotify")
        let request = await Self.failure {
            try await fixture.call(pf, Self.characteristic, "WriteValue", [.bytes([0xEE]), Self.request])
        }
        #expect(request?.name == "org.bluez.Error.AuthenticationFailed")
        // No answer to STATUS: the next signal of the device or characteristic is the marker (bus order is kept).
        let signals = try await fixture.signals(.propertiesChanged(sender: "org.bluez", pathNamespace: device))
        try await fixture.call(pf, Self.characteristic, "WriteValue", [.bytes([0xEE]), Self.command])
        try await fixture.call(
            device, DBusStandard.properties, "Set", [.string(Self.device1), .string("Trusted"), .variant(.bool(false))])
        let next = try await signals.next()
        #expect(next.path == device)
        #expect(try next.changed["Trusted"]?.bool() == false)
        let pair = await Self.failure { try await fixture.call(device, Self.device1, "Pair") }
        #expect(pair?.name == "org.bluez.Error.AlreadyExists")

        let removed = try await fixture.signals(.objectManager(sender: "org.bluez", member: "InterfacesRemoved"))
        try await fixture.call(FakeBus.adapter, "org.bluez.Adapter1", "RemoveDevice", [.objectPath(device)])
        _ = try await removed.next { try $0.arguments.argument(0).objectPath() == device }
        let rediscovered = try await fixture.discover()
        #expect(try rediscovered[device]?["Paired"]?.bool() == false)
        try await fixture.call(device, Self.device1, "Pair")
        let fresh = try #require(try await fixture.connectAndResolve(device)[TestBoards.pfCharacteristic])
        let values = try await fixture.signals(
            .propertiesChanged(sender: "org.bluez", path: fresh, interface: Self.characteristic))
        try await fixture.call(fresh, Self.characteristic, "StartNotify")
        try await fixture.call(fresh, Self.characteristic, "WriteValue", [.bytes([0xEE]), Self.command])
        #expect(try await values.next { $0.changed["Value"] != nil }.changed["Value"]?.bytes() == [0xEE, 0x01, 0x01])
        _ = await fixture.stop()
    }
}
