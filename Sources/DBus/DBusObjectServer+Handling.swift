extension DBusObjectServer {
    /// Answers one call on the root or on an exported object.
    func handle(_ call: DBusMethodCall) async throws -> [DBusValue] {
        switch (call.interface, call.member) {
        case (DBusStandard.objectManager?, "GetManagedObjects") where call.path == rootPath:
            return [.managedObjects(managedObjects)]
        case (DBusStandard.introspectable?, "Introspect"), (nil, "Introspect"):
            return [.string(introspection(of: call.path))]
        case (DBusStandard.properties?, _) where objects.withLock({ $0[call.path] != nil }):
            return try await handleProperties(call)
        default:
            break
        }
        guard let object = objects.withLock({ $0[call.path] }) else {
            throw DBusError(name: DBusErrorName.unknownObject.rawValue, message: "No object at path \(call.path)")
        }
        if let interface = call.interface, object.interfaces[interface] == nil {
            throw DBusError(
                name: DBusErrorName.unknownInterface.rawValue,
                message: "Object \(call.path) has no interface \(interface)")
        }
        guard let methods = object.methods else {
            throw DBusError(
                name: DBusErrorName.unknownMethod.rawValue,
                message: "Unknown method \(call.member) on \(call.interface ?? call.path)")
        }
        return try await methods(call)
    }

    private func handleProperties(_ call: DBusMethodCall) async throws -> [DBusValue] {
        let interface = try call.arguments.argument(0, "Properties.\(call.member)").string()
        let object = objects.withLock { $0[call.path] }
        guard let properties = object?.interfaces[interface] else {
            throw DBusError(
                name: DBusErrorName.unknownInterface.rawValue,
                message: "Object \(call.path) has no interface \(interface)")
        }
        switch call.member {
        case "Get":
            try call.expectSignature("ss")
            let name = try call.arguments.argument(1).string()
            guard let value = properties[name] else {
                throw DBusError(
                    name: DBusErrorName.unknownProperty.rawValue, message: "No property \(interface).\(name)")
            }
            return [.variant(value)]
        case "GetAll":
            try call.expectSignature("s")
            return [.propertyMap(properties)]
        case "Set":
            try call.expectSignature("ssv")
            let name = try call.arguments.argument(1).string()
            let value = try call.arguments.argument(2).unwrapped
            guard let current = properties[name] else {
                throw DBusError(
                    name: DBusErrorName.unknownProperty.rawValue, message: "No property \(interface).\(name)")
            }
            guard let setter = object?.setter else {
                throw DBusError(
                    name: DBusErrorName.propertyReadOnly.rawValue, message: "Property \(interface).\(name) is read-only"
                )
            }
            guard current.signature == value.signature else {
                throw DBusError(
                    name: DBusErrorName.invalidArgs.rawValue,
                    message: "Property \(interface).\(name) has type '\(current.signature)', got '\(value.signature)'")
            }
            try await setter(interface, name, value)
            try setProperties(path: call.path, interface: interface, [name: value])
            return []
        default:
            throw DBusError(
                name: DBusErrorName.unknownMethod.rawValue, message: "Unknown method Properties.\(call.member)")
        }
    }

    /// Introspection XML: the interfaces and properties of `path`, and its child nodes.
    func introspection(of path: String) -> String {
        let (interfaces, children) = objects.withLock { objects -> ([String: [String: DBusValue]], [String]) in
            let prefix = path == "/" ? "/" : path + "/"
            let children = Set(
                objects.keys.compactMap { other -> String? in
                    guard other.hasPrefix(prefix), other != path else { return nil }
                    return other.dropFirst(prefix.count).split(separator: "/").first.map(String.init)
                })
            return (objects[path]?.interfaces ?? [:], children.sorted())
        }
        var xml = "<!DOCTYPE node PUBLIC \"-//freedesktop//DTD D-BUS Object Introspection 1.0//EN\"\n"
        xml += " \"http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd\">\n<node>\n"
        xml +=
            "  <interface name=\"\(DBusStandard.introspectable)\"><method name=\"Introspect\"><arg type=\"s\" direction=\"out\"/></method></interface>\n"
        if path == rootPath {
            xml +=
                "  <interface name=\"\(DBusStandard.objectManager)\"><method name=\"GetManagedObjects\"><arg type=\"a{oa{sa{sv}}}\" direction=\"out\"/></method>"
            xml += "<signal name=\"InterfacesAdded\"><arg type=\"o\"/><arg type=\"a{sa{sv}}\"/></signal>"
            xml += "<signal name=\"InterfacesRemoved\"><arg type=\"o\"/><arg type=\"as\"/></signal></interface>\n"
        }
        let described = memberDescriptions.withLock { $0 }
        for name in interfaces.keys.sorted() {
            xml += "  <interface name=\"\(name)\">\n"
            for member in described[name] ?? [] { xml += member.xml }
            for (property, value) in (interfaces[name] ?? [:]).sorted(by: { $0.key < $1.key }) {
                xml += "    <property name=\"\(property)\" type=\"\(value.signature)\" access=\"read\"/>\n"
            }
            xml += "  </interface>\n"
        }
        for child in children { xml += "  <node name=\"\(child)\"/>\n" }
        return xml + "</node>\n"
    }
}
