import DBus
import SimulatedBoard
import Transport

/// The names of BlueZ's D-Bus API that a GATT server side uses (`doc/org.bluez.GattManager.rst`,
/// `doc/org.bluez.LEAdvertisingManager.rst`, `doc/org.bluez.GattCharacteristic.rst`).
public enum BlueZServerNames {
    public static let busName = "org.bluez"
    public static let rootPath = "/org/bluez"
    public static let adapter = "org.bluez.Adapter1"
    public static let device = "org.bluez.Device1"
    public static let gattManager = "org.bluez.GattManager1"
    public static let advertisingManager = "org.bluez.LEAdvertisingManager1"
    public static let advertisement = "org.bluez.LEAdvertisement1"
    public static let gattService = "org.bluez.GattService1"
    public static let gattCharacteristic = "org.bluez.GattCharacteristic1"
}

/// The GATT application a simulated board exports to BlueZ: one `GattService1` object per
/// service of the board and one `GattCharacteristic1` per characteristic, below the
/// application root (`…/service0/char0`), with the flags the board's firmware declares.
///
/// It deliberately has no `WriteAcquired`/`NotifyAcquired` properties: BlueZ then delivers
/// every write through `WriteValue` and sends a notification for every
/// `PropertiesChanged(Value)` the application emits, instead of handing out sockets.
public struct PeripheralGATTApplication: Sendable, Equatable {
    public struct Service: Sendable, Equatable {
        public var path: String
        public var uuid: BLEUUID
    }

    public struct Characteristic: Sendable, Equatable {
        public var path: String
        public var servicePath: String
        public var characteristic: GATTCharacteristic
        public var flags: [String]
        /// Notifications or indications (the buttonless characteristics indicate).
        public var canNotify: Bool { flags.contains("notify") || flags.contains("indicate") }
    }

    /// The application root, where BlueZ calls `GetManagedObjects`.
    public let rootPath: String
    public private(set) var services: [Service] = []
    public private(set) var characteristics: [Characteristic] = []

    /// The application for `board`, rooted at `rootPath`.
    public init(board: SimulatedBoard, rootPath: String) {
        self.rootPath = rootPath
        for (n, (service, chars)) in board.gattServices.enumerated() {
            let path = rootPath + "/service\(n)"
            services.append(Service(path: path, uuid: service))
            for (m, c) in chars.enumerated() {
                characteristics.append(Characteristic(path: path + "/char\(m)", servicePath: path, characteristic: c,
                                                      flags: c.declaredFlags))
            }
        }
    }

    /// The service UUIDs to advertise: partial flashing when the board has it (a 128-bit UUID
    /// and the name already fill most of a legacy advertisement), else its first service (a
    /// bootloader's FE59 or 1530, as the bootloaders advertise them, nordic-dfu.md §2.2, §3.2).
    public var advertisedServices: [BLEUUID] {
        let uuids = services.map(\.uuid)
        if uuids.contains(KnownGATT.partialFlashingService) { return [KnownGATT.partialFlashingService] }
        return Array(uuids.prefix(1))
    }

    public func characteristic(at path: String) -> Characteristic? {
        characteristics.first { $0.path == path }
    }

    public func characteristic(for c: GATTCharacteristic) -> Characteristic? {
        characteristics.first { $0.characteristic == c }
    }

    func serviceProperties(_ s: Service) -> [String: DBusValue] {
        ["UUID": .string(s.uuid.uuidString), "Primary": .bool(true),
         "Characteristics": .objectPaths(characteristics.filter { $0.servicePath == s.path }.map(\.path))]
    }

    func characteristicProperties(_ c: Characteristic) -> [String: DBusValue] {
        var p: [String: DBusValue] = ["UUID": .string(c.characteristic.characteristic.uuidString),
                                      "Service": .objectPath(c.servicePath), "Flags": .strings(c.flags),
                                      "Value": .bytes([])]
        if c.canNotify { p["Notifying"] = .bool(false) }
        return p
    }

    /// The advertisement's properties (`LEAdvertisement1`): connectable, with the service
    /// UUIDs and the board's name.
    func advertisementProperties(name: String) -> [String: DBusValue] {
        ["Type": .string("peripheral"), "ServiceUUIDs": .strings(advertisedServices.map(\.uuidString)),
         "LocalName": .string(name), "Discoverable": .bool(true)]
    }

    /// The methods, for introspection.
    static let members: [String: [DBusMemberDescription]] = [
        BlueZServerNames.gattCharacteristic: [.method("ReadValue", ["a{sv}"], returns: ["ay"]), .method("WriteValue", ["ay", "a{sv}"]),
                                              .method("StartNotify"), .method("StopNotify")],
        BlueZServerNames.advertisement: [.method("Release")],
    ]
}
