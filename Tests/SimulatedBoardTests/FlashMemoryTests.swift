import FirmwareImage
import Testing
@testable import SimulatedBoard

@Suite struct FlashMemoryTests {
    let layout = ChipFamily.nrf52833.layout

    @Test func startsBlankAndHoldsTheImage() throws {
        var image = MemoryImage()
        try image.write([0x12, 0x34, 0x56, 0x78], at: 0x1C000)
        let flash = try FlashMemory(layout: layout, image: image)
        #expect(flash.size == 0x80000 && flash.pageSize == 4096)
        #expect(try flash.read(0x1BFFE..<0x1C006) == [0xFF, 0xFF, 0x12, 0x34, 0x56, 0x78, 0xFF, 0xFF])
        #expect(flash.nonBlankPages == [0x1C000])
        #expect(flash.eraseCount == 0 && flash.wordWriteCount == 0 && flash.writeLog.isEmpty)
    }

    @Test func eraseSetsTheWholePageToFF() throws {
        var image = MemoryImage()
        try image.write([UInt8](repeating: 0, count: 8192), at: 0x20000)
        var flash = try FlashMemory(layout: layout, image: image)
        try flash.erasePage(at: 0x20123)
        #expect(try flash.read(0x20000..<0x21000).allSatisfy { $0 == 0xFF })
        #expect(try flash.read(0x21000..<0x21004) == [0, 0, 0, 0])
        #expect(flash.eraseCount == 1 && flash.eraseLog == [0x20000])
        #expect(flash.isBlank(pageAt: 0x20000) && !flash.isBlank(pageAt: 0x21000))
    }

    @Test func writeOnErasedFlashStoresTheBytes() throws {
        var flash = FlashMemory(layout: layout)
        try flash.writeWords([0xDE, 0xAD, 0xBE, 0xEF, 1, 2, 3, 4], at: 0x30000)
        #expect(try flash.read(0x30000..<0x30008) == [0xDE, 0xAD, 0xBE, 0xEF, 1, 2, 3, 4])
        #expect(flash.wordWriteCount == 2)
    }

    @Test func writingOverUnerasedDataCorruptsIt() throws {
        var flash = FlashMemory(layout: layout)
        try flash.writeWords([0xF0, 0xF0, 0xAA, 0xFF], at: 0x30000)
        try flash.writeWords([0x0F, 0xFF, 0x55, 0x81], at: 0x30000)
        // Bits only go from 1 to 0: the result is the AND of both writes, neither value.
        #expect(try flash.read(0x30000..<0x30004) == [0x00, 0xF0, 0x00, 0x81])
    }

    @Test func rejectsUnalignedAndOutOfRangeWrites() throws {
        var flash = FlashMemory(layout: layout)
        #expect(throws: SimulatedBoardError.unalignedWrite(address: 0x30002)) {
            try flash.writeWords([1, 2, 3, 4], at: 0x30002)
        }
        #expect(throws: SimulatedBoardError.self) { try flash.writeWords([1, 2, 3, 4], at: 0x80000) }
        #expect(throws: SimulatedBoardError.self) { try flash.erasePage(at: 0x90000) }
        #expect(throws: SimulatedBoardError.self) { try flash.read(0x7FFFC..<0x80004) }
        #expect(flash.wordWriteCount == 0 && flash.writeLog.isEmpty)
    }

    @Test func logsWriteRangesAndMergesContiguousOnes() throws {
        var flash = FlashMemory(layout: layout)
        let block = [UInt8](repeating: 0x11, count: 64)
        try flash.writeWords(block, at: 0x47000)
        try flash.writeWords(block, at: 0x47040)
        try flash.writeWords(block, at: 0x0)
        #expect(flash.writeLog == [0x47000..<0x47080, 0x0..<0x40])
        #expect(!flash.writesStay(inside: 0x47000..<0x73000))
        #expect(flash.writesStay(inside: 0x0..<0x73000))
    }

    @Test func refusesAnImageLargerThanTheChip() throws {
        var image = MemoryImage()
        try image.write([1, 2, 3], at: 0x4_0000)
        #expect(throws: SimulatedBoardError.self) { try FlashMemory(layout: ChipFamily.nrf51.layout, image: image) }
    }
}
