import FirmwareImage
import PartialFlashingFrames

/// The three REGION_INFO entries a runtime computes by scanning its own flash, afresh for each
/// REGION_INFO request (CODAL and DAL `onDataWritten` build a `MicroBitMemoryMap` per request,
/// whose constructor calls `findHashes`; docs/protocols/partial-flashing.md §2.1, §5.2).
public enum MemoryMapScan {
    /// CODAL: scan page boundaries from `runtimeEnd` (rounded up) below the scratch page for
    /// the MakeCode magic. Found: 0 = [0, app start), 1 = [app start, runtime end) with the
    /// hash at magic+16, 2 = [magic, scratch page) with the hash at magic+24. Not found: all zero.
    /// DAL: always 0 = [0, 0x18000), 1 = [0x18000, runtime end), 2 = [next page, 0x3BBFF];
    /// with the magic, region 2 starts there and the hashes are filled in.
    public static func regions(
        flash: FlashMemory, layout: MemoryLayout, runtime: BoardRuntime,
        runtimeEnd: UInt32
    ) -> [RegionInfo] {
        let zero = [UInt8](repeating: 0, count: 8)
        let page = layout.pageSize
        let scanStart = (runtimeEnd &+ page &- 1) & ~(page - 1)
        let magic = findMagic(flash: flash, from: scanStart, below: layout.scratchPage, page: page)
        func bytes(_ at: UInt32) -> [UInt8] { (try? flash.read(at..<(at + 8))) ?? zero }
        switch runtime {
        case .codal:
            guard let m = magic else {
                return (0..<3).map { RegionInfo(id: UInt8($0), start: 0, end: 0, hash: zero) }
            }
            return [
                RegionInfo(id: 0, start: 0, end: layout.applicationStart, hash: zero),
                RegionInfo(id: 1, start: layout.applicationStart, end: runtimeEnd, hash: bytes(m + 16)),
                RegionInfo(id: 2, start: m, end: layout.scratchPage, hash: bytes(m + 24))
            ]
        case .dal:
            return [
                RegionInfo(id: 0, start: 0, end: layout.applicationStart, hash: zero),
                RegionInfo(
                    id: 1, start: layout.applicationStart, end: runtimeEnd,
                    hash: magic.map { bytes($0 + 16) } ?? zero),
                RegionInfo(
                    id: 2, start: magic ?? scanStart, end: 0x3BBFF,
                    hash: magic.map { bytes($0 + 24) } ?? zero)
            ]
        }
    }

    static func findMagic(flash: FlashMemory, from start: UInt32, below end: UInt32, page: UInt32) -> UInt32? {
        var a = start
        while a < end {
            if let b = try? flash.read(a..<(a + 16)), b == MakeCodeProgram.magic { return a }
            a += page
        }
        return nil
    }

    /// The runtime end a real build would have for `image`: just past the last byte that is
    /// neither 0x00 nor 0xFF below the program's magic (MakeCode fills the gap up to the
    /// page-aligned program start with zeros), rounded up to 8; the application start when
    /// nothing precedes it.
    public static func deriveRuntimeEnd(image: MemoryImage, layout: MemoryLayout) -> UInt32 {
        let app = layout.applicationStart
        var magicAt: UInt32? = nil
        var a = app
        while a < layout.scratchPage {
            if image.read(a..<(a + 16), fill: 0xFF) == MakeCodeProgram.magic { magicAt = a; break }
            a += layout.pageSize
        }
        let limit = magicAt ?? min(image.span?.upperBound ?? app, layout.scratchPage)
        guard limit > app else { return app }
        for seg in image.segments.reversed() where seg.start < limit && seg.end > app {
            let from = max(seg.start, app), to = min(seg.end, limit)
            var i = to
            while i > from {
                i -= 1
                let b = seg.bytes[Int(i - seg.start)]
                if b != 0x00 && b != 0xFF { return min((i + 8) & ~7, limit) }
            }
        }
        return app
    }
}
