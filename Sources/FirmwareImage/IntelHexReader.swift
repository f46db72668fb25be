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
    /// How much text is read at a time from a source.
    public static let pieceSize = 1 << 20
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
        var pass = Pass(trace: nil)
        try run(&pass, source: &source)
        // File the last runs while the buffers are uniquely referenced (no copy), then let go.
        for k in pass.accumulators.indices { pass.accumulators[k].flush() }
        var accumulators = pass.accumulators
        pass.accumulators = []
        var sections: [IntelHexFile.Section] = []
        for k in accumulators.indices {
            let id = accumulators[k].boardID
            sections.append(try finish(&accumulators[k]) { address in try conflict(at: address, boardID: id, source: &source) })
        }
        var layout: UniversalHex.Layout?
        if pass.blockStarts > 0 {
            layout = pass.blockStarts > accumulators.filter({ $0.boardID != nil }).count ? .blocks : .sections
        }
        var counts: [UInt8: Int] = [:]
        for (t, c) in pass.typeCounts.enumerated() where c > 0 { counts[UInt8(t)] = c }
        return IntelHexFile(sections: sections, universalHexLayout: layout, recordTypeCounts: counts,
                            lineCount: pass.lineCount, warnings: pass.warnings)
    }

    /// Feeds `source` to `pass` in pieces cut after a line break; the text after the last line
    /// break of a piece is carried over to the next one.
    private static func run(_ pass: inout Pass, source: inout some FirmwareByteSource) throws {
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
    private static func finish(_ acc: inout Accumulator, conflict: (UInt32) throws -> FirmwareImageError) throws -> IntelHexFile.Section {
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
        return IntelHexFile.Section(boardID: acc.boardID, image: MemoryImage(segments: segments),
                                    startAddress: acc.startAddress, dataRecords: acc.dataRecords,
                                    otherDataRecords: acc.otherDataRecords, otherDataBytes: acc.otherDataBytes,
                                    firstLine: acc.firstLine)
    }

    /// Reads the text again, collecting every record that writes `address` in that board, to name both lines.
    @inline(never)
    private static func conflict(at address: UInt32, boardID: UInt16?, source: inout some FirmwareByteSource) throws -> FirmwareImageError {
        var hits: [(position: TextPosition, byte: UInt8)] = []
        if (try? source.rewind()) != nil {
            var pass = Pass(trace: Trace(boardID: boardID, address: address))
            do { try run(&pass, source: &source) } catch let error as FirmwareImageError { return error }
            hits = pass.trace?.hits ?? []
        }
        guard let first = hits.first, let second = hits.first(where: { $0.byte != first.byte }) else {
            return .overlappingData(TextPosition(line: 0, column: 0), address: address, boardID: boardID,
                                    byte: 0, firstLine: 0, firstByte: 0)
        }
        return .overlappingData(second.position, address: address, boardID: boardID, byte: second.byte,
                                firstLine: first.position.line, firstByte: first.byte)
    }
}

/// A contiguous run of data as it was read, before sorting: where its bytes are in the
/// accumulator's buffer.
private struct Chunk {
    var start: UInt32
    var offset32: UInt32
    var count32: UInt32
    var line32: Int32

    init(start: UInt32, offset: Int, count: Int, line: Int) {
        self.start = start
        offset32 = UInt32(truncatingIfNeeded: offset)
        count32 = UInt32(truncatingIfNeeded: count)
        line32 = Int32(truncatingIfNeeded: line)
    }

    var offset: Int { Int(offset32) }
    var count: Int { Int(count32) }
    var line: Int { Int(line32) }
}

/// The data of one board while reading.
private struct Accumulator {
    var boardID: UInt16?
    var chunks: [Chunk] = []
    /// Every data byte of the board, run after run, in the order read: records are decoded
    /// straight into it at `used`, and it always has room for one more record (255 bytes). A
    /// file of many small scattered records costs one index entry per run, not one array.
    var buffer: [UInt8] = []
    var used = 0
    /// The run being extended is `buffer[runOffset..<used]`, at `currentStart`.
    var runOffset = 0
    var currentStart: UInt32 = 0
    var currentLine = 0
    var startAddress: StartAddress?
    var dataRecords = 0
    var otherDataRecords = 0
    var otherDataBytes = 0
    var firstLine = 1
    var firstDataLine = 0

