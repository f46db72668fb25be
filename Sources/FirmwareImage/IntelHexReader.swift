/// A parsed Intel HEX or Universal Hex file: one memory image per board section.
public struct IntelHexFile: Sendable, Equatable {
    /// The data of one board (or of the whole file, for a plain Intel HEX).
    public struct Section: Sendable, Equatable {
        /// The Universal Hex board ID; nil for a plain Intel HEX.
        public var boardID: UInt16?
        public var image: MemoryImage
        /// The last start address record (03 or 05) of the section, if any. Not used for flashing.
        public var startAddress: StartAddress?
        /// Data records (00 and 0D) read.
        public var dataRecords: Int
        /// Type-0E records (tool data such as MakeCode source) skipped, and their data bytes.
        public var otherDataRecords: Int
        public var otherDataBytes: Int
        /// The line of the section's first block-start record (or 1).
        public var firstLine: Int
    }

    /// Sections in the order their first block start appears; exactly one for a plain Intel HEX.
    public var sections: [Section]
    /// The Universal Hex layout, nil for a plain Intel HEX.
    public var universalHexLayout: UniversalHex.Layout?
    /// How many records of each type the file has (before its end-of-file record).
    public var recordTypeCounts: [UInt8: Int]
    /// Lines in the file (a final line without a line ending counts).
    public var lineCount: Int
    public var warnings: [FirmwareWarning]

    public var isUniversalHex: Bool { universalHexLayout != nil }
}

/// Reads Intel HEX and Universal Hex files, from bytes or as they stream in.
///
/// Accepts record types 00-05 and 0A-0E, 0-255 data bytes per record, upper- and lower-case
/// digits, LF, CRLF or CR line endings, blank lines, leading and trailing spaces, a UTF-8 byte
/// order mark, 02 and 04 address records mixed, records in any address order and addresses up to
/// 4 GiB. 03/05 are kept, 0B/0C/0E skipped, 0D read as data. Records after the end-of-file record
/// are ignored with a warning (unless a Universal Hex block start follows). Overlapping records
/// must agree byte for byte.
///
/// One pass over the text, no per-record allocation: data is decoded straight into the current
/// contiguous run of its board, and runs are sorted and merged at the end. From a
/// `FirmwareByteSource` the text is read in pieces of `pieceSize` bytes and parsed a whole number
/// of lines at a time, so only the data and one piece are held, never the whole text.
public enum IntelHexReader {
    /// How much text is read at a time from a source: small enough that the allocator reuses
    /// the same memory for every piece (a whole process spends more on first touching fresh
    /// pages than on parsing them), large enough that a read call costs nothing per line.
    public static let pieceSize = 1 << 16
    /// The longest line read from a source: a record is at most 521 characters, so a line
    /// without a line break this long holds something else.
    public static let maximumLineLength = 1 << 16
    /// The most separate address ranges one board's data may fall into: firmware for these boards
    /// has a few dozen, and each range costs memory of its own.
    public static let maximumRuns = 1 << 16
    /// The most board sections a Universal Hex may have: these boards use six board IDs.
    public static let maximumSections = 64

    /// Parses `bytes`.
    /// - Throws: `FirmwareImageError` with the line and column of the first problem.
    public static func parse(_ bytes: [UInt8]) throws -> IntelHexFile {
        var source = ByteArraySource(bytes)
        return try parse(source: &source)
    }

    /// Parses the text `source` yields, a whole number of lines at a time.
    /// - Throws: `FirmwareImageError` with the line and column of the first problem; what the source throws.
    public static func parse(source: inout some FirmwareByteSource) throws -> IntelHexFile {
        var pass = HexPass(trace: nil)
        try run(&pass, source: &source)
        // File the last runs while the buffers are uniquely referenced (no copy), then let go.
        for k in pass.accumulators.indices { pass.accumulators[k].flush() }
        var accumulators = pass.accumulators
        pass.accumulators = []
        var sections: [IntelHexFile.Section] = []
        for k in accumulators.indices {
            let id = accumulators[k].boardID
            sections.append(
                try finish(&accumulators[k]) { address in try conflict(at: address, boardID: id, source: &source) })
        }
        var layout: UniversalHex.Layout?
        if pass.blockStarts > 0 {
            layout = pass.blockStarts > accumulators.filter({ $0.boardID != nil }).count ? .blocks : .sections
        }
        var counts: [UInt8: Int] = [:]
        for (t, c) in pass.typeCounts.enumerated() where c > 0 { counts[UInt8(t)] = c }
        return IntelHexFile(
            sections: sections, universalHexLayout: layout, recordTypeCounts: counts,
            lineCount: pass.lineCount, warnings: pass.warnings)
    }

