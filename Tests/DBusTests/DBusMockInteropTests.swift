import DBus
import Foundation
import Testing
import TestSupport

/// The layer against a third-party service: python-dbusmock's BlueZ template on a private bus.
@Suite(.enabled(if: DBusMock.isAvailable, Comment(rawValue: DBusMock.skipMessage)))
struct DBusMockInteropTests {
    static let adapter = "/org/bluez/hci0"
    static let device = "/org/bluez/hci0/dev_D4_E5_F6_01_02_03"

    @Test func drivesTheDbusmockBlueZTemplate() async throws {
        let bus = try PrivateBus()
        let client = try DBusConnection(bus: .address(bus.address))
        let owners = try await client.signals(
            matching: DBusMatchRule(
                sender: DBusStandard.bus, interface: DBusStandard.bus, member: "NameOwnerChanged", arg0: "org.bluez"))
        let mock = try DBusMock(template: "bluez5", systemBusAddress: bus.address)
        defer { mock.stop() }
        _ = try await collect(1, from: owners)  // org.bluez is on the bus

        func bluez(_ path: String, _ interface: String, _ method: String, _ arguments: [DBusValue] = []) async throws
            -> [DBusValue]
        {
            try await client.call(
                destination: "org.bluez", path: path, interface: interface, method: method,
                arguments: arguments, timeout: .seconds(10))
        }
        let added = try await client.signals(matching: .objectManager(sender: "org.bluez", member: "InterfacesAdded"))
        let adapterChanges = try await client.signals(
            matching: .propertiesChanged(sender: "org.bluez", path: Self.adapter, interface: "org.bluez.Adapter1"))

        #expect(
            try await bluez("/", "org.bluez.Mock", "AddAdapter", [.string("hci0"), .string("bitflash-test")]) == [
                .string(Self.adapter)
            ])
        _ = try await bluez(
            Self.adapter, "org.bluez.Adapter1", "SetDiscoveryFilter",
            [.propertyMap(["Transport": .string("le"), "UUIDs": .strings([])])])
        _ = try await bluez(Self.adapter, "org.bluez.Adapter1", "StartDiscovery")
        let discovering = try await collect(1, from: adapterChanges)
        #expect(try discovering.first?.arguments.argument(1).properties()["Discovering"] == .bool(true))

        _ = try await bluez(
            "/", "org.bluez.Mock", "AddDevice",
            [.string("hci0"), .string("D4:E5:F6:01:02:03"), .string("BBC micro:bit [zavog]")])
        let interfacesAdded = try await collect(2, from: added)  // the adapter, then the device
        let deviceAdded = try #require(interfacesAdded.last)
        #expect(try deviceAdded.arguments.argument(0).objectPath() == Self.device)
        let deviceProperties = try deviceAdded.arguments.argument(1).stringKeyed()["org.bluez.Device1"]?.properties()
        #expect(try deviceProperties?["Address"]?.string() == "D4:E5:F6:01:02:03")

        let objects = try await bluez("/", DBusStandard.objectManager, "GetManagedObjects").argument(0).managedObjects()
        #expect(try objects[Self.adapter]?["org.bluez.Adapter1"]?["Powered"]?.bool() == true)
        #expect(try objects[Self.device]?["org.bluez.Device1"]?["RSSI"]?.int16() == -79)
        #expect(try objects[Self.device]?["org.bluez.Device1"]?["ManufacturerData"]?.entries().isEmpty == true)

        _ = try await bluez(Self.device, "org.bluez.Device1", "Connect")
        let again = await #expect(throws: DBusError.self) {
            try await bluez(Self.device, "org.bluez.Device1", "Connect")
        }
        #expect(again?.hasName(.bluezAlreadyConnected) == true)
        let name = try await bluez(
            Self.device, DBusStandard.properties, "Get", [.string("org.bluez.Device1"), .string("Name")])
        #expect(try name.argument(0).string() == "BBC micro:bit [zavog]")
    }
}

/// A python-dbusmock process serving a template on the "system" bus given by address.
final class DBusMock: @unchecked Sendable {
    static let python = "/usr/bin/python3"
    static let isAvailable: Bool = {
        guard PrivateBus.isAvailable, FileManager.default.isExecutableFile(atPath: python) else { return false }
        let probe = Process()
        probe.executableURL = URL(fileURLWithPath: python)
        probe.arguments = ["-c", "import dbusmock"]
        probe.standardOutput = FileHandle.nullDevice
        probe.standardError = FileHandle.nullDevice
        guard (try? probe.run()) != nil else { return false }
        probe.waitUntilExit()
        return probe.terminationStatus == 0
    }()
    static let skipMessage =
        "python3-dbusmock or dbus-daemon not found: dbusmock interop test skipped (apt install python3-dbusmock)"

    private let process = Process()

    init(template: String, systemBusAddress: String) throws {
        process.executableURL = URL(fileURLWithPath: DBusMock.python)
        process.arguments = ["-m", "dbusmock", "--template", template]
        var environment = ProcessInfo.processInfo.environment
        environment["DBUS_SYSTEM_BUS_ADDRESS"] = systemBusAddress
        process.environment = environment
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
    }

    func stop() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    deinit { stop() }
}
