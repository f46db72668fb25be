import Diagnostics

/// One 512-byte block of a UF2 file (Microsoft UF2 specification).
///
/// All header fields are little-endian 32-bit words: two start magics, flags, target
/// address, payload size, block number, total block count, file size or family ID;
/// then 476 bytes of data (the payload first, zero padded) and the end magic.
public struct UF2Block: Sendable, Equatable {
    /// Size of every block in a UF2 file.
    public static let size = 512
    /// The most payload bytes a block can carry.
    public static let maxPayloadSize = 476
    public static let magicStart0: UInt32 = 0x0A32_4655
    public static let magicStart1: UInt32 = 0x9E5D_5157
    public static let magicEnd: UInt32 = 0x0AB1_6F30

    /// The block's flag word.
    public struct Flags: OptionSet, Sendable, Hashable {
        public let rawValue: UInt32
        public init(rawValue: UInt32) { self.rawValue = rawValue }
        /// The block is not for the main flash (for example a comment or debug data): skip it.
        public static let notMainFlash = Flags(rawValue: 0x0000_0001)
        /// The block is part of a file container; the last word is the file size.
        public static let fileContainer = Flags(rawValue: 0x0000_1000)
        /// The last header word is a chip family ID.
        public static let familyIDPresent = Flags(rawValue: 0x0000_2000)
        /// The last 24 data bytes hold an address, a length and an MD5 checksum.
        public static let md5Present = Flags(rawValue: 0x0000_4000)
        /// Extension tags follow the payload.
        public static let extensionTagsPresent = Flags(rawValue: 0x0000_8000)
    }

    public var flags: Flags
    /// Where the payload goes in flash.
    public var targetAddress: UInt32
    /// The bytes written at `targetAddress` (at most 476).
    public var payload: [UInt8]
    /// Position of this block in the file, from 0.
    public var blockNumber: UInt32
    /// Number of blocks in the file.
    public var blockCount: UInt32
    /// The family ID when `.familyIDPresent` is set, the file size for file containers, else 0.
    public var fileSizeOrFamilyID: UInt32
    /// The 476-byte data area after the payload (padding, MD5 or extension tags), kept so
    /// that a decoded block encodes back to the same bytes.
    public var trailer: [UInt8]

    /// The chip family this block is for, when the block names one.
    public var familyID: UInt32? { flags.contains(.familyIDPresent) ? fileSizeOrFamilyID : nil }

    public init(
        flags: Flags, targetAddress: UInt32, payload: [UInt8], blockNumber: UInt32,
        blockCount: UInt32, fileSizeOrFamilyID: UInt32, trailer: [UInt8] = []
    ) {
        self.flags = flags
        self.targetAddress = targetAddress
        self.payload = payload
        self.blockNumber = blockNumber
        self.blockCount = blockCount
        self.fileSizeOrFamilyID = fileSizeOrFamilyID
        self.trailer = trailer
    }

    /// Decodes the block at `offset` of `bytes`; `index` is its position in the file, for messages.
    /// Checks the three magics and the payload size.
    public init(decoding bytes: [UInt8], at offset: Int, index: Int) throws {
        guard offset >= 0, bytes.count - offset >= Self.size else {
            throw FirmwareImageError.uf2SizeNotBlockMultiple(size: bytes.count)
        }
        func word(_ at: Int) throws -> UInt32 { try LEBytes.u32(bytes, offset + at) }
        for (at, magic) in [(0, Self.magicStart0), (4, Self.magicStart1), (508, Self.magicEnd)] {
            let found = try word(at)
            guard found == magic else { throw FirmwareImageError.uf2BadMagic(block: index, offset: at, found: found) }
        }
        let size = try word(16)
        guard size <= UInt32(Self.maxPayloadSize) else {
            throw FirmwareImageError.uf2PayloadTooLarge(block: index, size: size)
        }
        flags = try Flags(rawValue: word(8))
        targetAddress = try word(12)
        blockNumber = try word(20)
        blockCount = try word(24)
        fileSizeOrFamilyID = try word(28)
        let dataStart = offset + 32
        payload = Array(bytes[dataStart..<(dataStart + Int(size))])
        trailer = Array(bytes[(dataStart + Int(size))..<(dataStart + Self.maxPayloadSize)])
    }

    /// The 512 bytes of this block. The data area after the payload is `trailer`,
    /// zero-filled or cut to fit.
    public func encoded() -> [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(Self.size)
        func put(_ v: UInt32) { out += [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 24)] }
        let body = Array(payload.prefix(Self.maxPayloadSize))
        put(Self.magicStart0); put(Self.magicStart1); put(flags.rawValue); put(targetAddress)
        put(UInt32(body.count)); put(blockNumber); put(blockCount); put(fileSizeOrFamilyID)
        out += body
        let room = Self.maxPayloadSize - body.count
        out += trailer.prefix(room)
        out += [UInt8](repeating: 0, count: room - min(room, trailer.count))
        put(Self.magicEnd)
        return out
    }
}

/// UF2 family IDs this tool knows by name (uf2 `utils/uf2families.json`).
public enum UF2Family {
    public static let nrf52833: UInt32 = 0x621E_937A
    public static let nrf52840: UInt32 = 0xADA5_2840
    public static let nrf52: UInt32 = 0x1B57_745F
    public static let nrf52832: UInt32 = 0x7272_1D4E
    public static let nrf52820: UInt32 = 0x820D_9A5F

    /// The family's name, e.g. "nRF52833", or nil for an ID not in the list.
    public static func name(of id: UInt32) -> String? {
        switch id {
        case nrf52833: return "nRF52833"
        case nrf52840: return "nRF52840"
        case nrf52: return "nRF52"
        case nrf52832: return "nRF52832xxAA"
        case nrf52820: return "nRF52820"
        default: return nil
        }
    }
}
