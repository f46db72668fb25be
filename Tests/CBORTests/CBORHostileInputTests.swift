import TestSupport
import CBOR
import Testing

@Suite("CBOR decoder on hostile and malformed input")
struct CBORHostileInputTests {
    @Test func rejectsArraysNestedDeeperThanTheLimit() {
        let input = [UInt8](repeating: 0x81, count: 100_000) + [0x00]
        #expect(throws: CBORError.nestingTooDeep(offset: 32, limit: 32)) { try CBORDecoder().decode(input) }
    }

    @Test func rejectsTagsNestedDeeperThanAConfiguredLimit() {
        let input = [UInt8](repeating: 0xC6, count: 10) + [0x00]
        let decoder = CBORDecoder(limits: .init(maximumDepth: 5))
        #expect(throws: CBORError.nestingTooDeep(offset: 5, limit: 5)) { try decoder.decode(input) }
        #expect(throws: Never.self) { try CBORDecoder().decode(input) }
    }

    @Test func rejectsHugeDeclaredArrayWithoutAllocating() {
        // 2^64 − 1 elements declared in nine bytes.
        let input: [UInt8] = [0x9B, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]
        #expect(throws: CBORError.tooManyElements(offset: 0, count: .max, limit: 65_536)) {
            try CBORDecoder().decode(input)
        }
        // Even with no element limit, a count the input cannot hold is refused up front.
        let unlimited = CBORDecoder(limits: .init(maximumElementCount: .max))
        let quintillions: [UInt8] = [0x9B, 0x40, 0, 0, 0, 0, 0, 0, 0, 0x00]
        #expect(throws: CBORError.countExceedsInput(offset: 0, count: 1 << 62, available: 1)) {
            try unlimited.decode(quintillions)
        }
    }

    @Test func rejectsHugeDeclaredMapWithoutAllocating() {
        let input: [UInt8] = [0xBA, 0x7F, 0xFF, 0xFF, 0xFF, 0x01, 0x02]
        let unlimited = CBORDecoder(limits: .init(maximumElementCount: .max))
        #expect(throws: CBORError.countExceedsInput(offset: 0, count: 0x7FFF_FFFF, available: 2)) {
            try unlimited.decode(input)
        }
    }

    @Test func rejectsHugeDeclaredStrings() {
        let bytes: [UInt8] = [0x5B, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x00]
        #expect(throws: CBORError.stringTooLong(offset: 0, length: .max, limit: 1 << 20)) {
            try CBORDecoder().decode(bytes)
        }
        let text: [UInt8] = [0x7A, 0x00, 0x01, 0x00, 0x00, 0x61]
        #expect(throws: CBORError.lengthExceedsInput(offset: 0, declared: 65536, available: 1)) {
            try CBORDecoder().decode(text)
        }
    }

    @Test func limitsIndefiniteStringsByTheirJoinedLength() throws {
        let chunk: [UInt8] = [0x58, 0x20] + [UInt8](repeating: 7, count: 32)
        let input = [0x5F] + chunk + chunk + chunk + [0xFF]
        let decoder = CBORDecoder(limits: .init(maximumStringLength: 64))
        #expect(throws: CBORError.stringTooLong(offset: 0, length: 96, limit: 64)) { try decoder.decode(input) }
        #expect(try CBORDecoder().decode(input).bytesValue?.count == 96)
    }

    @Test func limitsIndefiniteArraysByElementCount() {
        let input: [UInt8] = [0x9F] + [UInt8](repeating: 0x00, count: 10) + [0xFF]
        let decoder = CBORDecoder(limits: .init(maximumElementCount: 4))
        #expect(throws: CBORError.tooManyElements(offset: 0, count: 5, limit: 4)) { try decoder.decode(input) }
    }

    @Test func limitsTotalItemsAndInputSize() {
        let input: [UInt8] = [0x83, 0x01, 0x02, 0x03]
        #expect(throws: CBORError.tooManyItems(offset: 3, limit: 3)) {
            try CBORDecoder(limits: .init(maximumItemCount: 3)).decode(input)
        }
        #expect(throws: CBORError.inputTooLarge(size: 4, limit: 3)) {
            try CBORDecoder(limits: .init(maximumInputSize: 3)).decode(input)
        }
    }

    @Test(arguments: [
        ([UInt8]([0xFF]), CBORError.unexpectedBreak(offset: 0)),
        ([0x81, 0xFF], .unexpectedBreak(offset: 1)),
        ([0x1C], .reservedAdditionalInfo(offset: 0, initialByte: 0x1C)),
        ([0xFE], .reservedAdditionalInfo(offset: 0, initialByte: 0xFE)),
        ([0x1F], .invalidIndefiniteLength(offset: 0, initialByte: 0x1F)),
        ([0xDF, 0x00], .invalidIndefiniteLength(offset: 0, initialByte: 0xDF)),
        ([0x5F, 0x61, 0x61, 0xFF], .invalidStringChunk(offset: 1, initialByte: 0x61)),
        ([0x7F, 0x7F, 0xFF, 0xFF], .invalidStringChunk(offset: 1, initialByte: 0x7F)),
        ([0x62, 0xC3, 0x28], .invalidUTF8(offset: 0)),
        ([0xF8, 0x10], .invalidSimpleValue(offset: 0, value: 0x10)),
        ([0xBF, 0x61, 0x61, 0xFF], .oddMapItemCount(offset: 3)),
        ([0x00, 0x00], .trailingBytes(offset: 1, count: 1)),
        ([0x19, 0x01], .truncated(offset: 0, needed: 3, available: 2)),
        ([0x82, 0x01], .countExceedsInput(offset: 0, count: 2, available: 1)),
        ([0x82, 0x01, 0x19], .truncated(offset: 2, needed: 3, available: 1)),
        ([0x9F, 0x01], .truncated(offset: 2, needed: 1, available: 0))
    ])
    func rejectsMalformedInputWithItsOffset(_ input: [UInt8], _ expected: CBORError) {
        #expect(throws: expected) { try CBORDecoder().decode(input) }
    }

    @Test func errorMessagesNameTheOffsetAndTheRemedy() {
        let error = CBORError.nestingTooDeep(offset: 32, limit: 32)
        #expect(error.description.contains("byte 32"))
        #expect(error.description.contains("maximumDepth"))
        #expect(CBORError.truncated(offset: 4, needed: 9, available: 3).description.contains("cut short"))
    }

    @Test func acceptsNonShortestArguments() throws {
        #expect(try CBORDecoder().decode([0x1B, 0, 0, 0, 0, 0, 0, 0, 0x01]) == 1)
        #expect(try CBORDecoder().decode([0x78, 0x01, 0x61]) == "a")
        #expect(try CBORDecoder().decode([0xB9, 0x00, 0x01, 0x61, 0x61, 0xF5]) == ["a": true])
    }

    @Test func keepsMapOrderAndDuplicateKeysAsRead() throws {
        let decoded = try CBORDecoder().decode([0xA2, 0x61, 0x62, 0x01, 0x61, 0x62, 0x02])
        #expect(decoded.mapValue?.count == 2)
        #expect(decoded["b"] == 1)  // the first pair wins in lookups
    }

    @Test func survivesSeededRandomGarbage() {
        var rng = SeededGenerator(seed: 0xC0FFEE)
        var decodedCount = 0
        for _ in 0..<20_000 {
            let length = Int.random(in: 0...24, using: &rng)
            let input = (0..<length).map { _ in UInt8.random(in: 0...255, using: &rng) }
            guard let value = try? CBORDecoder().decodePrefix(input).item else { continue }
            decodedCount += 1
            // Whatever decodes re-encodes to bytes that decode to the same encoding.
            let again = try? CBORDecoder().decode(value.encoded())
            #expect(again?.encoded() == value.encoded(), "input \(hex(input))")
        }
        #expect(decodedCount > 1000)
    }
}
