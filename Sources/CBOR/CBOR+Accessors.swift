// Typed views of a CBOR item, for protocol code such as SMP:
// `payload["rc"]?.intValue`, `payload["data"]?.bytesValue`.

extension CBOR {
    /// The value of the first pair whose key is `key`, when this item is a map.
    public subscript(key: CBOR) -> CBOR? {
        guard case let .map(pairs) = self else { return nil }
        return pairs.first(where: { $0.key == key })?.value
    }

    /// The value of the first pair whose key is the text string `key`, when this item is a map.
    public subscript(key: String) -> CBOR? {
        self[.textString(key)]
    }

    /// The integer as `Int`, when it is an integer that fits.
    public var intValue: Int? {
        switch self {
        case let .unsigned(n): return n <= UInt64(Int.max) ? Int(n) : nil
        case let .negative(n): return n <= UInt64(Int.max) ? -Int(n) - 1 : nil
        default: return nil
        }
    }

    /// The integer as `UInt64`, when it is a non-negative integer.
    public var uint64Value: UInt64? {
        if case let .unsigned(n) = self { return n }
        return nil
    }

    /// The bytes of a byte string.
    public var bytesValue: [UInt8]? {
        if case let .byteString(b) = self { return b }
        return nil
    }

    /// The text of a text string.
    public var stringValue: String? {
        if case let .textString(s) = self { return s }
        return nil
    }

    /// The value of `true` or `false`.
    public var boolValue: Bool? {
        if case let .boolean(b) = self { return b }
        return nil
    }

    /// The elements of an array.
    public var arrayValue: [CBOR]? {
        if case let .array(a) = self { return a }
        return nil
    }

    /// The pairs of a map, in stored order.
    public var mapValue: [Pair]? {
        if case let .map(m) = self { return m }
        return nil
    }

    /// The value of a float, or of an integer exactly representable as `Double`.
    public var doubleValue: Double? {
        switch self {
        case let .float(d): return d
        case let .unsigned(n): return Double(exactly: n)
        case let .negative(n): return Double(exactly: n).map { -$0 - 1 }
        default: return nil
        }
    }

    /// True for `null`.
    public var isNull: Bool {
        self == .null
    }
}
