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

/// The services and characteristics bitflash speaks to.
public enum KnownGATT {
    /// micro:bit / Calliope partial flashing (docs/protocols/partial-flashing.md §1).
    public static let partialFlashingService = BLEUUID("e97dd91d-251d-470a-a062-fa1922dfa9a8")
    public static let partialFlashing = GATTCharacteristic(
        service: partialFlashingService, characteristic: BLEUUID("e97d3b10-251d-470a-a062-fa1922dfa9a8"))

    /// McuMgr SMP over GATT (docs/protocols/mcumgr-smp.md).
    public static let smpService = BLEUUID("8d53dc1d-1db7-4cd3-868b-8a527460aa84")
    public static let smp = GATTCharacteristic(
        service: smpService, characteristic: BLEUUID("da2e7828-fbce-4e01-ae9e-261174997c48"))

    /// micro:bit DFU control: write 0x01 to reboot into the legacy bootloader.
    public static let microbitDFUControlService = BLEUUID("e95d93b0-251d-470a-a062-fa1922dfa9a8")
    public static let microbitDFUControl = GATTCharacteristic(
        service: microbitDFUControlService, characteristic: BLEUUID("e95d93b1-251d-470a-a062-fa1922dfa9a8"))

    /// Nordic Secure DFU (buttonless entry and bootloader).
    public static let secureDFUService = BLEUUID("fe59")
    /// Nordic legacy DFU (nRF51 bootloader).
    public static let legacyDFUService = BLEUUID("00001530-1212-efde-1523-785feabcd123")
}
