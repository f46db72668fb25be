/// A sparse image of a board's memory: the bytes a firmware file puts at each address.
///
/// Every firmware format produces one. Segments are kept sorted, disjoint and
/// non-adjacent (touching segments are merged), so `runs` is the list of
/// contiguous address ranges that hold data, in address order.
public struct MemoryImage: Sendable, Equatable {
    /// One contiguous run of bytes.
    public struct Segment: Sendable, Equatable {
        public var start: UInt32
        public var bytes: [UInt8]
        public var end: UInt32 { start + UInt32(bytes.count) }
        public var range: Range<UInt32> { start..<end }
        public init(start: UInt32, bytes: [UInt8]) {
            self.start = start
            self.bytes = bytes
        }
    }

    public private(set) var segments: [Segment] = []

    public init() {}

    public init(segments: [Segment]) {
        for s in segments { try? write(s.bytes, at: s.start, overwrite: true) }
    }

    /// The contiguous address ranges that hold data, in address order.
    public var runs: [Range<UInt32>] { segments.map { $0.range } }

    /// The number of data bytes held.
    public var byteCount: Int { segments.reduce(0) { $0 + $1.bytes.count } }

    public var isEmpty: Bool { segments.isEmpty }

    /// The lowest and one past the highest address holding data.
    public var span: Range<UInt32>? {
        guard let first = segments.first, let last = segments.last else { return nil }
        return first.start..<last.end
    }

    /// Writes `bytes` at `address`. Without `overwrite`, writing a different byte over
    /// existing data throws `FirmwareImageError.imageConflict` and leaves the image unchanged; the same byte is fine.
    public mutating func write(_ bytes: [UInt8], at address: UInt32, overwrite: Bool = false) throws {
        guard !bytes.isEmpty else { return }
        guard UInt64(address) + UInt64(bytes.count) <= UInt64(UInt32.max) else {
            throw FirmwareImageError.imagePastAddressSpace(address: address, count: bytes.count)
        }
        let end = address &+ UInt32(bytes.count)
        // Index of the first segment that ends at or after `address` (touching counts).
        let lo = firstSegmentIndex(endingAtOrAfter: address)
        if !overwrite {
            var i = lo
            while i < segments.count, segments[i].start < end {
                let s = segments[i]
                let from = max(s.start, address), to = min(s.end, end)
                if from < to {
                    for a in from..<to {
                        let old = s.bytes[Int(a - s.start)], new = bytes[Int(a - address)]
                        if old != new { throw FirmwareImageError.imageConflict(address: a, existing: old, new: new) }
                    }
                }
                i += 1
            }
        }
        // Fast path: append to the end of the last segment or after it.
        if lo == segments.count {
            if let last = segments.last, last.end == address {
                segments[segments.count - 1].bytes.append(contentsOf: bytes)
            } else {
                segments.append(Segment(start: address, bytes: bytes))
            }
            return
        }
        // Merge every segment that overlaps or touches [address, end).
        var hi = lo
        while hi < segments.count, segments[hi].start <= end { hi += 1 }
        if lo == hi {
            segments.insert(Segment(start: address, bytes: bytes), at: lo)
            return
        }
        let newStart = min(segments[lo].start, address)
        let newEnd = max(segments[hi - 1].end, end)
        var merged = [UInt8](repeating: 0, count: Int(newEnd - newStart))
        for s in segments[lo..<hi] {
            let o = Int(s.start - newStart)
            merged.replaceSubrange(o..<(o + s.bytes.count), with: s.bytes)
        }
        let o = Int(address - newStart)
        merged.replaceSubrange(o..<(o + bytes.count), with: bytes)
        segments.replaceSubrange(lo..<hi, with: [Segment(start: newStart, bytes: merged)])
    }

    /// The byte at `address`, or nil where the image holds no data.
    public func byte(at address: UInt32) -> UInt8? {
        let i = firstSegmentIndex(endingAfter: address)
        guard i < segments.count, segments[i].start <= address else { return nil }
        return segments[i].bytes[Int(address - segments[i].start)]
    }

    /// The bytes of `range`, with `fill` where the image holds no data.
    public func read(_ range: Range<UInt32>, fill: UInt8 = 0xFF) -> [UInt8] {
        var out = [UInt8](repeating: fill, count: range.count)
        var i = firstSegmentIndex(endingAfter: range.lowerBound)
        while i < segments.count, segments[i].start < range.upperBound {
            let s = segments[i]
            let from = max(s.start, range.lowerBound), to = min(s.end, range.upperBound)
            if from < to {
                out.replaceSubrange(
                    Int(from - range.lowerBound)..<Int(to - range.lowerBound),
                    with: s.bytes[Int(from - s.start)..<Int(to - s.start)])
            }
            i += 1
        }
        return out
    }

    /// True when any byte of `range` holds data (never for an empty range).
    public func hasData(in range: Range<UInt32>) -> Bool {
        guard !range.isEmpty else { return false }
        let i = firstSegmentIndex(endingAfter: range.lowerBound)
        return i < segments.count && segments[i].start < range.upperBound
    }

    /// The part of the image inside `range`.
    public func slice(_ range: Range<UInt32>) -> MemoryImage {
        var out = MemoryImage()
        for s in segments where s.start < range.upperBound && s.end > range.lowerBound {
            let from = max(s.start, range.lowerBound), to = min(s.end, range.upperBound)
            out.segments.append(Segment(start: from, bytes: Array(s.bytes[Int(from - s.start)..<Int(to - s.start)])))
        }
        return out
    }

    /// Addresses of the `size`-aligned chunks (pages, 64-byte blocks) that hold data,
    /// in address order. `size` must be a power of two.
    public func alignedChunks(size: UInt32, in range: Range<UInt32>? = nil) -> [UInt32] {
        precondition(size > 0 && size & (size - 1) == 0, "chunk size must be a power of two")
        var out: [UInt32] = []
        for s in segments {
            var from = s.start, to = s.end
            if let r = range { from = max(from, r.lowerBound); to = min(to, r.upperBound) }
            guard from < to else { continue }
            var a = from & ~(size - 1)
            while a < to {
                if out.last != a { out.append(a) }
                let (next, overflow) = a.addingReportingOverflow(size)
                if overflow { break }
                a = next
            }
        }
        return out
    }

    private func firstSegmentIndex(endingAfter address: UInt32) -> Int {
        var lo = 0, hi = segments.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if segments[mid].end <= address { lo = mid + 1 } else { hi = mid }
        }
        return lo
    }

    private func firstSegmentIndex(endingAtOrAfter address: UInt32) -> Int {
        var lo = 0, hi = segments.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if segments[mid].end < address { lo = mid + 1 } else { hi = mid }
        }
        return lo
    }
}
