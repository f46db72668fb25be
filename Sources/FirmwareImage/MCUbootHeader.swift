import Diagnostics

/// The version in an MCUboot image header: `major.minor.revision+build`.
public struct MCUbootVersion: Sendable, Equatable, Hashable, CustomStringConvertible {
    public var major: UInt8
    public var minor: UInt8
    public var revision: UInt16
    public var build: UInt32

    public init(major: UInt8, minor: UInt8 = 0, revision: UInt16 = 0, build: UInt32 = 0) {
        self.major = major
        self.minor = minor
        self.revision = revision
        self.build = build
    }

    /// Reads `1.2.3+4`, `1.2.3`, `1.2` or `1` (imgtool's `--version` syntax); nil otherwise.
    public init?(_ text: String) {
        let parts = text.split(separator: "+", omittingEmptySubsequences: false)
        guard parts.count <= 2 else { return nil }
        let numbers = parts[0].split(separator: ".", omittingEmptySubsequences: false)
        guard (1...3).contains(numbers.count),
            let major = UInt8(numbers[0])
        else { return nil }
        var minor: UInt8 = 0, revision: UInt16 = 0, build: UInt32 = 0
        if numbers.count > 1 { guard let m = UInt8(numbers[1]) else { return nil }; minor = m }
        if numbers.count > 2 { guard let r = UInt16(numbers[2]) else { return nil }; revision = r }
        if parts.count == 2 { guard let b = UInt32(parts[1]) else { return nil }; build = b }
        self.init(major: major, minor: minor, revision: revision, build: build)
    }

    /// `1.2.3+4`, the way imgtool and the McuMgr tools print it.
    public var description: String { "\(major).\(minor).\(revision)+\(build)" }
}

/// The 32-byte MCUboot image header (little-endian; MCUboot `image.h`).
public struct MCUbootHeader: Sendable, Equatable {
    /// `ih_magic` of current images.
    public static let magic: UInt32 = 0x96F3_B83D
    /// `ih_magic` of legacy v1 images.
    public static let legacyMagic: UInt32 = 0x96F3_B83C
    /// Bytes the header fields take; `headerSize` may be larger (zero padded).
    public static let encodedSize = 32

    /// Header flags (`IMAGE_F_*`).
    public struct Flags: OptionSet, Sendable, Hashable {
        public let rawValue: UInt32
        public init(rawValue: UInt32) { self.rawValue = rawValue }
        public static let pic = Flags(rawValue: 0x01)
        public static let encryptedAES128 = Flags(rawValue: 0x04)
        public static let encryptedAES256 = Flags(rawValue: 0x08)
        public static let nonBootable = Flags(rawValue: 0x10)
        public static let ramLoad = Flags(rawValue: 0x20)
        public static let romFixed = Flags(rawValue: 0x100)
        public static let compressedLZMA1 = Flags(rawValue: 0x200)
        public static let compressedLZMA2 = Flags(rawValue: 0x400)
        public static let compressedARMThumb = Flags(rawValue: 0x800)
        /// Either encryption flag.
        public var isEncrypted: Bool { !intersection([.encryptedAES128, .encryptedAES256]).isEmpty }
    }

    public var loadAddress: UInt32
    /// Bytes before the image body, header included (Zephyr builds: 0x200).
    public var headerSize: UInt16
    /// Size of the protected TLV area including its 4-byte info header; 0 when absent.
    public var protectedTLVSize: UInt16
    /// Size of the image body.
    public var imageSize: UInt32
    public var flags: Flags
    public var version: MCUbootVersion

    public init(
        loadAddress: UInt32 = 0, headerSize: UInt16 = 0x200, protectedTLVSize: UInt16 = 0,
        imageSize: UInt32, flags: Flags = [], version: MCUbootVersion
    ) {
        self.loadAddress = loadAddress
        self.headerSize = headerSize
        self.protectedTLVSize = protectedTLVSize
        self.imageSize = imageSize
        self.flags = flags
        self.version = version
    }

    /// Decodes the header at the start of `bytes`.
    public init(decoding bytes: [UInt8]) throws {
        guard bytes.count >= Self.encodedSize else {
            throw FirmwareImageError.mcubootTruncated(size: bytes.count, needed: Self.encodedSize, what: "header")
        }
        let magic = try LEBytes.u32(bytes, 0)
        if magic == Self.legacyMagic { throw FirmwareImageError.mcubootLegacyMagic }
        guard magic == Self.magic else { throw FirmwareImageError.mcubootBadMagic(found: magic) }
        loadAddress = try LEBytes.u32(bytes, 4)
        headerSize = try LEBytes.u16(bytes, 8)
        guard Int(headerSize) >= Self.encodedSize else { throw FirmwareImageError.mcubootHeaderTooSmall(headerSize) }
        protectedTLVSize = try LEBytes.u16(bytes, 10)
        imageSize = try LEBytes.u32(bytes, 12)
        flags = try Flags(rawValue: LEBytes.u32(bytes, 16))
        version = try MCUbootVersion(
            major: bytes[20], minor: bytes[21], revision: LEBytes.u16(bytes, 22), build: LEBytes.u32(bytes, 24))
    }

    /// The 32 header bytes (padding word zero).
    public func encoded() -> [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(Self.encodedSize)
        LEBytes.put(&out, Self.magic); LEBytes.put(&out, loadAddress); LEBytes.put(&out, headerSize);
        LEBytes.put(&out, protectedTLVSize)
        LEBytes.put(&out, imageSize); LEBytes.put(&out, flags.rawValue)
        out += [version.major, version.minor]
        LEBytes.put(&out, version.revision); LEBytes.put(&out, version.build); LEBytes.put(&out, UInt32(0))
        return out
    }
}
