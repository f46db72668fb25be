import DBus

/// What a hostile fake board does to the properties and notifications BlueZ would pass on.
struct HostileDBus: Sendable {
    let modes: Set<HostileDBusMode>

    var isActive: Bool { !modes.isEmpty }

    /// The properties of `interface` as the hostile board exports them.
    func properties(_ interface: String, _ properties: [String: DBusValue]) -> [String: DBusValue] {
        var p = properties
        if modes.contains(.wrongTypes) {
            for (name, value) in p { p[name] = wrongType(name: name, value) }
        }
        if modes.contains(.oversizedValues) {
            if p["Name"] != nil { p["Name"] = .string(String(repeating: "micro:bit ", count: 6_554)) }
            if p["Alias"] != nil { p["Alias"] = .string(String(repeating: "A", count: 65_536)) }
            if p["UUIDs"] != nil, interface == BlueZ.device {
                p["UUIDs"] = .strings((0..<5_000).map { String(format: "%08x-0000-1000-8000-00805f9b34fb", $0) })
            }
            if p["Value"] != nil { p["Value"] = .bytes([UInt8](repeating: 0xA5, count: 4_096)) }
        }
        if modes.contains(.missingProperties) {
            let dropped: Set<String>
            switch interface {
            case BlueZ.device: dropped = ["Address", "Name", "Alias", "UUIDs", "RSSI", "Paired"]
            case BlueZ.gattCharacteristic: dropped = ["Flags", "MTU", "Notifying"]
            case BlueZ.gattService: dropped = ["Primary"]
            default: dropped = []
            }
            for name in dropped { p[name] = nil }
        }
        return p
    }

    /// How one notification of `bytes` reaches the client: the changed properties and the
    /// invalidated names of one `PropertiesChanged`.
    func notification(_ bytes: [UInt8]) -> (changes: [String: DBusValue], invalidated: [String]) {
        if modes.contains(.missingProperties) { return ([:], ["Value"]) }
        if modes.contains(.wrongTypes) {
            return (["Value": .string(bytes.map { String(format: "%02x", $0) }.joined())], [])
        }
        if modes.contains(.oversizedValues) {
            return (["Value": .bytes(bytes + [UInt8](repeating: 0xA5, count: max(0, 4_096 - bytes.count)))], [])
        }
        return (["Value": .bytes(bytes)], [])
    }

    private func wrongType(name: String, _ value: DBusValue) -> DBusValue {
        switch (name, value) {
        case ("RSSI", .int16(let n)): return .string(String(n))
        case ("Connected", .bool(let b)), ("ServicesResolved", .bool(let b)), ("Paired", .bool(let b)):
            return .int32(b ? 1 : 0)
        case ("UUIDs", .array(_, let items)):
            return .string(items.compactMap { try? $0.string() }.joined(separator: ","))
        case ("UUID", .string(let s)): return .bytes(Array(s.utf8))
        case ("Flags", .array(_, let items)):
            return .string(items.compactMap { try? $0.string() }.joined(separator: ","))
        case ("MTU", .uint16(let n)): return .int32(Int32(n))
        case ("Service", .objectPath(let p)), ("Device", .objectPath(let p)): return .string(p)
        case ("Address", .string(let s)): return .bytes(Array(s.utf8))
        case ("Name", .string(let s)): return .variant(.string(s))
        case ("Value", .bytes(let b)): return .array(elementSignature: "i", b.map { .int32(Int32($0)) })
        default: return value
        }
    }
}
