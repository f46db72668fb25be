import Testing
@testable import FirmwareImage

@Suite struct MemoryImageTests {
    @Test func mergesTouchingWritesIntoOneRun() throws {
        var m = MemoryImage()
        try m.write([1, 2], at: 0x100)
        try m.write([3, 4], at: 0x102)
        try m.write([0], at: 0xFF)
        #expect(m.runs == [0xFF..<0x104])
        #expect(m.read(0xFE..<0x105) == [0xFF, 0, 1, 2, 3, 4, 0xFF])
    }

    @Test func keepsOutOfOrderWritesSorted() throws {
        var m = MemoryImage()
        try m.write([9], at: 0x1000_1014)
        try m.write([1], at: 0x10)
        try m.write([2], at: 0x20)
        #expect(m.runs == [0x10..<0x11, 0x20..<0x21, 0x1000_1014..<0x1000_1015])
        #expect(m.byte(at: 0x20) == 2)
        #expect(m.byte(at: 0x21) == nil)
    }

    @Test func bridgingWriteMergesNeighbours() throws {
        var m = MemoryImage()
        try m.write([1, 1], at: 0)
        try m.write([3, 3], at: 6)
        try m.write([2, 2, 2, 2], at: 2)
        #expect(m.segments.count == 1)
        #expect(m.read(0..<8) == [1, 1, 2, 2, 2, 2, 3, 3])
    }

    @Test func rejectsConflictingOverlapAndLeavesImageUnchanged() throws {
        var m = MemoryImage()
        try m.write([1, 2, 3], at: 0)
        try m.write([2, 3], at: 1)  // same bytes: fine
        #expect(throws: FirmwareImageError.imageConflict(address: 2, existing: 3, new: 7)) {
            try m.write([2, 7], at: 1)
        }
        #expect(m.read(0..<3) == [1, 2, 3])
    }

    @Test func rejectsWritePastAddressSpace() {
        var m = MemoryImage()
        #expect(throws: FirmwareImageError.imagePastAddressSpace(address: 0xFFFF_FFFF, count: 2)) {
            try m.write([1, 2], at: 0xFFFF_FFFF)
        }
    }

    @Test func listsAlignedChunksHoldingData() throws {
        var m = MemoryImage()
        try m.write([UInt8](repeating: 0, count: 90), at: 0x3F0)
        #expect(m.alignedChunks(size: 64) == [0x3C0, 0x400, 0x440])
        #expect(m.alignedChunks(size: 1024) == [0x0, 0x400])
        #expect(m.alignedChunks(size: 64, in: 0x400..<0x420) == [0x400])
    }

    @Test func sliceKeepsOnlyTheRange() throws {
        var m = MemoryImage()
        try m.write([1, 2, 3, 4], at: 10)
        #expect(m.slice(11..<13).segments == [.init(start: 11, bytes: [2, 3])])
    }

    @Test func anEmptyRangeHoldsNoDataEvenInsideARun() throws {
        var m = MemoryImage()
        try m.write([1, 2, 3, 4], at: 10)
        #expect(m.hasData(in: 11..<12))
        #expect(!m.hasData(in: 12..<12))
        #expect(!m.hasData(in: 14..<20))
        #expect(m.hasData(in: 0..<11))
    }
}