    init(boardID: UInt16?, firstLine: Int) {
        self.boardID = boardID
        self.firstLine = firstLine
    }

    /// Makes room for a record; the first time for `hint` bytes (an estimate of the data to come).
    @inline(__always)
    mutating func ensureRoom(hint: Int) {
        if buffer.count &- used < 255 { grow(hint: hint) }
    }

    @inline(never)
    mutating func grow(hint: Int) {
        let add = buffer.isEmpty ? max(1024, min(hint, 1 << 16)) : max(buffer.count, 1024)
        buffer.append(contentsOf: repeatElement(0, count: add))
    }

    /// Files the current run as a chunk.
    mutating func endRun() {
        guard used > runOffset else { return }
        chunks.append(Chunk(start: currentStart, offset: runOffset, count: used - runOffset, line: currentLine))
        runOffset = used
    }

    /// Starts a new run at `address` with the record just decoded at `buffer[used..<used+length]`.
    mutating func startRun(at address: UInt32, length: Int, line: Int) {
        if firstDataLine == 0 { firstDataLine = line }
        endRun()
        runOffset = used
        used += length
        currentStart = address
        currentLine = line
    }

    mutating func flush() { endRun() }
}

/// Collects the records that write one address (the slow path for overlap errors).
private struct Trace {
    var boardID: UInt16?
    var address: UInt32
    var hits: [(position: TextPosition, byte: UInt8)] = []
}

/// One pass over the text, fed a whole number of lines at a time.
private struct Pass {
    var trace: Trace?

    /// All boards' accumulators; the active one is swapped out into `active` while reading.
    var accumulators: [Accumulator] = [Accumulator(boardID: nil, firstLine: 1)]
    var activeIndex = 0
    var blockStarts = 0
    var typeCounts = [Int](repeating: 0, count: 256)
    var warnings: [FirmwareWarning] = []
    var lineCount = 0
    var customDataOutside = 0
    var firstCustomDataOutsideLine = 0

    // Where the reading stands between two pieces of text.
    var line = 1
    var base: UInt32 = 0
    var records = 0
    var eofLine = 0
    var fedAny = false
    /// Bytes of the current line already consumed by earlier feeds (text carried over mid-line).
    var carriedColumns = 0
    /// Set once the end-of-file record ended the records: what follows is only counted.
    var afterEnd: LinesAfterEnd?

    init(trace: Trace?) {
        self.trace = trace
    }

