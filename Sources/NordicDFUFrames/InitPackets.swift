import Crypto
import Diagnostics
import FirmwareImage

/// The 56-byte `microbit_app` init command of the micro:bit V2 / Calliope mini 3 secure
/// bootloader (docs/protocols/nordic-dfu.md §2.7): magic, version 1, application size, hash size and the
/// SHA-256 of the application binary with its bytes in reverse order, all little-endian.
public struct MicrobitAppInitPacket: Sendable, Equatable {
    public static let magic = Array("microbit_app".utf8)
    public static let size = 56

    public var version: UInt32
    public var applicationSize: UInt32
    /// 32: the bootloader checks the hash; 0: it does not.
    public var hashSize: UInt32
    /// The hash as stored on the air: SHA-256 of the binary, reversed.
    public var storedHash: [UInt8]

    public init(version: UInt32 = 1, applicationSize: UInt32, hashSize: UInt32, storedHash: [UInt8]) {
        self.version = version
        self.applicationSize = applicationSize
        self.hashSize = hashSize
        self.storedHash = storedHash
    }

    /// The init packet for `application`, with its reversed SHA-256.
    public init(application: [UInt8]) {
        self.init(
            applicationSize: UInt32(application.count), hashSize: 32,
            storedHash: Array(SHA256.hash(data: application)).reversed())
    }

    /// The SHA-256 the bootloader compares with (the stored bytes reversed back).
    public var sha256: [UInt8] { storedHash.reversed() }

    public var bytes: [UInt8] {
        var hash = storedHash.prefix(32) + [UInt8](repeating: 0, count: max(0, 32 - storedHash.count))
        hash = hash.prefix(32)
        return Self.magic + LEBytes.bytes(version) + LEBytes.bytes(applicationSize) + LEBytes.bytes(hashSize) + hash
    }

    /// Decodes the struct. The magic and the length are checked; the fields are not
    /// (the bootloader's validation is its own business).
    public init(bytes: [UInt8]) throws {
        guard bytes.count == Self.size else {
            throw NordicDFUError.malformedFrame(
                "microbit_app init packet of \(bytes.count) bytes (expected \(Self.size))")
        }
        guard Array(bytes.prefix(12)) == Self.magic else {
            throw NordicDFUError.malformedFrame("init packet without the microbit_app magic")
        }
        try self.init(
            version: LEBytes.u32(bytes, 12), applicationSize: LEBytes.u32(bytes, 16), hashSize: LEBytes.u32(bytes, 20),
            storedHash: Array(bytes[24..<56]))
    }
}

/// The 14-byte init packet of the legacy (SDK 8) bootloader (docs/protocols/nordic-dfu.md §3.4).
public struct LegacyInitPacket: Sendable, Equatable {
    public static let size = 14
    /// FWID of the S110 8.0.0 SoftDevice of micro:bit V1 and Calliope mini 1/2.
    public static let s110v8: UInt16 = 0x0064
    /// "Any SoftDevice".
    public static let anySoftDevice: UInt16 = 0xFFFE

    public var deviceType: UInt16
    public var deviceRevision: UInt16
    public var applicationVersion: UInt32
    public var softDevice: UInt16
    /// CRC-16/CCITT-FALSE of the application binary.
    public var crc16: UInt16

    public init(
        deviceType: UInt16 = 0xFFFF, deviceRevision: UInt16 = 0xFFFF, applicationVersion: UInt32 = 0xFFFF_FFFF,
        softDevice: UInt16 = s110v8, crc16: UInt16
    ) {
        self.deviceType = deviceType
        self.deviceRevision = deviceRevision
        self.applicationVersion = applicationVersion
        self.softDevice = softDevice
        self.crc16 = crc16
    }

    /// The init packet clients send for `application`.
    public init(application: [UInt8]) {
        self.init(crc16: CRC16.ccittFalse(application))
    }

    public var bytes: [UInt8] {
        LEBytes.bytes(deviceType) + LEBytes.bytes(deviceRevision) + LEBytes.bytes(applicationVersion)
            + LEBytes.bytes(UInt16(1)) + LEBytes.bytes(softDevice)
            + LEBytes.bytes(crc16)
    }

    /// Decodes the packet; a SoftDevice list of any length other than 1 is refused.
    public init(bytes: [UInt8]) throws {
        guard bytes.count == Self.size else {
            throw NordicDFUError.malformedFrame("legacy init packet of \(bytes.count) bytes (expected \(Self.size))")
        }
        let softDevices = try LEBytes.u16(bytes, 8)
        guard softDevices == 1 else {
            throw NordicDFUError.malformedFrame("legacy init packet lists \(softDevices) SoftDevices (expected 1)")
        }
        try self.init(
            deviceType: LEBytes.u16(bytes, 0), deviceRevision: LEBytes.u16(bytes, 2),
            applicationVersion: LEBytes.u32(bytes, 4),
            softDevice: LEBytes.u16(bytes, 10), crc16: LEBytes.u16(bytes, 12))
    }
}
