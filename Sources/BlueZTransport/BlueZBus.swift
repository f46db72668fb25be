import DBus
import Foundation
import Transport

/// Something BlueZ announced on the bus, already checked for shape.
public enum BlueZEvent: Sendable, Equatable {
    case propertiesChanged(path: String, interface: String, changed: [String: DBusValue], invalidated: [String])
    case interfacesAdded(path: String, interfaces: [String: [String: DBusValue]])
    case interfacesRemoved(path: String, interfaces: [String])
    /// `Device1.Disconnected(reason, message)` (BlueZ 5.83 and later).
    case deviceDisconnected(path: String, reason: String, message: String)

    /// Reads a signal; nil for signals of another kind or of the wrong shape (hostile or
    /// from a newer BlueZ): they are ignored rather than trusted.
    public init?(_ signal: DBusSignal) {
        let a = signal.arguments
        switch (signal.interface, signal.member) {
        case (DBusStandard.properties, "PropertiesChanged"):
            guard let interface = try? a.argument(0).string(), let changed = try? a.argument(1).properties() else {
                return nil
            }
            let invalidated = (try? a.argument(2).strings()) ?? []
            self = .propertiesChanged(
                path: signal.path, interface: interface, changed: changed, invalidated: invalidated)
        case (DBusStandard.objectManager, "InterfacesAdded"):
            guard let path = try? a.argument(0).objectPath(),
                let interfaces = try? a.argument(1).stringKeyed().mapValues({ try $0.properties() })
            else { return nil }
            self = .interfacesAdded(path: path, interfaces: interfaces)
        case (DBusStandard.objectManager, "InterfacesRemoved"):
            guard let path = try? a.argument(0).objectPath(), let interfaces = try? a.argument(1).strings() else {
                return nil
            }
            self = .interfacesRemoved(path: path, interfaces: interfaces)
        case (BlueZNames.device, "Disconnected"):
            guard let reason = try? a.argument(0).string() else { return nil }
            self = .deviceDisconnected(path: signal.path, reason: reason, message: (try? a.argument(1).string()) ?? "")
        default:
            return nil
        }
    }
}

/// One private system-bus connection to bluetoothd, with typed calls and one event stream.
///
/// Each BLE connection gets its own `BlueZBus` (bleak does the same): notification sessions
/// and discovery sessions belong to the D-Bus connection, so closing it releases them.
public final class BlueZBus: Sendable {
    public let connection: DBusConnection
    /// How long one D-Bus call may take before it counts as hung.
    public let callTimeout: Duration
    /// How long a call on bluetoothd itself (its object tree, an adapter) may take: it answers
    /// them at once (no radio is involved), so silence means it is hung.
    public let serviceTimeout: Duration

    /// Connects to the system bus (`DBUS_SYSTEM_BUS_ADDRESS` when set) and checks that
    /// bluetoothd is there. Every step has a deadline: the handshake with the bus, the
    /// question who owns `org.bluez` and every later call on bluetoothd itself take at most
    /// `serviceTimeout`, so that a bus or a bluetoothd that never answers ends in
    /// `.bluetoothUnavailable` within a command's own time.
    public static func open(
        bus: DBusBusAddress = .system, callTimeout: Duration = .seconds(30),
        serviceTimeout: Duration = BlueZBus.defaultServiceTimeout
    ) async throws(BlueZError) -> BlueZBus {
        let setUp = min(callTimeout, serviceTimeout)
        let connection: DBusConnection
        do { connection = try DBusConnection(bus: bus, timeout: setUp) } catch {
            if case .libraryUnavailable = error as? DBusError { throw BlueZError.bluetoothUnavailable("\(error)") }
            throw BlueZError.bluetoothUnavailable("cannot reach the system bus, so not bluetoothd either (\(error))")
        }
        let bus = BlueZBus(connection: connection, callTimeout: callTimeout, serviceTimeout: serviceTimeout)
        let owner: String?
        do { owner = try await connection.nameOwner(BlueZNames.service, timeout: setUp) } catch {
            connection.close()
            throw BlueZError.bluetoothUnavailable(
                "the system bus does not answer, so bluetoothd cannot be reached (\(error))")
        }
        guard owner != nil else {
            connection.close()
            throw BlueZError.bluetoothUnavailable("bluetoothd is not running (no org.bluez on the system bus)")
        }
        return bus
    }

    /// The `serviceTimeout` for a command that should end within `time` (a scan's): that time,
    /// at least a second (for a bluetoothd busy with other clients), at most the default.
    public static func serviceTimeout(within time: Duration) -> Duration {
        min(max(time, .seconds(1)), defaultServiceTimeout)
    }