    /// Reads `array[0..<end]`. Unless `final`, the text ends with a line break, or `partialLine`
    /// says it is one line too long to wait for its end. Returns the bytes consumed; the caller
    /// feeds the rest again, followed by more text.
    mutating func feed(_ array: [UInt8], end n: Int, final: Bool, partialLine: Bool = false) throws -> Int {
        if var counter = afterEnd {
            counter.count(array, end: n)
            if final { finishLinesAfterEnd(&counter) }
            afterEnd = counter
            return n
        }
        let bytes = array.span.extracting(0..<n)
        let tableArray = IntelHexSyntax.hexValues
        let table = tableArray.span
        var typeCounts = self.typeCounts
        var dataRecords00 = 0, dataRecords0D = 0
        defer {
            typeCounts[0x00] += dataRecords00
            typeCounts[0x0D] += dataRecords0D
            self.typeCounts = typeCounts
        }
        let tracing = trace != nil
        let colon = IntelHexSyntax.colon, lf = IntelHexSyntax.lf, cr = IntelHexSyntax.cr
        var active = Accumulator(boardID: nil, firstLine: 1)
        swap(&active, &accumulators[activeIndex])
        defer { swap(&active, &accumulators[activeIndex]) }

        var i = 0
        if !fedAny {
            fedAny = true
            if n >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF { i = 3 }
        }
        var line = self.line
        var lineStart = -carriedColumns
        carriedColumns = 0
        var base = self.base
        var records = self.records
        var ended = false
        defer {
            self.line = line
            self.base = base
            self.records = records
        }

        scan: while i < n {
            let c = bytes[i]
            if c == colon {
                if partialLine, !Self.lineEnds(in: bytes, from: i) {
                    throw FirmwareImageError.lineTooLong(TextPosition(line: line, column: i - lineStart + 1),
                                                         limit: IntelHexReader.maximumLineLength)
                }
                let before = active.used
                active.ensureRoom(hint: (n - i) / 2)
                let h = try IntelHexSyntax.decodeRecord(bytes, colon: i, table: table, line: line,
                                                        lineStart: lineStart, into: &active.buffer, at: before)
                records += 1
                switch h.type {
                case 0x00, 0x0D:
                    if h.type == 0x00 {
                        dataRecords00 += 1
                    } else {
                        dataRecords0D += 1
                        if blockStarts == 0 {
                            customDataOutside += 1
                            if firstCustomDataOutsideLine == 0 { firstCustomDataOutsideLine = line }
                        }
                    }
                    let address = UInt64(base) + UInt64(h.offset)
                    if address + UInt64(h.length) > UInt64(UInt32.max) {
                        throw FirmwareImageError.addressOverflow(TextPosition(line: line, column: i - lineStart + 4),
                                                                 address: address + UInt64(h.length))
                    }
                    let a = UInt32(truncatingIfNeeded: address)
                    if before != active.runOffset, a == active.currentStart &+ UInt32(truncatingIfNeeded: before &- active.runOffset) {
                        active.used = before &+ h.length
                    } else {
                        active.startRun(at: a, length: h.length, line: line)
                    }
                    active.dataRecords += 1
                    if tracing { record(a, length: h.length, board: active.boardID, bytes: bytes, line: line, colon: i, lineStart: lineStart) }
                    i = h.lineEnd
                    if i < n, bytes[i] == lf {
                        // The common case, handled here rather than by another turn of the loop.
                        line += 1
                        i += 1
                        lineStart = i
                    }
                    continue scan
                default:
                    typeCounts[Int(h.type)] += 1
                }
                switch h.type {
                case 0x01:
                    try expectLength(h, 0, "0", line: line, column: i - lineStart + 2)
                    if blockStarts > 0 {
                        switch Self.blockStartFollows(in: bytes, after: h.lineEnd, final: final) {
                        case .yes:
                            eofLine = line
                            i = h.lineEnd
                            continue scan
                        case .no:
                            break
                        case .notYetKnown:
                            // The records that decide it are in the text to come: read this one again then.
                            records -= 1
                            typeCounts[0x01] -= 1
                            carriedColumns = i - lineStart
                            return i
                        }
                    }
                    eofLine = line
                    i = h.lineEnd
                    ended = true
                    break scan
                case 0x02, 0x04:
                    try expectLength(h, 2, "2", line: line, column: i - lineStart + 2)
                    let value = UInt32(active.buffer[before]) << 8 | UInt32(active.buffer[before + 1])
                    base = h.type == 0x04 ? value << 16 : value << 4
                case 0x03, 0x05:
                    try expectLength(h, 4, "4", line: line, column: i - lineStart + 2)
                    let hi = UInt32(active.buffer[before]) << 8 | UInt32(active.buffer[before + 1])
                    let lo = UInt32(active.buffer[before + 2]) << 8 | UInt32(active.buffer[before + 3])
                    active.startAddress = h.type == 0x03 ? .segment(cs: UInt16(hi), ip: UInt16(lo)) : .linear(hi << 16 | lo)
                case 0x0A:
                    if h.length < 2 {
                        throw FirmwareImageError.badRecordLength(TextPosition(line: line, column: i - lineStart + 2),
                                                                 recordType: 0x0A, length: h.length,
                                                                 expected: "at least 2 (the board ID)")
                    }
                    let id = UInt16(active.buffer[before]) << 8 | UInt16(active.buffer[before + 1])
                    try enterSection(id, line: line, column: i - lineStart + 1, active: &active)
                case 0x0B, 0x0C:
                    break
                case 0x0E:
                    active.otherDataRecords += 1
                    active.otherDataBytes += h.length
                default:
                    throw FirmwareImageError.unknownRecordType(TextPosition(line: line, column: i - lineStart + 8),
                                                               recordType: h.type)
                }
                i = h.lineEnd
            } else if c == lf {
                line += 1
                i += 1
                lineStart = i
            } else if c == cr {
                line += 1
                i += 1
                if i < n, bytes[i] == lf { i += 1 }
                lineStart = i
            } else if c == IntelHexSyntax.space || c == IntelHexSyntax.tab {
                i += 1
            } else {
                throw FirmwareImageError.missingColon(TextPosition(line: line, column: i - lineStart + 1), found: c)
            }
        }
        if ended, i < n || !final {
            // The end-of-file record ended the records: count what follows, in this text and the next.
            var counter = LinesAfterEnd(eofLine: eofLine, line: line)
            counter.count(array, from: i, end: n)
            if final { finishLinesAfterEnd(&counter) }
            afterEnd = counter
            return n
        }
        if i >= n, lineStart != n { carriedColumns = i - lineStart }
        guard final else { return n }
        lineCount = line - (lineStart == n && n > 0 ? 1 : 0)
        if eofLine == 0 {
            if records == 0 { throw FirmwareImageError.emptyFile }
            throw FirmwareImageError.missingEndOfFile(TextPosition(line: line, column: i - lineStart + 1))
        }
        noteCustomData()
        return n
    }

