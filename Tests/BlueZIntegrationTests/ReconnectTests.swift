import BlueZTransport
import DBus
import Foundation
import Synchronization
import Testing
import TestSupport
import Transport
import PartialFlashingFrames

/// A board that resets: BlueZ drops the link, forgets the device until a scan sees it again,
/// and the board comes back with its GATT objects at other paths. The transport must report the
/// loss, fail writes while down, find the board again and write to the new objects, with the
/// same notification stream.
@Suite(
    .serialized,
    .enabled(
        if: PrivateBus.isAvailable,
        "dbus-daemon not found: BlueZ reconnect tests skipped (install the dbus-daemon package)"))
struct ReconnectTests {
    static let adapter = "/org/bluez/hci0"
    static let device = "/org/bluez/hci0/dev_F0_0D_00_00_00_01"
    static let deviceProperties: [String: DBusValue] = [
        "Address": .string("F0:0D:00:00:00:01"), "Name": .string("BBC micro:bit [zotig]"),
        "Connected": .bool(false), "ServicesResolved": .bool(false)
    ]

    final class Server: Sendable {
        let connection: DBusConnection
        let server: DBusObjectServer
        /// How many links so far; link n exports its service at `service00<n>0`.
        let state = Mutex((links: 0, writes: [(path: String, bytes: [UInt8])](), discovering: false))
        /// The ATT MTU BlueZ reports on the characteristic.
        let mtu: UInt16

        init(bus: PrivateBus, mtu: UInt16 = 23) async throws {
            self.mtu = mtu
            connection = try DBusConnection(bus: .address(bus.address))
            try await connection.requestName("org.bluez")
            server = try DBusObjectServer(connection: connection)
            try server.add(path: "/org/bluez", interfaces: ["org.bluez.AgentManager1": [:]])
            try server.add(
                path: ReconnectTests.adapter,
                interfaces: [
                    "org.bluez.Adapter1": [
                        "Address": .string("00:AA:01:00:00:01"), "Powered": .bool(true)
                    ]
                ]
            ) { [weak self] call in
                if call.member == "StartDiscovery", let self {
                    let known =
                        self.server.properties(path: ReconnectTests.device, interface: "org.bluez.Device1") != nil
                    if !known { try self.addDevice() }
                }
                return []
            }
            try addDevice()
        }

        func addDevice() throws {
            try server.add(
                path: ReconnectTests.device, interfaces: ["org.bluez.Device1": ReconnectTests.deviceProperties],
                methods: { [weak self] call in try self?.device(call) ?? [] })
        }

        func paths(_ link: Int) -> (service: String, characteristic: String) {
            let service = ReconnectTests.device + "/service00\(link)0"
            return (service, service + "/char00\(link)1")
        }

        func device(_ call: DBusMethodCall) throws -> [DBusValue] {
            guard call.member == "Connect" else { return [] }
            let link = state.withLock { s -> Int in
                s.links += 1; return s.links
            }
            let (service, characteristic) = paths(link)
            try server.setProperties(
                path: ReconnectTests.device, interface: "org.bluez.Device1", ["Connected": .bool(true)])
            try server.add(
                path: service,
                interfaces: [
                    "org.bluez.GattService1": [
                        "UUID": .string(PartialFlashingGATT.service.uuidString),
                        "Device": .objectPath(ReconnectTests.device)
                    ]
                ])
            try server.add(
                path: characteristic,
                interfaces: [
                    "org.bluez.GattCharacteristic1": [
                        "UUID": .string(PartialFlashingGATT.characteristic.characteristic.uuidString),
                        "Service": .objectPath(service),
                        "MTU": .uint16(mtu)
                    ]
                ]
            ) { [weak self] call in
                if call.member == "WriteValue", let bytes = try? call.arguments.argument(0).bytes() {
                    self?.state.withLock { $0.writes.append((characteristic, bytes)) }
                    try self?.server.setProperties(
                        path: characteristic, interface: "org.bluez.GattCharacteristic1",
                        ["Value": .bytes([0x01, 0xFF] + bytes)])
                }
                return []
            }
            try server.setProperties(
                path: ReconnectTests.device, interface: "org.bluez.Device1", ["ServicesResolved": .bool(true)])
            return []
        }

        /// The board resets: the link drops, the GATT objects and then the device object go away.
        func boardResets() throws {
            let (service, characteristic) = paths(state.withLock { $0.links })
            try server.setProperties(
                path: ReconnectTests.device, interface: "org.bluez.Device1",
                ["ServicesResolved": .bool(false), "Connected": .bool(false)])
            try server.remove(path: characteristic)
            try server.remove(path: service)
            try server.remove(path: ReconnectTests.device)
        }
    }

