import FirmwareImage

/// CRC-32/ISO-HDLC, as zlib's `crc32` computes it: reflected polynomial 0xEDB88320,
/// initial value and final XOR 0xFFFFFFFF. Secure DFU checks every object with it:
/// one running value over the whole image, and one over the init command.
public struct CRC32: Sendable, Equatable {
    /// The CRC of everything fed so far (0 before any byte, like `zlib.crc32(b"")`).
    public private(set) var value: UInt32 = 0

    public init() {}

    /// Feeds more bytes.
    public mutating func update<S: Sequence>(_ bytes: S) where S.Element == UInt8 {
        var c = ~value
        for b in bytes { c = Self.table[Int((c ^ UInt32(b)) & 0xFF)] ^ (c >> 8) }
        value = ~c
    }

    /// The CRC-32 of `bytes`.
    public static func checksum<S: Sequence>(_ bytes: S) -> UInt32 where S.Element == UInt8 {
        var crc = CRC32()
        crc.update(bytes)
        return crc.value
    }

    static let table: [UInt32] = (0..<256).map { n -> UInt32 in
        var c = UInt32(n)
        for _ in 0..<8 { c = (c & 1) != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
        return c
    }
}

/// CRC-16/CCITT-FALSE: polynomial 0x1021, initial value 0xFFFF, no reflection, no final XOR
/// (check value 0x29B1 for ASCII "123456789"). The legacy DFU init packet carries it for the
/// whole application binary.
public enum CRC16 {
    public static func ccittFalse<S: Sequence>(_ bytes: S) -> UInt16 where S.Element == UInt8 {
        var crc: UInt16 = 0xFFFF
        for b in bytes {
            crc ^= UInt16(b) << 8
            for _ in 0..<8 { crc = (crc & 0x8000) != 0 ? (crc << 1) ^ 0x1021 : crc << 1 }
        }
        return crc
    }
}
