import Diagnostics
import FirmwareImage
import PartialFlashingFrames
import Testing
@testable import PartialFlashing

@Suite struct BlockPlanTests {
    let v2Region = RegionInfo(id: 2, start: 0x47000, end: 0x73000, hash: oldProgramHash)

    @Test func plansWholeProgramFromMagicPaddedWithFF() throws {
        let (image, program) = makeProgram(bodySize: 4000)
        let plan = try BlockPlan(image: image, program: program, boardRegion: v2Region, family: .nrf52833)
        // 32 header bytes + 4000 body bytes = 4032 = 63 blocks exactly.
        #expect(plan.blockCount == 63)
        #expect(plan.byteCount == 63 * 64)
        #expect(plan.pagesOpened == 1)
        #expect(plan.blocks.first?.address == 0x47000)
        #expect(plan.blocks.first?.data.prefix(16).elementsEqual(MakeCodeProgram.magic) == true)
        #expect(plan.blocks.last?.address == UInt32(0x47000 + 62 * 64))

        let (odd, oddProgram) = makeProgram(bodySize: 4001)
        let oddPlan = try BlockPlan(image: odd, program: oddProgram, boardRegion: v2Region, family: .nrf52833)
        #expect(oddPlan.blockCount == 64)
        #expect(oddPlan.blocks.last?.data.dropFirst(1) == ArraySlice(repeating: 0xFF, count: 63))
    }

    @Test func sendsFirstBlockOfEveryTouchedPageEvenWhenErased() throws {
        var image = MemoryImage()
        let header = MakeCodeProgram.magic + runtimeHash + newProgramHash
        try image.write(header, at: 0x47000)
        // Page 0x48000 is all 0xFF in the file; 0x49000 holds data in its second block only.
        try image.write([UInt8](repeating: 0xFF, count: 4096), at: 0x48000)
        try image.write([1, 2, 3], at: 0x49040)
        let program = MakeCodeProgram(
            magicAddress: 0x47000, runtimeHash: runtimeHash, programHash: newProgramHash,
            region: 0x47000..<0x49080)
        let plan = try BlockPlan(image: image, program: program, boardRegion: v2Region, family: .nrf52833)
        #expect(plan.blocks.map(\.address) == [0x47000, 0x48000, 0x49000, 0x49040])
        #expect(plan.blocks.map(\.opensPage) == [true, true, true, false])
        #expect(plan.pagesOpened == 3)
        #expect(plan.skippedBlocks == 63 + 63)
        #expect(plan.blocks[1].data == [UInt8](repeating: 0xFF, count: 64))
        #expect(plan.blocks[3].data == [1, 2, 3] + [UInt8](repeating: 0xFF, count: 61))

        let full = try BlockPlan(
            image: image, program: program, boardRegion: v2Region, family: .nrf52833,
            skipErasedBlocks: false)
        #expect(full.blockCount == 0x2080 / 64)
        #expect(full.skippedBlocks == 0)
    }

