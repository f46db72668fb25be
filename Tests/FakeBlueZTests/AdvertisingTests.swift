import DBus
import FakeBlueZ
import FirmwareImage
import Foundation
import SampleFirmware
import SimulatedBoard
import Testing
import TestSupport
import Transport
import NordicDFUFrames

/// What the fake's boards advertise per mode, and what BlueZ 5.66's discovery rules make of it
/// (FakeAdvertisement.swift and FakeState.outcome cite the sources).
@Suite(.enabled(if: PrivateBus.isAvailable, Comment(rawValue: PrivateBus.skipMessage)))
struct AdvertisingTests {
    static let adapter1 = "org.bluez.Adapter1"
    static let leOnly: DBusValue = .propertyMap(["Transport": .string("le")])

    static func board(
        _ address: String, name: String = "BBC micro:bit [zotig]", stock: Board? = nil,
        _ configure: (inout FakeBoardBehaviour) -> Void = { _ in }
    ) throws -> FakeBoard {
        var behaviour = FakeBoardBehaviour()
        configure(&behaviour)
        let simulated: SimulatedBoard
        if let stock {
            simulated = try SimulatedBoard(
                profile: SimulatedBoard.stockProfile(stock, address: address),
                image: SampleFirmware.image(family: stock.family, runtime: .r1, program: .heart))
        } else {
            simulated = try TestBoards.microbit(address: address)
        }
        return FakeBoard(board: simulated, name: name, behaviour: behaviour)
    }

    /// Starts discovery (after `filter`, if any) and collects the InterfacesAdded of devices
    /// until `marker` appears: every board advertises at the same moment, so by then every
    /// report of that round has been handled.
    static func discover(_ fixture: FakeBus, filter: DBusValue? = nil, until marker: String) async throws -> [String:
        [String: DBusValue]]
    {
        let added = try await fixture.signals(.objectManager(sender: "org.bluez", member: "InterfacesAdded"))
        if let filter { try await fixture.call(FakeBus.adapter, adapter1, "SetDiscoveryFilter", [filter]) }
        try await fixture.call(FakeBus.adapter, adapter1, "StartDiscovery")
        var devices: [String: [String: DBusValue]] = [:]
        while devices[TestBoards.devicePath(marker)] == nil {
            let signal = try await added.next()
            if let d = try signal.arguments.argument(1).stringKeyed()["org.bluez.Device1"] {
                devices[try signal.arguments.argument(0).objectPath()] = try d.properties()
            }
        }
        return devices
    }

    @Test(
        "Pairing mode and an open build's program advertise the name with the friendly name and no UUIDs; a whitelisted program without a bond is silent"
    )
    func namesPerMode() async throws {
        let fixture = try await FakeBus.start([
            try Self.board("F0:0D:00:00:00:01") {
                $0.startsInPairingMode = true; $0.requiresPairing = true
            },
            try Self.board("F0:0D:00:00:00:02", name: "Calliope mini [gupaz]"),
            try Self.board("F0:0D:00:00:00:03") { $0.requiresPairing = true }
        ])
        let found = try await Self.discover(fixture, filter: Self.leOnly, until: "F0:0D:00:00:00:02")
        let pairing = try #require(found[TestBoards.devicePath("F0:0D:00:00:00:01")])
        #expect(try pairing["Name"]?.string() == "BBC micro:bit [zotig]")
        #expect(try pairing["UUIDs"]?.strings() == [])
        #expect(try pairing["RSSI"]?.int16() == -60)
        let open = try #require(found[TestBoards.devicePath("F0:0D:00:00:00:02")])
        #expect(try open["Name"]?.string() == "Calliope mini [gupaz]")
        #expect(try open["UUIDs"]?.strings() == [])
        #expect(found[TestBoards.devicePath("F0:0D:00:00:00:03")] == nil)
        #expect(try await fixture.managedObjects()[TestBoards.devicePath("F0:0D:00:00:00:03")] == nil)
        _ = await fixture.stop()
    }

