import Foundation

/// Which bus to connect to.
public enum DBusBusAddress: Sendable, Hashable {
    /// The system bus: `DBUS_SYSTEM_BUS_ADDRESS`, else the standard socket.
    case system
    /// The session bus: `DBUS_SESSION_BUS_ADDRESS`.
    case session
    /// An explicit address such as `unix:path=/run/dbus/system_bus_socket`.
    case address(String)

    /// The standard system bus socket, used when `DBUS_SYSTEM_BUS_ADDRESS` is unset.
    public static let defaultSystemAddress = "unix:path=/var/run/dbus/system_bus_socket"

    /// The address string this bus resolves to in `environment`.
    public func resolve(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> String {
        switch self {
        case .system:
            return environment["DBUS_SYSTEM_BUS_ADDRESS"].flatMap { $0.isEmpty ? nil : $0 }
                ?? DBusBusAddress.defaultSystemAddress
        case .session:
            guard let address = environment["DBUS_SESSION_BUS_ADDRESS"], !address.isEmpty else {
                throw DBusError.noAddress("DBUS_SESSION_BUS_ADDRESS")
            }
            return address
        case .address(let address):
            return address
        }
    }
}

/// A private connection to a D-Bus bus, with its own dispatch thread.
///
/// Calls, signal subscriptions and exported objects may be used from any task. The connection
/// closes when ``close()`` is called or the last reference goes away; waiting calls then fail
/// with ``DBusError/disconnected`` and signal streams finish.
public final class DBusConnection: Sendable {
    let core: ConnectionCore

    /// The unique name the bus gave this connection, e.g. `:1.42`.
    public var uniqueName: String { core.uniqueName }

    /// Connects, blocking for the authentication and the `Hello` handshake at most `timeout`.
    /// - Throws: ``DBusError/connectionFailed(address:reason:)`` (also when the bus does not
    ///   complete the handshake within `timeout`) or ``DBusError/noAddress(_:)``.
    public init(bus: DBusBusAddress, timeout: Duration = .seconds(5)) throws {
        core = try ConnectionCore(address: try bus.resolve(), timeout: timeout)
    }

    deinit {
        core.close()
    }

    /// Closes the connection. Safe to call more than once.
    public func close() {
        core.close()
    }

    /// False once closed or disconnected by the bus.
    public var isOpen: Bool {
        !core.state.withLock { $0.closed } && core.raw.isConnected
    }

    /// Calls a method and returns the reply body.
    ///
    /// - Parameters:
    ///   - destination: the bus name of the service, e.g. `org.bluez`.
    ///   - timeout: how long to wait for the reply.
    /// - Throws: ``DBusError/remote(name:message:)`` for error replies,
    ///   ``DBusError/timeout(method:after:)``, ``DBusError/disconnected``,
    ///   ``DBusError/invalidArgument(_:)`` for names or values that cannot be sent, and
    ///   `CancellationError` when the task is cancelled (the call is then abandoned).
    public func call(
        destination: String, path: String, interface: String, method: String,
        arguments: [DBusValue] = [], timeout: Duration = .seconds(25)
    ) async throws -> [DBusValue] {
        try Task.checkCancellation()
        let message = try Message.methodCall(destination: destination, path: path, interface: interface, method: method)
        try message.append(arguments)
        let reply = try await core.send(message, label: "\(interface).\(method) on \(path)", timeout: timeout)
        if reply.isError { throw reply.remoteError() }
        return try reply.arguments()
    }

    /// Sends a method call without waiting for its reply: when this returns the call has been
    /// handed to the bus connection, after every call made before it on this connection
    /// (libdbus keeps the order). Await ``DBusPendingReply/reply()`` for the answer.
    /// - Throws: ``DBusError/invalidArgument(_:)`` for names or values that cannot be sent.
    ///   Failures of the call itself (error reply, timeout, disconnect) come from `reply()`.
    public func send(
        destination: String, path: String, interface: String, method: String,
        arguments: [DBusValue] = [], timeout: Duration = .seconds(25)
    ) throws -> DBusPendingReply {
        let message = try Message.methodCall(destination: destination, path: path, interface: interface, method: method)
        try message.append(arguments)
        return core.sendNow(message, label: "\(interface).\(method) on \(path)", timeout: timeout)
    }

    /// Asks the bus for a well-known name (without queueing).
    /// - Throws: ``DBusError/nameNotAcquired(name:reply:)`` if someone else owns it.
    public func requestName(_ name: String, timeout: Duration = .seconds(5)) async throws {
        try Validation.busName(name)
        let reply = try await callBus("RequestName", [.string(name), .uint32(4)], timeout: timeout)
        let code = try reply.argument(0, "RequestName").uint32("RequestName")
        guard code == 1 || code == 4 else { throw DBusError.nameNotAcquired(name: name, reply: code) }
    }

    /// Gives a well-known name back to the bus.
    public func releaseName(_ name: String, timeout: Duration = .seconds(5)) async throws {
        try Validation.busName(name)
        _ = try await callBus("ReleaseName", [.string(name)], timeout: timeout)
    }

    /// The unique name that currently owns `name`, or nil when nobody does.
    public func nameOwner(_ name: String, timeout: Duration = .seconds(5)) async throws -> String? {
        try Validation.busName(name)
        do {
            return try await callBus("GetNameOwner", [.string(name)], timeout: timeout)
                .argument(0, "GetNameOwner").string("GetNameOwner")
        } catch let error as DBusError where error.hasName(.nameHasNoOwner) {
            return nil
        }
    }

    func callBus(_ method: String, _ arguments: [DBusValue], timeout: Duration) async throws -> [DBusValue] {
        try await call(
            destination: DBusStandard.bus, path: DBusStandard.busPath, interface: DBusStandard.bus,
            method: method, arguments: arguments, timeout: timeout)
    }

    /// Sends a signal from `path`; with a `destination` it goes to that connection only.
    public func emitSignal(
        path: String, interface: String, member: String, arguments: [DBusValue] = [], destination: String? = nil
    ) throws {
        let message = try Message.signal(path: path, interface: interface, member: member)
        if let destination { try message.setDestination(destination) }
        try message.append(arguments)
        guard !core.state.withLock({ $0.closed }) else { throw DBusError.disconnected }
        _ = try core.raw.send(message)
    }

    /// Calls waiting for a reply right now (zero when idle; a leak check).
    public var pendingCallCount: Int { core.pendingCount }

    /// libdbus messages alive in this process (a leak check for tests).
    public static var liveMessageCount: Int { Message.liveCount.load(ordering: .relaxed) }
}