    @Test func clipsDALRegionToScratchPage() throws {
        // DAL declares region 2 up to 0x3BBFF, past the scratch page 0x3B400.
        let dal = RegionInfo(id: 2, start: 0x35400, end: 0x3BBFF, hash: oldProgramHash)
        let (image, program) = makeProgram(at: 0x35400, bodySize: 12000)
        let plan = try BlockPlan(image: image, program: program, boardRegion: dal, family: .nrf51)
        #expect(plan.blocks.allSatisfy { $0.address + 64 <= 0x3B400 })
        #expect(plan.pageSize == 1024)
        #expect(plan.pagesOpened == 12)

        var big = image
        try big.write([0x42], at: 0x3B400)
        let tooBig = MakeCodeProgram(
            magicAddress: 0x35400, runtimeHash: runtimeHash, programHash: newProgramHash,
            region: 0x35400..<0x3B440)
        #expect(throws: PartialFlashError.programDoesNotFit(program: 0x35400..<0x3B440, writable: 0x35400..<0x3B400)) {
            try BlockPlan(image: big, program: tooBig, boardRegion: dal, family: .nrf51)
        }
    }

    @Test func refusesProgramOutsideOrMisaligned() {
        let (image, program) = makeProgram(at: 0x47000)
        let later = RegionInfo(id: 2, start: 0x48000, end: 0x73000, hash: oldProgramHash)
        #expect(throws: PartialFlashError.programDoesNotFit(program: program.region, writable: 0x48000..<0x73000)) {
            try BlockPlan(image: image, program: program, boardRegion: later, family: .nrf52833)
        }
        let short = RegionInfo(id: 2, start: 0x47000, end: 0x47400, hash: oldProgramHash)
        #expect(throws: PartialFlashError.programDoesNotFit(program: program.region, writable: 0x47000..<0x47400)) {
            try BlockPlan(image: image, program: program, boardRegion: short, family: .nrf52833)
        }
        let (odd, oddProgram) = makeProgram(at: 0x47040)
        #expect(throws: PartialFlashError.programNotPageAligned(start: 0x47040, pageSize: 4096)) {
            try BlockPlan(image: odd, program: oddProgram, boardRegion: v2Region, family: .nrf52833)
        }
        let empty = MakeCodeProgram(
            magicAddress: 0x47000, runtimeHash: runtimeHash, programHash: newProgramHash,
            region: 0x47000..<0x47000)
        #expect(throws: PartialFlashError.nothingToWrite) {
            try BlockPlan(image: image, program: empty, boardRegion: v2Region, family: .nrf52833)
        }
    }

    @Test func findsPageOpenerForResume() throws {
        let (plan, _) = try makePlan(bodySize: 9000)  // 3 pages on V2
        #expect(plan.pageOpenerIndex(of: 0) == 0)
        #expect(plan.pageOpenerIndex(of: 63) == 0)
        #expect(plan.pageOpenerIndex(of: 64) == 64)
        #expect(plan.pageOpenerIndex(of: 100) == 64)
        #expect(plan.pageOpenerIndex(of: 140) == 128)
    }

    /// Property test over seeded random images: sparse data, 0xFF runs and holes, both families.
    @Test(arguments: 0..<200)
    func planPropertiesHoldForRandomImages(seed: Int) throws {
        var rng = SeededRandom(seed: UInt64(seed) &* 7919 &+ 17)
        let family: ChipFamily = Bool.random(using: &rng) ? .nrf52833 : .nrf51
        let layout = family.layout
        let page = family.pageSize
        let pagesAvailable = (layout.scratchPage - layout.applicationStart) / page
        let startPage = UInt32.random(in: 4..<(pagesAvailable - 8), using: &rng)
        let start = layout.applicationStart + startPage * page
        let maxLength = min(layout.scratchPage - start, page * 6)
        let length = UInt32.random(in: 32...maxLength, using: &rng)
        var image = MemoryImage()
        try image.write(MakeCodeProgram.magic + runtimeHash + newProgramHash, at: start)
        var cursor = start + 32
        while cursor < start + length {
            let run = min(UInt32.random(in: 1...300, using: &rng), start + length - cursor)
            switch Int.random(in: 0..<3, using: &rng) {
            case 0: try image.write((0..<run).map { _ in UInt8.random(in: 0...255, using: &rng) }, at: cursor)
            case 1: try image.write([UInt8](repeating: 0xFF, count: Int(run)), at: cursor)
            default: break  // a hole
            }
            cursor += run
        }
        let region = start..<((start + length + 63) & ~63)
        let program = MakeCodeProgram(
            magicAddress: start, runtimeHash: runtimeHash, programHash: newProgramHash,
            region: region)
        let boardEnd = Bool.random(using: &rng) ? layout.scratchPage : layout.scratchPage + 0x7FF
        let board = RegionInfo(id: 2, start: start, end: boardEnd, hash: oldProgramHash)
        let skip = Bool.random(using: &rng)
        let plan = try BlockPlan(
            image: image, program: program, boardRegion: board, family: family,
            skipErasedBlocks: skip)

        let addresses = plan.blocks.map(\.address)
        #expect(addresses == addresses.sorted() && Set(addresses).count == addresses.count, "sorted and unique")
        for block in plan.blocks {
            #expect(block.address % 64 == 0 && block.data.count == 64)
            #expect(
                block.address >= start && block.address + 64 <= min(boardEnd, layout.scratchPage),
                "never outside the declared region")
            #expect(block.data == image.read(block.address..<(block.address + 64), fill: 0xFF), "padded with 0xFF")
            #expect(block.opensPage == (block.address % page == 0))
        }
        // Every page the program touches is opened, and opened before its other blocks.
        var opened = Set<UInt32>()
        for block in plan.blocks {
            let pageStart = block.address & ~(page - 1)
            if block.opensPage { opened.insert(pageStart) }
            #expect(opened.contains(pageStart), "block \(Hex.address(block.address)) in a page that was not opened")
        }
        var touched = Set<UInt32>()
        var a = region.lowerBound & ~(page - 1)
        while a < region.upperBound { touched.insert(a); a += page }
        #expect(opened == touched)
        // Only all-0xFF, non-opening blocks are left out, and only when asked.
        let planned = Set(addresses)
        var b = region.lowerBound
        var left = 0
        while b < region.upperBound {
            if !planned.contains(b) {
                left += 1
                #expect(skip && b % page != 0 && image.read(b..<(b + 64), fill: 0xFF).allSatisfy { $0 == 0xFF })
            }
            b += 64
        }
        #expect(left == plan.skippedBlocks)
        #expect(plan.pagesOpened == touched.count && plan.byteCount == plan.blockCount * 64)
    }
}

extension BlockPlanTests {
    @Test func sealedPlanWritesTheProgramHashInABlockThatOpensNoPageBeforeTheLastProgramBlock() throws {
        let (image, program) = makeProgram(bodySize: 4000)
        let board = RegionInfo(id: 2, start: 0x47000, end: 0x73000, hash: oldProgramHash)
        let plain = try BlockPlan(image: image, program: program, boardRegion: board, family: .nrf52833)
        let sealed = try BlockPlan(
            image: image, program: program, boardRegion: board, family: .nrf52833, sealProgramHash: true)
        #expect(sealed.blockCount == plain.blockCount + 1)
        #expect(Array(sealed.blocks[0].data[24..<32]) == [UInt8](repeating: 0xFF, count: 8))
        let sealIndex = try #require(sealed.sealIndex)
        let seal = sealed.blocks[sealIndex]
        #expect(seal.address == program.magicAddress + 24 && !seal.opensPage)
        #expect(Array(seal.data[0..<8]) == program.programHash)
        // END_OF_TRANSMISSION re-burns the last block: the last program block, written once.
        #expect(sealIndex == sealed.blockCount - 2 && sealed.heldBackIndex == sealed.blockCount - 1)
        #expect(sealed.blocks.last == plain.blocks.last)
        #expect(Array(sealed.blocks[1..<sealIndex]) == Array(plain.blocks[1..<(plain.blockCount - 1)]))
    }
}
