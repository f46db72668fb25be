import DBus
import FakeBlueZ
import FirmwareImage
import NordicDFUFrames
import SampleFirmware
import SimulatedBoard
import Testing
import TestSupport
import Transport

/// Stock boards behind the fake BlueZ entering their Nordic bootloader: the link drops, the
/// device comes back as "DfuTarg" with the bootloader's table (through BlueZ's GATT cache,
/// which rediscovers the changed services), at the same address or, for a bootloader built
/// without bonds, at the next one (boards-advertising-and-services §1.2, nordic-dfu.md §2.2).
@Suite(.serialized, .enabled(if: PrivateBus.isAvailable, "dbus-daemon not installed: fake BlueZ tests skipped"))
struct StockBootloaderTests {
    typealias T = FaultScenarioTests
    static let address = "F0:0D:00:00:00:01"
    static let buttonless = NordicGATT.buttonlessBonded.characteristic.uuidString
    static let controlPoint = NordicGATT.secureControlPoint.characteristic.uuidString
    static let packet = NordicGATT.securePacket.characteristic.uuidString

    static func stockV2(_ change: (inout FakeBoardBehaviour) -> Void) throws -> FakeBoard {
        let image = SampleFirmware.image(family: .nrf52833, runtime: .r1, program: .heart)
        let board = try SimulatedBoard(
            profile: SimulatedBoard.stockProfile(.microbitV2, address: address), image: image)
        var behaviour = FakeBoardBehaviour()
        behaviour.gattCache = true
        change(&behaviour)
        return FakeBoard(board: board, name: "BBC micro:bit [zotig]", address: address, behaviour: behaviour)
    }

    /// Connects to a board bonded earlier (in pairing mode; a whitelisted build advertises to
    /// bonded hosts only) and writes `01` to the bonded buttonless characteristic with indications on.
    static func enterBootloader(_ fixture: FakeBus, _ device: String) async throws -> [String: String] {
        let app = try await fixture.connectAndResolve(device)
        let buttonless = try #require(app[buttonless])
        try await fixture.call(buttonless, T.characteristic, "StartNotify")
        let changes = try await fixture.signals(
            .propertiesChanged(sender: "org.bluez", path: device, interface: T.device1))
        let answers = try await fixture.signals(
            .propertiesChanged(sender: "org.bluez", path: buttonless, interface: T.characteristic))
        try await fixture.call(buttonless, T.characteristic, "WriteValue", [.bytes([0x01]), T.request])
        #expect(try await answers.next { $0.changed["Value"] != nil }.changed["Value"]?.bytes() == [0x20, 0x01, 0x01])
        #expect(try await changes.next { $0.changed["Connected"] != nil }.changed["Connected"]?.bool() == false)
        return app
    }

    @Test("Entering the bootloader at the same address: the cached table is rediscovered and the name becomes DfuTarg")
    func sameAddress() async throws {
        let fixture = try await FakeBus.start([
            try Self.stockV2 {
                $0.requiresPairing = true; $0.bonded = true
            }
        ])
        // Bonded: BlueZ knows the device from the start (it advertises to bonded hosts only).
        let device = TestBoards.devicePath(Self.address)
        let app = try await Self.enterBootloader(fixture, device)
        #expect(app[TestBoards.pfCharacteristic] != nil)
        let boot = try await fixture.connectAndResolve(device)
        #expect(boot[TestBoards.pfCharacteristic] == nil, "the application's service is gone from the cache")
        #expect(boot[Self.buttonless] == nil)
        let cp = try #require(boot[Self.controlPoint])
        #expect(boot[Self.packet] != nil)
        #expect(cp != app[Self.buttonless], "new objects, not the application's paths")
        let name = try await fixture.call(device, DBusStandard.properties, "Get", [.string(T.device1), .string("Name")])
        #expect(try name.argument(0).string() == "DfuTarg")
        // The bootloader refuses pairing, but the bond handed over lets the paired host in.
        let select = try await fixture.signals(
            .propertiesChanged(sender: "org.bluez", path: cp, interface: T.characteristic))
        try await fixture.call(cp, T.characteristic, "StartNotify")
        try await fixture.call(cp, T.characteristic, "WriteValue", [.bytes([0x06, 0x01]), T.request])
        #expect(
            try await select.next { $0.changed["Value"] != nil }.changed["Value"]?.bytes().prefix(3) == [
                0x60, 0x06, 0x01
            ])
        let boards = await fixture.stop()
        #expect(boards.first?.inNordicBootloader == true)
    }

    @Test("Without a bond the bonded buttonless entry is refused with 20 01 07")
    func refusedWithoutABond() async throws {
        let fixture = try await FakeBus.start([try Self.stockV2 { _ in }])
        let device = try #require(try await fixture.discover().keys.first)
        let app = try await fixture.connectAndResolve(device)
        let buttonless = try #require(app[Self.buttonless])
        try await fixture.call(buttonless, T.characteristic, "StartNotify")
        let answers = try await fixture.signals(
            .propertiesChanged(sender: "org.bluez", path: buttonless, interface: T.characteristic))
        try await fixture.call(buttonless, T.characteristic, "WriteValue", [.bytes([0x01]), T.request])
        #expect(try await answers.next { $0.changed["Value"] != nil }.changed["Value"]?.bytes() == [0x20, 0x01, 0x07])
        let boards = await fixture.stop()
        #expect(boards.first?.inNordicBootloader == false)
    }

    @Test(
        "A bootloader built without bonds advertises as DfuTarg at the next address, the application's address goes quiet"
    )
    func nextAddress() async throws {
        let fixture = try await FakeBus.start([
            try Self.stockV2 {
                $0.requiresPairing = true; $0.bonded = true; $0.bootloaderAtNextAddress = true
            }
        ])
        let device = TestBoards.devicePath(Self.address)
        _ = try await Self.enterBootloader(fixture, device)
        // RSSI is invalidated when discovery stops, so a new one means a new advertisement.
        let props = try await fixture.managedObjects()[device]?["org.bluez.Device1"]
        #expect(props?["RSSI"] == nil)
        let found = try await fixture.discover()
        let next = TestBoards.devicePath("F0:0D:00:00:00:02")
        #expect(Array(found.keys) == [next])
        #expect(try found[next]?["Name"]?.string() == "DfuTarg")
        #expect(try found[next]?["UUIDs"]?.strings() == [NordicGATT.secureService.uuidString])
        let own = try await fixture.managedObjects()[device]?["org.bluez.Device1"]
        #expect(own?["RSSI"] == nil, "the application's address does not advertise while the bootloader runs")
        let boot = try await fixture.connectAndResolve(next)
        let cp = try #require(boot[Self.controlPoint])
        // Open: no bond needed at the next address.
        try await fixture.call(cp, T.characteristic, "StartNotify")
        let boards = await fixture.stop()
        #expect(boards.count == 1)
        #expect(boards.first?.inNordicBootloader == true)
    }
}
