/// Writes CBOR items in the deterministic encoding of RFC 8949 §4.2.1:
/// shortest argument forms, definite lengths only, map pairs sorted by the
/// bytes of their encoded keys, and floats in the shortest of half, single
/// or double precision that keeps the value (NaN as `f9 7e00`).
///
/// Encoding never fails: every `CBOR` value has an encoding. Maps with
/// duplicate keys are encoded as given (sorted); RFC 8949 leaves them invalid
/// but well-formed, and the caller owns that choice.
public struct CBOREncoder: Sendable {
    /// How map keys are ordered.
    public enum MapKeyOrder: Sendable, Equatable {
        /// RFC 8949 §4.2.1: bytewise lexicographic order of the encoded keys.
        case bytewiseLexicographic
        /// RFC 7049 §3.9 "canonical CBOR": shorter encoded keys first, then
        /// bytewise. This is what Python `cbor2.dumps(canonical=True)` does.
        /// The two orders agree whenever all keys encode to the same length,
        /// as the short text keys of SMP do.
        case lengthFirst
    }

    /// The map key order used.
    public var mapKeyOrder: MapKeyOrder

    public init(mapKeyOrder: MapKeyOrder = .bytewiseLexicographic) {
        self.mapKeyOrder = mapKeyOrder
    }

    /// The encoding of `value`.
    public func encode(_ value: CBOR) -> [UInt8] {
        var out: [UInt8] = []
        append(value, to: &out)
        return out
    }

    /// Appends the encoding of `value` to `out`.
    public func append(_ value: CBOR, to out: inout [UInt8]) {
        switch value {
        case let .unsigned(n):
            Self.appendHead(major: 0, argument: n, to: &out)
        case let .negative(n):
            Self.appendHead(major: 1, argument: n, to: &out)
        case let .byteString(bytes):
            Self.appendHead(major: 2, argument: UInt64(bytes.count), to: &out)
            out.append(contentsOf: bytes)
        case let .textString(text):
            let utf8 = Array(text.utf8)
            Self.appendHead(major: 3, argument: UInt64(utf8.count), to: &out)
            out.append(contentsOf: utf8)
        case let .array(items):
            Self.appendHead(major: 4, argument: UInt64(items.count), to: &out)
            for item in items { append(item, to: &out) }
        case let .map(pairs):
            Self.appendHead(major: 5, argument: UInt64(pairs.count), to: &out)
            let encoded = pairs.map { (key: encode($0.key), value: $0.value) }
            for pair in encoded.sorted(by: { keyPrecedes($0.key, $1.key) }) {
                out.append(contentsOf: pair.key)
                append(pair.value, to: &out)
            }
        case let .tagged(tag, item):
            Self.appendHead(major: 6, argument: tag, to: &out)
            append(item, to: &out)
        case let .boolean(b):
            out.append(b ? 0xF5 : 0xF4)
        case .null:
            out.append(0xF6)
        case .undefined:
            out.append(0xF7)
        case let .simple(v):
            if v < 24 { out.append(0xE0 | v) } else { out.append(contentsOf: [0xF8, v]) }
        case let .float(d):
            Self.appendFloat(d, to: &out)
        }
    }

    private func keyPrecedes(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        if mapKeyOrder == .lengthFirst, a.count != b.count { return a.count < b.count }
        return a.lexicographicallyPrecedes(b)
    }

    /// The initial byte and shortest argument for `major` and `argument`.
    static func appendHead(major: UInt8, argument: UInt64, to out: inout [UInt8]) {
        let m = major << 5
        switch argument {
        case 0..<24:
            out.append(m | UInt8(argument))
        case 24...0xFF:
            out.append(contentsOf: [m | 24, UInt8(argument)])
        case 0x100...0xFFFF:
            out.append(m | 25)
            appendBigEndian(argument, byteCount: 2, to: &out)
        case 0x1_0000...0xFFFF_FFFF:
            out.append(m | 26)
            appendBigEndian(argument, byteCount: 4, to: &out)
        default:
            out.append(m | 27)
            appendBigEndian(argument, byteCount: 8, to: &out)
        }
    }

    static func appendFloat(_ d: Double, to out: inout [UInt8]) {
        if let half = FloatWidth.halfBits(exactly: d) {
            out.append(0xF9)
            appendBigEndian(UInt64(half), byteCount: 2, to: &out)
        } else if let single = Float(exactly: d) {
            out.append(0xFA)
            appendBigEndian(UInt64(single.bitPattern), byteCount: 4, to: &out)
        } else {
            out.append(0xFB)
            appendBigEndian(d.bitPattern, byteCount: 8, to: &out)
        }
    }

    static func appendBigEndian(_ value: UInt64, byteCount: Int, to out: inout [UInt8]) {
        for i in stride(from: byteCount - 1, through: 0, by: -1) {
            out.append(UInt8(truncatingIfNeeded: value >> (UInt64(i) * 8)))
        }
    }
}
