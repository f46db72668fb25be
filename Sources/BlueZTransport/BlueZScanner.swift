import DBus
import Foundation
import Synchronization
import Transport

/// When a board scan may end before its timeout.
public enum ScanGoal: Sendable, Equatable {
    /// Scan for the whole timeout.
    case fullTime
    /// Until this many boards have been seen.
    case boards(Int)
    /// Until a device the query names (address, name, friendly name or a part of it) has been seen.
    case board(DeviceQuery)
}

/// Finds boards: picks the adapter, runs LE discovery, and collects the devices seen from
/// `GetManagedObjects`, `InterfacesAdded` and `PropertiesChanged`.
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

    /// Scans for `timeout` and returns the devices seen in range, strongest first: those whose
    /// advertisements BlueZ reported during the scan (or was reporting to another client when
    /// it began: they carry an RSSI) and those connected to this computer. Devices BlueZ only
    /// remembers (bonded, cached) are not in range until they advertise.
    ///
    /// The scan is LE with no service filter by default: the micro:bit and Calliope mini
    /// advertise only their flags and name, so a `UUIDs` filter would hide them (the kernel
    /// drops reports without a listed UUID; B566 `src/adapter.c` `merge_discovery_filters()`,
    /// Linux `mgmt.c` `is_filter_match()`). Any filter at all makes BlueZ report
    /// non-discoverable advertisers too (B566 `device_is_discoverable()`: every LE report counts
    /// when `filtered_discovery` is set), which is how a board in application mode with the
    /// whitelist on (flags 0x04) shows up. `Pattern` is not used: it can hold one prefix only,
    /// and it hides every other device from every other client of bluetoothd.
    /// - Parameters:
    ///   - services: service UUIDs for BlueZ's filter (nil: every LE device).
    ///   - stopWhen: return as soon as a device seen satisfies it.
    public func scan(
        timeout: Duration, services: [BLEUUID]? = nil,
        stopWhen: (@Sendable (BlueZDevice) -> Bool)? = nil
    ) async throws -> [BlueZDevice] {
        try await discover(timeout: timeout, services: services, countsKnown: false) { seen in
            stopWhen.map { seen.contains(where: $0) } ?? false
        }.inRange
    }

    /// Scans for boards (`BoardSighting.recognize`; with `all`, every device) until `goal` is
    /// met or `timeout` has passed, and returns them strongest first.
    public func boards(timeout: Duration, all: Bool = false, until goal: ScanGoal = .fullTime) async throws
        -> [BoardSighting]
    {
        let seen = try await discover(timeout: timeout, services: nil, countsKnown: false) { seen in
            switch goal {
            case .fullTime: return false
            case .boards(let n): return seen.count(where: { BoardSighting.recognize($0) != nil }) >= n
            case .board(let query): return seen.contains { query.rank($0) != nil }
            }
        }.inRange
        return seen.compactMap { all ? BoardSighting.any($0) : BoardSighting.recognize($0) }
    }

    /// The scan itself: the filter, discovery, and the devices seen (with `countsKnown`, also
    /// every device BlueZ already knows) until `done` holds or the time is up. Device objects
    /// BlueZ sent that are not a device's are kept by path; with `stopAtMalformed`, the scan
    /// ends as soon as such an object's path satisfies it.
    func discover(
        timeout: Duration, services: [BLEUUID]?, countsKnown: Bool,
        stopAtMalformed: (@Sendable (String) -> Bool)? = nil,
        done: @escaping @Sendable ([BlueZDevice]) -> Bool
    ) async throws -> Sighted {
        let events = try await bus.events()
        let tree = try await bus.objects()
        let adapter = try adapter(in: tree)
        var start = Sighted()
        for d in tree.devices where d.adapterPath == adapter.path {
            start.devices[d.path] = d
            if countsKnown || d.rssi != nil || d.connected { start.seen.insert(d.path) }
        }
        for (path, problem) in tree.malformedDevices where path.hasPrefix(adapter.path + "/") {
            start.malformed[path] = problem
        }
        if done(start.seenDevices) { return start }
        if let stopAtMalformed, start.malformed.keys.contains(where: stopAtMalformed) { return start }

        var filter: [String: DBusValue] = ["Transport": .string("le"), "DuplicateData": .bool(false)]
        if let services { filter["UUIDs"] = .strings(services.map(\.uuidString)) }
        try await bus.call(
            adapter.path, BlueZNames.adapter, "SetDiscoveryFilter", [.propertyMap(filter)],
            operation: "setting the scan filter on \(adapter.name)")
        do {
            try await bus.rawCall(adapter.path, BlueZNames.adapter, "StartDiscovery")
        } catch let error as DBusError where error.hasName(.bluezInProgress) {
            // Another client's discovery is running; this client still sees its results.
        } catch let error as DBusError {
            throw BlueZError.from(error, operation: "starting the scan on \(adapter.name)", onService: true)
        }
        let collected = await Self.collect(
            events, from: start, adapter: adapter.path, timeout: timeout,
            stopAtMalformed: stopAtMalformed, done: done)
        _ = try? await bus.rawCall(adapter.path, BlueZNames.adapter, "StopDiscovery", timeout: .seconds(5))
        return collected
    }

    /// Finds the board a query names: at once if BlueZ already knows it, else by scanning.
    /// - Throws: `BlueZError.deviceNotFound` (with the boards seen) or `.ambiguousDevice`.
    public func find(_ query: DeviceQuery, timeout: Duration) async throws -> BlueZDevice {
        // An address, a whole name or a bracketed friendly name is final as soon as it shows
        // (a device BlueZ knows counts: its Connect waits for the board's advertisements);
        // a part of a name waits for the whole scan, so that every board it matches is seen.
        // A device object BlueZ sent malformed may be the board (its path holds the address):
        // it ends the scan at once, and is what the failure reports.
        let wanted = query.address.map { "/dev_" + $0.replacingOccurrences(of: ":", with: "_") }
        let scan = try await discover(
            timeout: timeout, services: nil, countsKnown: true,
            stopAtMalformed: { path in wanted.map { path.uppercased().hasSuffix($0.uppercased()) } ?? false }
        ) { seen in
            seen.contains { query.rank($0).map { $0 <= 2 } ?? false }
        }
        let seen = scan.inRange
        if let match = try query.best(in: seen) { return match }
        let suspects = scan.malformed.filter { path, _ in
            wanted.map { path.uppercased().hasSuffix($0.uppercased()) } ?? true
        }
        if let problem = suspects.sorted(by: { $0.key < $1.key }).first?.value {
            throw BlueZError.unexpectedReply(operation: "looking for '\(query.text)'", detail: problem)
        }
        // BlueZ keeps a name of at most 248 bytes (HCI_MAX_NAME_LENGTH, lib/bluetooth/hci.h); a longer one hides the board's.
        if query.address == nil, let long = seen.first(where: { ($0.name?.utf8.count ?? 0) > 248 }) {
            throw BlueZError.unexpectedReply(
                operation: "looking for '\(query.text)'",
                detail:
                    "the device \(long.path) has a name of \(long.name?.utf8.count ?? 0) bytes; a Bluetooth name holds at most 248"
            )
        }
        throw BlueZError.deviceNotFound(query: query.text, seen: seen.filter(\.looksFlashable).map(\.label))
    }

    static func sorted(_ devices: [BlueZDevice]) -> [BlueZDevice] {
        devices.sorted { ($0.rssi ?? -999, $1.address) > ($1.rssi ?? -999, $0.address) }
    }

    /// The devices of one adapter, which of them were seen in range, and the device objects
    /// BlueZ sent that are not a device's (by path, in words).
    struct Sighted: Sendable {
        var devices: [String: BlueZDevice] = [:]
        var seen: Set<String> = []
        var malformed: [String: String] = [:]
        var seenDevices: [BlueZDevice] { seen.compactMap { devices[$0] } }
        /// The devices seen, strongest first.
        var inRange: [BlueZDevice] { BlueZScanner.sorted(seenDevices) }
        /// The devices seen, strongest first.

        /// Applies one event of the scan.
        mutating func apply(_ event: BlueZEvent, adapter: String) {
            if case let .interfacesAdded(path, interfaces) = event, path.hasPrefix(adapter + "/"),
                let p = interfaces[BlueZNames.device], let problem = BlueZDevice.problem(path: path, properties: p)
            {
                malformed[path] = problem
                return
            }
            guard let path = BlueZScanner.apply(event, to: &devices, adapter: adapter) else {
                if case let .interfacesRemoved(path, _) = event, devices[path] == nil { seen.remove(path) }
                return
            }
            switch event {
            case .interfacesAdded:
                seen.insert(path)
            case let .propertiesChanged(_, _, changed, _):
                // An advertisement sets the RSSI (with a filter, every report does: B566
                // `device_set_rssi_with_delta(dev, rssi, 0)`); a connection means it is near.
                if changed["RSSI"] != nil || devices[path]?.connected == true { seen.insert(path) }
            default:
                break
            }
        }
    }

    /// Applies events until the timeout, until `done` holds for the devices seen, or until a
    /// malformed device object's path satisfies `stopAtMalformed`.
    static func collect(
        _ events: AsyncStream<BlueZEvent>, from start: Sighted, adapter: String, timeout: Duration,
        stopAtMalformed: (@Sendable (String) -> Bool)?,
        done: @escaping @Sendable ([BlueZDevice]) -> Bool
    ) async -> Sighted {
        final class Shared: Sendable {
            let state: Mutex<Sighted>
            init(_ s: Sighted) { state = Mutex(s) }
        }
        let shared = Shared(start)
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for await event in events {
                    if shared.state.withLock({ s in
                        s.apply(event, adapter: adapter)
                        if let stopAtMalformed, case let .interfacesAdded(path, _) = event,
                            s.malformed[path] != nil, stopAtMalformed(path)
                        {
                            return true
                        }
                        return done(s.seenDevices)
                    }) {
                        return
                    }
                }
            }
            group.addTask { try? await Task.sleep(for: timeout) }
            // Whichever ends first: the goal met, or the time up.
            await group.next()
            group.cancelAll()
        }
        return shared.state.withLock { $0 }
    }

    /// Applies one event; returns the path of the device it changed, if any.
    static func apply(_ event: BlueZEvent, to devices: inout [String: BlueZDevice], adapter: String) -> String? {
        switch event {
        case let .interfacesAdded(path, interfaces):
            guard let p = interfaces[BlueZNames.device], let d = BlueZDevice(path: path, properties: p),
                d.adapterPath == adapter
            else { return nil }
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
        _ = try await bus.call(
            adapter.path, BlueZNames.adapter, "RemoveDevice", [.objectPath(device.path)],
            operation: "removing \(device.label) from \(adapter.name)")
        return device
    }
}
