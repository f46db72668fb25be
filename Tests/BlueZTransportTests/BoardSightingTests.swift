import DBus
import Testing
@testable import BlueZTransport
import Transport
import NordicDFUFrames
import PartialFlashingFrames
import SMP

/// Which devices a scan lists as boards, in which mode, and when a scan may stop early.
@Suite struct BoardSightingTests {
    static let adapter = "/org/bluez/hci0"

    static func device(
        _ name: String?, address: String = "F0:0D:00:00:00:01", uuids: [BLEUUID] = [], paired: Bool = false,
        bonded: Bool? = nil, rssi: Int16? = -60
    ) -> BlueZDevice {
        var p: [String: DBusValue] = [
            "Address": .string(address), "Paired": .bool(paired),
            "UUIDs": .strings(uuids.map(\.uuidString))
        ]
        if let name { p["Name"] = .string(name) }
        if let bonded { p["Bonded"] = .bool(bonded) }
        if let rssi { p["RSSI"] = .int16(rssi) }
        return BlueZDevice(path: BlueZDevice.path(adapter: adapter, address: address), properties: p)!
    }

    @Test(
        "boards are recognised by the runtimes' names, DfuTarg and the McuMgr service; the mode follows the name and the bond",
        arguments: [
            ("BBC micro:bit", false, [BLEUUID](), AdvertisedMode.application, AdvertisedBoard.microbit),
            ("Calliope mini", true, [], .application, .calliope),
            ("BBC micro:bit [zotig]", true, [], .pairing, .microbit),
            ("BBC micro:bit [zotig]", false, [], .unknown, .microbit),
            ("Calliope mini [gupaz]", false, [], .unknown, .calliope),
            ("BBC micro:bit V2 by someone", false, [], .unknown, .microbit),
            ("DfuTarg", false, [NordicGATT.secureService], .bootloader, .nordicBootloader),
            ("DfuTarg", true, [NordicGATT.legacyService], .bootloader, .nordicBootloader),
            ("Zephyr SMP board", false, [SMPGATT.service], .application, .mcuboot)
        ])
    func recognised(name: String, bonded: Bool, uuids: [BLEUUID], mode: AdvertisedMode, board: AdvertisedBoard) throws {
        let sighting = try #require(BoardSighting.recognize(Self.device(name, uuids: uuids, bonded: bonded)))
        #expect(sighting.mode == mode)
        #expect(sighting.board == board)
        #expect(sighting.bonded == bonded)
        #expect(sighting.rssi == -60)
    }

