import FirmwareImage
import PartialFlashingFrames

/// The 64-byte blocks partial flashing writes, in order.
///
/// Rules (docs/protocols/partial-flashing.md §3.3-§3.4): a board erases a page only when a
/// block at the page's start arrives, so the first block of every page the program
/// touches is always sent, and before any other block of that page. Nothing is planned
/// outside the region the board declared (clipped to the scratch page). Blocks are
/// padded with 0xFF. All-0xFF blocks inside an opened page may be left out: the erase
/// already made them 0xFF.
public struct BlockPlan: Sendable, Equatable {
    /// One block: an absolute address and 64 bytes.
    public struct Block: Sendable, Equatable {
        public let address: UInt32
        public let data: [UInt8]
        /// True when the block starts a flash page: the board erases the page first.
        public let opensPage: Bool
    }

    /// The number of bytes in a block.
    public static let blockSize: UInt32 = 64

    /// The blocks, sorted by address (with `sealProgramHash`, followed by the block that writes the program hash).
    public let blocks: [Block]
    /// The flash page size the plan was made for.
    public let pageSize: UInt32
    /// All-0xFF blocks left out.
    public let skippedBlocks: Int
    /// The index of the block that writes the program hash last (see `sealed`), or nil.
    public let sealIndex: Int?

    public var blockCount: Int { blocks.count }
    /// Pages erased and written.
    public var pagesOpened: Int { blocks.reduce(0) { $0 + ($1.opensPage ? 1 : 0) } }
    /// Bytes sent (64 per block).
    public var byteCount: Int { blocks.count * Int(Self.blockSize) }

    /// Plans the blocks of `program` from `image`.
    ///
    /// - Parameters:
    ///   - image: the board image of the file.
    ///   - program: the file's MakeCode program; its `region` is what is written.
    ///   - boardRegion: region 2 as the board declared it.
    ///   - family: gives the page size and the scratch page.
    ///   - skipErasedBlocks: leave out all-0xFF blocks that do not open a page.
    ///   - sealProgramHash: write the program hash in a last block (see `sealed`).
    /// - Throws: `PartialFlashError.programNotPageAligned` when the program's first page
    ///   cannot be opened, `.programDoesNotFit` when data lies outside the writable region,
    ///   `.nothingToWrite` when the region is empty.
    public init(
        image: MemoryImage, program: MakeCodeProgram, boardRegion: RegionInfo, family: ChipFamily,
        skipErasedBlocks: Bool = true, sealProgramHash: Bool = false
    ) throws(PartialFlashError) {
        let page = family.pageSize
        let writable = PartialFlashDecision.writableRange(of: boardRegion, family: family)
        // Only whole blocks below the limit may be written.
        let limit = writable.upperBound & ~(Self.blockSize - 1)
        let region = program.region
        guard !region.isEmpty else { throw .nothingToWrite }
        guard region.lowerBound % page == 0 else {
            throw .programNotPageAligned(start: region.lowerBound, pageSize: page)
        }
        guard region.lowerBound >= writable.lowerBound, region.lowerBound < limit else {
            throw .programDoesNotFit(program: region, writable: writable)
        }
        let (paddedEnd, overflow) = region.upperBound.addingReportingOverflow(Self.blockSize - 1)
        let wanted = overflow ? UInt32.max & ~(Self.blockSize - 1) : paddedEnd & ~(Self.blockSize - 1)
        let end = min(wanted, limit)
        if end < wanted, image.hasData(in: end..<region.upperBound) {
            throw .programDoesNotFit(program: region, writable: writable)
        }
        var blocks: [Block] = []
        var skipped = 0
        var address = region.lowerBound
        while address < end {
            let data = image.read(address..<(address + Self.blockSize), fill: 0xFF)
            let opens = address % page == 0
            if skipErasedBlocks, !opens, data.allSatisfy({ $0 == 0xFF }) {
                skipped += 1
            } else {
                blocks.append(Block(address: address, data: data, opensPage: opens))
            }
            address += Self.blockSize
        }
        let sealed = sealProgramHash ? Self.sealed(blocks, magic: program.magicAddress, image: image) : blocks
        self.blocks = sealed
        let sealAt = program.magicAddress + UInt32(Self.hashOffset)
        self.sealIndex = sealed.count > blocks.count ? sealed.firstIndex { $0.address == sealAt } : nil
        self.pageSize = page
        self.skippedBlocks = skipped
    }

