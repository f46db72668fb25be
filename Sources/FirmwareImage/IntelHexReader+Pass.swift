/// One pass over the text, fed a whole number of lines at a time.
struct HexPass {
    var trace: HexTrace?

    /// All boards' accumulators; the active one is swapped out into `active` while reading.
    var accumulators: [HexAccumulator] = [HexAccumulator(boardID: nil, firstLine: 1)]
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
    var afterEnd: HexLinesAfterEnd?

    init(trace: HexTrace?) {
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
        var active = HexAccumulator(boardID: nil, firstLine: 1)
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
                    throw FirmwareImageError.lineTooLong(
                        TextPosition(line: line, column: i - lineStart + 1),
                        limit: IntelHexReader.maximumLineLength)
                }
                let before = active.used
                active.ensureRoom(hint: (n - i) / 2)
                let h = try IntelHexSyntax.decodeRecord(
                    bytes, colon: i, table: table, line: line,
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
                        throw FirmwareImageError.addressOverflow(
                            TextPosition(line: line, column: i - lineStart + 4),
                            address: address + UInt64(h.length))
                    }
                    let a = UInt32(truncatingIfNeeded: address)
                    if before != active.runOffset,
                        a == active.currentStart &+ UInt32(truncatingIfNeeded: before &- active.runOffset)
                    {
                        active.used = before &+ h.length
                    } else {
                        active.startRun(at: a, length: h.length, line: line)
                    }
                    active.dataRecords += 1
                    if tracing {
                        record(
                            a, length: h.length, board: active.boardID, bytes: bytes, line: line, colon: i,
                            lineStart: lineStart)
                    }
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
                    active.startAddress =
                        h.type == 0x03 ? .segment(cs: UInt16(hi), ip: UInt16(lo)) : .linear(hi << 16 | lo)
                case 0x0A:
                    if h.length < 2 {
                        throw FirmwareImageError.badRecordLength(
                            TextPosition(line: line, column: i - lineStart + 2),
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
                    throw FirmwareImageError.unknownRecordType(
                        TextPosition(line: line, column: i - lineStart + 8),
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
            var counter = HexLinesAfterEnd(eofLine: eofLine, line: line)
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

    private mutating func finishLinesAfterEnd(_ counter: inout HexLinesAfterEnd) {
        counter.finish()
        lineCount = counter.lineCount
        noteCustomData()
        if counter.lines > 0 {
            warnings.append(
                .linesAfterEndOfFile(
                    eofLine: counter.eofLine, firstLine: counter.firstLine, lines: counter.lines,
                    recordTypes: counter.types, dataBytes: counter.dataBytes))
        }
    }

    private mutating func noteCustomData() {
        if customDataOutside > 0 {
            warnings.append(
                .customDataOutsideUniversalHex(records: customDataOutside, firstLine: firstCustomDataOutsideLine))
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
    private mutating func enterSection(_ id: UInt16, line: Int, column: Int, active: inout HexAccumulator) throws {
        blockStarts += 1
        if active.boardID == id { return }
        if active.boardID == nil {
            if active.dataRecords > 0 {
                throw FirmwareImageError.dataOutsideUniversalHexSection(
                    TextPosition(line: line, column: column),
                    firstDataLine: active.firstDataLine)
            }
            // The board-less accumulator only ever held address records: the section replaces it
            // (and takes over its buffer).
            var section = HexAccumulator(boardID: id, firstLine: line)
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
                throw FirmwareImageError.tooManySections(
                    TextPosition(line: line, column: column), limit: IntelHexReader.maximumSections)
            }
            accumulators.append(HexAccumulator(boardID: id, firstLine: line))
            activeIndex = accumulators.count - 1
        }
        swap(&active, &accumulators[activeIndex])
    }

    private func expectLength(_ h: IntelHexSyntax.Header, _ length: Int, _ expected: String, line: Int, column: Int)
        throws
    {
        guard h.length == length else {
            throw FirmwareImageError.badRecordLength(
                TextPosition(line: line, column: column), recordType: h.type,
                length: h.length, expected: expected)
        }
    }

    private mutating func record(
        _ a: UInt32, length: Int, board: UInt16?, bytes: Span<UInt8>, line: Int, colon: Int, lineStart: Int
    ) {
        guard let t = trace, t.boardID == board, a <= t.address, UInt64(t.address) < UInt64(a) + UInt64(length) else {
            return
        }
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
            } else if c == IntelHexSyntax.lf || c == IntelHexSyntax.cr || c == IntelHexSyntax.space
                || c == IntelHexSyntax.tab
            {
                i += 1
            } else {
                return .no
            }
        }
        if types.count < 2, !final, types.first == 0x04 || types.isEmpty { return .notYetKnown }
        return types.first == 0x0A || (types.first == 0x04 && types.dropFirst().first == 0x0A) ? .yes : .no
    }
}
