import Foundation
import DBus
import Transport

/// A Bluetooth adapter, from its `org.bluez.Adapter1` properties.
public struct BlueZAdapter: Sendable, Equatable {
    public var path: String
    /// The short name, e.g. `hci0`.
    public var name: String { String(path.split(separator: "/").last ?? Substring(path)) }
    public var address: String?
    public var powered: Bool
}

/// A device BlueZ knows, from its `org.bluez.Device1` properties.
public struct BlueZDevice: Sendable, Equatable, Codable {
    public var path: String
    public var adapterPath: String
    /// `AA:BB:CC:DD:EE:FF`, upper case.
    public var address: String
    public var name: String?
    /// Signal strength of the last advertisement, when one was seen in this scan.
    public var rssi: Int?
    /// The service UUIDs the device advertised (or, once connected, offers).
    public var services: [BLEUUID]
    public var connected: Bool
    public var servicesResolved: Bool
    public var paired: Bool
    /// `Device1.Bonded` (BlueZ 5.65 and later): the pairing keys are stored. Nil when BlueZ
    /// does not report it.
    public var bondedProperty: Bool?
    public var trusted: Bool

    /// BlueZ holds a bond with the device: `Bonded`, or `Paired` where BlueZ has no `Bonded`.
    public var bonded: Bool { bondedProperty ?? paired }

    /// Reads a device from its properties; nil when a property it cannot do without
    /// (`Address`) is missing or has the wrong type. Optional properties of the wrong type
    /// count as absent: one odd property must not hide a board.
    public init?(path: String, properties p: [String: DBusValue]) {
        guard let address = try? p["Address"]?.string("Address"), BlueZDevice.isAddress(address) else { return nil }
        self.path = path
        let parent = path.split(separator: "/").dropLast().joined(separator: "/")
        adapterPath = "/" + parent
        self.address = address.uppercased()
        let name = (try? p["Name"]?.string("Name")) ?? (try? p["Alias"]?.string("Alias"))
        // BlueZ sets Alias to the address (with dashes) when there is no name.
        let upper = address.uppercased()
        self.name = name.flatMap {
            $0.isEmpty || $0.replacingOccurrences(of: "-", with: ":").uppercased() == upper ? nil : $0
        }
        rssi = (try? p["RSSI"]?.int16("RSSI")).flatMap(Self.signal)
        services = ((try? p["UUIDs"]?.strings("UUIDs")) ?? []).compactMap { BLEUUID(validating: $0) }
        connected = (try? p["Connected"]?.bool("Connected")) ?? false
        servicesResolved = (try? p["ServicesResolved"]?.bool("ServicesResolved")) ?? false
        paired = (try? p["Paired"]?.bool("Paired")) ?? false
        bondedProperty = try? p["Bonded"]?.bool("Bonded")
        trusted = (try? p["Trusted"]?.bool("Trusted")) ?? false
    }

    /// Applies a `PropertiesChanged` of `org.bluez.Device1`, ignoring values of the wrong type.
    public mutating func apply(changed p: [String: DBusValue], invalidated: [String] = []) {
        if let v = try? p["Name"]?.string("Name") { name = v.isEmpty ? nil : v }
        if let v = try? p["RSSI"]?.int16("RSSI") { rssi = Self.signal(v) }
        if let v = try? p["UUIDs"]?.strings("UUIDs") { services = v.compactMap { BLEUUID(validating: $0) } }
        if let v = try? p["Connected"]?.bool("Connected") { connected = v }
        if let v = try? p["ServicesResolved"]?.bool("ServicesResolved") { servicesResolved = v }
        if let v = try? p["Paired"]?.bool("Paired") { paired = v }
        if let v = try? p["Bonded"]?.bool("Bonded") { bondedProperty = v }
        if let v = try? p["Trusted"]?.bool("Trusted") { trusted = v }
        if invalidated.contains("RSSI") { rssi = nil }
    }

    /// An RSSI in dBm; nil for 127, which a controller reports when it has none (Core spec
    /// Vol 4 Part E 7.7.65.2; BlueZ passes it on, as btvirt's controllers show).
    static func signal(_ value: Int16) -> Int? { value == 127 ? nil : Int(value) }

    /// Why BlueZ's properties of the device at `path` are not a device's, in words: an
    /// `Address` missing or not a string address, which BlueZ always sends. Nil when they are.
    public static func problem(path: String, properties p: [String: DBusValue]) -> String? {
        guard let value = p["Address"]?.unwrapped else { return "the device \(path) has no Address" }
        guard let text = try? value.string(), isAddress(text) else {
            return value.signature == "s"
                ? "the device \(path) has an Address that is not one"
                : "the device \(path) has an Address of type '\(value.signature)' instead of a string"
        }
        return nil
    }

    /// True for `AA:BB:CC:DD:EE:FF` (either case).
    public static func isAddress(_ text: String) -> Bool {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        return parts.count == 6 && parts.allSatisfy { $0.count == 2 && $0.allSatisfy(\.isHexDigit) }
    }

    /// The path BlueZ gives a device: `/org/bluez/hci0/dev_AA_BB_CC_DD_EE_FF`.
    public static func path(adapter: String, address: String) -> String {
        "\(adapter)/dev_\(address.uppercased().replacingOccurrences(of: ":", with: "_"))"
    }
}

