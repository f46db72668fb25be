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
        try await scanRecording(timeout: timeout, services: services, stopWhen: stopWhen).devices
    }

    /// `scan`, with the device objects BlueZ sent that are not a device's (by path). With
    /// `stopAtMalformed`, returns as soon as such an object's path satisfies it.
    func scanRecording(timeout: Duration, services: [BLEUUID]?, stopWhen: (@Sendable (BlueZDevice) -> Bool)?,
                       stopAtMalformed: (@Sendable (String) -> Bool)? = nil) async throws -> Scan {
        let events = try await bus.events()
        let tree = try await bus.objects()
        let adapter = try adapter(in: tree)
        var start = Scan()
        for d in tree.devices where d.adapterPath == adapter.path { start.found[d.path] = d }
        for (path, problem) in tree.malformedDevices where path.hasPrefix(adapter.path + "/") { start.malformed[path] = problem }
        if stopWhen.map({ stop in start.found.values.contains(where: stop) }) ?? false { return start }
        if let stopAtMalformed, start.malformed.keys.contains(where: stopAtMalformed) { return start }

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
        let collected = await Self.collect(events, into: start, adapter: adapter.path, timeout: timeout, stopWhen: stopWhen,
                                           stopAtMalformed: stopAtMalformed)
        _ = try? await bus.rawCall(adapter.path, BlueZNames.adapter, "StopDiscovery", timeout: .seconds(5))
        return collected
    }

    /// What a scan saw: devices by path, and device objects that are not a device's.
    struct Scan: Sendable {
        var found: [String: BlueZDevice] = [:]
        var malformed: [String: String] = [:]
        var devices: [BlueZDevice] { BlueZScanner.sorted(found) }
    }

    /// Finds the board a query names: at once if BlueZ already knows it, else by scanning.
    /// - Throws: `BlueZError.deviceNotFound` (with the boards seen) or `.ambiguousDevice`.
    public func find(_ query: DeviceQuery, timeout: Duration) async throws -> BlueZDevice {
        // An address, a whole name or a bracketed friendly name is final as soon as it shows;
        // a part of a name waits for the whole scan, so that every board it matches is seen.
        // No service filter: a board in pairing mode may advertise only its name.
        // A device object BlueZ sent malformed may be the board (its path holds the address):
        // it ends the scan at once, and is what the failure reports.
        let wanted = query.address.map { "/dev_" + $0.replacingOccurrences(of: ":", with: "_") }
        let scan = try await scanRecording(timeout: timeout, services: nil, stopWhen: { query.rank($0).map { $0 <= 2 } ?? false },
                                           stopAtMalformed: { path in wanted.map { path.uppercased().hasSuffix($0.uppercased()) } ?? false })
        let seen = scan.devices
        if let match = try query.best(in: seen) { return match }
        let suspects = scan.malformed.filter { path, _ in wanted.map { path.uppercased().hasSuffix($0.uppercased()) } ?? true }
        if let problem = suspects.sorted(by: { $0.key < $1.key }).first?.value {
            throw BlueZError.unexpectedReply(operation: "looking for '\(query.text)'", detail: problem)
        }
        // BlueZ keeps a name of at most 248 bytes (HCI_MAX_NAME_LENGTH, lib/bluetooth/hci.h); a longer one hides the board's.
        if query.address == nil, let long = seen.first(where: { ($0.name?.utf8.count ?? 0) > 248 }) {
            throw BlueZError.unexpectedReply(operation: "looking for '\(query.text)'",
                                             detail: "the device \(long.path) has a name of \(long.name?.utf8.count ?? 0) bytes; a Bluetooth name holds at most 248")
        }
        throw BlueZError.deviceNotFound(query: query.text, seen: seen.filter(\.looksFlashable).map(\.label))
    }

    static func sorted(_ devices: [String: BlueZDevice]) -> [BlueZDevice] {
        devices.values.sorted { ($0.rssi ?? -999, $1.address) > ($1.rssi ?? -999, $0.address) }
    }

    /// Applies events until the timeout or until `stopWhen` holds.
    static func collect(_ events: AsyncStream<BlueZEvent>, into start: Scan, adapter: String, timeout: Duration,
                        stopWhen: (@Sendable (BlueZDevice) -> Bool)?, stopAtMalformed: (@Sendable (String) -> Bool)?) async -> Scan {
        await withTaskGroup(of: Scan?.self) { group in
            group.addTask {
                var scan = start
                for await event in events {
                    if case let .interfacesAdded(path, interfaces) = event, path.hasPrefix(adapter + "/"),
                       let p = interfaces[BlueZNames.device], let problem = BlueZDevice.problem(path: path, properties: p) {
                        scan.malformed[path] = problem
                        if let stopAtMalformed, stopAtMalformed(path) { break }
                        continue
                    }
                    guard let changed = apply(event, to: &scan.found, adapter: adapter) else { continue }
                    if let stopWhen, let d = scan.found[changed], stopWhen(d) { break }
                }
                return scan
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

extension BlueZScanner {
    /// Removes the board a query names from BlueZ (`Adapter1.RemoveDevice`): its bond, its
    /// cached GATT table and its object. Only boards BlueZ already knows are looked at; no scan.
    /// - Returns: the device removed.
    /// - Throws: `BlueZError.deviceNotFound` when BlueZ knows no such board, `.ambiguousDevice`.
    public func forget(_ query: DeviceQuery) async throws -> BlueZDevice {
        let tree = try await bus.objects()
        let adapter = try adapter(in: tree)
        let known = tree.devices.filter { $0.adapterPath == adapter.path }
        guard let device = try query.best(in: known) else {
            throw BlueZError.deviceNotFound(query: query.text, seen: known.map(\.label))
        }
        _ = try await bus.call(adapter.path, BlueZNames.adapter, "RemoveDevice", [.objectPath(device.path)],
                           operation: "removing \(device.label) from \(adapter.name)")
        return device
    }
}
