/// The chip family of a board: it fixes the flash page size and the memory layout.
public enum ChipFamily: String, Sendable, CaseIterable, Codable {
    /// nRF51822: micro:bit V1, Calliope mini 1 and 2. 1 KiB pages, DAL runtime.
    case nrf51
    /// nRF52833: micro:bit V2, Calliope mini 3. 4 KiB pages, CODAL runtime.
    case nrf52833

    public var pageSize: UInt32 { self == .nrf51 ? 1024 : 4096 }

    /// The memory layout the stock bootloader and runtime use
    /// (docs/protocols/partial-flashing.md §5.1, §7).
    public var layout: MemoryLayout {
        switch self {
        case .nrf51:
            return MemoryLayout(
                flashSize: 0x40000, applicationStart: 0x18000, applicationEnd: 0x3C000,
                scratchPage: 0x3B400, bootloaderStart: 0x3C000, pageSize: 1024)
        case .nrf52833:
            return MemoryLayout(
                flashSize: 0x80000, applicationStart: 0x1C000, applicationEnd: 0x77000,
                scratchPage: 0x73000, bootloaderStart: 0x77000, pageSize: 4096)
        }
    }

    /// The Universal Hex board IDs whose section holds this family's image.
    public var universalHexBoardIDs: [UInt16] {
        self == .nrf51 ? [0x9900, 0x9901] : [0x9903, 0x9904, 0x9905, 0x9906]
    }

    /// The UF2 family ID, where one exists (there is none for nRF51).
    public var uf2FamilyID: UInt32? { self == .nrf52833 ? 0x621E_937A : nil }

    public var chipName: String { self == .nrf51 ? "nRF51822" : "nRF52833" }
}

/// Where things live in a board's flash.
public struct MemoryLayout: Sendable, Equatable, Codable {
    /// Total flash size in bytes.
    public let flashSize: UInt32
    /// First address of the application (after MBR and SoftDevice).
    public let applicationStart: UInt32
    /// One past the last application address (the bootloader start).
    public let applicationEnd: UInt32
    /// The runtime's scratch page: the partial-flashing program region ends below it.
    public let scratchPage: UInt32
    public let bootloaderStart: UInt32
    public let pageSize: UInt32

    public var application: Range<UInt32> { applicationStart..<applicationEnd }
    public var flash: Range<UInt32> { 0..<flashSize }
}

/// A board, named the way users name it.
public enum Board: String, Sendable, CaseIterable, Codable {
    case microbitV1 = "microbit-v1"
    case microbitV2 = "microbit-v2"
    case calliopeMini1 = "calliope-mini-1"
    case calliopeMini2 = "calliope-mini-2"
    case calliopeMini3 = "calliope-mini-3"

    public var family: ChipFamily {
        switch self {
        case .microbitV1, .calliopeMini1, .calliopeMini2: return .nrf51
        case .microbitV2, .calliopeMini3: return .nrf52833
        }
    }

    public var displayName: String {
        switch self {
        case .microbitV1: return "micro:bit V1"
        case .microbitV2: return "micro:bit V2"
        case .calliopeMini1: return "Calliope mini 1"
        case .calliopeMini2: return "Calliope mini 2"
        case .calliopeMini3: return "Calliope mini 3"
        }
    }

    /// Accepts the canonical names and common spellings (`v2`, `microbit2`, `mini3`, `calliope3`).
    public init?(userName: String) {
        let key = userName.lowercased().filter { $0.isLetter || $0.isNumber }
        let aliases: [String: Board] = [
            "microbitv1": .microbitV1, "microbit1": .microbitV1, "v1": .microbitV1,
            "microbitv2": .microbitV2, "microbit2": .microbitV2, "v2": .microbitV2,
            "calliopemini1": .calliopeMini1, "calliope1": .calliopeMini1, "mini1": .calliopeMini1,
            "calliopemini2": .calliopeMini2, "calliope2": .calliopeMini2, "mini2": .calliopeMini2,
            "calliopemini3": .calliopeMini3, "calliope3": .calliopeMini3, "mini3": .calliopeMini3
        ]
        guard let b = aliases[key] else { return nil }
        self = b
    }
}
