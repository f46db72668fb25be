import Diagnostics

/// One type-length-value entry after an MCUboot image (`{u16 type, u16 len, value}`, little-endian).
public struct MCUbootTLV: Sendable, Equatable {
    /// Well-known TLV types (MCUboot `image.h`).
    public enum Kind: UInt16, Sendable {
        case keyHash = 0x01, publicKey = 0x02
        case sha256 = 0x10, sha384 = 0x11, sha512 = 0x12
        case rsa2048PSS = 0x20, ecdsa224 = 0x21, ecdsaSignature = 0x22, rsa3072PSS = 0x23, ed25519 = 0x24, sigPure =
            0x25
        case encRSA2048 = 0x30, encKW = 0x31, encEC256 = 0x32, encX25519 = 0x33, encX25519SHA512 = 0x34
        case dependency = 0x40, securityCounter = 0x50, bootRecord = 0x60
        case decompressedSize = 0x70, decompressedSHA = 0x71, decompressedSignature = 0x72, compressedDecryptedSize =
            0x73
    }

    /// Which of the two TLV areas an entry sits in.
    public enum Area: UInt16, Sendable {
        /// Covered by the image hash and signature (`IMAGE_TLV_PROT_INFO_MAGIC`).
        case protected = 0x6908
        /// After the protected area, not hashed (`IMAGE_TLV_INFO_MAGIC`).
        case unprotected = 0x6907
    }

    public var area: Area
    public var type: UInt16
    public var value: [UInt8]

    /// The type as a known kind, or nil for vendor and unknown types.
    public var kind: Kind? { Kind(rawValue: type) }

    public init(area: Area, type: UInt16, value: [UInt8]) {
        self.area = area
        self.type = type
        self.value = value
    }

    /// The `{type, len, value}` bytes (without the area info header).
    public func encoded() -> [UInt8] {
        var out = [UInt8]()
        LEBytes.put(&out, type)
        LEBytes.put(&out, UInt16(truncatingIfNeeded: value.count))
        return out + value
    }

    /// Decodes one TLV area starting at `offset`: the 4-byte info header `{magic, total}`
    /// then TLVs up to `offset + total`. Returns the entries and the area's total length.
    static func decodeArea(_ area: Area, in bytes: [UInt8], at offset: Int) throws -> (tlvs: [MCUbootTLV], total: Int) {
        guard offset >= 0, bytes.count - offset >= 4 else {
            throw FirmwareImageError.mcubootTruncated(size: bytes.count, needed: offset + 4, what: "TLV area header")
        }
        let magic = try LEBytes.u16(bytes, offset)
        guard magic == area.rawValue else {
            throw FirmwareImageError.mcubootBadTLVArea(offset: offset, expected: area.rawValue, found: magic)
        }
        let total = try Int(LEBytes.u16(bytes, offset + 2))
        guard total >= 4 else {
            throw FirmwareImageError.mcubootTLVOverrun(offset: offset, type: magic, length: UInt16(total))
        }
        let end = offset + total
        guard end <= bytes.count else {
            throw FirmwareImageError.mcubootTruncated(size: bytes.count, needed: end, what: "TLV area")
        }
        var tlvs: [MCUbootTLV] = []
        var at = offset + 4
        while at < end {
            guard end - at >= 4 else {
                throw FirmwareImageError.mcubootTLVOverrun(offset: at, type: 0, length: UInt16(end - at))
            }
            let type = try LEBytes.u16(bytes, at)
            let length = try LEBytes.u16(bytes, at + 2)
            let valueStart = at + 4
            guard end - valueStart >= Int(length) else {
                throw FirmwareImageError.mcubootTLVOverrun(offset: at, type: type, length: length)
            }
            tlvs.append(
                MCUbootTLV(area: area, type: type, value: Array(bytes[valueStart..<(valueStart + Int(length))])))
            at = valueStart + Int(length)
        }
        return (tlvs, total)
    }

    /// The bytes of an area holding `tlvs`: info header then entries.
    static func encodeArea(_ area: Area, _ tlvs: [MCUbootTLV]) -> [UInt8] {
        let body = tlvs.flatMap { $0.encoded() }
        var out = [UInt8]()
        LEBytes.put(&out, area.rawValue)
        LEBytes.put(&out, UInt16(truncatingIfNeeded: body.count + 4))
        return out + body
    }
}
