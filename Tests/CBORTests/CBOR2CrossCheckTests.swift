import TestSupport
import CBOR
import Testing

/// One line of `Fixtures/cbor2-generated.txt` (written by `make_cbor_fixtures.py`).
struct CBOR2Vector: Sendable, CustomTestStringConvertible {
    let description: String
    let defaultHex: String
    let canonicalHex: String
    var testDescription: String { description }

    static let all: [CBOR2Vector] = ((try? Fixture.lines("cbor2-generated.txt")) ?? []).map { line in
        let f = Fixture.fields(line)
        return CBOR2Vector(
            description: f[0], defaultHex: f.count > 1 ? f[1] : "", canonicalHex: f.count > 2 ? f[2] : "")
    }
}

@Suite("Cross-check with Python cbor2")
struct CBOR2CrossCheckTests {
    @Test func fixtureHoldsTheGeneratedValues() {
        #expect(CBOR2Vector.all.count == 300)
    }

    @Test func canonicalEncodingMatchesCbor2ForEveryFixtureValue() throws {
        let lengthFirst = CBOREncoder(mapKeyOrder: .lengthFirst)
        var failures: [String] = []
        for vector in CBOR2Vector.all {
            let input = try #require(bytes(hex: vector.defaultHex))
            let value = try CBORDecoder().decode(input)
            if hex(lengthFirst.encode(value)) != vector.canonicalHex { failures.append(vector.description) }
        }
        #expect(failures.isEmpty, "differs from cbor2 canonical: \(failures)")
    }

    @Test func deterministicEncodingDecodesToTheSameValueAsCbor2Canonical() throws {
        let lengthFirst = CBOREncoder(mapKeyOrder: .lengthFirst)
        for vector in CBOR2Vector.all {
            let canonical = try #require(bytes(hex: vector.canonicalHex))
            let value = try CBORDecoder().decode(canonical)
            // RFC 8949 order may differ from cbor2's only in the order of map pairs.
            let ours = try CBORDecoder().decode(value.encoded())
            #expect(hex(lengthFirst.encode(ours)) == vector.canonicalHex, "\(vector.description)")
        }
    }

    @Test(
        .enabled(if: pythonHas("cbor2"), "Python cbor2 is not installed (pip install cbor2): live cross-check skipped"))
    func cbor2ReencodesSwiftGeneratedValuesIdentically() throws {
        var rng = SeededGenerator(seed: 2026)
        let values = (0..<250).map { _ in RandomCBOR.value(depth: 0, using: &rng) }
        let lengthFirst = CBOREncoder(mapKeyOrder: .lengthFirst)
        // Feed both key orders; cbor2 must read each and write its canonical form.
        let input = values.flatMap { [hex($0.encoded()), hex(lengthFirst.encode($0))] }.joined(separator: "\n")
        let script = """
            import sys, cbor2
            for line in sys.stdin.read().split():
                print(cbor2.dumps(cbor2.loads(bytes.fromhex(line)), canonical=True).hex())
            """
        let result = try runPython(["-c", script], input: input)
        #expect(result.status == 0)
        let lines = result.output.split(separator: "\n").map(String.init)
        try #require(lines.count == values.count * 2)
        for (i, value) in values.enumerated() {
            let expected = hex(lengthFirst.encode(value))
            #expect(lines[2 * i] == expected, "value \(i): \(value)")
            #expect(lines[2 * i + 1] == expected, "value \(i): \(value)")
        }
    }
}

/// Random CBOR values restricted to what cbor2 maps back unchanged: no tags it
/// interprets (0–5, 21–37, …), no simple values 20–31, unique map keys.
enum RandomCBOR {
    static let tags: [UInt64] = [6, 9, 42, 1234, 65535, 70000, 1 << 33]

    static func value(depth: Int, using rng: inout SeededGenerator) -> CBOR {
        let kind = Int.random(in: 0..<(depth < 2 ? 12 : 9), using: &rng)
        switch kind {
        case 0: return .unsigned(integer(using: &rng))
        case 1: return .negative(integer(using: &rng))
        case 2:
            return .byteString(
                (0..<Int.random(in: 0...30, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) })
        case 3: return .textString(text(using: &rng))
        case 4: return .float(float(using: &rng))
        case 5: return [.boolean(true), .boolean(false), .null, .undefined].randomElement(using: &rng) ?? .null
        case 6: return .simple([0, 7, 19, 32, 200, 255].randomElement(using: &rng) ?? 0)
        case 7: return .int(Int.random(in: -30...30, using: &rng))
        case 8: return .float(Double(Int.random(in: -4096...4096, using: &rng)) / 64)
        case 9:
            return .array((0..<Int.random(in: 0...25, using: &rng)).map { _ in value(depth: depth + 1, using: &rng) })
        case 10:
            let count = Int.random(in: 0...9, using: &rng)
            return .map(
                (0..<count).map { i in
                    // Keys of mixed types and lengths so the two key orders differ; the index keeps them unique.
                    let key: CBOR =
                        switch i % 3 {
                        case 0: .unsigned(UInt64(i) << (8 * UInt64.random(in: 0...4, using: &rng)))
                        case 1: .textString(String(repeating: "k", count: Int.random(in: 0...3, using: &rng)) + "\(i)")
                        default: .negative(UInt64(i) * 1000)
                        }
                    return CBOR.Pair(key, value(depth: depth + 1, using: &rng))
                })
        default:
            return .tagged(tags.randomElement(using: &rng) ?? 6, value(depth: depth + 1, using: &rng))
        }
    }

    static func integer(using rng: inout SeededGenerator) -> UInt64 {
        let bits = [5, 8, 16, 32, 64].randomElement(using: &rng) ?? 8
        return bits == 64
            ? UInt64.random(in: 0...UInt64.max, using: &rng) : UInt64.random(in: 0..<(1 << UInt64(bits)), using: &rng)
    }

    static func text(using rng: inout SeededGenerator) -> String {
        let alphabet = Array("abcXYZ \u{00FC}\u{6C34}\u{10151}\"\\\n")
        return String((0..<Int.random(in: 0...30, using: &rng)).map { _ in alphabet.randomElement(using: &rng) ?? "a" })
    }

    static func float(using rng: inout SeededGenerator) -> Double {
        switch Int.random(in: 0..<4, using: &rng) {
        case 0: return [0.0, -0.0, .infinity, -.infinity, .nan, 65504, 1.5].randomElement(using: &rng) ?? 0
        case 1: return Double(Float(bitPattern: UInt32.random(in: 0...0x7F7F_FFFF, using: &rng)))
        default: return Double.random(in: -1e6...1e6, using: &rng) * pow10(Int.random(in: -30...30, using: &rng))
        }
    }

    static func pow10(_ n: Int) -> Double {
        var r = 1.0
        for _ in 0..<abs(n) { r *= 10 }
        return n < 0 ? 1 / r : r
    }
}