    private mutating func finishLinesAfterEnd(_ counter: inout LinesAfterEnd) {
        counter.finish()
        lineCount = counter.lineCount
        noteCustomData()
        if counter.lines > 0 {
            warnings.append(.linesAfterEndOfFile(eofLine: counter.eofLine, firstLine: counter.firstLine, lines: counter.lines,
                                                 recordTypes: counter.types, dataBytes: counter.dataBytes))
        }
    }

    private mutating func noteCustomData() {
        if customDataOutside > 0 {
            warnings.append(.customDataOutsideUniversalHex(records: customDataOutside, firstLine: firstCustomDataOutsideLine))
        }
    }

    /// True when a line break follows `start` in `bytes`.
    private static func lineEnds(in bytes: Span<UInt8>, from start: Int) -> Bool {
        var k = start
        while k < bytes.count {
            if bytes[k] == IntelHexSyntax.lf || bytes[k] == IntelHexSyntax.cr { return true }
            k += 1
        }
        return false
    }

    /// Makes `id`'s accumulator the active one.
    private mutating func enterSection(_ id: UInt16, line: Int, column: Int, active: inout Accumulator) throws {
        blockStarts += 1
        if active.boardID == id { return }
        if active.boardID == nil {
            if active.dataRecords > 0 {
                throw FirmwareImageError.dataOutsideUniversalHexSection(TextPosition(line: line, column: column),
                                                                        firstDataLine: active.firstDataLine)
            }
            // The board-less accumulator only ever held address records: the section replaces it
            // (and takes over its buffer).
            var section = Accumulator(boardID: id, firstLine: line)
            swap(&section.buffer, &active.buffer)
            active = section
            return
        }
        swap(&active, &accumulators[activeIndex])
        if let k = accumulators.firstIndex(where: { $0.boardID == id }) {
            activeIndex = k
        } else {
            guard accumulators.count < IntelHexReader.maximumSections else {
                swap(&active, &accumulators[activeIndex])
                throw FirmwareImageError.tooManySections(TextPosition(line: line, column: column), limit: IntelHexReader.maximumSections)
            }
            accumulators.append(Accumulator(boardID: id, firstLine: line))
            activeIndex = accumulators.count - 1
        }
        swap(&active, &accumulators[activeIndex])
    }

    private func expectLength(_ h: IntelHexSyntax.Header, _ length: Int, _ expected: String, line: Int, column: Int) throws {
        guard h.length == length else {
            throw FirmwareImageError.badRecordLength(TextPosition(line: line, column: column), recordType: h.type,
                                                     length: h.length, expected: expected)
        }
    }

    private mutating func record(_ a: UInt32, length: Int, board: UInt16?, bytes: Span<UInt8>, line: Int, colon: Int, lineStart: Int) {
        guard let t = trace, t.boardID == board, a <= t.address, UInt64(t.address) < UInt64(a) + UInt64(length) else { return }
        let q = colon + 9 + 2 * Int(t.address - a)
        let table = IntelHexSyntax.hexValues
        let byte = table[Int(bytes[q])] << 4 | table[Int(bytes[q + 1])]
        trace?.hits.append((TextPosition(line: line, column: q - lineStart + 1), byte))
    }

