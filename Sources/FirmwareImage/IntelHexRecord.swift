import Diagnostics

/// One Intel HEX record: `:LLAAAATT<data>CC`.
///
/// This file holds the only decoder and the only encoder of the record syntax in the module.
/// `IntelHexReader` drives the same decoder (`IntelHexSyntax.decodeRecord`) over a whole file
/// without building a record value per line; the writers encode through `encode(into:uppercase:)`.
public struct IntelHexRecord: Sendable, Hashable, CustomStringConvertible {
    /// The record type byte. Known types have names; others can still be held and written.
    public struct RecordType: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        public var rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }

        /// 00: data at `(base + offset)`.
        public static let data = RecordType(rawValue: 0x00)
        /// 01: end of file; no data.
        public static let endOfFile = RecordType(rawValue: 0x01)
        /// 02: extended segment address: base = value × 16.
        public static let extendedSegmentAddress = RecordType(rawValue: 0x02)
        /// 03: start segment address (CS:IP); recorded, not used.
        public static let startSegmentAddress = RecordType(rawValue: 0x03)
        /// 04: extended linear address: base = value << 16.
        public static let extendedLinearAddress = RecordType(rawValue: 0x04)
        /// 05: start linear address (EIP); recorded, not used.
        public static let startLinearAddress = RecordType(rawValue: 0x05)
        /// 0A (Universal Hex): block start; data = board ID big-endian, usually followed by `C0 DE`.
        public static let blockStart = RecordType(rawValue: 0x0A)
        /// 0B (Universal Hex): block end; data = padding.
        public static let blockEnd = RecordType(rawValue: 0x0B)
        /// 0C (Universal Hex): padded data, ignored.
        public static let paddedData = RecordType(rawValue: 0x0C)
        /// 0D (Universal Hex): data for non-V1 boards, same meaning as 00.
        public static let customData = RecordType(rawValue: 0x0D)
        /// 0E (Universal Hex): other data (e.g. MakeCode source), ignored.
        public static let otherData = RecordType(rawValue: 0x0E)

        public var description: String { Hex.number(rawValue, digits: 2, prefix: false) }
    }

    public var type: RecordType
    /// The 16-bit address field.
    public var offset: UInt16
    /// At most 255 bytes.
    public var data: [UInt8]

    public init(type: RecordType, offset: UInt16 = 0, data: [UInt8] = []) {
        precondition(data.count <= 255, "an Intel HEX record holds at most 255 data bytes")
        self.type = type
        self.offset = offset
        self.data = data
    }

    /// Decodes one line (without or with its line ending, trailing spaces allowed).
    /// - Throws: `FirmwareImageError` naming `lineNumber` and the column.
    public init(parsing line: some Sequence<UInt8>, lineNumber: Int = 1) throws {
        let bytes = Array(line)
        var i = 0
        while i < bytes.count, bytes[i] == 0x20 || bytes[i] == 0x09 { i += 1 }
        guard i < bytes.count, bytes[i] == UInt8(ascii: ":") else {
            let found = i < bytes.count ? bytes[i] : 0x0A
            throw FirmwareImageError.missingColon(TextPosition(line: lineNumber, column: i + 1), found: found)
        }
        var data = [UInt8](repeating: 0, count: 255)
        let table = IntelHexSyntax.hexValues
        let header = try IntelHexSyntax.decodeRecord(
            bytes.span, colon: i, table: table.span,
            line: lineNumber, lineStart: 0, into: &data, at: 0)
        data.removeLast(255 - header.length)
        var end = header.lineEnd
        if end < bytes.count, bytes[end] == 0x0D { end += 1 }
        if end < bytes.count, bytes[end] == 0x0A { end += 1 }
        guard end == bytes.count else {
            throw FirmwareImageError.unexpectedCharacter(
                TextPosition(line: lineNumber, column: end + 1),
                found: bytes[end], expected: "one record per line")
        }
        self.init(type: RecordType(rawValue: header.type), offset: header.offset, data: data)
    }

    /// Decodes one line of text.
    public init(parsing line: String, lineNumber: Int = 1) throws {
        try self.init(parsing: Array(line.utf8), lineNumber: lineNumber)
    }

    /// The checksum byte: two's complement of the sum of all other bytes.
    public var checksum: UInt8 {
        var sum =
            UInt8(truncatingIfNeeded: data.count) &+ UInt8(offset >> 8) &+ UInt8(truncatingIfNeeded: offset)
            &+ type.rawValue
        for b in data { sum &+= b }
        return 0 &- sum
    }

    /// Appends `:LLAAAATT<data>CC` (no line ending) to `out`.
    public func encode(into out: inout [UInt8], uppercase: Bool = true) {
        let digits = uppercase ? IntelHexSyntax.upperDigits : IntelHexSyntax.lowerDigits
        @inline(__always) func put(_ b: UInt8) {
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 0x0F)])
        }
        out.append(UInt8(ascii: ":"))
        put(UInt8(truncatingIfNeeded: data.count))
        put(UInt8(offset >> 8))
        put(UInt8(truncatingIfNeeded: offset))
        put(type.rawValue)
        for b in data { put(b) }
        put(checksum)
    }

    /// The record as text, without a line ending.
    public func encoded(uppercase: Bool = true) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(11 + 2 * data.count)
        encode(into: &out, uppercase: uppercase)
        return String(decoding: out, as: UTF8.self)
    }

    public var description: String { encoded() }

    // MARK: Constructors for the records writers need

    public static let endOfFile = IntelHexRecord(type: .endOfFile)

    /// 04 with the upper 16 bits of the address.
    public static func extendedLinearAddress(upper: UInt16) -> IntelHexRecord {
        IntelHexRecord(type: .extendedLinearAddress, data: [UInt8(upper >> 8), UInt8(truncatingIfNeeded: upper)])
    }

    /// 02 with a segment (base = segment × 16).
    public static func extendedSegmentAddress(segment: UInt16) -> IntelHexRecord {
        IntelHexRecord(type: .extendedSegmentAddress, data: [UInt8(segment >> 8), UInt8(truncatingIfNeeded: segment)])
    }

    /// 0A for a board ID, with the customary `C0 DE` suffix.
    public static func blockStart(boardID: UInt16) -> IntelHexRecord {
        IntelHexRecord(type: .blockStart, data: [UInt8(boardID >> 8), UInt8(truncatingIfNeeded: boardID), 0xC0, 0xDE])
    }

    /// 0B with `padding` bytes of 0xFF.
    public static func blockEnd(padding: Int) -> IntelHexRecord {
        IntelHexRecord(type: .blockEnd, data: [UInt8](repeating: 0xFF, count: padding))
    }

    /// 0C with `count` bytes of 0xFF.
    public static func paddedData(count: Int) -> IntelHexRecord {
        IntelHexRecord(type: .paddedData, data: [UInt8](repeating: 0xFF, count: count))
    }
}

