import FirmwareImage

/// A board's flash memory with the chip's real semantics.
///
/// Erasing a page sets it to 0xFF. Writing can only clear bits: the stored byte
/// becomes `old & new`, so writing over data that was not erased corrupts it, as on
/// nRF51/nRF52 NVMC. Every erase and word write is counted, and every written range
/// is logged so that callers can check nothing was written outside a region.
public struct FlashMemory: Sendable, Equatable {
    public let size: UInt32
    public let pageSize: UInt32
    private var storage: [UInt8]
    /// Pages erased since creation (or `resetCounters`).
    public private(set) var eraseCount = 0
    /// 32-bit words written since creation (or `resetCounters`).
    public private(set) var wordWriteCount = 0
    /// Written address ranges in order; a write that continues the previous range extends it.
    public private(set) var writeLog: [Range<UInt32>] = []
    /// Start addresses of erased pages, in order.
    public private(set) var eraseLog: [UInt32] = []
    /// Erases and writes the runtime made in its own key-value page (and DAL's scratch page)
    /// to keep its keys (`KeyValueStore`). They are the board's bookkeeping, not writes a
    /// client asked for, so they stay out of the counters and logs above.
    public private(set) var storageOperations = 0
    /// Of `storageOperations`: the pages erased and the words written (for the time they take).
    public private(set) var storageErases = 0
    public private(set) var storageWords = 0
    /// Writes of each word (by address) since its page was last erased: the count the product
    /// specifications bound by nWRITE (`writesPerWordLimit`). Only a completed erase clears it.
    public private(set) var writesSinceErase: [UInt32: Int] = [:]
    /// The most writes any one word took between two erases since creation (or `resetCounters`).
    public private(set) var mostWritesPerWord = 0
    /// Words written more often than `writesPerWordLimit` between two erases, since creation
    /// (or `resetCounters`), each counted once per excess write.
    public private(set) var writesOverLimit = 0

    /// nWRITE: how many times one 32-bit word may be written between two erases of its page.
    /// The nRF52 product specifications say "the same 32-bit word in the flash can only be written
    /// nWRITE number of times before a page erase must be performed" and that writing all-ones
    /// bits still counts (nRF52840 PS §4.3.1, NVMC); the nRF5340 PS lists nWRITE = 2. The nRF52833
    /// and nRF51822 figures were not found in the sources read: 2 is taken for both, the lowest
    /// figure found. What a chip does past it is not specified (the model keeps `old & new` and
    /// only counts the excess in `writesOverLimit`).
    public static let writesPerWordLimit = 2

    /// A blank (all 0xFF) flash of the layout's size and page size.
    public init(layout: MemoryLayout) {
        size = layout.flashSize
        pageSize = layout.pageSize
        storage = [UInt8](repeating: 0xFF, count: Int(layout.flashSize))
    }

    /// A flash that holds `image` (programmed as by a debugger: not counted, not logged).
    /// - Throws: `SimulatedBoardError.imageOutsideFlash` when the image does not fit.
    public init(layout: MemoryLayout, image: MemoryImage) throws {
        self.init(layout: layout)
        for s in image.segments {
            guard s.end <= size else { throw SimulatedBoardError.imageOutsideFlash(address: max(s.start, size)) }
            storage.replaceSubrange(Int(s.start)..<Int(s.end), with: s.bytes)
        }
    }

    /// The bytes of `range`.
    /// - Throws: `SimulatedBoardError.addressOutOfRange` outside the flash.
    public func read(_ range: Range<UInt32>) throws -> [UInt8] {
        guard range.upperBound <= size else {
            throw SimulatedBoardError.addressOutOfRange(address: range.lowerBound, count: range.count, flashSize: size)
        }
        return Array(storage[Int(range.lowerBound)..<Int(range.upperBound)])
    }

    /// The byte at `address`, or nil outside the flash.
    public func byte(at address: UInt32) -> UInt8? {
        address < size ? storage[Int(address)] : nil
    }

    /// The start of the page holding `address`.
    public func pageStart(of address: UInt32) -> UInt32 { address & ~(pageSize - 1) }

    /// True when the page holding `address` is all 0xFF (false outside the flash).
    public func isBlank(pageAt address: UInt32) -> Bool {
        let start = pageStart(of: address)
        guard start < size else { return false }
        return storage[Int(start)..<Int(start + pageSize)].allSatisfy { $0 == 0xFF }
    }

    /// Erases the page holding `address`.
    public mutating func erasePage(at address: UInt32) throws {
        let start = pageStart(of: address)
        guard start < size else {
            throw SimulatedBoardError.addressOutOfRange(address: address, count: Int(pageSize), flashSize: size)
        }
        storage.replaceSubrange(
            Int(start)..<Int(start + pageSize),
            with: repeatElement(0xFF, count: Int(pageSize)))
        eraseCount += 1
        eraseLog.append(start)
        forgetWrites(inPageAt: start)
    }