    @Test("other devices are not boards, and scan --all lists them with an unknown mode")
    func strangers() {
        for d in [
            Self.device("Thermostat"), Self.device(nil), Self.device("BBC micro", uuids: [BLEUUID("180d")]),
            Self.device("micro:bit"), Self.device("dfutarg")
        ] {
            #expect(BoardSighting.recognize(d) == nil, "\(d.name ?? "no name")")
            #expect(BoardSighting.any(d).mode == .unknown)
            #expect(BoardSighting.any(d).board == .other)
        }
        // A device whose partial-flashing service BlueZ resolved before is flashable, mode unknown.
        #expect(
            BoardSighting.recognize(Self.device("nRF5x", uuids: [PartialFlashingGATT.service]))?.mode == .unknown)
    }

    @Test("an RSSI of 127 (the controller has none, as btvirt's) is no RSSI")
    func unavailableRSSI() {
        #expect(Self.device("BBC micro:bit", rssi: 127).rssi == nil)
        var d = Self.device("BBC micro:bit", rssi: -40)
        d.apply(changed: ["RSSI": .int16(127)])
        #expect(d.rssi == nil)
        d.apply(changed: ["RSSI": .int16(-41)])
        #expect(d.rssi == -41)
    }

    @Test("Bonded comes from Device1.Bonded where BlueZ has it, else from Paired")
    func bondedProperty() {
        #expect(Self.device("BBC micro:bit", paired: true).bonded)
        #expect(!Self.device("BBC micro:bit", paired: true, bonded: false).bonded)
        #expect(Self.device("BBC micro:bit", paired: false, bonded: true).bonded)
    }

    @Test(
        "a device counts as in range once BlueZ reports an advertisement (InterfacesAdded, an RSSI) or a connection, not when it only knows it"
    )
    func inRange() {
        let path = BlueZDevice.path(adapter: Self.adapter, address: "F0:0D:00:00:00:01")
        let known: [String: DBusValue] = [
            "Address": .string("F0:0D:00:00:00:01"), "Name": .string("BBC micro:bit"), "Paired": .bool(true)
        ]
        var state = BlueZScanner.Sighted()
        state.devices[path] = BlueZDevice(path: path, properties: known)
        #expect(state.seenDevices.isEmpty)
        state.apply(
            .propertiesChanged(
                path: path, interface: "org.bluez.Device1", changed: ["Trusted": .bool(true)], invalidated: []),
            adapter: Self.adapter)
        #expect(state.seenDevices.isEmpty)
        state.apply(
            .propertiesChanged(
                path: path, interface: "org.bluez.Device1", changed: ["RSSI": .int16(-71)], invalidated: []),
            adapter: Self.adapter)
        #expect(state.seenDevices.map(\.rssi) == [-71])

        let other = BlueZDevice.path(adapter: Self.adapter, address: "F0:0D:00:00:00:02")
        state.apply(
            .interfacesAdded(path: other, interfaces: ["org.bluez.Device1": ["Address": .string("F0:0D:00:00:00:02")]]),
            adapter: Self.adapter)
        #expect(state.seen == [path, other])
        state.apply(.interfacesRemoved(path: other, interfaces: ["org.bluez.Device1"]), adapter: Self.adapter)
        #expect(state.seen == [path])
    }

    @Test("a scan with a goal returns as soon as the goal is met, long before its timeout")
    func goalEndsTheScan() async throws {
        let (events, sink) = AsyncStream<BlueZEvent>.makeStream()
        let target = BlueZDevice.path(adapter: Self.adapter, address: "F0:0D:00:00:00:05")
        sink.yield(
            .interfacesAdded(
                path: BlueZDevice.path(adapter: Self.adapter, address: "F0:0D:00:00:00:04"),
                interfaces: [
                    "org.bluez.Device1": ["Address": .string("F0:0D:00:00:00:04"), "Name": .string("Thermostat")]
                ]))
        sink.yield(
            .interfacesAdded(
                path: target,
                interfaces: [
                    "org.bluez.Device1": [
                        "Address": .string("F0:0D:00:00:00:05"), "Name": .string("BBC micro:bit [zotig]"),
                        "RSSI": .int16(-50)
                    ]
                ]))
        // The stream stays open and the timeout is 10 minutes: only the goal can end the scan.
        // (The limit below is a safety net so that a broken scan fails instead of hanging.)
        let query = DeviceQuery("zotig")
        let result = try await withThrowingTaskGroup(of: BlueZScanner.Sighted?.self) { group in
            group.addTask {
                await BlueZScanner.collect(
                    events, from: BlueZScanner.Sighted(), adapter: Self.adapter, timeout: .seconds(600),
                    stopAtMalformed: nil
                ) { seen in
                    seen.contains { query.rank($0) != nil }
                }
            }
            group.addTask {
                // Watchdog: fails the test after a generous bound; the scan ends on the sighting.
                try await Task.sleep(for: .seconds(30))
                return nil
            }
            defer { group.cancelAll() }
            return try await group.next() ?? nil
        }
        let seen = try #require(result, "the scan did not end when the board was seen")
        #expect(seen.seenDevices.map(\.address).sorted() == ["F0:0D:00:00:00:04", "F0:0D:00:00:00:05"])
        sink.finish()
    }
}
