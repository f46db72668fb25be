import DBus
import FakeBlueZ
import FirmwareImage
import Foundation
import SampleFirmware
import SimulatedBoard
import TestSupport
import Transport
import PartialFlashingFrames
import SMP

/// A private bus with the fake BlueZ on it and a client connection, for one test.
final class FakeBus: Sendable {
    let bus: PrivateBus
    let fake: FakeBlueZ
    let client: DBusConnection

    static let adapter = "/org/bluez/hci0"

    /// Starts the fake with `boards`; its notes (what the boards do) go to `notes` when given.
    static func start(
        _ boards: [FakeBoard], timeScale: Double = 0, notes: AsyncStream<String>.Continuation? = nil
    ) async throws -> FakeBus {
        let bus = try PrivateBus()
        var options = FakeBlueZOptions()
        options.timeScale = timeScale
        let debug = ProcessInfo.processInfo.environment["FAKEBUS_DEBUG"] != nil
        if debug || notes != nil {
            options.onNote = { line in
                if debug { print("  fake: \(line)") }
                notes?.yield(line)
            }
        }
        let fake = try await FakeBlueZ.start(bus: .address(bus.address), boards: boards, options: options)
        let client = try DBusConnection(bus: .address(bus.address))
        return FakeBus(bus: bus, fake: fake, client: client)
    }

    private init(bus: PrivateBus, fake: FakeBlueZ, client: DBusConnection) {
        self.bus = bus
        self.fake = fake
        self.client = client
    }

    func stop() async -> [SimulatedBoard] {
        client.close()
        return await fake.stop()
    }

    /// A method call to org.bluez.
    @discardableResult
    func call(_ path: String, _ interface: String, _ method: String, _ arguments: [DBusValue] = []) async throws
        -> [DBusValue]
    {
        try await client.call(
            destination: "org.bluez", path: path, interface: interface, method: method,
            arguments: arguments, timeout: .seconds(20))
    }

    func managedObjects() async throws -> [String: [String: [String: DBusValue]]] {
        try await call("/", DBusStandard.objectManager, "GetManagedObjects").argument(0).managedObjects()
    }

    /// Signals from org.bluez; subscribe before the call that causes them.
    func signals(_ rule: DBusMatchRule) async throws -> SignalQueue {
        SignalQueue(try await client.signals(matching: rule))
    }

    /// Discovers the boards: StartDiscovery and the InterfacesAdded of `count` devices.
    func discover(count: Int = 1) async throws -> [String: [String: DBusValue]] {
        let added = try await signals(.objectManager(sender: "org.bluez", member: "InterfacesAdded"))
        try await call(Self.adapter, "org.bluez.Adapter1", "StartDiscovery")
        var devices: [String: [String: DBusValue]] = [:]
        while devices.count < count {
            let signal = try await added.next()
            let path = try signal.arguments.argument(0).objectPath()
            let interfaces = try signal.arguments.argument(1).stringKeyed()
            if let device = interfaces["org.bluez.Device1"] { devices[path] = try device.properties() }
        }
        return devices
    }

    /// Connects `device` and waits for ServicesResolved; returns the GATT characteristic paths by UUID.
    func connectAndResolve(_ device: String) async throws -> [String: String] {
        let changes = try await signals(
            .propertiesChanged(sender: "org.bluez", path: device, interface: "org.bluez.Device1"))
        try await call(device, "org.bluez.Device1", "Connect")
        // Already resolved (a Pair connected first) or resolved later: as a client must, check both.
        let resolved = try await call(
            device, DBusStandard.properties, "Get", [.string("org.bluez.Device1"), .string("ServicesResolved")])
        if try resolved.argument(0).bool() == false {
            _ = try await changes.next { try $0.changed["ServicesResolved"]?.bool() == true }
        }
        return try await characteristics(of: device)
    }

    func characteristics(of device: String) async throws -> [String: String] {
        var result: [String: String] = [:]
        for (path, interfaces) in try await managedObjects() where path.hasPrefix(device + "/") {
            if let c = interfaces["org.bluez.GattCharacteristic1"] { result[try c["UUID"]?.string() ?? ""] = path }
        }
        return result
    }
}

/// Signals of one subscription, taken one at a time, with a safety limit so that a broken
/// test fails instead of hanging (the limit is not something the tests measure).
final class SignalQueue: Sendable {
    private let stream: AsyncStream<DBusSignal>

    init(_ stream: AsyncStream<DBusSignal>) {
        self.stream = stream
    }

    /// The next signal that satisfies `predicate` (others are skipped).
    func next(
        limit: Duration = .seconds(20), where predicate: @escaping @Sendable (DBusSignal) throws -> Bool = { _ in true }
    )
        async throws -> DBusSignal
    {
        let stream = self.stream
        return try await withThrowingTaskGroup(of: DBusSignal?.self) { group in
            group.addTask {
                for await signal in stream where (try? predicate(signal)) == true { return signal }
                return nil
            }
            group.addTask {
                // Watchdog: fails the test after `limit`; the wait ends on the signal.
                try await Task.sleep(for: limit)
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let signal = first else {
                throw BusFixtureError.gaveUpWaiting("a signal")
            }
            return signal
        }
    }
}

extension DBusSignal {
    /// The changed properties of a PropertiesChanged signal, variants removed.
    var changed: [String: DBusValue] {
        (try? arguments.argument(1).properties()) ?? [:]
    }
}

/// Boards for the tests.
enum TestBoards {
    static let pfCharacteristic = PartialFlashingGATT.characteristic.characteristic.uuidString
    static let smpCharacteristic = SMPGATT.characteristic.characteristic.uuidString

    /// A micro:bit V2 with the sample runtime and heart program, Bluetooth on in application mode.
    static func microbit(address: String = "F0:0D:00:00:00:01", mcuboot: Bool = false) throws -> SimulatedBoard {
        let image = SampleFirmware.image(family: .nrf52833, runtime: .r1, program: .heart)
        let profile =
            mcuboot
            ? BoardProfile(
                board: .microbitV2, address: address, services: [.partialFlashing, .smp],
                bluetoothInApplicationMode: true, attMTU: 247, dataLength: 251)
            : BoardProfile(board: .microbitV2, address: address, bluetoothInApplicationMode: true)
        return try SimulatedBoard(profile: profile, image: image)
    }

    static func devicePath(_ address: String) -> String {
        "/org/bluez/hci0/dev_" + address.replacingOccurrences(of: ":", with: "_")
    }
}
