import Foundation
import Testing
import TestSupport
@testable import FirmwareImage

/// Blocks for a small two-run image, as the writer makes them.
private func sampleImage() throws -> MemoryImage {
    var image = MemoryImage()
    try image.write((0..<600).map { UInt8(truncatingIfNeeded: $0 * 7 + $0 >> 8) }, at: 0x47000)
    try image.write([0x00, 0x70, 0x07, 0x00], at: 0x1000_1014)
    return image
}

private func blocks(_ bytes: [UInt8]) -> [[UInt8]] {
    stride(from: 0, to: bytes.count, by: 512).map { Array(bytes[$0..<($0 + 512)]) }
}

private func setWord(_ bytes: inout [UInt8], _ offset: Int, _ value: UInt32) {
    for i in 0..<4 { bytes[offset + i] = UInt8(truncatingIfNeeded: value >> (8 * UInt32(i))) }
}

@Suite struct UF2FileTests {
    @Test func writerMakesOneBlockPer256ByteChunkAndReadsBack() throws {
        let image = try sampleImage()
        let bytes = UF2File.encode(image, familyID: UF2Family.nrf52833)
        // 0x47000-0x47258 spans three 256-byte chunks, the UICR word one more.
        #expect(bytes.count == 4 * 512)
        let file = try UF2File.parse(bytes, expectedFamily: UF2Family.nrf52833)
        #expect(file.blockCount == 4)
        #expect(file.familyIDs == [0x621E_937A])
        #expect(file.warnings.isEmpty)
        #expect(file.image.runs == [0x47000..<0x47300, 0x1000_1000..<0x1000_1100])
        #expect(file.image.read(0x47000..<0x47258) == image.read(0x47000..<0x47258))
        #expect(file.image.read(0x47258..<0x47300) == [UInt8](repeating: 0xFF, count: 0xA8))
        #expect(file.image.read(0x1000_1014..<0x1000_1018) == [0x00, 0x70, 0x07, 0x00])
    }

    @Test func blockEncodesBackToTheSameBytes() throws {
        let bytes = UF2File.encode(try sampleImage(), familyID: UF2Family.nrf52833)
        let block = try UF2Block(decoding: bytes, at: 512, index: 1)
        #expect(block.blockNumber == 1 && block.blockCount == 4 && block.targetAddress == 0x47100)
        #expect(block.familyID == UF2Family.nrf52833)
        #expect(block.encoded() == Array(bytes[512..<1024]))
    }

