import TestSupport
import CBOR
import Testing

@Suite("CBOR deterministic encoding")
struct CBOREncoderTests {
    @Test(arguments: [
        (UInt64(23), "17"), (24, "1818"), (255, "18ff"), (256, "190100"), (65535, "19ffff"),
        (65536, "1a00010000"), (4_294_967_295, "1affffffff"), (4_294_967_296, "1b0000000100000000")
    ])
    func encodesIntegersInShortestForm(_ value: UInt64, _ expected: String) {
        #expect(hex(CBOR.unsigned(value).encoded()) == expected)
        // The same argument under major type 1 is −1 − value.
        #expect(
            hex(CBOR.negative(value).encoded()) == String(format: "%02x", (bytes(hex: expected)?.first ?? 0) | 0x20)
                + expected.dropFirst(2))
    }

    @Test func representsTheWholeNegativeRange() throws {
        #expect(CBOR.int(-1) == .negative(0))
        #expect(CBOR.int(Int.min) == .negative(UInt64(Int.max)))
        #expect(CBOR.int(Int.min).intValue == Int.min)
        #expect(CBOR.negative(UInt64.max).intValue == nil)
        #expect(hex(CBOR.negative(UInt64.max).encoded()) == "3bffffffffffffffff")
        #expect(try CBORDecoder().decode([0x3B, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]) == .negative(.max))
    }

    @Test(arguments: [
        (1.0, "f93c00"), (65504.0, "f97bff"), (65505.0, "fa477fe100"), (100000.0, "fa47c35000"),
        (1.1, "fb3ff199999999999a"), (5.960464477539063e-8, "f90001"), (6.097555160522461e-05, "f903ff"),
        (-0.0, "f98000"), (.nan, "f97e00"), (-.infinity, "f9fc00"), (Double(Float.leastNonzeroMagnitude), "fa00000001"),
        (Double.leastNonzeroMagnitude, "fb0000000000000001")
    ])
    func encodesFloatInShortestWidthThatKeepsValue(_ value: Double, _ expected: String) {
        #expect(hex(CBOR.float(value).encoded()) == expected)
    }

    @Test func roundTripsEveryHalfPrecisionBitPattern() throws {
        for bits in 0...UInt16.max {
            let input: [UInt8] = [0xF9, UInt8(bits >> 8), UInt8(bits & 0xFF)]
            let decoded = try CBORDecoder().decode(input)
            let isNaN = bits & 0x7C00 == 0x7C00 && bits & 0x03FF != 0
            // Every half value is re-encoded as the same half; NaNs become the canonical NaN.
            #expect(decoded.encoded() == (isNaN ? [0xF9, 0x7E, 0x00] : input), "half bits \(bits)")
        }
    }

    @Test func sortsMapKeysByEncodedBytes() {
        let map: CBOR = ["a": 1, 1000: 2, 100: 3]
        #expect(hex(CBOREncoder().encode(map)) == "a3" + "186403" + "1903e802" + "616101")
        // cbor2's canonical=True uses the older length-first order.
        #expect(hex(CBOREncoder(mapKeyOrder: .lengthFirst).encode(map)) == "a3" + "186403" + "616101" + "1903e802")
    }

    @Test func sortsNestedMapKeysToo() {
        let map: CBOR = ["z": ["b": 1, "a": 2], "confirm": false]
        #expect(hex(map.encoded()) == "a2" + "617a" + "a2616102616201" + "67636f6e6669726d" + "f4")
    }

    @Test func buildsMapsFromLiteralsInWrittenOrder() {
        let map: CBOR = ["off": 0, "data": .byteString([1, 2]), "sha": .null]
        #expect(map.mapValue?.map(\.key) == ["off", "data", "sha"])
        #expect(map["off"]?.intValue == 0)
        #expect(map["data"]?.bytesValue == [1, 2])
        #expect(map["sha"]?.isNull == true)
        #expect(map["missing"] == nil)
        #expect(map["off"]?.stringValue == nil)
    }

    @Test func encodesSimpleValuesAndSpecials() {
        #expect(hex(CBOR.simple(16).encoded()) == "f0")
        #expect(hex(CBOR.simple(255).encoded()) == "f8ff")
        #expect(hex(CBOR.undefined.encoded()) == "f7")
        #expect(hex(CBOR.tagged(55799, .null).encoded()) == "d9d9f7f6")
    }

    @Test func encodesTextAsUTF8WithByteLength() {
        #expect(hex(CBOR.textString("\u{00FC}\u{6C34}").encoded()) == "65c3bce6b0b4")
    }
}