    /// Feeds `source` to `pass` in pieces cut after a line break; the text after the last line
    /// break of a piece is carried over to the next one.
    private static func run(_ pass: inout HexPass, source: inout some FirmwareByteSource) throws {
        var carry: [UInt8] = []
        while true {
            let piece = try source.read(maximum: pieceSize)
            if piece.isEmpty {
                _ = try pass.feed(carry, end: carry.count, final: true)
                return
            }
            var buffer: [UInt8]
            if carry.isEmpty {
                buffer = piece
            } else {
                buffer = carry
                buffer.append(contentsOf: piece)
            }
            carry = []
            var end = lineBreakEnd(in: buffer)
            var partial = false
            if end == 0 {
                // No line break at all: read on, unless the line is already longer than any record.
                guard buffer.count > maximumLineLength else {
                    carry = buffer
                    continue
                }
                end = buffer.count
                partial = true
            }
            let consumed = try pass.feed(buffer, end: end, final: false, partialLine: partial)
            if consumed < buffer.count { carry = Array(buffer[consumed...]) }
        }
    }

    /// One past the last LF of `buffer`, or past its last CR when that is not its last byte (a CR
    /// at the very end may be the first half of a CR LF); 0 when there is no such line break.
    private static func lineBreakEnd(in buffer: [UInt8]) -> Int {
        var k = buffer.count - 1
        var lastCR = 0
        while k >= 0 {
            let c = buffer[k]
            if c == IntelHexSyntax.lf { return k + 1 }
            if c == IntelHexSyntax.cr, lastCR == 0, k < buffer.count - 1 { lastCR = k + 1 }
            k -= 1
        }
        return lastCR
    }

    /// Sorts and merges an accumulator's runs into a memory image; `conflict` finds the lines of
    /// a byte two records disagree about.
    private static func finish(_ acc: inout HexAccumulator, conflict: (UInt32) throws -> FirmwareImageError) throws
        -> IntelHexFile.Section
    {
        var chunks = acc.chunks
        acc.chunks = []
        if chunks.count > 1 {
            chunks.sort { $0.start != $1.start ? $0.start < $1.start : $0.line < $1.line }
        }
        var segments: [MemoryImage.Segment] = []
        let buffer = acc.buffer
        acc.buffer = []
        for chunk in chunks {
            let start = UInt64(chunk.start), end = start + UInt64(chunk.count)
            let bytes = buffer[chunk.offset..<(chunk.offset + chunk.count)]
            let li = segments.count - 1
            guard li >= 0, start <= UInt64(segments[li].end) else {
                guard segments.count < maximumRuns else {
                    throw FirmwareImageError.tooManyRuns(boardID: acc.boardID, limit: maximumRuns)
                }
                segments.append(MemoryImage.Segment(start: chunk.start, bytes: Array(bytes)))
                continue
            }
            // Touches or overlaps the last segment (records out of order, or repeated): overlapping
            // bytes must agree, the rest is appended. Indexing `segments` in place avoids a copy.
            let lastEnd = UInt64(segments[li].end)
            let offset = Int(chunk.start - segments[li].start)
            let overlap = Int(min(end, lastEnd) - start)
            for k in 0..<overlap where segments[li].bytes[offset + k] != bytes[bytes.startIndex + k] {
                throw try conflict(chunk.start + UInt32(k))
            }
            if end > lastEnd {
                segments[li].bytes.append(contentsOf: bytes[(bytes.startIndex + Int(lastEnd - start))...])
            }
        }
        chunks = []
        return IntelHexFile.Section(
            boardID: acc.boardID, image: MemoryImage(segments: segments),
            startAddress: acc.startAddress, dataRecords: acc.dataRecords,
            otherDataRecords: acc.otherDataRecords, otherDataBytes: acc.otherDataBytes,
            firstLine: acc.firstLine)
    }

    /// Reads the text again, collecting every record that writes `address` in that board, to name both lines.
    @inline(never)
    private static func conflict(at address: UInt32, boardID: UInt16?, source: inout some FirmwareByteSource) throws
        -> FirmwareImageError
    {
        var hits: [(position: TextPosition, byte: UInt8)] = []
        if (try? source.rewind()) != nil {
            var pass = HexPass(trace: HexTrace(boardID: boardID, address: address))
            do { try run(&pass, source: &source) } catch let error as FirmwareImageError { return error }
            hits = pass.trace?.hits ?? []
        }
        guard let first = hits.first, let second = hits.first(where: { $0.byte != first.byte }) else {
            return .overlappingData(
                TextPosition(line: 0, column: 0), address: address, boardID: boardID,
                byte: 0, firstLine: 0, firstByte: 0)
        }
        return .overlappingData(
            second.position, address: address, boardID: boardID, byte: second.byte,
            firstLine: first.position.line, firstByte: first.byte)
    }
}