    @Test func rejectsBlockWithBadMagicNamingBlockAndOffset() throws {
        for offset in [0, 4, 508] {
            var bytes = UF2File.encode(try sampleImage(), familyID: nil)
            setWord(&bytes, 512 * 2 + offset, 0xDEAD_BEEF)
            #expect(throws: FirmwareImageError.uf2BadMagic(block: 2, offset: offset, found: 0xDEAD_BEEF)) {
                try UF2File.parse(bytes)
            }
        }
    }

    @Test func rejectsPayloadLargerThan476Bytes() throws {
        var bytes = UF2File.encode(try sampleImage(), familyID: nil)
        setWord(&bytes, 512 + 16, 477)
        #expect(throws: FirmwareImageError.uf2PayloadTooLarge(block: 1, size: 477)) { try UF2File.parse(bytes) }
    }

    @Test func rejectsTruncatedFile() throws {
        let bytes = UF2File.encode(try sampleImage(), familyID: nil)
        #expect(throws: FirmwareImageError.uf2SizeNotBlockMultiple(size: 1000)) {
            try UF2File.parse(Array(bytes.prefix(1000)))
        }
        #expect(throws: FirmwareImageError.uf2Empty) { try UF2File.parse([]) }
    }

    @Test func rejectsFileContainer() throws {
        var bytes = UF2File.encode(try sampleImage(), familyID: nil)
        setWord(&bytes, 8, 0x1000)
        #expect(throws: FirmwareImageError.uf2FileContainer(block: 0)) { try UF2File.parse(bytes) }
    }

    @Test func reportsMissingBlockNumbers() throws {
        let all = blocks(UF2File.encode(try sampleImage(), familyID: UF2Family.nrf52833))
        let bytes = (all[0] + all[3])
        #expect(throws: FirmwareImageError.uf2MissingBlocks(numbers: [1, 2], missing: 2, total: 4)) {
            try UF2File.parse(bytes)
        }
    }

    @Test func countsEveryMissingBlockAndNamesTheFirstTen() throws {
        // 160 blocks of 256 bytes; only the first and the last are kept.
        var image = MemoryImage()
        try image.write([UInt8](repeating: 0x5A, count: 160 * 256), at: 0x47000)
        let all = blocks(UF2File.encode(image, familyID: UF2Family.nrf52833))
        try #require(all.count == 160)
        let error = #expect(throws: FirmwareImageError.self) { try UF2File.parse(all[0] + all[all.count - 1]) }
        let total = all.count
        #expect(error == .uf2MissingBlocks(numbers: Array(1...10), missing: total - 2, total: UInt32(total)))
        #expect(
            error?.description.contains(
                "lacks \(total - 2) of its \(total) blocks (blocks 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 and \(total - 12) more)"
            ) == true,
            "\(error?.description ?? "")")
    }

    @Test func aBlockClaimingFourBillionSiblingsIsCountedWithoutListingThem() throws {
        var one = blocks(UF2File.encode(try sampleImage(), familyID: UF2Family.nrf52833))[0]
        setWord(&one, 24, 0xFFFF_FFFF)
        let error = #expect(throws: FirmwareImageError.self) { try UF2File.parse(one) }
        #expect(error == .uf2MissingBlocks(numbers: Array(1...10), missing: 0xFFFF_FFFE, total: 0xFFFF_FFFF))
    }

    @Test func reportsDuplicatedBlockNumbers() throws {
        var all = blocks(UF2File.encode(try sampleImage(), familyID: UF2Family.nrf52833))
        all[2] = all[1]
        #expect(throws: FirmwareImageError.uf2DuplicateBlocks(numbers: [1])) { try UF2File.parse(all.flatMap { $0 }) }
    }

    @Test func reportsTotalCountMismatch() throws {
        var bytes = UF2File.encode(try sampleImage(), familyID: nil)
        setWord(&bytes, 512 * 3 + 24, 5)
        #expect(throws: FirmwareImageError.uf2TotalMismatch(block: 3, found: 5, expected: 4)) {
            try UF2File.parse(bytes)
        }
    }

    @Test func rejectsFileForAnotherFamily() throws {
        let bytes = UF2File.encode(try sampleImage(), familyID: UF2Family.nrf52840)
        #expect(
            throws: FirmwareImageError.uf2FamilyMismatch(
                block: 0, found: UF2Family.nrf52840, expected: UF2Family.nrf52833)
        ) {
            try UF2File.parse(bytes, expectedFamily: UF2Family.nrf52833)
        }
        #expect(try UF2File.parse(bytes).familyIDs == [UF2Family.nrf52840])
    }

    @Test func skipsNotMainFlashBlocksWithAWarning() throws {
        var bytes = UF2File.encode(try sampleImage(), familyID: UF2Family.nrf52833)
        setWord(&bytes, 512 * 3 + 8, 0x2001)
        let file = try UF2File.parse(bytes, expectedFamily: UF2Family.nrf52833)
        #expect(file.usedBlockCount == 3)
        #expect(file.image.byte(at: 0x1000_1014) == nil)
        #expect(file.warnings.contains { $0.contains("not main flash") })
    }

    @Test func toleratesMD5AndExtensionTagFlags() throws {
        var bytes = UF2File.encode(try sampleImage(), familyID: UF2Family.nrf52833)
        setWord(&bytes, 8, 0x2000 | 0x4000 | 0x8000)
        let file = try UF2File.parse(bytes, expectedFamily: UF2Family.nrf52833)
        #expect(file.usedBlockCount == 4)
    }

    @Test func rejectsBlocksThatDisagreeAboutABytesValue() throws {
        var all = blocks(UF2File.encode(try sampleImage(), familyID: nil))
        var other = all[1]
        setWord(&other, 12, 0x47000)  // block 1 now also targets 0x47000, with other bytes
        all[1] = other
        #expect(throws: FirmwareImageError.uf2Conflict(block: 1, address: 0x47000)) {
            try UF2File.parse(all.flatMap { $0 })
        }
    }

    @Test func errorMessagesSayWhatToDo() {
        let message = FirmwareImageError.uf2MissingBlocks(numbers: [3], missing: 1, total: 9).description
        #expect(message.contains("lacks 1 of its 9 blocks (block 3)") && message.contains("fetch the file again"))
    }
}
