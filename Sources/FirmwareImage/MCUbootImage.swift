import Crypto
import Diagnostics

/// An MCUboot image: header, body, protected and unprotected TLV areas
/// (docs/protocols/mcumgr-smp.md §5), with its image hash checked the way the device computes it.
public struct MCUbootImage: Sendable, Equatable {
    /// What the hash check found.
    public enum HashCheck: Sendable, Equatable {
        /// The hash TLV matches the hash of header + body + protected TLVs.
        case valid
        /// The hash TLV says `stored`, the bytes hash to `computed`: the image is corrupt.
        case mismatch(stored: [UInt8], computed: [UInt8])
        /// The image has no SHA-256/384/512 TLV (e.g. a `--pure` signature).
        case absent
        /// The hash cannot be recomputed from the file (encrypted images hash the plaintext).
        case notCheckable(reason: String)
    }

    public let header: MCUbootHeader
    /// Entries of the protected area (empty when there is none).
    public let protectedTLVs: [MCUbootTLV]
    /// Entries of the unprotected area.
    public let unprotectedTLVs: [MCUbootTLV]
    /// Bytes from the header to the end of the unprotected TLV area; a file may carry
    /// padding (e.g. a whole slot) after them.
    public let length: Int
    /// The image bytes, `length` of them.
    public let bytes: [UInt8]
    public let hashCheck: HashCheck

    /// The body (the application) without header and TLVs.
    public var body: ArraySlice<UInt8> {
        bytes[Int(header.headerSize)..<(Int(header.headerSize) + Int(header.imageSize))]
    }

    /// The SHA-256 TLV value: the hash the device reports in its image list and expects
    /// in test/confirm requests. Nil when the image has no 32-byte SHA-256 TLV.
    public var reportedHash: [UInt8]? {
        unprotectedTLVs.first { $0.type == MCUbootTLV.Kind.sha256.rawValue && $0.value.count == 32 }?.value
    }

    /// The version from the header.
    public var version: MCUbootVersion { header.version }

    /// Reads an MCUboot image from the start of `bytes` (a `.bin`, or the flash bytes an
    /// Intel HEX file puts at the slot address). Trailing bytes after the TLVs are ignored.
    public init(bytes input: [UInt8]) throws {
        let header = try MCUbootHeader(decoding: input)
        let hashedEnd = Int(header.headerSize) + Int(header.imageSize)
        guard input.count >= hashedEnd else {
            throw FirmwareImageError.mcubootTruncated(size: input.count, needed: hashedEnd, what: "header and body")
        }
        var at = hashedEnd
        var protected: [MCUbootTLV] = []
        if header.protectedTLVSize > 0 {
            let area = try MCUbootTLV.decodeArea(.protected, in: input, at: at)
            guard area.total == Int(header.protectedTLVSize) else {
                throw FirmwareImageError.mcubootProtectedSizeMismatch(
                    header: header.protectedTLVSize, area: UInt16(area.total))
            }
            protected = area.tlvs
            at += area.total
        }
        let unprotected = try MCUbootTLV.decodeArea(.unprotected, in: input, at: at)
        let hashTLVs = unprotected.tlvs.filter { $0.type == MCUbootTLV.Kind.sha256.rawValue }
        guard hashTLVs.count <= 1 else { throw FirmwareImageError.mcubootSeveralHashes }

        self.header = header
        self.protectedTLVs = protected
        self.unprotectedTLVs = unprotected.tlvs
        self.length = at + unprotected.total
        self.bytes = Array(input[0..<length])
        self.hashCheck = Self.checkHash(bytes: bytes, header: header, tlvs: unprotected.tlvs)
    }

    /// Finds an MCUboot image in a memory image (e.g. an Intel HEX file of a signed
    /// image): it must start at the lowest address holding data and be contiguous.
    /// Returns the slot address and the image.
    public static func locate(in memory: MemoryImage) throws -> (address: UInt32, image: MCUbootImage) {
        guard let first = memory.segments.first else {
            throw FirmwareImageError.mcubootTruncated(size: 0, needed: MCUbootHeader.encodedSize, what: "header")
        }
        return (first.start, try MCUbootImage(bytes: first.bytes))
    }

    /// True when `bytes` starts with the MCUboot magic.
    public static func looksLikeMCUboot(_ bytes: [UInt8]) -> Bool {
        (try? LEBytes.u32(bytes, 0)) == MCUbootHeader.magic
    }

    /// The bytes the image hash covers: header (with padding), body and protected area.
    public var hashedBytes: ArraySlice<UInt8> {
        bytes[0..<(Int(header.headerSize) + Int(header.imageSize) + Int(header.protectedTLVSize))]
    }

    private static func checkHash(bytes: [UInt8], header: MCUbootHeader, tlvs: [MCUbootTLV]) -> HashCheck {
        let hashTypes: [UInt16] = [0x10, 0x11, 0x12]
        guard let stored = tlvs.first(where: { hashTypes.contains($0.type) }) else { return .absent }
        if header.flags.isEncrypted {
            return .notCheckable(reason: "the image is encrypted and its hash covers the plaintext")
        }
        let hashed = bytes[0..<(Int(header.headerSize) + Int(header.imageSize) + Int(header.protectedTLVSize))]
        let computed: [UInt8]
        switch stored.type {
        case 0x10: computed = Array(SHA256.hash(data: hashed))
        case 0x11: computed = Array(SHA384.hash(data: hashed))
        default: computed = Array(SHA512.hash(data: hashed))
        }
        return computed == stored.value ? .valid : .mismatch(stored: stored.value, computed: computed)
    }

    /// Builds an unsigned MCUboot image: a header (padded to `headerSize` with `padding`,
    /// the erased-flash value imgtool uses), the application, and an unprotected TLV area
    /// holding only the SHA-256 TLV, the way `imgtool sign --header-size … --pad-header`
    /// does without a key.
    public static func build(
        application: [UInt8], loadAddress: UInt32 = 0, version: MCUbootVersion,
        headerSize: UInt16 = 0x200, flags: MCUbootHeader.Flags = [],
        padding: UInt8 = 0xFF
    ) throws -> [UInt8] {
        guard Int(headerSize) >= MCUbootHeader.encodedSize else {
            throw FirmwareImageError.mcubootCannotBuild("the header size \(headerSize) is below the 32-byte header")
        }
        guard let size = UInt32(exactly: application.count) else {
            throw FirmwareImageError.mcubootCannotBuild("the application is larger than 4 GiB")
        }
        guard !flags.isEncrypted else {
            throw FirmwareImageError.mcubootCannotBuild("encrypted images need imgtool and a key")
        }
        let header = MCUbootHeader(
            loadAddress: loadAddress, headerSize: headerSize, protectedTLVSize: 0,
            imageSize: size, flags: flags, version: version)
        var out = header.encoded()
        out += [UInt8](repeating: padding, count: Int(headerSize) - out.count)
        out += application
        let hash = Array(SHA256.hash(data: out))
        out += MCUbootTLV.encodeArea(
            .unprotected, [MCUbootTLV(area: .unprotected, type: MCUbootTLV.Kind.sha256.rawValue, value: hash)])
        return out
    }
}
