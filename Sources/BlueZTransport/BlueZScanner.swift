import DBus
import Foundation
import Transport

/// Finds boards: picks the adapter, runs LE discovery filtered on the flashing services, and
/// collects devices from `GetManagedObjects`, `InterfacesAdded` and `PropertiesChanged`.
public struct BlueZScanner: Sendable {
    public let bus: BlueZBus
    /// `hci0`, or nil for the first powered adapter.
    public let adapterName: String?

    public init(bus: BlueZBus, adapter: String? = nil) {
        self.bus = bus
        self.adapterName = adapter
    }

    /// The adapter to use: the one named, else the first powered one.
    public func adapter(in tree: BlueZObjectTree) throws(BlueZError) -> BlueZAdapter {
        try Self.chooseAdapter(named: adapterName, in: tree)
    }

    /// The adapter called `name` (`hci0` or its path), else the first switched on.
    public static func chooseAdapter(named name: String?, in tree: BlueZObjectTree) throws(BlueZError) -> BlueZAdapter {
        let names = tree.adapters.map(\.name)
        if let name {
            guard let a = tree.adapters.first(where: { $0.name == name || $0.path == name }) else {
                throw .noAdapter(requested: name, available: names)
            }
            guard a.powered else { throw .adapterOff(a.name) }
            return a
        }
        guard !tree.adapters.isEmpty else { throw .noAdapter(requested: nil, available: []) }
        guard let a = tree.adapters.first(where: \.powered) else { throw .adapterOff(tree.adapters[0].name) }
        return a
    }

    /// Scans for `timeout` and returns the devices seen (or already known), strongest first.
    /// `services` goes into BlueZ's discovery filter (nil: LE devices of any service); with
    /// `stopWhen`, returns as soon as a device satisfies it.
    public func scan(timeout: Duration, services: [BLEUUID]? = KnownGATT.flashingServices,
                     stopWhen: (@Sendable (BlueZDevice) -> Bool)? = nil) async throws -> [BlueZDevice] {
        let events = try await bus.events()
        let tree = try await bus.objects()
        let adapter = try adapter(in: tree)
        var devices: [String: BlueZDevice] = [:]
        for d in tree.devices where d.adapterPath == adapter.path { devices[d.path] = d }
        func done() -> Bool { stopWhen.map { stop in devices.values.contains(where: stop) } ?? false }
        if done() { return Self.sorted(devices) }

        var filter: [String: DBusValue] = ["Transport": .string("le"), "DuplicateData": .bool(false)]
        if let services { filter["UUIDs"] = .strings(services.map(\.uuidString)) }
        try await bus.call(adapter.path, BlueZNames.adapter, "SetDiscoveryFilter", [.propertyMap(filter)],
                           operation: "setting the scan filter on \(adapter.name)")
        do {
            try await bus.rawCall(adapter.path, BlueZNames.adapter, "StartDiscovery")
        } catch let error as DBusError where error.hasName(.bluezInProgress) {
            // Another client's discovery is running; this client still sees its results.
        } catch let error as DBusError {
            throw BlueZError.from(error, operation: "starting the scan on \(adapter.name)")
        }
        let collected = await Self.collect(events, into: devices, adapter: adapter.path, timeout: timeout, stopWhen: stopWhen)
        _ = try? await bus.rawCall(adapter.path, BlueZNames.adapter, "StopDiscovery", timeout: .seconds(5))
        return Self.sorted(collected)
    }

    /// Finds the board a query names: at once if BlueZ already knows it, else by scanning.
    /// - Throws: `BlueZError.deviceNotFound` (with the boards seen) or `.ambiguousDevice`.
    public func find(_ query: DeviceQuery, timeout: Duration) async throws -> BlueZDevice {
        // An address, a whole name or a bracketed friendly name is final as soon as it shows;
        // a part of a name waits for the whole scan, so that every board it matches is seen.
        // No service filter: a board in pairing mode may advertise only its name.
        let seen = try await scan(timeout: timeout, services: nil, stopWhen: { query.rank($0).map { $0 <= 2 } ?? false })
        if let match = try query.best(in: seen) { return match }
        throw BlueZError.deviceNotFound(query: query.text, seen: seen.filter(\.looksFlashable).map(\.label))
    }

    static func sorted(_ devices: [String: BlueZDevice]) -> [BlueZDevice] {
        devices.values.sorted { ($0.rssi ?? -999, $1.address) > ($1.rssi ?? -999, $0.address) }
    }

    /// Applies events until the timeout or until `stopWhen` holds.
    static func collect(_ events: AsyncStream<BlueZEvent>, into start: [String: BlueZDevice], adapter: String,
                        timeout: Duration, stopWhen: (@Sendable (BlueZDevice) -> Bool)?) async -> [String: BlueZDevice] {
        await withTaskGroup(of: [String: BlueZDevice]?.self) { group in
            group.addTask {
                var devices = start
                for await event in events {
                    guard let changed = apply(event, to: &devices, adapter: adapter) else { continue }
                    if let stopWhen, let d = devices[changed], stopWhen(d) { break }
                }
                return devices
            }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return nil
            }
            // Whichever ends first: the sleep (nil) means "time is up", so take the collector's
            // state by cancelling it (its loop ends and returns what it has).
            var result = start
            for await r in group {
                if let r { result = r; group.cancelAll(); break }
                group.cancelAll()
            }
            return result
        }
    }

    /// Applies one event; returns the path of the device it changed, if any.
    static func apply(_ event: BlueZEvent, to devices: inout [String: BlueZDevice], adapter: String) -> String? {
        switch event {
        case let .interfacesAdded(path, interfaces):
            guard let p = interfaces[BlueZNames.device], let d = BlueZDevice(path: path, properties: p),
                  d.adapterPath == adapter else { return nil }
            devices[path] = d
            return path
        case let .propertiesChanged(path, interface, changed, invalidated):
            guard interface == BlueZNames.device, devices[path] != nil else { return nil }
            devices[path]?.apply(changed: changed, invalidated: invalidated)
            return path
        case let .interfacesRemoved(path, interfaces):
            if interfaces.contains(BlueZNames.device) { devices[path] = nil }
            return nil
        case .deviceDisconnected:
            return nil
        }
    }
}
