import DBus
import FakeBlueZ
import Foundation
import SMP
import Testing
import TestSupport
import Transport

/// D-Bus level hostility for fuzz-style client tests, and the SMP service through D-Bus.
@Suite(.enabled(if: PrivateBus.isAvailable, Comment(rawValue: PrivateBus.skipMessage)))
struct HostileAndSMPTests {
    static let characteristic = "org.bluez.GattCharacteristic1"

    /// Connects a hostile board and returns its partial-flashing characteristic path and its
    /// notification stream, after sending STATUS.
    static func connectHostile(_ modes: Set<HostileDBusMode>) async throws
        -> (FakeBus, device: [String: DBusValue], objects: [String: [String: [String: DBusValue]]], status: DBusSignal)
    {
        var behaviour = FakeBoardBehaviour()
        behaviour.hostile = modes
        let fixture = try await FakeBus.start([FakeBoard(board: try TestBoards.microbit(), behaviour: behaviour)])
        let path = TestBoards.devicePath("F0:0D:00:00:00:01")
        let device = try #require(try await fixture.discover()[path])
        let changes = try await fixture.signals(
            .propertiesChanged(sender: "org.bluez", path: path, interface: "org.bluez.Device1"))
        try await fixture.call(path, "org.bluez.Device1", "Connect")
        _ = try await changes.next { $0.changed["ServicesResolved"] != nil }
        let objects = try await fixture.managedObjects()
        let pf = try #require(
            objects.first {
                (try? $0.value[Self.characteristic]?["Service"]?.string())?.contains("service0010") == true
            }?.key)
        let values = try await fixture.signals(
            .propertiesChanged(sender: "org.bluez", path: pf, interface: Self.characteristic))
        try await fixture.call(pf, Self.characteristic, "StartNotify")
        try await fixture.call(
            pf, Self.characteristic, "WriteValue", [.bytes([0xEE]), .propertyMap(["type": .string("command")])])
        let status = try await values.next { $0.changed["Notifying"] == nil }
        return (fixture, device, objects, status)
    }

    @Test(
        "Wrong types: RSSI as a string, Connected as an int, Flags as one string, notifications as text; typed reads fail cleanly"
    )
    func wrongTypes() async throws {
        let (fixture, device, objects, status) = try await Self.connectHostile([.wrongTypes])
        #expect(throws: DBusError.self) { try device["RSSI"]?.int16() }
        #expect(try device["RSSI"]?.string() == "-60")
        #expect(device["Connected"] == .int32(0))
        let chars = objects.values.compactMap { $0[Self.characteristic] }
        #expect(chars.allSatisfy { if case .string? = $0["Flags"] { true } else { false } })
        #expect(chars.allSatisfy { if case .int32? = $0["MTU"] { true } else { false } })
        #expect(try status.changed["Value"]?.string() == "ee0101")
        _ = await fixture.stop()
    }

    @Test(
        "Oversized values: a 64 KiB name, 5,000 advertised UUIDs, 4 KiB notifications that start with the real answer")
    func oversizedValues() async throws {
        let (fixture, device, _, status) = try await Self.connectHostile([.oversizedValues])
        #expect(try device["Name"]?.string().utf8.count ?? 0 > 65_000)
        #expect(try device["UUIDs"]?.strings().count == 5_000)
        let value = try status.changed["Value"]?.bytes() ?? []
        #expect(value.count == 4_096)
        #expect(Array(value.prefix(3)) == [0xEE, 0x01, 0x01])
        _ = await fixture.stop()
    }

    @Test(
        "Missing properties: a device without Address or UUIDs, characteristics without Flags, notifications that only invalidate Value"
    )
    func missingProperties() async throws {
        let (fixture, device, objects, status) = try await Self.connectHostile([.missingProperties])
        #expect(device["Address"] == nil)
        #expect(device["UUIDs"] == nil)
        #expect(device["Connected"] != nil)
        let chars = objects.values.compactMap { $0[Self.characteristic] }
        #expect(!chars.isEmpty && chars.allSatisfy { $0["Flags"] == nil && $0["UUID"] != nil })
        #expect(status.changed.isEmpty)
        #expect(try status.arguments.argument(2).strings() == ["Value"])
        _ = await fixture.stop()
    }

    /// The Device1 properties of eight boards with all hostile modes under `seed`.
    static func seededDevices(_ seed: UInt64) async throws -> [String: [String: DBusValue]] {
        var behaviour = FakeBoardBehaviour()
        behaviour.hostile = Set(HostileDBusMode.allCases)
        behaviour.hostileSeed = seed
        let boards = try (1...8).map { n in
            FakeBoard(
                board: try TestBoards.microbit(), address: String(format: "F0:0D:00:00:00:%02X", n),
                behaviour: behaviour)
        }
        let fixture = try await FakeBus.start(boards)
        let devices = try await fixture.discover(count: 8)
        _ = await fixture.stop()
        return devices
    }

    @Test("A hostile seed distorts some properties of some devices and leaves others, the same way for the same seed")
    func seededHostility() async throws {
        let first = try await Self.seededDevices(11)
        let again = try await Self.seededDevices(11)
        #expect(first == again)
        let rssi = first.values.map { $0["RSSI"] }
        #expect(rssi.contains { if case .int16? = $0 { true } else { false } })
        #expect(rssi.contains { if case .int16? = $0 { false } else { true } })
        let other = try await Self.seededDevices(12)
        #expect(other != first)
    }

    @Test(
        "An McuMgr echo over the SMP characteristic is answered by notification; a reset answers, then drops the link")
    func smpEchoAndReset() async throws {
        let fixture = try await FakeBus.start([FakeBoard(board: try TestBoards.microbit(mcuboot: true))])
        let device = try #require(try await fixture.discover().keys.first)
        let smp = try #require(try await fixture.connectAndResolve(device)[TestBoards.smpCharacteristic])
        let values = try await fixture.signals(
            .propertiesChanged(sender: "org.bluez", path: smp, interface: Self.characteristic))
        try await fixture.call(smp, Self.characteristic, "StartNotify")
        let echo = try SMPFrame(request: EchoRequest(text: "hello board"), sequence: 7).encoded()
        try await fixture.call(
            smp, Self.characteristic, "WriteValue", [.bytes(echo), .propertyMap(["type": .string("command")])])
        let answer = try await values.next { $0.changed["Value"] != nil }
        let frame = try SMPFrame(bytes: try answer.changed["Value"]?.bytes() ?? [])
        #expect(try frame.response(as: EchoResponse.self).text == "hello board")
        #expect(frame.header.sequence == 7)

        let link = try await fixture.signals(
            .propertiesChanged(sender: "org.bluez", path: device, interface: "org.bluez.Device1"))
        let reset = try SMPFrame(request: ResetRequest(), sequence: 8).encoded()
        try await fixture.call(
            smp, Self.characteristic, "WriteValue", [.bytes(reset), .propertyMap(["type": .string("command")])])
        let resetAnswer = try await values.next { $0.changed["Value"] != nil }
        #expect(try SMPFrame(bytes: try resetAnswer.changed["Value"]?.bytes() ?? []).header.sequence == 8)
        #expect(try await link.next { $0.changed["Connected"] != nil }.changed["Connected"]?.bool() == false)
        _ = await fixture.stop()
    }

    @Test("A write command longer than the MTU allows fails as BlueZ's does; an offset must be a uint16")
    func writeLimits() async throws {
        let fixture = try await FakeBus.start([FakeBoard(board: try TestBoards.microbit())])
        let device = try #require(try await fixture.discover().keys.first)
        let pf = try #require(try await fixture.connectAndResolve(device)[TestBoards.pfCharacteristic])
        let long = await FaultScenarioTests.failure {
            try await fixture.call(
                pf, Self.characteristic, "WriteValue",
                [.bytes([UInt8](repeating: 1, count: 21)), .propertyMap(["type": .string("command")])])
        }
        #expect(long == DBusError(name: "org.bluez.Error.Failed", message: "Failed to initiate write"))
        let offset = await FaultScenarioTests.failure {
            try await fixture.call(
                pf, Self.characteristic, "WriteValue", [.bytes([0xEE]), .propertyMap(["offset": .uint64(0)])])
        }
        #expect(offset?.name == "org.bluez.Error.InvalidArguments")
        let type = await FaultScenarioTests.failure {
            try await fixture.call(
                pf, Self.characteristic, "WriteValue", [.bytes([0xEE]), .propertyMap(["type": .string("fast")])])
        }
        #expect(type?.name == "org.bluez.Error.InvalidArguments")
        _ = await fixture.stop()
    }
}