    @Test(
        "a flow that starts listening after the board dropped the link hears of that loss at once",
        .timeLimit(.minutes(1)))
    func lossBeforeListeningIsTold() async throws {
        let bus = try PrivateBus()
        let server = try await Server(bus: bus)
        defer { server.connection.close() }
        let bz = try await BlueZBus.open(bus: .address(bus.address), callTimeout: .seconds(5))
        let found = try await BlueZScanner(bus: bz).find(DeviceQuery("F0:0D:00:00:00:01"), timeout: .seconds(20))
        let transport = try await BlueZDeviceTransport.open(device: found, on: bz)
        defer { transport.close() }
        _ = try await transport.connect(timeout: .seconds(5))
        // The first flow's listener sees the board's own disconnect (as DAL drops the link after pairing) ...
        var first = transport.disconnects().makeAsyncIterator()
        try server.boardResets()
        #expect(await first.next() == .remoteTerminated)
        // ... and the next flow, which starts listening only now, is told too, not left on a dead link.
        var next = transport.disconnects().makeAsyncIterator()
        #expect(await next.next() == .remoteTerminated)
        // Closing the dead link returns at once; a new link clears the old loss: the next
        // listener hears only of the loss of that link.
        await transport.disconnect()
        _ = try await transport.connect(timeout: .seconds(5))
        var after = transport.disconnects().makeAsyncIterator()
        await transport.disconnect()
        #expect(await after.next() == .localTerminated)
    }

    @Test("after a reset the board is found again, its new GATT paths are used, and the one stream carries on")
    func reconnectAfterReset() async throws {
        let bus = try PrivateBus()
        let server = try await Server(bus: bus)
        defer { server.connection.close() }
        let bz = try await BlueZBus.open(bus: .address(bus.address), callTimeout: .seconds(5))
        let found = try await BlueZScanner(bus: bz).find(DeviceQuery("F0:0D:00:00:00:01"), timeout: .seconds(20))
        let transport = try await BlueZDeviceTransport.open(device: found, on: bz)
        defer { transport.close() }
        let pf = PartialFlashingGATT.characteristic
        let values = transport.notifications(of: pf)
        var received = values.makeAsyncIterator()
        let losses = transport.disconnects()
        var lost = losses.makeAsyncIterator()

        _ = try await transport.connect(timeout: .seconds(5))
        try await transport.write([1], to: pf, kind: .command, timeout: .seconds(5))
        #expect(await received.next() == [0x01, 0xFF, 1])

        try server.boardResets()
        #expect(await lost.next() == .remoteTerminated)
        await #expect(throws: TransportError.notConnected(operation: "write to \(pf.characteristic)")) {
            try await transport.write([2], to: pf, kind: .command, timeout: .seconds(5))
        }

        let info = try await transport.connect(timeout: .seconds(5))
        #expect(info.services == [PartialFlashingGATT.service])
        try await transport.write([3], to: pf, kind: .command, timeout: .seconds(5))
        #expect(await received.next() == [0x01, 0xFF, 3])
        let writes = server.state.withLock { $0.writes }
        #expect(writes.map(\.path) == [server.paths(1).characteristic, server.paths(2).characteristic])
        #expect(writes.map(\.bytes) == [[1], [3]])
    }

    @Test(
        "two BlueZ hosts exchange an ATT MTU of 517, yet a write holds one attribute value: the connection offers writes of 512 bytes"
    )
    func largestMTUGivesWritesOfOneAttributeValue() async throws {
        let bus = try PrivateBus()
        let server = try await Server(bus: bus, mtu: 517)
        defer { server.connection.close() }
        let bz = try await BlueZBus.open(bus: .address(bus.address), callTimeout: .seconds(5))
        let found = try await BlueZScanner(bus: bz).find(DeviceQuery("F0:0D:00:00:00:01"), timeout: .seconds(20))
        let transport = try await BlueZDeviceTransport.open(device: found, on: bz)
        defer { transport.close() }
        let info = try await transport.connect(timeout: .seconds(5))
        #expect(info.mtu == 515)
        let full = [UInt8](repeating: 0xA5, count: info.mtu - 3)
        try await transport.write(full, to: PartialFlashingGATT.characteristic, kind: .command, timeout: .seconds(5))
        #expect(server.state.withLock { $0.writes.map(\.bytes) } == [full])
    }
}
