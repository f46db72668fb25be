import Diagnostics
import Foundation
import ZIPFoundation

/// Reads the entries of a `.zip` held in memory, checking every offset and size against
/// the bytes before it touches them.
///
/// Only what DFU packages use is supported: stored and deflated entries, without
/// encryption or ZIP64. The layout (end-of-central-directory record, central directory,
/// local headers) is parsed here; deflated data is inflated through ZIPFoundation's
/// zlib binding, fed exactly the entry's compressed bytes, and the result is checked
/// against the size and CRC-32 the central directory records.
struct ZipReader {
    /// One file of the archive, as its central-directory record describes it.
    struct Entry {
        var path: String
        var method: UInt16
        var crc32: UInt32
        var compressedSize: Int
        var uncompressedSize: Int
        /// Where the entry's data starts (past its local header).
        var dataOffset: Int
        var isDirectory: Bool { path.hasSuffix("/") }
    }

    private let bytes: [UInt8]
    let entries: [Entry]

    /// Parses the archive's directory. Throws `dfuNotAZip` for anything that is not a
    /// well-formed zip whose records all lie inside `bytes`.
    init(bytes: [UInt8]) throws {
        self.bytes = bytes
        let end = try Self.endOfCentralDirectory(in: bytes)
        var entries: [Entry] = []
        var cursor = end.directoryOffset
        for _ in 0..<end.entryCount {
            let (entry, next) = try Self.centralRecord(in: bytes, at: cursor)
            entries.append(entry)
            cursor = next
        }
        self.entries = entries
    }

    /// The file entry at `path` (leading "./" or "/" ignored), or nil when absent.
    func entry(named path: String) -> Entry? {
        let wanted = Self.normalised(path)
        return entries.first { !$0.isDirectory && Self.normalised($0.path) == wanted }
    }

    /// The entry's uncompressed bytes, at most `limit` of them.
    func contents(of entry: Entry, limit: Int) throws -> [UInt8] {
        guard entry.uncompressedSize <= limit else {
            throw FirmwareImageError.dfuEntryTooLarge(name: entry.path, size: entry.uncompressedSize)
        }
        let stored = bytes[entry.dataOffset..<(entry.dataOffset + entry.compressedSize)]
        let out: [UInt8]
        switch entry.method {
        case 0: out = Array(stored)
        case 8: out = try Self.inflate(Data(stored), expected: entry.uncompressedSize, name: entry.path)
        default: throw FirmwareImageError.dfuUnreadableEntry(entry.path)
        }
        guard out.count == entry.uncompressedSize, Self.crc32(out) == entry.crc32 else {
            throw FirmwareImageError.dfuUnreadableEntry(entry.path)
        }
        return out
    }

    // MARK: Layout

    private struct EndRecord { var entryCount: Int; var directoryOffset: Int }

    /// Finds the end-of-central-directory record: the last signature whose comment
    /// length reaches exactly the end of the data.
    private static func endOfCentralDirectory(in bytes: [UInt8]) throws -> EndRecord {
        let fixed = 22
        guard bytes.count >= fixed else { throw FirmwareImageError.dfuNotAZip }
        let lowest = max(0, bytes.count - fixed - 0xFFFF)
        var at = bytes.count - fixed
        while at >= lowest {
            if try LEBytes.u32(bytes, at) == 0x0605_4B50,
                try at + fixed + Int(LEBytes.u16(bytes, at + 20)) == bytes.count
            {
                let disk = try LEBytes.u16(bytes, at + 4), directoryDisk = try LEBytes.u16(bytes, at + 6)
                let onDisk = try Int(LEBytes.u16(bytes, at + 8)), total = try Int(LEBytes.u16(bytes, at + 10))
                let size = try Int(LEBytes.u32(bytes, at + 12)), offset = try Int(LEBytes.u32(bytes, at + 16))
                // Multi-disk archives and ZIP64 markers (0xFFFF / 0xFFFFFFFF) are not DFU packages.
                guard disk == 0, directoryDisk == 0, onDisk == total, total != 0xFFFF,
                    offset + size <= at
                else { throw FirmwareImageError.dfuNotAZip }
                return EndRecord(entryCount: total, directoryOffset: offset)
            }
            at -= 1
        }
        throw FirmwareImageError.dfuNotAZip
    }