    @Test("A board in its bootloader advertises DfuTarg with its DFU service: FE59 on V2, the legacy service on V1")
    func bootloaderAdvertisesItsService() async throws {
        var v2 = try Self.board("F0:0D:00:00:00:01", stock: .microbitV2)
        try v2.board.strandInBootloader()
        var v1 = try Self.board("F0:0D:00:00:00:02", stock: .microbitV1)
        try v1.board.strandInBootloader()
        let fixture = try await FakeBus.start([v2, v1, try Self.board("F0:0D:00:00:00:03")])
        let found = try await Self.discover(fixture, until: "F0:0D:00:00:00:03")
        let secure = try #require(found[TestBoards.devicePath("F0:0D:00:00:00:01")])
        #expect(try secure["Name"]?.string() == "DfuTarg")
        #expect(try secure["UUIDs"]?.strings() == [NordicGATT.secureService.uuidString])
        let legacy = try #require(found[TestBoards.devicePath("F0:0D:00:00:00:02")])
        #expect(try legacy["Name"]?.string() == "DfuTarg")
        #expect(try legacy["UUIDs"]?.strings() == [NordicGATT.legacyService.uuidString])
        _ = await fixture.stop()
    }

    @Test(
        "A whitelisted board BlueZ forgot advertises without the discoverable flag: a plain discovery never shows it, a filtered one does, under its bare name"
    )
    func nonDiscoverableNeedsAFilter() async throws {
        let fixture = try await FakeBus.start([
            try Self.board("F0:0D:00:00:00:01") {
                $0.requiresPairing = true; $0.bonded = true
            },
            try Self.board("F0:0D:00:00:00:02")
        ])
        let hidden = TestBoards.devicePath("F0:0D:00:00:00:01")
        #expect(try await fixture.managedObjects()[hidden] != nil, "a bonded device is known from the start")
        try await fixture.call(FakeBus.adapter, Self.adapter1, "RemoveDevice", [.objectPath(hidden)])

        let plain = try await Self.discover(fixture, until: "F0:0D:00:00:00:02")
        #expect(plain[hidden] == nil)
        try await fixture.call(FakeBus.adapter, Self.adapter1, "StopDiscovery")

        let added = try await fixture.signals(.objectManager(sender: "org.bluez", member: "InterfacesAdded"))
        try await fixture.call(FakeBus.adapter, Self.adapter1, "SetDiscoveryFilter", [Self.leOnly])
        try await fixture.call(FakeBus.adapter, Self.adapter1, "StartDiscovery")
        let signal = try await added.next { try $0.arguments.argument(0).objectPath() == hidden }
        let device = try #require(try signal.arguments.argument(1).stringKeyed()["org.bluez.Device1"]?.properties())
        #expect(try device["Name"]?.string() == "BBC micro:bit")
        #expect(try device["Paired"]?.bool() == false)
        _ = await fixture.stop()
    }

    @Test(
        "A known non-discoverable board gets no RSSI from a plain discovery, and one from a filtered discovery; stopping forgets it"
    )
    func knownBoardUpdatesOnlyWithAFilter() async throws {
        let fixture = try await FakeBus.start([
            try Self.board("F0:0D:00:00:00:01") {
                $0.requiresPairing = true; $0.bonded = true
            },
            try Self.board("F0:0D:00:00:00:02")
        ])
        let known = TestBoards.devicePath("F0:0D:00:00:00:01")
        let before = try #require(try await fixture.managedObjects()[known]?["org.bluez.Device1"])
        #expect(before["RSSI"] == nil)
        #expect(try before["Bonded"]?.bool() == true)
        let changes = try await fixture.signals(
            .propertiesChanged(sender: "org.bluez", path: known, interface: "org.bluez.Device1"))

        _ = try await Self.discover(fixture, until: "F0:0D:00:00:00:02")
        #expect(try await fixture.managedObjects()[known]?["org.bluez.Device1"]?["RSSI"] == nil)

        try await fixture.call(FakeBus.adapter, Self.adapter1, "SetDiscoveryFilter", [Self.leOnly])
        try await fixture.call(FakeBus.adapter, Self.adapter1, "StopDiscovery")
        try await fixture.call(FakeBus.adapter, Self.adapter1, "StartDiscovery")
        let update = try await changes.next { $0.changed["RSSI"] != nil }
        #expect(try update.changed["RSSI"]?.int16() == -60)
        #expect(try update.changed["Name"]?.string() == "BBC micro:bit")

        try await fixture.call(FakeBus.adapter, Self.adapter1, "StopDiscovery")
        let gone = try await changes.next { (try? $0.arguments.argument(2).strings())?.contains("RSSI") == true }
        #expect(gone.changed["RSSI"] == nil)
        _ = await fixture.stop()
    }

