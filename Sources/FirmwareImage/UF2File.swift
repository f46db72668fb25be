import Diagnostics

/// A UF2 file read into a memory image, and the UF2 writer.
///
/// Reading checks every block (magics, payload size, flags, numbering). Blocks marked
/// "not main flash" are skipped; file containers are refused. With an expected family,
/// blocks for other families are skipped the way a UF2 bootloader skips them, and a file
/// with no block for the family is refused.
public struct UF2File: Sendable, Equatable {
    /// The flash contents of the used blocks.
    public var image: MemoryImage
    /// The distinct family IDs found in the file, in order of first appearance.
    public var familyIDs: [UInt32]
    /// Number of 512-byte blocks in the file.
    public var blockCount: Int
    /// Number of blocks whose payload went into `image`.
    public var usedBlockCount: Int
    /// Things worth telling the user that did not stop the read.
    public var warnings: [String]

    /// True when `bytes` starts with the two UF2 start magics.
    public static func looksLikeUF2(_ bytes: [UInt8]) -> Bool {
        bytes.count >= 8 && bytes[0..<8].elementsEqual([0x55, 0x46, 0x32, 0x0A, 0x57, 0x51, 0x5D, 0x9E])
    }

    /// Reads a UF2 file. With `expectedFamily` (e.g. `UF2Family.nrf52833`), only blocks for
    /// that family (or naming none) are used, and a file with none of them is refused.
    public static func parse(_ bytes: [UInt8], expectedFamily: UInt32? = nil) throws -> UF2File {
        guard !bytes.isEmpty else { throw FirmwareImageError.uf2Empty }
        guard bytes.count % UF2Block.size == 0 else {
            throw FirmwareImageError.uf2SizeNotBlockMultiple(size: bytes.count)
        }
        let count = bytes.count / UF2Block.size
        var blocks: [UF2Block] = []
        blocks.reserveCapacity(count)
        var familyIDs: [UInt32] = []
        for index in 0..<count {
            let block = try UF2Block(decoding: bytes, at: index * UF2Block.size, index: index)
            if block.flags.contains(.fileContainer) { throw FirmwareImageError.uf2FileContainer(block: index) }
            if let f = block.familyID, !familyIDs.contains(f) { familyIDs.append(f) }
            blocks.append(block)
        }
        try checkNumbering(blocks)

        var warnings: [String] = []
        var image = MemoryImage()
        var used = 0, skippedNotFlash = 0, skippedFamily = 0, unnamed = 0
        var firstForeign: (index: Int, family: UInt32)?
        for (index, block) in blocks.enumerated() {
            if block.flags.contains(.notMainFlash) { skippedNotFlash += 1; continue }
            if let expected = expectedFamily {
                if let f = block.familyID, f != expected {
                    skippedFamily += 1
                    if firstForeign == nil { firstForeign = (index, f) }
                    continue
                }
                if block.familyID == nil { unnamed += 1 }
            }
            guard UInt64(block.targetAddress) + UInt64(block.payload.count) <= UInt64(UInt32.max) else {
                throw FirmwareImageError.uf2AddressOverflow(block: index, address: block.targetAddress)
            }
            do {
                try image.write(block.payload, at: block.targetAddress)
            } catch let FirmwareImageError.imageConflict(address, _, _) {
                throw FirmwareImageError.uf2Conflict(block: index, address: address)
            }
            used += 1
        }
        if used == 0 {
            if let (index, family) = firstForeign, let expected = expectedFamily {
                throw FirmwareImageError.uf2FamilyMismatch(block: index, found: family, expected: expected)
            }
            if skippedNotFlash > 0 { throw FirmwareImageError.uf2NoFlashData }
        }
        if skippedNotFlash > 0 {
            warnings.append("skipped \(skippedNotFlash) block(s) marked 'not main flash'")
        }
        if skippedFamily > 0, let expected = expectedFamily {
            warnings.append("skipped \(skippedFamily) block(s) for other chip families than \(familyName(expected))")
        }
        if unnamed > 0, let expected = expectedFamily {
            warnings.append(
                "\(unnamed) block(s) name no chip family, so they could not be checked against \(familyName(expected))")
        }
        if expectedFamily == nil, familyIDs.count > 1 {
            warnings.append(
                "the file holds blocks for several chip families: \(familyIDs.map(familyName).joined(separator: ", "))")
        }
        return UF2File(image: image, familyIDs: familyIDs, blockCount: count, usedBlockCount: used, warnings: warnings)
    }

    /// Writes `image` as UF2 the way `uf2conv` converts a hex file: one block per 256-byte
    /// aligned chunk holding data, 256-byte payloads, missing bytes 0xFF, blocks in address
    /// order, and the family flag and ID when `familyID` is given and not 0.
    public static func encode(_ image: MemoryImage, familyID: UInt32?) -> [UInt8] {
        let chunks = image.alignedChunks(size: 256)
        let family = familyID ?? 0
        let flags: UF2Block.Flags = family != 0 ? .familyIDPresent : []
        var out = [UInt8]()
        out.reserveCapacity(chunks.count * UF2Block.size)
        for (n, chunk) in chunks.enumerated() {
            let (end, overflow) = chunk.addingReportingOverflow(256)
            var payload = image.read(chunk..<(overflow ? UInt32.max : end))
            payload += [UInt8](repeating: 0xFF, count: 256 - payload.count)
            let block = UF2Block(
                flags: flags, targetAddress: chunk, payload: payload, blockNumber: UInt32(n),
                blockCount: UInt32(chunks.count), fileSizeOrFamilyID: family)
            out += block.encoded()
        }
        return out
    }

    /// Checks block numbers and totals, separately for each family (a UF2 file may be
    /// several files, one per family, joined together).
    private static func checkNumbering(_ blocks: [UF2Block]) throws {
        var totals: [UInt32: (total: UInt32, first: Int)] = [:]
        var seen: [UInt32: Set<UInt32>] = [:]
        var duplicates: [UInt32] = []
        for (index, block) in blocks.enumerated() {
            let key = block.familyID ?? 0
            if let known = totals[key] {
                if block.blockCount != known.total {
                    throw FirmwareImageError.uf2TotalMismatch(
                        block: index, found: block.blockCount, expected: known.total)
                }
            } else {
                totals[key] = (block.blockCount, index)
            }
            guard block.blockNumber < block.blockCount else {
                throw FirmwareImageError.uf2BlockNumberOutOfRange(
                    block: index, number: block.blockNumber, total: block.blockCount)
            }
            if !seen[key, default: []].insert(block.blockNumber).inserted { duplicates.append(block.blockNumber) }
        }
        if !duplicates.isEmpty { throw FirmwareImageError.uf2DuplicateBlocks(numbers: duplicates) }
        for (key, entry) in totals.sorted(by: { $0.value.first < $1.value.first }) {
            let have = seen[key] ?? []
            guard have.count < Int(entry.total) else { continue }
            // Every number the blocks hold is below the total (checked above), so the count of the
            // absent ones is exact; only the first few are named.
            var missing: [UInt32] = []
            var n: UInt32 = 0
            while n < entry.total, missing.count < 10 {
                if !have.contains(n) { missing.append(n) }
                n += 1
            }
            throw FirmwareImageError.uf2MissingBlocks(
                numbers: missing, missing: Int(entry.total) - have.count, total: entry.total)
        }
    }

    private static func familyName(_ id: UInt32) -> String {
        UF2Family.name(of: id).map { "\($0) (\(Hex.address(id)))" } ?? Hex.address(id)
    }
}
