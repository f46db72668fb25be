import DBus
import SimulatedBoard
import Transport
import NordicDFUFrames

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
/// With `acquire`, characteristics that allow write commands carry `WriteAcquired` and those
/// that notify carry `NotifyAcquired`: bluetoothd then asks the application for a socket
/// (`AcquireWrite`, `AcquireNotify`) and passes writes and notifications through it, one
/// datagram each (B566 `src/gatt-database.c` `chrc_write_cb()`, `ccc_write_cb()`,
/// `sock_io_read()`). Without, every write comes as a `WriteValue` call and every
/// notification goes out as a `PropertiesChanged(Value)` signal.
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
    /// Whether the characteristics offer BlueZ the socket methods.
    public let acquire: Bool
    public private(set) var services: [Service] = []
    public private(set) var characteristics: [Characteristic] = []

    /// The application for `board`, rooted at `rootPath`.
    public init(board: SimulatedBoard, rootPath: String, acquire: Bool = true) {
        self.rootPath = rootPath
        self.acquire = acquire
        for (n, (service, chars)) in board.gattServices.enumerated() {
            let path = rootPath + "/service\(n)"
            services.append(Service(path: path, uuid: service))
            for (m, c) in chars.enumerated() {
                characteristics.append(
                    Characteristic(
                        path: path + "/char\(m)", servicePath: path, characteristic: c,
                        flags: c.declaredFlags))
            }
        }
    }

    /// The service UUIDs to advertise: a Nordic bootloader's DFU service (FE59 or 1530, as the
    /// bootloaders advertise it, nordic-dfu.md §2.2, §3.2; V2 bootloader `nrf_dfu_ble.c`
    /// `advertising_init`); none for a CODAL or DAL board, which advertises its name only
    /// (`MicroBitBLEManager.cpp`).
    public var advertisedServices: [BLEUUID] {
        services.map(\.uuid).filter { $0 == NordicGATT.secureService || $0 == NordicGATT.legacyService }
    }

    public func characteristic(at path: String) -> Characteristic? {
        characteristics.first { $0.path == path }
    }

    public func characteristic(for c: GATTCharacteristic) -> Characteristic? {
        characteristics.first { $0.characteristic == c }
    }

    func serviceProperties(_ s: Service) -> [String: DBusValue] {
        [
            "UUID": .string(s.uuid.uuidString), "Primary": .bool(true),
            "Characteristics": .objectPaths(characteristics.filter { $0.servicePath == s.path }.map(\.path))
        ]
    }

    func characteristicProperties(_ c: Characteristic) -> [String: DBusValue] {
        var p: [String: DBusValue] = [
            "UUID": .string(c.characteristic.characteristic.uuidString),
            "Service": .objectPath(c.servicePath), "Flags": .strings(c.flags),
            "Value": .bytes([])
        ]
        if c.canNotify { p["Notifying"] = .bool(false) }
        if acquire, c.flags.contains("write-without-response") { p["WriteAcquired"] = .bool(false) }
        if acquire, c.flags.contains("notify") { p["NotifyAcquired"] = .bool(false) }
        return p
    }

    /// The advertisement's properties (`LEAdvertisement1`): connectable and discoverable, with
    /// the board's name and no service UUIDs, as CODAL and DAL advertise in pairing mode and
    /// in the application of a build without whitelist (`MicroBitBLEManager.cpp`; the VM's
    /// BlueZ cannot pair, so the whitelisted case does not arise there); "DfuTarg" with the
    /// DFU service in the Nordic bootloader (`advertisedServices`).
    func advertisementProperties(name: String) -> [String: DBusValue] {
        var p: [String: DBusValue] = [
            "Type": .string("peripheral"), "LocalName": .string(name), "Discoverable": .bool(true)
        ]
        if !advertisedServices.isEmpty { p["ServiceUUIDs"] = .strings(advertisedServices.map(\.uuidString)) }
        return p
    }

    /// The methods, for introspection.
    static let members: [String: [DBusMemberDescription]] = [
        BlueZServerNames.gattCharacteristic: [
            .method("ReadValue", ["a{sv}"], returns: ["ay"]), .method("WriteValue", ["ay", "a{sv}"]),
            .method("AcquireWrite", ["a{sv}"], returns: ["h", "q"]),
            .method("AcquireNotify", ["a{sv}"], returns: ["h", "q"]),
            .method("StartNotify"), .method("StopNotify")
        ],
        BlueZServerNames.advertisement: [.method("Release")]
    ]
}
