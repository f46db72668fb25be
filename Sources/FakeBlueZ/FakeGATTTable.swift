import DBus
import SimulatedBoard
import Transport

/// The GATT objects BlueZ exports for a connected board: one `GattService1` per service,
/// one `GattCharacteristic1` per characteristic and its Client Characteristic Configuration
/// descriptor (`GattDescriptor1`), at paths named after the attribute handles
/// (`…/service000c/char000d/desc000f`), as `src/gatt-client.c` names them.
///
/// The board's own services follow BlueZ's Generic Attribute service (with its Service
/// Changed characteristic, as on every real device), so a client has to pick its
/// characteristics by UUID.
struct FakeGATTTable: Sendable {
    struct Service: Sendable {
        var path: String
        var uuid: BLEUUID
        var handle: UInt16
        /// The last attribute handle of the service.
        var endHandle: UInt16
    }

    struct Characteristic: Sendable {
        var path: String
        var servicePath: String
        var descriptorPath: String
        /// Nil for BlueZ's own Service Changed characteristic.
        var characteristic: GATTCharacteristic?
        var uuid: BLEUUID
        var handle: UInt16
        var flags: [String]

        var canNotify: Bool { flags.contains("notify") || flags.contains("indicate") }
    }

    static let genericAttribute = BLEUUID("1801")
    static let serviceChanged = BLEUUID("2a05")
    static let clientConfiguration = BLEUUID("2902")

    var services: [Service] = []
    var characteristics: [Characteristic] = []

    /// The table for `board`'s services, below `devicePath`.
    init(board: SimulatedBoard, devicePath: String) {
        var handle: UInt16 = 0x0008
        func addService(_ uuid: BLEUUID, _ chars: [(GATTCharacteristic?, BLEUUID, [String])]) {
            let path = devicePath + String(format: "/service%04x", handle)
            let start = handle
            handle += 1
            for (characteristic, charUUID, flags) in chars {
                let charPath = path + String(format: "/char%04x", handle)
                characteristics.append(
                    Characteristic(
                        path: charPath, servicePath: path,
                        descriptorPath: charPath + String(format: "/desc%04x", handle + 2),
                        characteristic: characteristic, uuid: charUUID, handle: handle, flags: flags))
                handle += 3
            }
            services.append(Service(path: path, uuid: uuid, handle: start, endHandle: handle - 1))
            handle = (handle + 0x0F) & ~0x0F
        }
        addService(Self.genericAttribute, [(nil, Self.serviceChanged, ["indicate"])])
        for (service, chars) in board.gattServices {
            addService(service, chars.map { ($0, $0.characteristic, Self.flags(of: $0)) })
        }
    }

    /// The table BlueZ holds after the primary service discovery of a new connection, over the
    /// `cached` table of an earlier one, and the paths of the cached services it kept.
    ///
    /// These boards have no Database Hash, so BlueZ discovers the primary services at every
    /// connection; a cached service with the same start handle, UUID and end handle as a
    /// discovered one is kept as it is, its characteristics not discovered again (BlueZ
    /// `src/shared/gatt-db.c` `gatt_db_insert_service`, `src/shared/gatt-client.c`
    /// `discovery_parse_services`); the others are discovered afresh, and cached services not
    /// found again are removed (`discovery_op_complete`).
    func rediscovered(over cached: FakeGATTTable) -> (table: FakeGATTTable, kept: Set<String>) {
        var result = FakeGATTTable()
        var kept = Set<String>()
        for service in services {
            if let old = cached.services.first(where: {
                $0.handle == service.handle && $0.uuid == service.uuid && $0.endHandle == service.endHandle
            }) {
                kept.insert(old.path)
                result.services.append(old)
                result.characteristics += cached.characteristics.filter { $0.servicePath == old.path }
            } else {
                result.services.append(service)
                result.characteristics += characteristics.filter { $0.servicePath == service.path }
            }
        }
        return (result, kept)
    }

    /// The object paths of the services not in `kept`, with their characteristics and
    /// descriptors, parents first.
    func paths(except kept: Set<String>) -> [String] {
        services.filter { !kept.contains($0.path) }.flatMap { service in
            [service.path]
                + characteristics.filter { $0.servicePath == service.path }.flatMap { [$0.path, $0.descriptorPath] }
        }
    }

    private init() {}

    /// The characteristic properties the boards' firmware declares.
    static func flags(of characteristic: GATTCharacteristic) -> [String] {
        characteristic.declaredFlags
    }

    func characteristic(at path: String) -> Characteristic? {
        characteristics.first { $0.path == path }
    }

    func characteristic(for c: GATTCharacteristic) -> Characteristic? {
        characteristics.first { $0.characteristic == c }
    }

    /// Every object path, parents first.
    var paths: [String] {
        services.map(\.path) + characteristics.flatMap { [$0.path, $0.descriptorPath] }
    }

    func serviceProperties(_ s: Service, devicePath: String) -> [String: DBusValue] {
        [
            "UUID": .string(s.uuid.uuidString), "Device": .objectPath(devicePath), "Primary": .bool(true),
            "Includes": .objectPaths([]), "Handle": .uint16(s.handle)
        ]
    }

    func characteristicProperties(_ c: Characteristic, mtu: UInt16) -> [String: DBusValue] {
        var p: [String: DBusValue] = [
            "UUID": .string(c.uuid.uuidString), "Service": .objectPath(c.servicePath), "Value": .bytes([]),
            "Flags": .strings(c.flags), "MTU": .uint16(mtu), "Handle": .uint16(c.handle)
        ]
        if c.canNotify { p["Notifying"] = .bool(false) }
        // Present only for characteristics that can be acquired (B566 `characteristic_write_acquired_exists()`).
        if c.flags.contains("write-without-response") { p["WriteAcquired"] = .bool(false) }
        if c.flags.contains("notify") { p["NotifyAcquired"] = .bool(false) }
        return p
    }

    func descriptorProperties(_ c: Characteristic) -> [String: DBusValue] {
        [
            "UUID": .string(Self.clientConfiguration.uuidString), "Characteristic": .objectPath(c.path),
            "Value": .bytes([]), "Flags": .strings(["read", "write"]), "Handle": .uint16(c.handle + 2)
        ]
    }
}
