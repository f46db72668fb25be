/// A signal received from the bus.
public struct DBusSignal: Sendable, Hashable {
    /// The unique name of the sender, e.g. `:1.7`.
    public var sender: String
    public var path: String
    public var interface: String
    public var member: String
    public var arguments: [DBusValue]

    public init(sender: String, path: String, interface: String, member: String, arguments: [DBusValue]) {
        self.sender = sender
        self.path = path
        self.interface = interface
        self.member = member
        self.arguments = arguments
    }
}

/// Which signals a subscription wants; becomes a bus match rule and a local filter.
public struct DBusMatchRule: Sendable, Hashable {
    /// A unique (`:1.7`) or well-known (`org.bluez`) name.
    public var sender: String?
    public var path: String?
    /// Matches the path itself and everything below it.
    public var pathNamespace: String?
    public var interface: String?
    public var member: String?
    /// The first argument must be this string (e.g. the interface of `PropertiesChanged`).
    public var arg0: String?

    public init(
        sender: String? = nil, path: String? = nil, pathNamespace: String? = nil,
        interface: String? = nil, member: String? = nil, arg0: String? = nil
    ) {
        self.sender = sender
        self.path = path
        self.pathNamespace = pathNamespace
        self.interface = interface
        self.member = member
        self.arg0 = arg0
    }

    /// `PropertiesChanged` signals, optionally for one object, namespace and interface.
    public static func propertiesChanged(
        sender: String? = nil, path: String? = nil, pathNamespace: String? = nil, interface: String? = nil
    ) -> DBusMatchRule {
        DBusMatchRule(
            sender: sender, path: path, pathNamespace: pathNamespace,
            interface: DBusStandard.properties, member: "PropertiesChanged", arg0: interface)
    }

    /// `InterfacesAdded` and `InterfacesRemoved` use two rules; this is one of them.
    public static func objectManager(sender: String? = nil, member: String) -> DBusMatchRule {
        DBusMatchRule(sender: sender, interface: DBusStandard.objectManager, member: member)
    }

    /// The rule in the bus syntax, e.g. `type='signal',interface='org.freedesktop.DBus.Properties'`.
    public var ruleString: String {
        var parts = ["type='signal'"]
        func add(_ key: String, _ value: String?) {
            guard let value else { return }
            parts.append("\(key)='\(value.replacingOccurrences(of: "'", with: "'\\''"))'")
        }
        add("sender", sender)
        add("path", path)
        add("path_namespace", pathNamespace)
        add("interface", interface)
        add("member", member)
        add("arg0", arg0)
        return parts.joined(separator: ",")
    }

    /// Checks the fields before the rule is sent, since libdbus would abort on bad names.
    func validate() throws {
        if let sender { try Validation.busName(sender) }
        if let path { try Validation.path(path) }
        if let pathNamespace { try Validation.path(pathNamespace) }
        if let interface { try Validation.interface(interface) }
        if let member { try Validation.member(member) }
        if arg0?.contains("\0") == true { throw DBusError.invalidArgument("arg0 cannot contain NUL") }
    }

    /// The local part of matching (the bus already filtered by sender).
    func matches(
        path signalPath: String, interface signalInterface: String, member signalMember: String,
        arguments: [DBusValue]
    ) -> Bool {
        if let path, path != signalPath { return false }
        if let ns = pathNamespace, !(ns == "/" || signalPath == ns || signalPath.hasPrefix(ns + "/")) { return false }
        if let interface, interface != signalInterface { return false }
        if let member, member != signalMember { return false }
        if let arg0 {
            guard case .string(let first)? = arguments.first, first == arg0 else { return false }
        }
        return true
    }
}

/// One `signals(matching:)` stream.
struct Subscription: Sendable {
    let rule: DBusMatchRule
    /// The unique name owning `rule.sender` when subscribed; nil means no local sender filter.
    let senderOwner: String?
    let continuation: AsyncStream<DBusSignal>.Continuation
}

/// Names of the standard interfaces.
public enum DBusStandard {
    public static let bus = "org.freedesktop.DBus"
    public static let busPath = "/org/freedesktop/DBus"
    public static let properties = "org.freedesktop.DBus.Properties"
    public static let objectManager = "org.freedesktop.DBus.ObjectManager"
    public static let introspectable = "org.freedesktop.DBus.Introspectable"
    public static let peer = "org.freedesktop.DBus.Peer"
}