    /// Reads the central-directory record at `at` and checks its local header.
    private static func centralRecord(in bytes: [UInt8], at: Int) throws -> (Entry, next: Int) {
        guard at + 46 <= bytes.count, try LEBytes.u32(bytes, at) == 0x0201_4B50 else {
            throw FirmwareImageError.dfuNotAZip
        }
        let flags = try LEBytes.u16(bytes, at + 8), method = try LEBytes.u16(bytes, at + 10)
        let crc = try LEBytes.u32(bytes, at + 16)
        let compressed = try Int(LEBytes.u32(bytes, at + 20)), uncompressed = try Int(LEBytes.u32(bytes, at + 24))
        let nameLength = try Int(LEBytes.u16(bytes, at + 28)), extraLength = try Int(LEBytes.u16(bytes, at + 30))
        let commentLength = try Int(LEBytes.u16(bytes, at + 32))
        let localOffset = try Int(LEBytes.u32(bytes, at + 42))
        let next = at + 46 + nameLength + extraLength + commentLength
        guard next <= bytes.count else { throw FirmwareImageError.dfuNotAZip }
        let name = String(decoding: bytes[(at + 46)..<(at + 46 + nameLength)], as: UTF8.self)
        // Encrypted entries (bit 0) cannot be read; ZIP64 sizes are not DFU packages.
        guard flags & 1 == 0, compressed != 0xFFFF_FFFF, uncompressed != 0xFFFF_FFFF else {
            throw FirmwareImageError.dfuUnreadableEntry(name)
        }
        guard localOffset + 30 <= bytes.count, try LEBytes.u32(bytes, localOffset) == 0x0403_4B50 else {
            throw FirmwareImageError.dfuNotAZip
        }
        let nameAndExtra = try Int(LEBytes.u16(bytes, localOffset + 26)) + Int(LEBytes.u16(bytes, localOffset + 28))
        let dataOffset = localOffset + 30 + nameAndExtra
        guard dataOffset + compressed <= bytes.count else { throw FirmwareImageError.dfuUnreadableEntry(name) }
        let entry = Entry(
            path: name, method: method, crc32: crc, compressedSize: compressed,
            uncompressedSize: uncompressed, dataOffset: dataOffset)
        return (entry, next)
    }

    // MARK: Data

    /// Inflates a raw deflate stream. The provider hands zlib the compressed bytes once, and
    /// throws when asked again, so a truncated stream is an error, not a loop. The binding
    /// tells zlib that every chunk is `bufferSize` long, so the chunk is padded to exactly
    /// that with zeros (never read past a complete stream; a truncated one fails the CRC).
    private static func inflate(_ compressed: Data, expected: Int, name: String) throws -> [UInt8] {
        guard !compressed.isEmpty else { throw FirmwareImageError.dfuUnreadableEntry(name) }
        let bufferSize = max(compressed.count, 16 << 10)
        var chunk = compressed
        chunk.append(Data(count: bufferSize - compressed.count))
        var out = [UInt8]()
        out.reserveCapacity(expected)
        var handedOut = false
        do {
            _ = try Data.decompress(
                size: Int64(compressed.count), bufferSize: bufferSize, skipCRC32: true,
                provider: { _, _ in
                    guard !handedOut else { throw FirmwareImageError.dfuUnreadableEntry(name) }
                    handedOut = true
                    return chunk
                },
                consumer: { chunk in
                    guard out.count + chunk.count <= expected else {
                        throw FirmwareImageError.dfuUnreadableEntry(name)
                    }
                    out.append(contentsOf: chunk)
                })
        } catch let error as FirmwareImageError {
            throw error
        } catch {
            throw FirmwareImageError.dfuUnreadableEntry(name)
        }
        return out
    }

    /// CRC-32 (IEEE 802.3, reflected, as zip uses it).
    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc = crcTable[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8)
        }
        return crc ^ 0xFFFF_FFFF
    }

    private static let crcTable: [UInt32] = (0..<256).map { n in
        var c = UInt32(n)
        for _ in 0..<8 { c = c & 1 != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
        return c
    }

    private static func normalised(_ path: String) -> String {
        var p = Substring(path)
        while p.hasPrefix("./") { p = p.dropFirst(2) }
        while p.hasPrefix("/") { p = p.dropFirst() }
        return String(p)
    }
}
