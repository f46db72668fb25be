import Diagnostics

/// The MakeCode program region of a board image: what partial flashing sends.
///
/// The program starts at a page-aligned 16-byte magic; the 8-byte runtime
/// (DAL/CODAL) hash follows at +16 and the 8-byte program hash at +24
/// (docs/protocols/partial-flashing.md §5.2).
public struct MakeCodeProgram: Sendable, Equatable {
    /// The magic as stored in flash.
    public static let magic: [UInt8] = [
        0x70, 0x8E, 0x3B, 0x92, 0xC6, 0x15, 0xA8, 0x41,
        0xC4, 0x98, 0x66, 0xC9, 0x75, 0xEE, 0x51, 0x97
    ]

    /// Address of the magic: the start of the program region.
    public let magicAddress: UInt32
    /// The 8 bytes at magic+16: identifies the runtime build.
    public let runtimeHash: [UInt8]
    /// The 8 bytes at magic+24: identifies the program.
    public let programHash: [UInt8]
    /// The bytes partial flashing writes: from the magic to the last data byte below
    /// the scratch page, padded up to a 64-byte boundary.
    public let region: Range<UInt32>

    public init(magicAddress: UInt32, runtimeHash: [UInt8], programHash: [UInt8], region: Range<UInt32>) {
        self.magicAddress = magicAddress
        self.runtimeHash = runtimeHash
        self.programHash = programHash
        self.region = region
    }
}

extension Array where Element == UInt8 {
    /// Upper-case hex, no separators: `22204AC874977E7F`.
    public var hexString: String { Hex.bytes(self) }
}

extension MakeCodeProgram {
    /// Size of the blocks partial flashing writes.
    public static let blockSize: UInt32 = 64

    /// The region's length in bytes.
    public var size: Int { region.count }

    /// 64-byte blocks in the region.
    public var blockCount: Int { (region.count + Int(Self.blockSize) - 1) / Int(Self.blockSize) }

    /// Flash pages the region touches.
    public func pageCount(pageSize: UInt32) -> Int {
        guard !region.isEmpty else { return 0 }
        let first = region.lowerBound / pageSize, last = (region.upperBound - 1) / pageSize
        return Int(last - first + 1)
    }

    /// Why `find` found nothing.
    public enum Absence: Sendable, Hashable, CustomStringConvertible {
        /// The 16 magic bytes occur nowhere in the image.
        case noMagic
        /// The magic occurs, but not at a page boundary, where the device looks (2016 PXT hexes;
        /// a false hit inside runtime code). Partial flashing is impossible.
        case notPageAligned(addresses: [UInt32], pageSize: UInt32)
        /// The magic occurs at a page boundary, but outside the application region below the
        /// scratch page, where the device does not look.
        case outsideApplicationRegion(addresses: [UInt32], searched: Range<UInt32>)

        public var description: String {
            switch self {
            case .noMagic:
                return "the MakeCode magic does not occur in the image"
            case .notPageAligned(let addresses, let pageSize):
                return
                    "the MakeCode magic occurs at \(addresses.map(Hex.address).joined(separator: ", ")), not at a \(pageSize)-byte page boundary where the device looks"
            case .outsideApplicationRegion(let addresses, let searched):
                return
                    "the MakeCode magic occurs at \(addresses.map(Hex.address).joined(separator: ", ")), outside \(Hex.address(searched.lowerBound))-\(Hex.address(searched.upperBound)) where the device looks"
            }
        }
    }

    /// The addresses the device scans: every page boundary from the application start up to
    /// (excluding) the scratch page.
    public static func searchRange(for family: ChipFamily) -> Range<UInt32> {
        let layout = family.layout
        return layout.applicationStart..<layout.scratchPage
    }

    /// The program the device would find in `image`, or nil (see `locate` for the reason).
    public static func find(in image: MemoryImage, family: ChipFamily) -> MakeCodeProgram? {
        try? locate(in: image, family: family)
    }

