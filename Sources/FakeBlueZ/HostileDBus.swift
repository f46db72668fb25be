import DBus
import Diagnostics
import FirmwareImage

/// What a hostile fake board does to the properties and notifications BlueZ would pass on.
///
/// With the modes alone every property and notification is distorted the same way. With a
/// seed, each property of each object and each notification is distorted by one of the
/// modes, or left alone, as the seed picks: different seeds give a fuzz-style run of clients
/// against many shapes; the same seed gives the same shapes.
struct HostileDBus: Sendable {
    let modes: Set<HostileDBusMode>
    var seed: UInt64?
    /// Tells apart the objects (their path) for the seeded choice.
    var salt = ""

    var isActive: Bool { !modes.isEmpty }

    /// The properties of `interface` as the hostile board exports them.
    func properties(_ interface: String, _ properties: [String: DBusValue]) -> [String: DBusValue] {
        guard isActive else { return properties }
        var result: [String: DBusValue] = [:]
        for (name, value) in properties {
            var distorted: DBusValue? = value
            for mode in chosen(for: interface + "." + name) {
                guard let current = distorted else { break }
                distorted = Self.distort(current, name: name, interface: interface, mode)
            }
            if let distorted { result[name] = distorted }
        }
        return result
    }

    /// How the `index`th notification of `bytes` reaches the client: the changed properties
    /// and the invalidated names of one `PropertiesChanged`.
    func notification(_ bytes: [UInt8], index: Int) -> (changes: [String: DBusValue], invalidated: [String]) {
        let modes = chosen(for: "notification \(index)")
        if modes.contains(.missingProperties) { return ([:], ["Value"]) }
        if modes.contains(.wrongTypes) {
            return (["Value": .string(Hex.bytes(bytes, uppercase: false))], [])
        }
        if modes.contains(.oversizedValues) {
            return (["Value": .bytes(bytes + [UInt8](repeating: 0xA5, count: max(0, 4_096 - bytes.count)))], [])
        }
        return (["Value": .bytes(bytes)], [])
    }

    /// A notification as it leaves through an acquired socket: only its size can be hostile
    /// (a datagram carries bytes, no type); nil drops it as a missing value would be.
    func datagram(_ bytes: [UInt8], index: Int) -> [UInt8]? {
        let modes = chosen(for: "notification \(index)")
        if modes.contains(.missingProperties) { return nil }
        if modes.contains(.oversizedValues) {
            return bytes + [UInt8](repeating: 0xA5, count: max(0, 4_096 - bytes.count))
        }
        return bytes
    }

    /// The modes that apply to one property or notification.
    private func chosen(for what: String) -> [HostileDBusMode] {
        let all = HostileDBusMode.allCases.filter(modes.contains)
        guard let seed, !all.isEmpty else { return all }
        var rng = SplitMix64(seed: seed ^ Self.fnv1a(salt + "|" + what))
        let pick = Int(rng.next() % UInt64(all.count * 2))
        return pick < all.count ? [all[pick]] : []
    }

    private static func fnv1a(_ text: String) -> UInt64 {
        text.utf8.reduce(0xcbf2_9ce4_8422_2325) { ($0 ^ UInt64($1)) &* 0x0000_0100_0000_01B3 }
    }

    /// One property under one mode; nil removes it.
    private static func distort(_ value: DBusValue, name: String, interface: String, _ mode: HostileDBusMode)
        -> DBusValue?
    {
        switch mode {
        case .wrongTypes: return wrongType(name: name, value)
        case .oversizedValues: return oversized(name: name, interface: interface, value)
        case .missingProperties: return missable(name: name, interface: interface) ? nil : value
        }
    }

    private static func missable(name: String, interface: String) -> Bool {
        switch interface {
        case BlueZ.device: return ["Address", "Name", "Alias", "UUIDs", "RSSI", "Paired"].contains(name)
        case BlueZ.gattCharacteristic: return ["Flags", "MTU", "Notifying"].contains(name)
        case BlueZ.gattService: return name == "Primary"
        default: return false
        }
    }

    private static func oversized(name: String, interface: String, _ value: DBusValue) -> DBusValue {
        switch name {
        case "Name": return .string(String(repeating: "micro:bit ", count: 6_554))
        case "Alias": return .string(String(repeating: "A", count: 65_536))
        case "UUIDs" where interface == BlueZ.device:
            return .strings(
                (0..<5_000).map {
                    Hex.number($0, digits: 8, prefix: false, uppercase: false) + "-0000-1000-8000-00805f9b34fb"
                })
        case "Value": return .bytes([UInt8](repeating: 0xA5, count: 4_096))
        default: return value
        }
    }

    private static func wrongType(name: String, _ value: DBusValue) -> DBusValue {
        switch (name, value) {
        case ("RSSI", .int16(let n)): return .string(String(n))
        case ("Connected", .bool(let b)), ("ServicesResolved", .bool(let b)), ("Paired", .bool(let b)):
            return .int32(b ? 1 : 0)
        case ("UUIDs", .array(_, let items)), ("Flags", .array(_, let items)):
            return .string(items.compactMap { try? $0.string() }.joined(separator: ","))
        case ("UUID", .string(let s)), ("Address", .string(let s)): return .bytes(Array(s.utf8))
        case ("MTU", .uint16(let n)): return .int32(Int32(n))
        case ("Service", .objectPath(let p)), ("Device", .objectPath(let p)): return .string(p)
        case ("Value", .bytes(let b)): return .array(elementSignature: "i", b.map { .int32(Int32($0)) })
        default: return value
        }
    }
}
