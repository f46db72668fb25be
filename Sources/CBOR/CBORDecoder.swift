/// Reads CBOR. Tolerant of every well-formed encoding (non-shortest
/// arguments, indefinite-length strings, arrays and maps, all float widths,
/// unsorted or duplicate map keys), strict about malformed data, and bounded
/// against hostile input by `Limits`: nothing is allocated for a declared
/// length before the input is known to hold that many bytes.
///
/// Indefinite-length strings are joined into one string and indefinite
/// arrays and maps become ordinary ones, so re-encoding gives the definite form.
public struct CBORDecoder: Sendable {
    /// Bounds that keep decoding of untrusted input cheap.
    public struct Limits: Sendable, Equatable {
        /// Deepest nesting of arrays, maps and tags (the top item is depth 1).
        public var maximumDepth: Int
        /// Most elements in one array, or pairs in one map.
        public var maximumElementCount: Int
        /// Longest byte or text string, in bytes.
        public var maximumStringLength: Int
        /// Most data items in the whole input.
        public var maximumItemCount: Int
        /// Largest input, in bytes.
        public var maximumInputSize: Int

        public init(
            maximumDepth: Int = 32, maximumElementCount: Int = 65_536,
            maximumStringLength: Int = 1 << 20, maximumItemCount: Int = 1 << 20,
            maximumInputSize: Int = 1 << 24
        ) {
            self.maximumDepth = maximumDepth
            self.maximumElementCount = maximumElementCount
            self.maximumStringLength = maximumStringLength
            self.maximumItemCount = maximumItemCount
            self.maximumInputSize = maximumInputSize
        }

        /// The defaults: depth 32, 65 536 elements, 1 MiB strings, 2^20 items, 16 MiB input.
        public static let `default` = Limits()
    }

    /// The limits applied.
    public var limits: Limits

    public init(limits: Limits = .default) {
        self.limits = limits
    }

    /// Decodes exactly one item that fills all of `bytes`.
    public func decode(_ bytes: [UInt8]) throws(CBORError) -> CBOR {
        let (item, end) = try decodePrefix(bytes)
        guard end == bytes.count else { throw .trailingBytes(offset: end, count: bytes.count - end) }
        return item
    }

    /// Decodes the first item of `bytes`; returns it and the offset just after it.
    public func decodePrefix(_ bytes: [UInt8]) throws(CBORError) -> (item: CBOR, end: Int) {
        guard bytes.count <= limits.maximumInputSize else {
            throw .inputTooLarge(size: bytes.count, limit: limits.maximumInputSize)
        }
        var reader = Reader(bytes: bytes, limits: limits)
        let item = try reader.readItem(depth: 1)
        return (item, reader.offset)
    }
}

/// The cursor over the input; one item per `readItem` call.
private struct Reader {
    let bytes: [UInt8]
    let limits: CBORDecoder.Limits
    var offset = 0
    var items = 0

    init(bytes: [UInt8], limits: CBORDecoder.Limits) {
        self.bytes = bytes
        self.limits = limits
    }

    var remaining: Int { bytes.count - offset }