/// A start address record's value (03 or 05). Recorded by the reader, not used for flashing.
public enum StartAddress: Sendable, Hashable, CustomStringConvertible {
    /// 03: CS:IP.
    case segment(cs: UInt16, ip: UInt16)
    /// 05: EIP.
    case linear(UInt32)

    public var description: String {
        switch self {
        case .segment(let cs, let ip):
            return
                "start segment address \(Hex.number(cs, digits: 4, prefix: false)):\(Hex.number(ip, digits: 4, prefix: false))"
        case .linear(let a):
            return "start linear address \(Hex.address(a))"
        }
    }

    /// The record that carries it.
    public var record: IntelHexRecord {
        switch self {
        case .segment(let cs, let ip):
            return IntelHexRecord(
                type: .startSegmentAddress,
                data: [UInt8(cs >> 8), UInt8(truncatingIfNeeded: cs), UInt8(ip >> 8), UInt8(truncatingIfNeeded: ip)])
        case .linear(let a):
            return IntelHexRecord(
                type: .startLinearAddress,
                data: [
                    UInt8(a >> 24), UInt8(truncatingIfNeeded: a >> 16), UInt8(truncatingIfNeeded: a >> 8),
                    UInt8(truncatingIfNeeded: a)
                ])
        }
    }
}

