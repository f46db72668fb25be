// The CBOR module: RFC 8949 Concise Binary Object Representation, no I/O.
//
// `CBOR` is the data item, `CBOREncoder` writes the deterministic encoding of
// RFC 8949 §4.2.1, `CBORDecoder` reads any well-formed encoding with limits
// against hostile input, and `CBORError` says what was wrong and where.

/// One CBOR data item (RFC 8949 §3).
///
/// Integers keep the full CBOR range: `.unsigned(n)` is n (0…2^64−1) and
/// `.negative(n)` is −1−n (−2^64…−1), exactly as the wire stores them.
/// Maps keep their pairs in order; the encoder sorts them, the decoder
/// preserves what it read. Floating-point values of every width are held as
/// `Double` (every half and single value is exactly representable); the encoder
/// picks the shortest width that keeps the value.
///
/// Equality is structural and follows `Double`'s rules for floats
/// (NaN is unequal to itself, 0.0 equals −0.0); compare encodings when the bits
/// matter.
public indirect enum CBOR: Sendable, Hashable {
    /// Major type 0: an unsigned integer.
    case unsigned(UInt64)
    /// Major type 1: the negative integer −1 − `n`.
    case negative(UInt64)
    /// Major type 2: a byte string.
    case byteString([UInt8])
    /// Major type 3: a UTF-8 text string.
    case textString(String)
    /// Major type 4: an array.
    case array([CBOR])
    /// Major type 5: a map, as ordered key/value pairs.
    case map([Pair])
    /// Major type 6: a tagged item.
    case tagged(UInt64, CBOR)
    /// Major type 7: `false` or `true`.
    case boolean(Bool)
    /// Major type 7: `null`.
    case null
    /// Major type 7: `undefined`.
    case undefined
    /// Major type 7: a simple value other than false, true, null and undefined
    /// (0…19 and 32…255).
    case simple(UInt8)
    /// Major type 7: a half, single or double precision float.
    case float(Double)

    /// One key/value pair of a map.
    public struct Pair: Sendable, Hashable {
        public var key: CBOR
        public var value: CBOR
        public init(_ key: CBOR, _ value: CBOR) {
            self.key = key
            self.value = value
        }
    }
}

extension CBOR {
    /// An integer item for any `Int`.
    public static func int(_ value: Int) -> CBOR {
        value >= 0 ? .unsigned(UInt64(value)) : .negative(UInt64(-(value + 1)))
    }

    /// An integer item for any `Int64`.
    public static func int64(_ value: Int64) -> CBOR {
        value >= 0 ? .unsigned(UInt64(value)) : .negative(UInt64(-(value + 1)))
    }

    /// A map item with text keys, in the order given.
    public static func textKeyedMap(_ pairs: [(String, CBOR)]) -> CBOR {
        .map(pairs.map { Pair(.textString($0.0), $0.1) })
    }

    /// The encoding of this item by the default (deterministic) encoder.
    public func encoded() -> [UInt8] {
        CBOREncoder().encode(self)
    }

    /// The CBOR major type (0…7) this item is encoded with.
    public var majorType: UInt8 {
        switch self {
        case .unsigned: return 0
        case .negative: return 1
        case .byteString: return 2
        case .textString: return 3
        case .array: return 4
        case .map: return 5
        case .tagged: return 6
        case .boolean, .null, .undefined, .simple, .float: return 7
        }
    }
}