    enum Lookahead { case yes, no, notYetKnown }

    /// Whether the next records (after blank lines) are a block start, or an address record and a
    /// block start; not yet known when the text ends before they do and more is to come.
    private static func blockStartFollows(in bytes: Span<UInt8>, after start: Int, final: Bool) -> Lookahead {
        var types: [UInt8] = []
        var i = start
        let table = IntelHexSyntax.hexValues
        while i < bytes.count, types.count < 2 {
            let c = bytes[i]
            if c == IntelHexSyntax.colon {
                guard i + 8 < bytes.count else { return final ? .no : .notYetKnown }
                types.append(table[Int(bytes[i + 7])] << 4 | table[Int(bytes[i + 8])])
                while i < bytes.count, bytes[i] != IntelHexSyntax.lf, bytes[i] != IntelHexSyntax.cr { i += 1 }
            } else if c == IntelHexSyntax.lf || c == IntelHexSyntax.cr || c == IntelHexSyntax.space || c == IntelHexSyntax.tab {
                i += 1
            } else {
                return .no
            }
        }
        if types.count < 2, !final, types.first == 0x04 || types.isEmpty { return .notYetKnown }
        return types.first == 0x0A || (types.first == 0x04 && types.dropFirst().first == 0x0A) ? .yes : .no
    }
}

/// Counts the lines after the end-of-file record, leniently, for the warning; text may come in
/// pieces cut anywhere.
private struct LinesAfterEnd {
    let eofLine: Int
    var line: Int
    var lines = 0
    var firstLine = 0
    var dataBytes = 0
    var types: [UInt8: Int] = [:]
    /// The current line: its first bytes from the first non-blank one, its length up to its last
    /// byte that is not blank (or 0x1A), and whether a CR ended the previous piece.
    private var head: [UInt8] = []
    private var started = false
    private var length = 0
    private var seen = 0
    private var pendingCR = false
    /// True when the text seen so far ends right after a line break.
    private var atLineStart = false

    init(eofLine: Int, line: Int) {
        self.eofLine = eofLine
        self.line = line
    }

    /// Lines in the file: a last line without a line break counts.
    var lineCount: Int { line - (atLineStart ? 1 : 0) }

    mutating func count(_ bytes: [UInt8], from start: Int = 0, end: Int) {
        var i = start
        if pendingCR, i < end {
            pendingCR = false
            if bytes[i] == IntelHexSyntax.lf { i += 1 }
        }
        while i < end {
            let c = bytes[i]
            if c == IntelHexSyntax.lf || c == IntelHexSyntax.cr {
                endLine()
                i += 1
                if c == IntelHexSyntax.cr {
                    if i < end {
                        if bytes[i] == IntelHexSyntax.lf { i += 1 }
                    } else {
                        pendingCR = true
                    }
                }
                line += 1
                atLineStart = true
                continue
            }
            atLineStart = false
            if !started {
                if c == IntelHexSyntax.space || c == IntelHexSyntax.tab { i += 1; continue }
                started = true
            }
            seen += 1
            if head.count < 9 { head.append(c) }
            if c != IntelHexSyntax.space, c != IntelHexSyntax.tab, c != 0x1A { length = seen }
            i += 1
        }
    }

    /// The text is over: a last line without a line break counts.
    mutating func finish() { endLine() }

    private mutating func endLine() {
        defer {
            head.removeAll(keepingCapacity: true)
            started = false
            length = 0
            seen = 0
        }
        guard length > 0 else { return }
        lines += 1
        if firstLine == 0 { firstLine = line }
        guard head.first == IntelHexSyntax.colon, length >= 9, head.count >= 9 else { return }
        let table = IntelHexSyntax.hexValues
        let ll = table[Int(head[1])] << 4 | table[Int(head[2])]
        let type = table[Int(head[7])] << 4 | table[Int(head[8])]
        guard (table[Int(head[7])] | table[Int(head[8])]) & IntelHexSyntax.invalid == 0 else { return }
        types[type, default: 0] += 1
        if type == 0x00, (table[Int(head[1])] | table[Int(head[2])]) & IntelHexSyntax.invalid == 0 {
            dataBytes += Int(ll)
        }
    }
}