/// The record syntax: the decoder shared by `IntelHexRecord` and `IntelHexReader`.
enum IntelHexSyntax {
    /// Value of each byte as a hex digit, or `invalid`.
    static let hexValues: [UInt8] = {
        var t = [UInt8](repeating: invalid, count: 256)
        for (i, c) in "0123456789".utf8.enumerated() { t[Int(c)] = UInt8(i) }
        for (i, c) in "abcdef".utf8.enumerated() { t[Int(c)] = UInt8(10 + i) }
        for (i, c) in "ABCDEF".utf8.enumerated() { t[Int(c)] = UInt8(10 + i) }
        return t
    }()
    /// Marks a non-digit in `hexValues`; `value | value` keeps the bit.
    static let invalid: UInt8 = 0x10

    static let upperDigits: [UInt8] = Array("0123456789ABCDEF".utf8)
    static let lowerDigits: [UInt8] = Array("0123456789abcdef".utf8)

    static let lf: UInt8 = 0x0A, cr: UInt8 = 0x0D, space: UInt8 = 0x20, tab: UInt8 = 0x09, colon: UInt8 = 0x3A

    /// What `decodeRecord` found besides the data.
    struct Header {
        var type: UInt8
        var offset: UInt16
        var length: Int
        /// Index of the line terminator after the record and any trailing spaces, or `bytes.count`.
        var lineEnd: Int
    }

    /// Decodes the record whose `:` is at `colon`, writing its data bytes into `data` from index
    /// `at` (written before the checksum is known: on a throw, discard them). `data` must have
    /// room for 255 bytes from `at`.
    ///
    /// Checks the hex digits, the length against the line, the checksum and that only
    /// whitespace follows the record. Does not interpret the record type.
    /// - Parameters:
    ///   - table: `hexValues`, passed in so the caller loads it once.
    ///   - line: the 1-based line number, `lineStart` the index of the line's first byte (for columns).
    @inline(__always)
    static func decodeRecord(
        _ bytes: Span<UInt8>, colon: Int, table: Span<UInt8>, line: Int, lineStart: Int,
        into data: inout [UInt8], at base: Int
    ) throws -> Header {
        let n = bytes.count
        let p = colon + 1
        // Telling the optimiser these sizes lets it drop bounds checks below.
        guard p + 10 <= n, table.count == 256 else {
            throw diagnose(bytes, colon: colon, line: line, lineStart: lineStart)
        }
        let l1 = table[Int(bytes[p])], l0 = table[Int(bytes[p + 1])]
        let h1 = table[Int(bytes[p + 2])], h0 = table[Int(bytes[p + 3])]
        let o1 = table[Int(bytes[p + 4])], o0 = table[Int(bytes[p + 5])]
        let t1 = table[Int(bytes[p + 6])], t0 = table[Int(bytes[p + 7])]
        var bad = l1 | l0 | h1 | h0 | o1 | o0 | t1 | t0
        guard bad & invalid == 0 else { throw diagnose(bytes, colon: colon, line: line, lineStart: lineStart) }
        let ll = l1 << 4 | l0, a1 = h1 << 4 | h0, a0 = o1 << 4 | o0, type = t1 << 4 | t0
        let length = Int(ll)
        let stop = p + 8 + 2 * length
        guard stop + 2 <= n else { throw diagnose(bytes, colon: colon, line: line, lineStart: lineStart) }
        var sum = ll &+ a1 &+ a0 &+ type
        var q = p + 8
        if length > 0 {
            // Read through a span of exactly the record's digits (so the optimiser can drop the
            // bounds checks) and write through a span (no per-byte capacity or uniqueness checks).
            let digits = bytes.extracting(q..<stop)
            var out = data.mutableSpan
            guard base >= 0, base + length <= out.count else { preconditionFailure("no room for the record") }
            for k in 0..<length {
                let h = table[Int(digits[2 * k])], l = table[Int(digits[2 * k + 1])]
                bad |= h | l
                let b = h << 4 | l
                sum &+= b
                out[base &+ k] = b
            }
            q = stop
        }
        let c1 = table[Int(bytes[q])], c0 = table[Int(bytes[q + 1])]
        bad |= c1 | c0
        guard bad & invalid == 0 else { throw diagnose(bytes, colon: colon, line: line, lineStart: lineStart) }
        let found = c1 << 4 | c0
        guard sum &+ found == 0 else {
            throw FirmwareImageError.badChecksum(
                TextPosition(line: line, column: q - lineStart + 1),
                expected: 0 &- sum, found: found)
        }
        var r = stop + 2
        while r < n, bytes[r] == space || bytes[r] == tab { r += 1 }
        if r < n, bytes[r] != lf, bytes[r] != cr {
            throw extraCharacters(
                bytes, colon: colon, at: r, type: type, length: length, line: line, lineStart: lineStart)
        }
        return Header(type: type, offset: UInt16(a1) << 8 | UInt16(a0), length: length, lineEnd: r)
    }

