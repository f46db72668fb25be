/// One D-Bus value, typed as on the wire.
///
/// Containers carry what libdbus needs to write them even when empty: an array knows its
/// element signature and a dictionary its key and value signatures, so `@as []` and
/// `@a{sv} {}` are sent with the right type. `ay` has its own case, ``bytes(_:)``, stored as
/// `[UInt8]` and copied in one block; received `ay` always decodes to ``bytes(_:)``.
public indirect enum DBusValue: Sendable, Hashable {
    case byte(UInt8)
    case bool(Bool)
    case int16(Int16)
    case uint16(UInt16)
    case int32(Int32)
    case uint32(UInt32)
    case int64(Int64)
    case uint64(UInt64)
    case double(Double)
    case string(String)
    /// An object path such as `/org/bluez/hci0`.
    case objectPath(String)
    /// A type signature such as `a{sv}`.
    case signature(String)
    /// `ay`.
    case bytes([UInt8])
    /// An array whose elements all have the single complete type `elementSignature`.
    case array(elementSignature: String, [DBusValue])
    /// A dictionary `a{kv}`; entries keep their order. The key type must be basic.
    case dictionary(keySignature: String, valueSignature: String, [DBusDictEntry])
    /// A struct `(...)`; it needs at least one field.
    case structure([DBusValue])
    /// A variant `v`, holding any value (including another variant).
    case variant(DBusValue)
    /// A Unix file descriptor `h`, passed between processes by the bus (a connection that
    /// cannot pass them refuses to send it).
    case unixFD(DBusFileDescriptor)

    /// The D-Bus type signature of this value, e.g. `a{sv}` or `(yq)`.
    public var signature: String {
        switch self {
        case .byte: return "y"
        case .bool: return "b"
        case .int16: return "n"
        case .uint16: return "q"
        case .int32: return "i"
        case .uint32: return "u"
        case .int64: return "x"
        case .uint64: return "t"
        case .double: return "d"
        case .string: return "s"
        case .objectPath: return "o"
        case .signature: return "g"
        case .bytes: return "ay"
        case .array(let element, _): return "a" + element
        case .dictionary(let key, let value, _): return "a{" + key + value + "}"
        case .structure(let fields): return "(" + fields.map(\.signature).joined() + ")"
        case .variant: return "v"
        case .unixFD: return "h"
        }
    }

    /// A short name of the kind of value, for error messages.
    var kindDescription: String { signature }
}

/// One entry of a ``DBusValue/dictionary(keySignature:valueSignature:_:)``.
public struct DBusDictEntry: Sendable, Hashable {
    public var key: DBusValue
    public var value: DBusValue
    public init(key: DBusValue, value: DBusValue) {
        self.key = key
        self.value = value
    }
}

extension DBusValue {
    /// An `a{sv}` from a Swift dictionary; entries are sorted by key so the encoding is stable.
    public static func propertyMap(_ properties: [String: DBusValue]) -> DBusValue {
        .dictionary(
            keySignature: "s", valueSignature: "v",
            properties.keys.sorted().map { key in
                DBusDictEntry(key: .string(key), value: .variant(properties[key] ?? .bool(false)))
            })
    }

    /// An `as`.
    public static func strings(_ values: [String]) -> DBusValue {
        .array(elementSignature: "s", values.map { .string($0) })
    }

    /// An `ao`.
    public static func objectPaths(_ values: [String]) -> DBusValue {
        .array(elementSignature: "o", values.map { .objectPath($0) })
    }

    /// The `a{sa{sv}}` of interfaces and their properties, as in `InterfacesAdded`.
    public static func interfaceMap(_ interfaces: [String: [String: DBusValue]]) -> DBusValue {
        .dictionary(
            keySignature: "s", valueSignature: "a{sv}",
            interfaces.keys.sorted().map { name in
                DBusDictEntry(key: .string(name), value: .propertyMap(interfaces[name] ?? [:]))
            })
    }

    /// The `a{oa{sa{sv}}}` that `org.freedesktop.DBus.ObjectManager.GetManagedObjects` returns.
    public static func managedObjects(_ objects: [String: [String: [String: DBusValue]]]) -> DBusValue {
        .dictionary(
            keySignature: "o", valueSignature: "a{sa{sv}}",
            objects.keys.sorted().map { path in
                DBusDictEntry(key: .objectPath(path), value: .interfaceMap(objects[path] ?? [:]))
            })
    }
}

extension [DBusValue] {
    /// The concatenated signature of a message body, e.g. `sa{sv}as`.
    public var signature: String { map(\.signature).joined() }
}
