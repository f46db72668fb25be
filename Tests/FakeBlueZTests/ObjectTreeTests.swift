import DBus
import FakeBlueZ
import Foundation
import Testing
import TestSupport
import Transport
import PartialFlashingFrames
import SMP

/// The objects, properties and signals of the fake, as a BlueZ client sees them.
@Suite(.enabled(if: PrivateBus.isAvailable, Comment(rawValue: PrivateBus.skipMessage)))
struct ObjectTreeTests {
    @Test("Before discovery the tree holds the adapter only; StartDiscovery makes the board appear as a Device1")
    func discoveryAddsTheDevice() async throws {
        let fixture = try await FakeBus.start([
            FakeBoard(board: try TestBoards.microbit(), name: "BBC micro:bit [zotig]")
        ])
        let before = try await fixture.managedObjects()
        #expect(try before["/org/bluez/hci0"]?["org.bluez.Adapter1"]?["Address"]?.string() == "00:AA:01:00:00:01")
        #expect(try before["/org/bluez/hci0"]?["org.bluez.Adapter1"]?["Powered"]?.bool() == true)
        #expect(before["/org/bluez"]?["org.bluez.AgentManager1"] != nil)
        #expect(!before.values.contains { $0["org.bluez.Device1"] != nil })

        let adapterChanges = try await fixture.signals(.propertiesChanged(sender: "org.bluez", path: FakeBus.adapter))
        let devices = try await fixture.discover()
        let discovering = try await adapterChanges.next()
        #expect(try discovering.changed["Discovering"]?.bool() == true)

        let path = TestBoards.devicePath("F0:0D:00:00:00:01")
        let device = try #require(devices[path])
        #expect(try device["Address"]?.string() == "F0:0D:00:00:00:01")
        #expect(try device["Name"]?.string() == "BBC micro:bit [zotig]")
        #expect(try device["Alias"]?.string() == "BBC micro:bit [zotig]")
        #expect(try device["RSSI"]?.int16() == -60)
        #expect(try device["Connected"]?.bool() == false)
        #expect(try device["ServicesResolved"]?.bool() == false)
        #expect(try device["Paired"]?.bool() == false)
        #expect(try device["Adapter"]?.objectPath() == "/org/bluez/hci0")
        // A CODAL board advertises its flags and name only (partial-flashing-protocol.md §3.7).
        #expect(try device["UUIDs"]?.strings() == [])
        _ = await fixture.stop()
    }

    @Test(
        "Connect replies, then the GATT objects appear and ServicesResolved turns true; an MCUboot board has both services"
    )
    func connectResolvesTheGATTTable() async throws {
        let fixture = try await FakeBus.start([FakeBoard(board: try TestBoards.microbit(mcuboot: true))])
        let path = try #require(try await fixture.discover().keys.first)
        let added = try await fixture.signals(.objectManager(sender: "org.bluez", member: "InterfacesAdded"))
        let chars = try await fixture.connectAndResolve(path)
        let first = try await added.next()
        #expect(try first.arguments.argument(0).objectPath().hasPrefix(path + "/service"))

        let objects = try await fixture.managedObjects()
        #expect(try objects[path]?["org.bluez.Device1"]?["Connected"]?.bool() == true)
        let services = objects.filter { $0.key.hasPrefix(path + "/") && $0.value["org.bluez.GattService1"] != nil }
        let serviceUUIDs = Set(try services.values.map { try $0["org.bluez.GattService1"]?["UUID"]?.string() ?? "" })
        #expect(
            serviceUUIDs == [
                PartialFlashingGATT.service.uuidString, SMPGATT.service.uuidString,
                "00001801-0000-1000-8000-00805f9b34fb"
            ])
        for (_, interfaces) in services {
            #expect(try interfaces["org.bluez.GattService1"]?["Device"]?.objectPath() == path)
            #expect(try interfaces["org.bluez.GattService1"]?["Primary"]?.bool() == true)
        }