    /// Finds the program the way the device does: the first page boundary inside the
    /// application region, below the scratch page, that holds the 16-byte magic. The runtime hash
    /// is at +16 and the program hash at +24. The region runs from the magic to the last data byte
    /// below the scratch page, rounded up to a 64-byte block.
    /// - Throws: `FirmwareImageError.noMakeCodeProgram` with the reason.
    public static func locate(in image: MemoryImage, family: ChipFamily) throws -> MakeCodeProgram {
        let searched = searchRange(for: family)
        let page = family.pageSize
        for segment in image.segments where segment.end > searched.lowerBound && segment.start < searched.upperBound {
            let from = max(segment.start, searched.lowerBound)
            var a = (from + page - 1) / page * page
            while a < min(segment.end, searched.upperBound) {
                if image.read(a..<(a + 16)) == magic {
                    return program(at: a, in: image, below: searched.upperBound)
                }
                a += page
            }
        }
        throw absence(among: magicAddresses(in: image), family: family)
    }

    /// `locate`, given every address where the magic occurs (`magicAddresses(in:)`), for a caller
    /// that needs those too (`inspect`): one pass over the image instead of two. The result is
    /// `locate`'s: the magic is never split by a gap (a gap reads as 0xFF, which the magic does not
    /// hold), so the device's page walk finds the first page-aligned hit inside its search range.
    public static func locate(in image: MemoryImage, family: ChipFamily, magicAt hits: [UInt32]) throws
        -> MakeCodeProgram
    {
        let searched = searchRange(for: family)
        if let first = hits.first(where: { $0 % family.pageSize == 0 && searched.contains($0) }) {
            return program(at: first, in: image, below: searched.upperBound)
        }
        throw absence(among: hits, family: family)
    }

    /// Why no program is found, given every address where the magic occurs.
    private static func absence(among hits: [UInt32], family: ChipFamily) -> FirmwareImageError {
        let searched = searchRange(for: family)
        let page = family.pageSize
        if hits.isEmpty { return FirmwareImageError.noMakeCodeProgram(.noMagic, family: family) }
        let unaligned = hits.filter { $0 % page != 0 }
        if !unaligned.isEmpty {
            return FirmwareImageError.noMakeCodeProgram(
                .notPageAligned(addresses: unaligned, pageSize: page), family: family)
        }
        return FirmwareImageError.noMakeCodeProgram(
            .outsideApplicationRegion(addresses: hits, searched: searched),
            family: family)
    }

    /// The program header at `address`, whatever its alignment, with its region ending at the
    /// last data byte below `limit` (rounded up to 64 bytes).
    public static func program(at address: UInt32, in image: MemoryImage, below limit: UInt32) -> MakeCodeProgram {
        var last = address + 32
        for s in image.segments where s.start < limit && s.end > address {
            last = max(last, min(s.end, limit))
        }
        let end = UInt32(
            min((UInt64(last) + UInt64(blockSize) - 1) / UInt64(blockSize) * UInt64(blockSize), UInt64(UInt32.max)))
        return MakeCodeProgram(
            magicAddress: address,
            runtimeHash: image.read((address + 16)..<(address + 24)),
            programHash: image.read((address + 24)..<(address + 32)),
            region: address..<end)
    }

    /// Every address where the 16 magic bytes occur, at any alignment, in address order
    /// (what `inspect` shows; the device only looks at page boundaries).
    ///
    /// Boyer-Moore-Horspool: the byte under the magic's last position says how far the magic can
    /// move on, 16 bytes for a byte the magic does not hold (most of an image), so about one byte
    /// in 16 is read.
    public static func magicAddresses(in image: MemoryImage) -> [UInt32] {
        var hits: [UInt32] = []
        let m = magic
        let last = m.count - 1
        for s in image.segments where s.bytes.count >= m.count {
            let bytes = s.bytes
            var i = 0
            let end = bytes.count - m.count
            while i <= end {
                let tail = bytes[i + last]
                if tail == m[last] {
                    var k = last - 1
                    while k >= 0, bytes[i + k] == m[k] { k -= 1 }
                    if k < 0 { hits.append(s.start + UInt32(i)) }
                }
                i += Int(magicShift[Int(tail)])
            }
        }
        return hits
    }

    /// For each byte value, how far the magic may move when that byte lies under its last
    /// position: past it when the magic does not hold it elsewhere, else to align its last other
    /// occurrence.
    static let magicShift: [UInt8] = {
        var shift = [UInt8](repeating: UInt8(magic.count), count: 256)
        for (k, byte) in magic.dropLast().enumerated() { shift[Int(byte)] = UInt8(magic.count - 1 - k) }
        return shift
    }()
}