    /// The error for a record whose digits or length do not fit the line (the slow path).
    @inline(never)
    static func diagnose(_ bytes: Span<UInt8>, colon: Int, line: Int, lineStart: Int) -> FirmwareImageError {
        let table = hexValues
        var lineEnd = colon + 1
        while lineEnd < bytes.count, bytes[lineEnd] != lf, bytes[lineEnd] != cr { lineEnd += 1 }
        var contentEnd = lineEnd
        while contentEnd > colon + 1, bytes[contentEnd - 1] == space || bytes[contentEnd - 1] == tab { contentEnd -= 1 }
        // The first non-digit inside the record's text is the error, unless it is where the line ends.
        var expected = 10
        var q = colon + 1
        while q < colon + 1 + expected {
            if q >= contentEnd {
                return .truncatedRecord(
                    TextPosition(line: line, column: contentEnd - lineStart + 1),
                    expectedCharacters: expected, foundCharacters: contentEnd - colon - 1)
            }
            if table[Int(bytes[q])] & invalid != 0 {
                return .nonHexDigit(TextPosition(line: line, column: q - lineStart + 1), found: bytes[q])
            }
            if q == colon + 2 {
                expected = 10 + 2 * Int(table[Int(bytes[colon + 1])] << 4 | table[Int(bytes[colon + 2])])
            }
            q += 1
        }
        // Not reached for records the fast path rejected; keep a sensible answer anyway.
        return .truncatedRecord(
            TextPosition(line: line, column: contentEnd - lineStart + 1),
            expectedCharacters: expected, foundCharacters: contentEnd - colon - 1)
    }

    @inline(never)
    static func extraCharacters(
        _ bytes: Span<UInt8>, colon: Int, at r: Int, type: UInt8, length: Int,
        line: Int, lineStart: Int
    ) -> FirmwareImageError {
        let table = hexValues
        guard table[Int(bytes[r])] & invalid == 0, r == colon + 11 + 2 * length else {
            return .unexpectedCharacter(
                TextPosition(line: line, column: r - lineStart + 1), found: bytes[r],
                expected: "the end of the line after the checksum")
        }
        // More hex digits follow the checksum: the length byte is too small for the line.
        var q = r
        while q < bytes.count, table[Int(bytes[q])] & invalid == 0 { q += 1 }
        let digits = q - colon - 1
        let implied =
            digits % 2 == 0
            ? "\((digits - 10) / 2) (the line holds \(digits) hex digits)"
            : "a length matching the line (it holds an odd number of hex digits, \(digits))"
        return .badRecordLength(
            TextPosition(line: line, column: colon + 1 - lineStart + 1), recordType: type,
            length: length, expected: implied)
    }
}
