import Synchronization

/// Sets a writable property; throw to refuse (the error becomes the D-Bus error reply).
public typealias DBusPropertySetter =
    @Sendable (_ interface: String, _ name: String, _ value: DBusValue) async throws -> Void

/// Exports a tree of objects the way BlueZ does: each object answers
/// `org.freedesktop.DBus.Properties` (Get, GetAll, Set) and `Introspectable`, and the root
/// answers `org.freedesktop.DBus.ObjectManager.GetManagedObjects`. Adding and removing objects
/// emits `InterfacesAdded` / `InterfacesRemoved`; changing properties emits `PropertiesChanged`.
///
/// Other method calls on an object go to the `methods` handler given when it was added.
public final class DBusObjectServer: Sendable {
    public let connection: DBusConnection
    /// Where `ObjectManager` lives; every managed object is below it.
    public let rootPath: String
    /// When true (as BlueZ does), `GetManagedObjects` and `InterfacesAdded` also list the
    /// `Properties` and `Introspectable` interfaces with no properties.
    public let listsStandardInterfaces: Bool
    let objects = Mutex<[String: ExportedObject]>([:])
    let memberDescriptions = Mutex<[String: [DBusMemberDescription]]>([:])

    struct ExportedObject: Sendable {
        var interfaces: [String: [String: DBusValue]]
        var methods: DBusMethodHandler?
        var setter: DBusPropertySetter?
    }

    /// Starts answering `GetManagedObjects` on `rootPath`.
    public init(connection: DBusConnection, rootPath: String = "/", listsStandardInterfaces: Bool = true) throws {
        try Validation.path(rootPath)
        self.connection = connection
        self.rootPath = rootPath
        self.listsStandardInterfaces = listsStandardInterfaces
        // The root also answers the intermediate nodes (`/org` of `/org/bluez`), so tools
        // such as `busctl tree` can walk the tree.
        try connection.export(path: rootPath, subtree: true) { [weak self] call in
            guard let self else {
                throw DBusError(name: DBusErrorName.unknownObject.rawValue, message: "object server is gone")
            }
            return try await self.handle(call)
        }
    }

    /// Describes the methods and signals of `interface` for introspection (tools such as
    /// dbus-python and `busctl introspect` read the argument signatures from it).
    public func describe(interface: String, _ members: [DBusMemberDescription]) {
        memberDescriptions.withLock { $0[interface] = members }
    }

    /// Removes every handler this server registered.
    public func stop() {
        let paths = objects.withLock { Array($0.keys) }
        for path in paths where path != rootPath { connection.unexport(path: path) }
        connection.unexport(path: rootPath)
    }

    /// Exports an object and emits `InterfacesAdded`.
    /// - Parameters:
    ///   - interfaces: interface name → property name → value.
    ///   - methods: answers calls other than Properties/Introspectable; nil answers `UnknownMethod`.
    ///   - setter: accepts `Properties.Set`; nil makes every property read-only.
    ///   - concurrent: answer this object's calls concurrently (see `DBusConnection.export`),
    ///     for methods that wait, such as a BLE connect.
    public func add(
        path: String, interfaces: [String: [String: DBusValue]],
        methods: DBusMethodHandler? = nil, setter: DBusPropertySetter? = nil, concurrent: Bool = false
    ) throws {
        try Validation.path(path)
        guard path.hasPrefix(rootPath == "/" ? "/" : rootPath + "/") || path == rootPath else {
            throw DBusError.invalidArgument("object \(path) is not below the object manager root \(rootPath)")
        }
        for name in interfaces.keys { try Validation.interface(name) }
        for value in interfaces.values.flatMap(\.values) { try Validation.value(value) }
        objects.withLock { $0[path] = ExportedObject(interfaces: interfaces, methods: methods, setter: setter) }
        if path != rootPath {
            try connection.export(path: path, concurrent: concurrent) { [weak self] call in
                guard let self else {
                    throw DBusError(name: DBusErrorName.unknownObject.rawValue, message: "object server is gone")
                }
                return try await self.handle(call)
            }
        }
        try connection.emitSignal(
            path: rootPath, interface: DBusStandard.objectManager, member: "InterfacesAdded",
            arguments: [.objectPath(path), .interfaceMap(listed(interfaces))])
    }