        let pfPath = try #require(chars[TestBoards.pfCharacteristic])
        let pf = try #require(objects[pfPath]?["org.bluez.GattCharacteristic1"])
        #expect(try pf["Flags"]?.strings() == ["write-without-response", "write", "notify"])
        #expect(try pf["Notifying"]?.bool() == false)
        #expect(try pf["MTU"]?.uint16() == 247)
        #expect(try pf["Value"]?.bytes() == [])
        let service = try pf["Service"]?.objectPath() ?? ""
        #expect(
            try objects[service]?["org.bluez.GattService1"]?["UUID"]?.string()
                == PartialFlashingGATT.service.uuidString)
        #expect(pfPath.hasPrefix(service + "/char"))

        let smpPath = try #require(chars[TestBoards.smpCharacteristic])
        #expect(
            try objects[smpPath]?["org.bluez.GattCharacteristic1"]?["Flags"]?.strings() == [
                "write-without-response", "notify"
            ])
        let descriptors = objects.filter { $0.key.hasPrefix(smpPath + "/desc") }
        #expect(
            try descriptors.values.first?["org.bluez.GattDescriptor1"]?["UUID"]?.string()
                == "00002902-0000-1000-8000-00805f9b34fb")
        _ = await fixture.stop()
    }

    @Test("A client that leaves the bus ends its discovery and notification sessions, as BlueZ does")
    func leavingClientEndsItsSessions() async throws {
        let fixture = try await FakeBus.start([FakeBoard(board: try TestBoards.microbit())])
        let path = try #require(try await fixture.discover().keys.first)
        let pf = try #require(try await fixture.connectAndResolve(path)[TestBoards.pfCharacteristic])
        let other = try DBusConnection(bus: .address(fixture.bus.address))
        let adapter = try await fixture.signals(.propertiesChanged(sender: "org.bluez", path: FakeBus.adapter))
        let char = try await fixture.signals(.propertiesChanged(sender: "org.bluez", path: pf))
        _ = try await other.call(
            destination: "org.bluez", path: pf, interface: "org.bluez.GattCharacteristic1", method: "StartNotify")
        #expect(try await char.next().changed["Notifying"]?.bool() == true)
        // The test's own client stops discovering; the other client's session keeps the adapter discovering.
        _ = try await other.call(
            destination: "org.bluez", path: FakeBus.adapter, interface: "org.bluez.Adapter1", method: "StartDiscovery")
        try await fixture.call(FakeBus.adapter, "org.bluez.Adapter1", "StopDiscovery")
        let stopAgain = await FaultScenarioTests.failure {
            try await fixture.call(FakeBus.adapter, "org.bluez.Adapter1", "StopDiscovery")
        }
        #expect(stopAgain == DBusError(name: "org.bluez.Error.Failed", message: "No discovery started"))
        other.close()
        #expect(try await adapter.next { $0.changed["Discovering"] != nil }.changed["Discovering"]?.bool() == false)
        #expect(try await char.next().changed["Notifying"]?.bool() == false)
        _ = await fixture.stop()
    }

    @Test("StartNotify sets Notifying; a STATUS write comes back as PropertiesChanged(Value) on the characteristic")
    func writeCommandNotifies() async throws {
        let fixture = try await FakeBus.start([FakeBoard(board: try TestBoards.microbit())])
        let path = try #require(try await fixture.discover().keys.first)
        let pf = try #require(try await fixture.connectAndResolve(path)[TestBoards.pfCharacteristic])
        let changes = try await fixture.signals(
            .propertiesChanged(sender: "org.bluez", path: pf, interface: "org.bluez.GattCharacteristic1"))
        try await fixture.call(pf, "org.bluez.GattCharacteristic1", "StartNotify")
        #expect(try await changes.next().changed["Notifying"]?.bool() == true)
        try await fixture.call(
            pf, "org.bluez.GattCharacteristic1", "WriteValue",
            [.bytes([0xEE]), .propertyMap(["type": .string("command")])])
        let status = try await changes.next { $0.changed["Value"] != nil }
        // EE, version 1, application mode.
        #expect(try status.changed["Value"]?.bytes() == [0xEE, 0x01, 0x01])
        _ = await fixture.stop()
    }
}