    @Test("A client's Pattern hides every device it does not match, from every client")
    func patternHidesOthers() async throws {
        let fixture = try await FakeBus.start([
            try Self.board("F0:0D:00:00:00:01", name: "BBC micro:bit [zotig]"),
            try Self.board("F0:0D:00:00:00:02", name: "Calliope mini [gupaz]")
        ])
        let other = try DBusConnection(bus: .address(fixture.bus.address))
        defer { other.close() }
        let added = try await fixture.signals(.objectManager(sender: "org.bluez", member: "InterfacesAdded"))
        _ = try await other.call(
            destination: "org.bluez", path: FakeBus.adapter, interface: Self.adapter1, method: "SetDiscoveryFilter",
            arguments: [.propertyMap(["Pattern": .string("Calliope")])])
        _ = try await other.call(
            destination: "org.bluez", path: FakeBus.adapter, interface: Self.adapter1, method: "StartDiscovery")
        try await fixture.call(FakeBus.adapter, Self.adapter1, "SetDiscoveryFilter", [Self.leOnly])
        try await fixture.call(FakeBus.adapter, Self.adapter1, "StartDiscovery")
        // The first device to appear is the one the pattern matches; the other never does.
        let first = try await added.next()
        #expect(try first.arguments.argument(0).objectPath() == TestBoards.devicePath("F0:0D:00:00:00:02"))
        #expect(try await fixture.managedObjects()[TestBoards.devicePath("F0:0D:00:00:00:01")] == nil)
        _ = await fixture.stop()
    }
}

/// Advertising intervals per mode: a scanner hears a board one interval after it starts listening.
@Suite(.enabled(if: PrivateBus.isAvailable, Comment(rawValue: PrivateBus.skipMessage)))
struct AdvertisingIntervalTests {
    @Test func aBoardIsReportedAfterItsAdvertisingIntervalSoTheFasterModeComesFirst() async throws {
        // Pairing mode advertises every 200 ms, application mode every 50 ms (CODAL
        // `MicroBitBLEManager.cpp` `pairingMode`, `init`): 800 and 200 ms at this time scale, so the
        // program is heard first.
        let fixture = try await FakeBus.start(
            [
                try AdvertisingTests.board("F0:0D:00:00:00:01", name: "BBC micro:bit [pairs]") {
                    $0.startsInPairingMode = true
                },
                try AdvertisingTests.board("F0:0D:00:00:00:02", name: "BBC micro:bit [progs]")
            ], timeScale: 4)
        let added = try await fixture.signals(.objectManager(sender: "org.bluez", member: "InterfacesAdded"))
        try await fixture.call(FakeBus.adapter, AdvertisingTests.adapter1, "StartDiscovery")
        var order: [String] = []
        while order.count < 2 {
            let signal = try await added.next()
            let interfaces = try signal.arguments.argument(1).stringKeyed()
            if let device = interfaces["org.bluez.Device1"] {
                order.append(try device.properties()["Address"]?.string() ?? "")
            }
        }
        #expect(order == ["F0:0D:00:00:00:02", "F0:0D:00:00:00:01"])
        _ = await fixture.stop()
    }
}