    /// A completed erase: the page's words may be written `writesPerWordLimit` times again.
    private mutating func forgetWrites(inPageAt start: UInt32) {
        guard !writesSinceErase.isEmpty else { return }
        for word in stride(from: start, to: start + pageSize, by: 4) { writesSinceErase[word] = nil }
    }

    /// Counts one write of each word of `range` (word-aligned).
    private mutating func countWrites(_ range: Range<UInt32>) {
        for word in stride(from: range.lowerBound & ~3, to: range.upperBound, by: 4) {
            let n = writesSinceErase[word, default: 0] + 1
            writesSinceErase[word] = n
            mostWritesPerWord = max(mostWritesPerWord, n)
            if n > Self.writesPerWordLimit { writesOverLimit += 1 }
        }
    }

    /// The state of a page whose erase is under way: its first half already reads 0xFF, the
    /// rest still holds the old bytes. `erasePage` completes it; a reset before that leaves the
    /// page torn, neither blank nor as it was (not counted or logged as an erase).
    public mutating func beginErase(pageAt address: UInt32) {
        let start = pageStart(of: address)
        guard start < size else { return }
        storage.replaceSubrange(
            Int(start)..<Int(start + pageSize / 2), with: repeatElement(0xFF, count: Int(pageSize / 2)))
    }

    /// Writes whole 32-bit words: every stored byte becomes `old & new`.
    /// - Throws: `unalignedWrite` unless `address` and the length are multiples of 4;
    ///   `addressOutOfRange` outside the flash. Nothing is written when it throws.
    public mutating func writeWords(_ bytes: [UInt8], at address: UInt32) throws {
        guard address % 4 == 0, bytes.count % 4 == 0 else { throw SimulatedBoardError.unalignedWrite(address: address) }
        guard UInt64(address) + UInt64(bytes.count) <= UInt64(size) else {
            throw SimulatedBoardError.addressOutOfRange(address: address, count: bytes.count, flashSize: size)
        }
        let base = Int(address)
        for (i, b) in bytes.enumerated() { storage[base + i] &= b }
        wordWriteCount += bytes.count / 4
        let range = address..<(address + UInt32(bytes.count))
        countWrites(range)
        if let last = writeLog.last, last.upperBound == range.lowerBound {
            writeLog[writeLog.count - 1] = last.lowerBound..<range.upperBound
        } else if !range.isEmpty {
            writeLog.append(range)
        }
    }

    /// Erases a page for the runtime's key-value store (not counted or logged as a client's erase).
    mutating func eraseForStorage(pageAt address: UInt32) {
        let start = pageStart(of: address)
        guard start < size else { return }
        storage.replaceSubrange(Int(start)..<Int(start + pageSize), with: repeatElement(0xFF, count: Int(pageSize)))
        storageOperations += 1
        storageErases += 1
        forgetWrites(inPageAt: start)
    }

    /// Writes words for the runtime's key-value store (`old & new`, not counted or logged as a client's write).
    mutating func writeForStorage(_ bytes: [UInt8], at address: UInt32) {
        guard UInt64(address) + UInt64(bytes.count) <= UInt64(size) else { return }
        for (i, b) in bytes.enumerated() { storage[Int(address) + i] &= b }
        storageOperations += 1
        storageWords += (bytes.count + 3) / 4
        countWrites(address..<(address + UInt32(bytes.count)))
    }

    /// Forgets the counters and logs (the contents stay).
    public mutating func resetCounters() {
        eraseCount = 0
        wordWriteCount = 0
        writeLog = []
        eraseLog = []
        storageOperations = 0
        storageErases = 0
        storageWords = 0
        mostWritesPerWord = 0
        writesOverLimit = 0
    }

    /// Start addresses of the pages that hold anything but 0xFF.
    public var nonBlankPages: [UInt32] {
        stride(from: UInt32(0), to: size, by: Int(pageSize)).filter { !isBlank(pageAt: $0) }
    }

    /// The flash contents as an image of its non-blank pages.
    public var image: MemoryImage {
        var out = MemoryImage()
        for p in nonBlankPages {
            try? out.write(Array(storage[Int(p)..<Int(p + pageSize)]), at: p, overwrite: true)
        }
        return out
    }

    /// True when every written range lies inside `region`.
    public func writesStay(inside region: Range<UInt32>) -> Bool {
        writeLog.allSatisfy { $0.lowerBound >= region.lowerBound && $0.upperBound <= region.upperBound }
    }
}
