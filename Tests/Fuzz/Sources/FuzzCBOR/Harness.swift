import CBOR

/// libFuzzer entry point: any bytes either decode as CBOR or throw a `CBORError`, and what
/// decodes re-encodes (deterministically) to bytes that decode to an equal item whose own
/// encoding is the same bytes again.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCBOR(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    if let item = try? CBORDecoder().decode(bytes) { checkRoundTrip(item) }
    if let (item, end) = try? CBORDecoder().decodePrefix(bytes) {
        precondition(end > 0 && end <= bytes.count, "decodePrefix ended at \(end) of \(bytes.count) bytes")
        // The prefix alone is a complete item.
        guard let again = try? CBORDecoder().decode(Array(bytes[..<end])) else {
            fatalError("the prefix 0..<\(end) that decodePrefix read does not decode on its own")
        }
        precondition(sameItem(again, item), "the prefix decodes to a different item alone")
        checkRoundTrip(item)
    }
    // Tight limits must reject, never trap.
    let tight = CBORDecoder.Limits(
        maximumDepth: 2, maximumElementCount: 3, maximumStringLength: 4,
        maximumItemCount: 6, maximumInputSize: 64)
    _ = try? CBORDecoder(limits: tight).decode(bytes)
    return 0
}

/// The canonical re-encoding decodes to an equal value, and encoding is a fixed point.
func checkRoundTrip(_ item: CBOR) {
    let encoded = item.encoded()
    let decoded: CBOR
    do {
        decoded = try CBORDecoder(limits: .init(maximumInputSize: Int.max)).decode(encoded)
    } catch {
        fatalError("the re-encoding \(encoded) of \(item) does not decode: \(error)")
    }
    precondition(sameItem(decoded, item), "re-encoding changed \(item) into \(decoded)")
    precondition(decoded.encoded() == encoded, "encoding is not a fixed point for \(item)")
    _ = item.description
}

/// Structural equality where NaN equals NaN (CBOR's own `==` follows `Double`).
func sameItem(_ a: CBOR, _ b: CBOR) -> Bool {
    switch (a, b) {
    case let (.float(x), .float(y)): return x == y || (x.isNaN && y.isNaN)
    case let (.array(xs), .array(ys)): return xs.count == ys.count && zip(xs, ys).allSatisfy { sameItem($0, $1) }
    case let (.map(xs), .map(ys)):
        // The encoder sorts map keys; compare as multisets by encoding.
        return xs.map { $0.key.encoded() + $0.value.encoded() }.sorted { $0.lexicographicallyPrecedes($1) }
            == ys.map { $0.key.encoded() + $0.value.encoded() }.sorted { $0.lexicographicallyPrecedes($1) }
    case let (.tagged(t, x), .tagged(u, y)): return t == u && sameItem(x, y)
    default: return a == b
    }
}
