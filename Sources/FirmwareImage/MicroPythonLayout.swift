import Diagnostics

/// The MicroPython flash layout table (docs/protocols/partial-flashing.md §5.5).
///
/// A 16-byte header ends exactly at a page boundary: magic 0x597F30FE, u16 version,
/// u16 table length (n × 16), u16 region count, u16 log2(page size), magic 0xC1B1D79D.
/// The n 16-byte region records sit just below it: u8 id, u8 hash type, u16 start page,
/// u32 length, 8 bytes of hash data. The device reports these regions in its
/// partial-flashing REGION_INFO answers; a client flashes the file-system region.
public struct MicroPythonLayout: Sendable, Equatable {
    public static let headerMagic: UInt32 = 0x597F_30FE
    public static let footerMagic: UInt32 = 0xC1B1_D79D

    /// One region of the table.
    public struct Region: Sendable, Equatable {
        /// What the region holds.
        public enum Kind: UInt8, Sendable {
            case softDevice = 1, application = 2, fileSystem = 3
        }
        /// How the 8 hash bytes are to be read.
        public enum HashType: UInt8, Sendable {
            /// No hash.
            case none = 0
            /// The 8 bytes are the hash.
            case verbatim = 1
            /// The first 4 bytes point to a NUL-terminated string; the hash is its CRC-32.
            case stringPointer = 2
        }

        public var id: UInt8
        public var hashTypeValue: UInt8
        public var startPage: UInt16
        public var startAddress: UInt32
        public var length: UInt32
        /// The 8 hash bytes as stored in the table.
        public var hashData: [UInt8]
        /// For `.stringPointer`: the string the pointer names, when the image holds it.
        public var hashString: String?

        public var kind: Kind? { Kind(rawValue: id) }
        public var hashType: HashType? { HashType(rawValue: hashTypeValue) }
        public var range: Range<UInt32> { startAddress..<(startAddress &+ length) }

        /// The 8-byte hash the device reports for this region: the stored bytes for
        /// `.verbatim`, the CRC-32 of the string (little-endian, zero padded) for
        /// `.stringPointer`, zeros otherwise or when the string is not in the image.
        public var deviceHash: [UInt8] {
            switch hashType {
            case .verbatim?: return hashData
            case .stringPointer?:
                guard let s = hashString else { return [UInt8](repeating: 0, count: 8) }
                let crc = LayoutCRC32.checksum(Array(s.utf8))
                return [
                    UInt8(crc & 0xFF), UInt8(crc >> 8 & 0xFF), UInt8(crc >> 16 & 0xFF), UInt8(crc >> 24), 0, 0, 0, 0
                ]
            default: return [UInt8](repeating: 0, count: 8)
            }
        }
    }

    /// Address of the 16-byte header.
    public let headerAddress: UInt32
    public let version: UInt16
    public let pageSize: UInt32
    public let regions: [Region]

    /// The file-system region (id 3), which partial flashing writes.
    public var fileSystem: Region? { regions.first { $0.kind == .fileSystem } }

    /// One line for `inspect`, e.g. "MicroPython, file-system region at 0x6D000-0x73000 (24 KiB)".
    public var summary: String {
        guard let fs = fileSystem else {
            return "MicroPython layout table at \(Hex.address(headerAddress)), no file-system region"
        }
        return
            "MicroPython, file-system region at \(Hex.address(fs.startAddress))-\(Hex.address(fs.range.upperBound)) (\(fs.length / 1024) KiB)"
    }

    /// Finds the layout table in `image`: the header must end at a page boundary of
    /// `family`'s flash and carry both magics, version 1, a consistent table length and
    /// the family's page size. Returns nil when the image has no such table.
    public static func find(in image: MemoryImage, family: ChipFamily) -> MicroPythonLayout? {
        let page = family.pageSize
        let flash = family.layout.flash
        // Pages holding data; a table may end exactly at such a page's end.
        for pageStart in image.alignedChunks(size: page, in: flash).reversed() {
            let header = pageStart + page - 16
            if let layout = decode(image: image, headerAddress: header, pageSize: page) { return layout }
        }
        return nil
    }

    /// Decodes the table whose header is at `headerAddress`, or nil when it is not one.
    static func decode(image: MemoryImage, headerAddress: UInt32, pageSize: UInt32) -> MicroPythonLayout? {
        guard image.hasData(in: headerAddress..<(headerAddress + 16)) else { return nil }
        let h = image.read(headerAddress..<(headerAddress + 16))
        guard (try? LEBytes.u32(h, 0)) == headerMagic, (try? LEBytes.u32(h, 12)) == footerMagic,
            let version = try? LEBytes.u16(h, 4), let tableLength = try? LEBytes.u16(h, 6),
            let count = try? LEBytes.u16(h, 8), let log2 = try? LEBytes.u16(h, 10),
            version == 1, count >= 1, count <= 16, Int(tableLength) == Int(count) * 16,
            log2 < 32, UInt32(1) << log2 == pageSize, headerAddress >= UInt32(tableLength)
        else { return nil }
        let tableStart = headerAddress - UInt32(tableLength)
        let table = image.read(tableStart..<headerAddress)
        var regions: [Region] = []
        for i in 0..<Int(count) {
            let o = i * 16
            guard let startPage = try? LEBytes.u16(table, o + 2), let length = try? LEBytes.u32(table, o + 4) else {
                return nil
            }
            var region = Region(
                id: table[o], hashTypeValue: table[o + 1], startPage: startPage,
                startAddress: UInt32(startPage) << log2, length: length,
                hashData: Array(table[(o + 8)..<(o + 16)]), hashString: nil)
            if region.hashType == .stringPointer {
                region.hashString = (try? LEBytes.u32(region.hashData, 0)).flatMap { cString(in: image, at: $0) }
            }
            regions.append(region)
        }
        return MicroPythonLayout(headerAddress: headerAddress, version: version, pageSize: pageSize, regions: regions)
    }

    /// The NUL-terminated string at `address` (at most 256 bytes), or nil.
    private static func cString(in image: MemoryImage, at address: UInt32) -> String? {
        var bytes: [UInt8] = []
        var a = address
        while bytes.count < 256, let b = image.byte(at: a) {
            if b == 0 { return String(decoding: bytes, as: UTF8.self) }
            bytes.append(b)
            let (next, overflow) = a.addingReportingOverflow(1)
            if overflow { break }
            a = next
        }
        return nil
    }
}

/// CRC-32/ISO-HDLC (zlib `crc32`): reflected polynomial 0xEDB88320, init and final XOR 0xFFFFFFFF.
enum LayoutCRC32 {
    private static let table: [UInt32] = (0..<256).map { n in
        var c = UInt32(n)
        for _ in 0..<8 { c = c & 1 != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
        return c
    }

    static func checksum(_ bytes: [UInt8]) -> UInt32 {
        var c: UInt32 = 0xFFFF_FFFF
        for b in bytes { c = table[Int((c ^ UInt32(b)) & 0xFF)] ^ (c >> 8) }
        return c ^ 0xFFFF_FFFF
    }
}