    mutating func readByte() throws(CBORError) -> UInt8 {
        guard offset < bytes.count else { throw .truncated(offset: offset, needed: 1, available: 0) }
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func readBigEndian(_ count: Int, itemStart: Int) throws(CBORError) -> UInt64 {
        guard remaining >= count else {
            throw .truncated(offset: itemStart, needed: offset - itemStart + count, available: bytes.count - itemStart)
        }
        var value: UInt64 = 0
        for i in 0..<count { value = value << 8 | UInt64(bytes[offset + i]) }
        offset += count
        return value
    }

    /// The argument of the head at `start`, or nil for indefinite length (31).
    mutating func readArgument(_ initial: UInt8, start: Int) throws(CBORError) -> UInt64? {
        let info = initial & 0x1F
        switch info {
        case 0..<24: return UInt64(info)
        case 24: return try readBigEndian(1, itemStart: start)
        case 25: return try readBigEndian(2, itemStart: start)
        case 26: return try readBigEndian(4, itemStart: start)
        case 27: return try readBigEndian(8, itemStart: start)
        case 31: return nil
        default: throw .reservedAdditionalInfo(offset: start, initialByte: initial)
        }
    }

    mutating func readItem(depth: Int) throws(CBORError) -> CBOR {
        let start = offset
        guard depth <= limits.maximumDepth else { throw .nestingTooDeep(offset: start, limit: limits.maximumDepth) }
        items += 1
        guard items <= limits.maximumItemCount else {
            throw .tooManyItems(offset: start, limit: limits.maximumItemCount)
        }
        let initial = try readByte()
        let major = initial >> 5
        if initial == 0xFF { throw .unexpectedBreak(offset: start) }
        if major == 7 { return try readSimpleOrFloat(initial, start: start) }
        let argument = try readArgument(initial, start: start)
        switch major {
        case 0, 1:
            guard let n = argument else { throw .invalidIndefiniteLength(offset: start, initialByte: initial) }
            return major == 0 ? .unsigned(n) : .negative(n)
        case 2:
            return .byteString(try readString(major: 2, length: argument, start: start))
        case 3:
            let raw = try readString(major: 3, length: argument, start: start)
            guard let text = String(validating: raw, as: UTF8.self) else { throw .invalidUTF8(offset: start) }
            return .textString(text)
        case 4:
            return .array(try readArray(count: argument, start: start, depth: depth))
        case 5:
            return .map(try readMap(count: argument, start: start, depth: depth))
        default:
            guard let tag = argument else { throw .invalidIndefiniteLength(offset: start, initialByte: initial) }
            return .tagged(tag, try readItem(depth: depth + 1))
        }
    }

    mutating func readSimpleOrFloat(_ initial: UInt8, start: Int) throws(CBORError) -> CBOR {
        switch initial & 0x1F {
        case 20: return .boolean(false)
        case 21: return .boolean(true)
        case 22: return .null
        case 23: return .undefined
        case 24:
            let v = try readByte()
            guard v >= 32 else { throw .invalidSimpleValue(offset: start, value: v) }
            return .simple(v)
        case 25: return .float(FloatWidth.double(fromHalf: UInt16(try readBigEndian(2, itemStart: start))))
        case 26: return .float(Double(Float(bitPattern: UInt32(try readBigEndian(4, itemStart: start)))))
        case 27: return .float(Double(bitPattern: try readBigEndian(8, itemStart: start)))
        case 28, 29, 30: throw .reservedAdditionalInfo(offset: start, initialByte: initial)
        case 31: throw .unexpectedBreak(offset: start)
        case let v: return .simple(v)
        }
    }

    /// A definite string's bytes, or the joined chunks of an indefinite one.
    mutating func readString(major: UInt8, length: UInt64?, start: Int) throws(CBORError) -> [UInt8] {
        guard let length else {
            var joined: [UInt8] = []
            while true {
                let chunkStart = offset
                let initial = try readByte()
                if initial == 0xFF { return joined }
                guard initial >> 5 == major, initial & 0x1F != 31 else {
                    throw .invalidStringChunk(offset: chunkStart, initialByte: initial)
                }
                let chunkLength = try readArgument(initial, start: chunkStart)
                let chunk = try readDefiniteBytes(chunkLength ?? 0, start: chunkStart)
                guard UInt64(joined.count) + UInt64(chunk.count) <= UInt64(limits.maximumStringLength) else {
                    throw .stringTooLong(
                        offset: start, length: UInt64(joined.count + chunk.count), limit: limits.maximumStringLength)
                }
                joined += chunk
            }
        }
        return try readDefiniteBytes(length, start: start)
    }

    mutating func readDefiniteBytes(_ length: UInt64, start: Int) throws(CBORError) -> [UInt8] {
        guard length <= UInt64(limits.maximumStringLength) else {
            throw .stringTooLong(offset: start, length: length, limit: limits.maximumStringLength)
        }
        guard length <= UInt64(remaining) else {
            throw .lengthExceedsInput(offset: start, declared: length, available: remaining)
        }
        let n = Int(length)
        defer { offset += n }
        return Array(bytes[offset..<offset + n])
    }

    mutating func checkCount(_ count: UInt64, start: Int, minimumBytesEach: UInt64) throws(CBORError) {
        guard count <= UInt64(limits.maximumElementCount) else {
            throw .tooManyElements(offset: start, count: count, limit: limits.maximumElementCount)
        }
        // Every element takes at least one byte, so a count the input cannot hold is refused
        // before anything is reserved.
        let (needed, overflow) = count.multipliedReportingOverflow(by: minimumBytesEach)
        guard !overflow, needed <= UInt64(remaining) else {
            throw .countExceedsInput(offset: start, count: count, available: remaining)
        }
    }

    mutating func readArray(count: UInt64?, start: Int, depth: Int) throws(CBORError) -> [CBOR] {
        var result: [CBOR] = []
        if let count {
            try checkCount(count, start: start, minimumBytesEach: 1)
            result.reserveCapacity(Int(count))
            for _ in 0..<count { result.append(try readItem(depth: depth + 1)) }
            return result
        }
        while try !atBreak() {
            guard result.count < limits.maximumElementCount else {
                throw .tooManyElements(
                    offset: start, count: UInt64(result.count + 1), limit: limits.maximumElementCount)
            }
            result.append(try readItem(depth: depth + 1))
        }
        return result
    }

    mutating func readMap(count: UInt64?, start: Int, depth: Int) throws(CBORError) -> [CBOR.Pair] {
        var result: [CBOR.Pair] = []
        if let count {
            try checkCount(count, start: start, minimumBytesEach: 2)
            result.reserveCapacity(Int(count))
            for _ in 0..<count {
                let key = try readItem(depth: depth + 1)
                result.append(CBOR.Pair(key, try readItem(depth: depth + 1)))
            }
            return result
        }
        while try !atBreak() {
            guard result.count < limits.maximumElementCount else {
                throw .tooManyElements(
                    offset: start, count: UInt64(result.count + 1), limit: limits.maximumElementCount)
            }
            let key = try readItem(depth: depth + 1)
            if try atBreak() { throw .oddMapItemCount(offset: offset - 1) }
            result.append(CBOR.Pair(key, try readItem(depth: depth + 1)))
        }
        return result
    }

    /// Consumes a break byte if one is next. Running out of input here is truncation.
    mutating func atBreak() throws(CBORError) -> Bool {
        guard offset < bytes.count else { throw .truncated(offset: offset, needed: 1, available: 0) }
        if bytes[offset] == 0xFF {
            offset += 1
            return true
        }
        return false
    }
}