    /// nWRITE: how many times one 32-bit word may be written between two erases of its page.
    /// The nRF52840 Product Specification (§4.3.1, NVMC) bounds the writes of a word between
    /// erases by nWRITE, all-ones bits included, and the nRF5340 PS gives 2; the nRF52833 and
    /// nRF51822 figures were not found, so 2 is taken for every board (as the simulated flash
    /// counts, `FlashMemory.writesPerWordLimit`).
    public static let writesPerWordLimit = 2

    /// Where the program hash lies, from the magic.
    static let hashOffset = 24

    /// The blocks with the program hash written last but one: the first block carries 0xFF where
    /// the hash goes (magic + 24, 8 bytes), and a block at magic + 24 (not a page start, so
    /// nothing is erased; its other bytes repeat what was written, and flash only clears bits)
    /// writes it. A board whose flash was interrupted therefore never reports the new
    /// program's hash, and the next run flashes again instead of calling it up to date.
    ///
    /// The last planned block goes after the hash block (when it does not overlap it): the hash
    /// block's words were written once already, by the blocks it overlaps, and
    /// END_OF_TRANSMISSION burns the last block received once more (CODAL and DAL
    /// `partialFlashingEvent`), so the hash block must not be that last one. Sent last, the held
    /// back block is written once and burnt again once: no word is written more than twice
    /// between erases (`FlashMemory.writesPerWordLimit`, nWRITE).
    static func sealed(_ blocks: [Block], magic: UInt32, image: MemoryImage) -> [Block] {
        guard let first = blocks.first, first.address == magic, first.opensPage else { return blocks }
        var blank = first.data
        blank.replaceSubrange(hashOffset..<(hashOffset + 8), with: repeatElement(0xFF, count: 8))
        let sealAt = magic + UInt32(hashOffset)
        let seal = Block(address: sealAt, data: image.read(sealAt..<(sealAt + blockSize), fill: 0xFF), opensPage: false)
        var rest = Array(blocks.dropFirst())
        var after: [Block] = []
        if let last = rest.last, last.address >= sealAt + blockSize {
            after = [rest.removeLast()]
        }
        return [Block(address: first.address, data: blank, opensPage: true)] + rest + [seal] + after
    }

    /// The block sent after the hash block (see `sealed`), if any.
    public var heldBackIndex: Int? {
        guard let seal = sealIndex, seal + 1 < blocks.count else { return nil }
        return seal + 1
    }

    /// A plan from blocks made elsewhere (tests, tools); no rule is checked.
    init(blocks: [Block], pageSize: UInt32, skippedBlocks: Int = 0) {
        self.blocks = blocks
        self.pageSize = pageSize
        self.skippedBlocks = skippedBlocks
        self.sealIndex = nil
    }

    /// The blocks (indices) of the page that is cheapest to write again as it is: the page with
    /// the fewest planned blocks, opener first, other than the first page, which holds the
    /// program's magic and hashes (a rewrite of it cut short would leave a board that reports no
    /// program). With a one-page program, the whole plan (with the block that seals the hash).
    /// Ties go to the later page. Used to end an unfinished flash with END_OF_TRANSMISSION on a
    /// board whose flash holds the program already (docs/protocols/board-storage.md §7).
    public var cheapestPage: Range<Int> {
        let end = sealIndex ?? blocks.count
        let openers = blocks[..<end].indices.filter { blocks[$0].opensPage }
        // The held-back block's page is not whole before the hash block: never a candidate.
        let heldPage = heldBackIndex.map { blocks[$0].address / pageSize }
        var best: Range<Int>?
        for (k, opener) in openers.enumerated() where opener > 0 && blocks[opener].address / pageSize != heldPage {
            let page = opener..<(k + 1 < openers.count ? openers[k + 1] : end)
            if best == nil || page.count <= best!.count { best = page }
        }
        return best ?? 0..<blocks.count
    }

    /// The index of the block that opens the page holding block `index`: where a write
    /// resumes after the link was lost (see `PartialFlashWriter`).
    public func pageOpenerIndex(of index: Int) -> Int {
        guard index > 0, index < blocks.count else { return max(0, min(index, blocks.count)) }
        var i = index
        while i > 0, !blocks[i].opensPage { i -= 1 }
        return i
    }
}
