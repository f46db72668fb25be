// Building CBOR items from Swift literals, e.g. `let m: CBOR = ["confirm": true, "off": 0]`.

extension CBOR: ExpressibleByIntegerLiteral {
    public init(integerLiteral value: Int) {
        self = .int(value)
    }
}

extension CBOR: ExpressibleByStringLiteral {
    public init(stringLiteral value: String) {
        self = .textString(value)
    }
}

extension CBOR: ExpressibleByBooleanLiteral {
    public init(booleanLiteral value: Bool) {
        self = .boolean(value)
    }
}

extension CBOR: ExpressibleByFloatLiteral {
    public init(floatLiteral value: Double) {
        self = .float(value)
    }
}

extension CBOR: ExpressibleByArrayLiteral {
    public init(arrayLiteral elements: CBOR...) {
        self = .array(elements)
    }
}

extension CBOR: ExpressibleByDictionaryLiteral {
    /// Pairs keep the order written; the encoder sorts them.
    public init(dictionaryLiteral elements: (CBOR, CBOR)...) {
        self = .map(elements.map { Pair($0.0, $0.1) })
    }
}
