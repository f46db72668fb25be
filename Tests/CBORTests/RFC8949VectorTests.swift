import TestSupport
import CBOR
import Testing

/// One line of `Fixtures/rfc8949-appendix-a.txt`.
struct AppendixAVector: Sendable, CustomTestStringConvertible {
    let hex: String
    let diagnostic: String
    let roundTrip: Bool
    var testDescription: String { "\(hex) = \(diagnostic)" }

    static let all: [AppendixAVector] = ((try? Fixture.lines("rfc8949-appendix-a.txt")) ?? []).map { line in
        let f = Fixture.fields(line)
        return AppendixAVector(hex: f[0], diagnostic: f.count > 1 ? f[1] : "", roundTrip: f.count > 2 && f[2] == "yes")
    }
}

@Suite("RFC 8949 Appendix A vectors")
struct RFC8949VectorTests {
    @Test func fixtureHoldsEveryAppendixAVector() {
        // Table 6 of RFC 8949 has 81 rows; the fixture must not silently lose any.
        #expect(AppendixAVector.all.count == 81)
        #expect(AppendixAVector.all.filter(\.roundTrip).count == 64)
    }

    @Test(arguments: AppendixAVector.all)
    func decodesVectorToTheDiagnosticValue(_ vector: AppendixAVector) throws {
        let input = try #require(bytes(hex: vector.hex))
        let expected = try DiagnosticParser.parse(vector.diagnostic)
        let decoded = try CBORDecoder().decode(input)
        // Structural equality, plus the encodings, which also tell NaN, 0.0 and −0.0 apart.
        if vector.diagnostic != "NaN" { #expect(decoded == expected) }
        #expect(hex(decoded.encoded()) == hex(expected.encoded()))
    }

    @Test(arguments: AppendixAVector.all.filter(\.roundTrip))
    func encodesDeterministicVectorExactly(_ vector: AppendixAVector) throws {
        let expected = try DiagnosticParser.parse(vector.diagnostic)
        #expect(hex(CBOREncoder().encode(expected)) == vector.hex)
    }

    @Test(arguments: AppendixAVector.all.filter { !$0.roundTrip })
    func reencodesNonDeterministicVectorInShorterForm(_ vector: AppendixAVector) throws {
        let input = try #require(bytes(hex: vector.hex))
        let reencoded = try CBORDecoder().decode(input).encoded()
        #expect(reencoded != input)
        #expect(reencoded.count <= input.count)
    }

    @Test(arguments: AppendixAVector.all)
    func rejectsEveryTruncationOfVector(_ vector: AppendixAVector) throws {
        let input = try #require(bytes(hex: vector.hex))
        for length in 0..<input.count {
            #expect(throws: CBORError.self) { try CBORDecoder().decode(Array(input.prefix(length))) }
        }
    }
}
