import Diagnostics
import Testing

/// The one hex formatter: the forms the messages, traces and reports use.
@Suite struct HexTests {
    @Test("addresses have eight upper-case digits after 0x")
    func addresses() {
        #expect(Hex.address(0x47000) == "0x00047000")
        #expect(Hex.address(0) == "0x00000000")
        #expect(Hex.address(.max) == "0xFFFFFFFF")
    }

    @Test("numbers pad to the digits asked for and never cut")
    func numbers() {
        #expect(Hex.number(UInt8(0x0A), digits: 2, prefix: false) == "0A")
        #expect(Hex.number(UInt8(0xEE)) == "0xEE")
        #expect(Hex.number(0x3C, uppercase: false) == "0x3c")
        #expect(Hex.number(UInt32(0x1F), digits: 4, prefix: false, uppercase: false) == "001f")
        #expect(Hex.number(UInt32(0x12345), digits: 2) == "0x12345")
    }

    @Test("bytes are two digits each, with the separator between them only")
    func bytes() {
        #expect(Hex.bytes([0x22, 0x0A, 0xFF]) == "220AFF")
        #expect(Hex.bytes([0x22, 0x0A], separator: " ") == "22 0A")
        #expect(Hex.bytes([0xAB], separator: ":") == "AB")
        #expect(Hex.bytes([UInt8](), separator: " ") == "")
        #expect(Hex.bytes([0xDE, 0xAD], uppercase: false) == "dead")
        #expect(Hex.bytes([UInt8](0...255)).count == 512)
    }
}

/// An error's kind is its own; an error that says none is a failed flash unless told otherwise.
@Suite struct FailureKindTests {
    struct Plain: Error {}
    struct Kinded: DomainError { var failureKind: FailureKind }

    @Test("an error's own kind wins; others are a failed flash unless told otherwise")
    func kindOfAnError() {
        #expect(FailureKind.of(Kinded(failureKind: .pairingRefused)) == .pairingRefused)
        #expect(FailureKind.of(Plain()) == .flashFailed)
        #expect(FailureKind.of(Plain(), otherwise: .internalFault) == .internalFault)
    }

    @Test("each kind has its own word for JSON and logs")
    func kindsHaveDistinctWords() {
        let words = FailureKind.allCases.map(\.rawValue)
        #expect(Set(words).count == words.count)
        #expect(words.allSatisfy { !$0.isEmpty && $0 == $0.lowercased() && !$0.contains(" ") })
    }
}
