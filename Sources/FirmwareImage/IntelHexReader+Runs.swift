/// What the Intel HEX reader keeps while it reads: each board's runs in one buffer, the records
/// that write one address (for an overlap error), the lines after the end-of-file record.

/// A contiguous run of data as it was read, before sorting: where its bytes are in the
/// accumulator's buffer.
struct HexChunk {
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
struct HexAccumulator {
    var boardID: UInt16?
    var chunks: [HexChunk] = []
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
        chunks.append(HexChunk(start: currentStart, offset: runOffset, count: used - runOffset, line: currentLine))
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
struct HexTrace {
    var boardID: UInt16?
    var address: UInt32
    var hits: [(position: TextPosition, byte: UInt8)] = []
}

/// Counts the lines after the end-of-file record, leniently, for the warning; text may come in
/// pieces cut anywhere.
struct HexLinesAfterEnd {
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
