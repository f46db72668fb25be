/// A Bluetooth UUID, stored as the canonical lower-case 128-bit string.
///
/// 16-bit and 32-bit short forms are expanded with the Bluetooth base UUID,
/// so `BLEUUID("FE59") == BLEUUID("0000fe59-0000-1000-8000-00805f9b34fb")`.
public struct BLEUUID: Hashable, Sendable, Codable, CustomStringConvertible, Comparable {
    public let uuidString: String

    public init(_ text: String) {
        let t = text.lowercased()
        switch t.count {
        case 4: uuidString = "0000\(t)-0000-1000-8000-00805f9b34fb"
        case 8: uuidString = "\(t)-0000-1000-8000-00805f9b34fb"
        default: uuidString = t
        }
    }

    /// Parses and validates a UUID from outside input; nil if it is not one.
    public init?(validating text: String) {
        let hex = Set("0123456789abcdef")
        let t = text.lowercased()
        if t.count == 4 || t.count == 8 {
            guard t.allSatisfy(hex.contains) else { return nil }
        } else {
            let parts = t.split(separator: "-", omittingEmptySubsequences: false)
            guard parts.map(\.count) == [8, 4, 4, 4, 12], parts.allSatisfy({ $0.allSatisfy(hex.contains) }) else {
                return nil
            }
        }
        self.init(t)
    }

    public var description: String { uuidString.uppercased() }
    public static func < (a: BLEUUID, b: BLEUUID) -> Bool { a.uuidString < b.uuidString }
}

/// One characteristic of one service.
public struct GATTCharacteristic: Hashable, Sendable, Codable, CustomStringConvertible {
    public let service: BLEUUID
    public let characteristic: BLEUUID
    public init(service: BLEUUID, characteristic: BLEUUID) {
        self.service = service
        self.characteristic = characteristic
    }
    public var description: String { "\(characteristic) in service \(service)" }
}