    /// Adds (or replaces) one interface of an existing object and emits `InterfacesAdded`.
    public func add(interface: String, properties: [String: DBusValue], to path: String) throws {
        try Validation.interface(interface)
        for value in properties.values { try Validation.value(value) }
        let found = objects.withLock { objects -> Bool in
            guard objects[path] != nil else { return false }
            objects[path]?.interfaces[interface] = properties
            return true
        }
        guard found else { throw DBusError.invalidArgument("no object exported at \(path)") }
        try connection.emitSignal(
            path: rootPath, interface: DBusStandard.objectManager, member: "InterfacesAdded",
            arguments: [.objectPath(path), .interfaceMap([interface: properties])])
    }

    /// Removes an object and emits `InterfacesRemoved` with all its interfaces.
    public func remove(path: String) throws {
        guard let removed = objects.withLock({ $0.removeValue(forKey: path) }) else { return }
        if path != rootPath { connection.unexport(path: path) }
        let names = listed(removed.interfaces).keys.sorted()
        try connection.emitSignal(
            path: rootPath, interface: DBusStandard.objectManager, member: "InterfacesRemoved",
            arguments: [.objectPath(path), .strings(names)])
    }

    /// Changes properties and emits one `PropertiesChanged` carrying all of them.
    ///
    /// Every call emits a signal, even when the values are unchanged (BlueZ does the same for
    /// repeated notifications).
    public func setProperties(
        path: String, interface: String, _ changes: [String: DBusValue], invalidated: [String] = []
    ) throws {
        for value in changes.values { try Validation.value(value) }
        let found = objects.withLock { objects -> Bool in
            guard objects[path]?.interfaces[interface] != nil else { return false }
            for (name, value) in changes { objects[path]?.interfaces[interface]?[name] = value }
            for name in invalidated { objects[path]?.interfaces[interface]?[name] = nil }
            return true
        }
        guard found else { throw DBusError.invalidArgument("no interface \(interface) exported at \(path)") }
        try connection.emitSignal(
            path: path, interface: DBusStandard.properties, member: "PropertiesChanged",
            arguments: [.string(interface), .propertyMap(changes), .strings(invalidated)])
    }

    /// The current properties of one interface of one object.
    public func properties(path: String, interface: String) -> [String: DBusValue]? {
        objects.withLock { $0[path]?.interfaces[interface] }
    }

    /// Every exported object below the root with its interfaces, as `GetManagedObjects` returns it.
    public var managedObjects: [String: [String: [String: DBusValue]]] {
        objects.withLock { objects in
            var result: [String: [String: [String: DBusValue]]] = [:]
            for (path, object) in objects where path != rootPath { result[path] = listed(object.interfaces) }
            return result
        }
    }

    func listed(_ interfaces: [String: [String: DBusValue]]) -> [String: [String: DBusValue]] {
        guard listsStandardInterfaces else { return interfaces }
        var all = interfaces
        all[DBusStandard.properties] = all[DBusStandard.properties] ?? [:]
        all[DBusStandard.introspectable] = all[DBusStandard.introspectable] ?? [:]
        return all
    }
}

/// A method or signal of an interface, as introspection lists it.
public struct DBusMemberDescription: Sendable, Hashable {
    public enum Kind: String, Sendable, Hashable { case method, signal }
    public var kind: Kind
    public var name: String
    /// Argument signatures in order (`in` for a method).
    public var arguments: [String]
    /// Reply signatures of a method.
    public var results: [String]

    public static func method(_ name: String, _ arguments: [String] = [], returns results: [String] = [])
        -> DBusMemberDescription
    {
        DBusMemberDescription(kind: .method, name: name, arguments: arguments, results: results)
    }

    public static func signal(_ name: String, _ arguments: [String]) -> DBusMemberDescription {
        DBusMemberDescription(kind: .signal, name: name, arguments: arguments, results: [])
    }

    var xml: String {
        let direction = kind == .method ? " direction=\"in\"" : ""
        var text = "    <\(kind.rawValue) name=\"\(name)\">"
        for a in arguments { text += "<arg type=\"\(a)\"\(direction)/>" }
        for r in results { text += "<arg type=\"\(r)\" direction=\"out\"/>" }
        return text + "</\(kind.rawValue)>\n"
    }
}