    /// The `serviceTimeout` of a bus opened without one.
    public static let defaultServiceTimeout: Duration = .seconds(10)

    public init(
        connection: DBusConnection, callTimeout: Duration = .seconds(30),
        serviceTimeout: Duration = BlueZBus.defaultServiceTimeout
    ) {
        self.connection = connection
        self.callTimeout = callTimeout
        self.serviceTimeout = serviceTimeout
    }

    /// True for an object of bluetoothd itself (`/`, `/org/bluez`, an adapter), false for a
    /// device and what is below it: only a device's calls wait for a radio.
    static func isServicePath(_ path: String) -> Bool { !path.contains("/dev_") }

    /// The deadline of a call on `path`.
    func deadline(_ path: String, _ timeout: Duration?) -> Duration {
        let wanted = timeout ?? callTimeout
        return Self.isServicePath(path) ? min(wanted, serviceTimeout) : wanted
    }

    public func close() { connection.close() }

    /// Calls a BlueZ method; failures become `BlueZError`s that name `operation`.
    @discardableResult
    public func call(
        _ path: String, _ interface: String, _ method: String, _ arguments: [DBusValue] = [],
        operation: String, timeout: Duration? = nil
    ) async throws -> [DBusValue] {
        do {
            return try await connection.call(
                destination: BlueZNames.service, path: path, interface: interface,
                method: method, arguments: arguments, timeout: deadline(path, timeout))
        } catch let error as DBusError {
            throw BlueZError.from(error, operation: operation, onService: Self.isServicePath(path))
        }
    }

    /// The same call, but D-Bus errors come back unmapped (for callers that retry on some).
    @discardableResult
    func rawCall(
        _ path: String, _ interface: String, _ method: String, _ arguments: [DBusValue] = [],
        timeout: Duration? = nil
    ) async throws -> [DBusValue] {
        try await connection.call(
            destination: BlueZNames.service, path: path, interface: interface,
            method: method, arguments: arguments, timeout: deadline(path, timeout))
    }

    /// The whole object tree.
    public func objects() async throws -> BlueZObjectTree {
        try BlueZObjectTree(
            reply: await call(
                "/", DBusStandard.objectManager, "GetManagedObjects",
                operation: "reading the BlueZ object tree"))
    }

    /// Sets one property through `org.freedesktop.DBus.Properties.Set`.
    public func set(_ path: String, _ interface: String, _ name: String, _ value: DBusValue, operation: String)
        async throws
    {
        try await call(
            path, DBusStandard.properties, "Set", [.string(interface), .string(name), .variant(value)],
            operation: operation)
    }

    /// Reads one property through `org.freedesktop.DBus.Properties.Get`.
    public func get(_ path: String, _ interface: String, _ name: String, operation: String) async throws -> DBusValue {
        let reply = try await call(
            path, DBusStandard.properties, "Get", [.string(interface), .string(name)], operation: operation)
        guard let value = reply.first else {
            throw BlueZError.unexpectedReply(operation: operation, detail: "Get returned nothing")
        }
        return value.unwrapped
    }

    /// Every BlueZ signal this client needs, merged into one stream. The match rules are on
    /// the bus when this returns, so subscribing before reading state loses nothing.
    public func events() async throws -> AsyncStream<BlueZEvent> {
        let rules = [
            DBusMatchRule.propertiesChanged(sender: BlueZNames.service, pathNamespace: BlueZNames.root),
            DBusMatchRule.objectManager(sender: BlueZNames.service, member: "InterfacesAdded"),
            DBusMatchRule.objectManager(sender: BlueZNames.service, member: "InterfacesRemoved"),
            DBusMatchRule(
                sender: BlueZNames.service, pathNamespace: BlueZNames.root, interface: BlueZNames.device,
                member: "Disconnected")
        ]
        var streams: [AsyncStream<DBusSignal>] = []
        do {
            for rule in rules { streams.append(try await connection.signals(matching: rule, bufferLimit: 4096)) }
        } catch let error as DBusError {
            throw BlueZError.from(error, operation: "subscribing to BlueZ signals")
        }
        let (merged, sink) = AsyncStream<BlueZEvent>.makeStream(bufferingPolicy: .unbounded)
        let tasks = streams.map { stream in
            Task {
                for await signal in stream {
                    if let event = BlueZEvent(signal) { sink.yield(event) }
                }
                sink.finish()
            }
        }
        sink.onTermination = { _ in tasks.forEach { $0.cancel() } }
        return merged
    }
}