/// The adapters, devices and GATT attributes of one `GetManagedObjects` reply.
public struct BlueZObjectTree: Sendable {
    public var adapters: [BlueZAdapter] = []
    public var devices: [BlueZDevice] = []
    /// Path → interface → properties, as received (variants removed).
    public var objects: [String: [String: [String: DBusValue]]] = [:]
    /// Device objects whose properties BlueZ never sends (`BlueZDevice.problem`), by path.
    public var malformedDevices: [String: String] = [:]

    public init() {}

    /// Reads the reply of `GetManagedObjects` (`a{oa{sa{sv}}}`).
    /// - Throws: `BlueZError.unexpectedReply` when the reply does not have that shape.
    public init(reply: [DBusValue]) throws {
        do {
            try self.init(objects: reply.argument(0, "GetManagedObjects").managedObjects())
        } catch let error as DBusError {
            throw BlueZError.unexpectedReply(operation: "reading the BlueZ object tree", detail: error.description)
        }
    }

    public init(objects: [String: [String: [String: DBusValue]]]) {
        self.objects = objects
        for path in objects.keys.sorted() {
            let interfaces = objects[path] ?? [:]
            if let a = interfaces[BlueZNames.adapter] {
                adapters.append(
                    BlueZAdapter(
                        path: path, address: try? a["Address"]?.string(),
                        powered: (try? a["Powered"]?.bool()) ?? false))
            }
            if let d = interfaces[BlueZNames.device] {
                if let device = BlueZDevice(path: path, properties: d) {
                    devices.append(device)
                } else if let problem = BlueZDevice.problem(path: path, properties: d) {
                    malformedDevices[path] = problem
                }
            }
        }
    }

    /// The GATT table below `devicePath`.
    public func gatt(under devicePath: String) -> GATTTable {
        GATTTable(objects: objects, devicePath: devicePath)
    }
}

/// The services and characteristics BlueZ resolved for one device, by UUID.
public struct GATTTable: Sendable, Equatable {
    /// Service UUIDs offered.
    public var services: Set<BLEUUID> = []
    /// Characteristic object paths by (service, characteristic) UUID.
    public var characteristics: [GATTCharacteristic: String] = [:]
    /// The `MTU` property of the characteristics, where one was valid.
    public var mtu: Int?
    /// The `Flags` of each characteristic (`write-without-response`, `notify`, …), where readable.
    public var flags: [GATTCharacteristic: Set<String>] = [:]
    /// GATT objects below the device whose `UUID` BlueZ never sends that way (missing, not a
    /// string, not a UUID), in words: skipped, so a service may seem to lack a characteristic.
    public var malformed: [String] = []

    /// Walks the tree the way BlueZ links it: a service's `Device` is the device path, a
    /// characteristic's `Service` is one of those services. Entries of the wrong shape are
    /// skipped; when two characteristics share a UUID the first path (in order) wins.
    public init(objects: [String: [String: [String: DBusValue]]], devicePath: String) {
        var servicePaths: [String: BLEUUID] = [:]
        for (path, interfaces) in objects where path.hasPrefix(devicePath + "/") {
            guard let s = interfaces[BlueZNames.gattService] else { continue }
            guard let uuid = (try? s["UUID"]?.string()).flatMap({ BLEUUID(validating: $0) }) else {
                malformed.append(Self.uuidProblem(path, s["UUID"]))
                continue
            }
            let device = try? s["Device"]?.objectPath()
            guard device == nil || device == devicePath else { continue }
            servicePaths[path] = uuid
            services.insert(uuid)
        }
        for path in objects.keys.sorted() where path.hasPrefix(devicePath + "/") {
            guard let c = objects[path]?[BlueZNames.gattCharacteristic] else { continue }
            guard let uuid = (try? c["UUID"]?.string()).flatMap({ BLEUUID(validating: $0) }) else {
                malformed.append(Self.uuidProblem(path, c["UUID"]))
                continue
            }
            let servicePath =
                (try? c["Service"]?.objectPath())
                ?? String(path.split(separator: "/").dropLast().joined(separator: "/")).withLeadingSlash
            guard let service = servicePaths[servicePath] else { continue }
            let key = GATTCharacteristic(service: service, characteristic: uuid)
            if characteristics[key] == nil {
                characteristics[key] = path
                if let f = try? c["Flags"]?.strings() { flags[key] = Set(f) }
            }
            if let m = try? c["MTU"]?.uint16(), Int(m) >= BlueZLimits.defaultMTU, Int(m) <= BlueZLimits.maximumMTU {
                mtu = max(mtu ?? 0, Int(m))
            }
        }
    }

    public init() {}

    static func uuidProblem(_ path: String, _ value: DBusValue?) -> String {
        guard let v = value?.unwrapped else { return "the GATT object \(path) has no UUID" }
        return v.signature == "s"
            ? "the GATT object \(path) has a UUID that is not one"
            : "the GATT object \(path) has a UUID of type '\(v.signature)' instead of a string"
    }
}

extension String {
    var withLeadingSlash: String { hasPrefix("/") ? self : "/" + self }
}
