import Diagnostics
import Testing

/// The one little-endian reader and writer: values the binary formats really hold, read and
/// written back, and reads past the end that throw instead of trapping.
@Suite struct LEBytesTests {
    /// The first 8 bytes of a UF2 block: "UF2\n" and the second magic (Microsoft's uf2 spec).
    static let uf2Start: [UInt8] = [0x55, 0x46, 0x32, 0x0A, 0x57, 0x51, 0x5D, 0x9E]

    @Test func readsLowByteFirstAtAnyOffset() throws {
        #expect(try LEBytes.u32(Self.uf2Start, 0) == 0x0A32_4655)
        #expect(try LEBytes.u32(Self.uf2Start, 4) == 0x9E5D_5157)
        #expect(try LEBytes.u16(Self.uf2Start, 0) == 0x4655)
        #expect(try LEBytes.u16(Self.uf2Start, 6) == 0x9E5D)
        // Unaligned: the read starts wherever it is asked to.
        #expect(try LEBytes.u32(Self.uf2Start, 3) == 0x5D51_570A)
    }

    @Test func writesLowByteFirstAndReadsBackWhatItWrote() throws {
        // An MCUboot header's magic and a nRF52833 bootloader start, as the formats store them.
        var out: [UInt8] = []
        LEBytes.put(&out, UInt32(0x96F3_B83D))
        LEBytes.put(&out, UInt16(0x0064))
        LEBytes.put(&out, UInt32(0x0007_0000))
        #expect(out == [0x3D, 0xB8, 0xF3, 0x96, 0x64, 0x00, 0x00, 0x00, 0x07, 0x00])
        #expect(try LEBytes.u32(out, 0) == 0x96F3_B83D)
        #expect(try LEBytes.u16(out, 4) == 0x0064)
        #expect(try LEBytes.u32(out, 6) == 0x0007_0000)
        #expect(LEBytes.bytes(UInt32(0x96F3_B83D)) == Array(out[0..<4]))
        #expect(LEBytes.bytes(UInt16(0xFFFE)) == [0xFE, 0xFF])
    }

    @Test func everyValueSurvivesTheRoundTrip() throws {
        for value: UInt32 in [0, 1, 0xFF, 0x100, 0xFFFF, 0x1_0000, 0x00FF_00FF, 0x8000_0000, .max] {
            #expect(try LEBytes.u32(LEBytes.bytes(value), 0) == value)
        }
        for value: UInt16 in [0, 1, 0xFF, 0x100, 0x8000, .max] {
            #expect(try LEBytes.u16(LEBytes.bytes(value), 0) == value)
        }
    }

    @Test func aReadPastTheEndThrowsAndSaysWhere() {
        #expect(throws: LEBytes.PastTheEnd(offset: 6, width: 4, count: 8)) { try LEBytes.u32(Self.uf2Start, 6) }
        #expect(throws: LEBytes.PastTheEnd(offset: 7, width: 2, count: 8)) { try LEBytes.u16(Self.uf2Start, 7) }
        #expect(throws: LEBytes.PastTheEnd(offset: 0, width: 4, count: 0)) { try LEBytes.u32([], 0) }
        #expect(throws: LEBytes.PastTheEnd(offset: 0, width: 2, count: 1)) { try LEBytes.u16([0x01], 0) }
    }

    @Test func offsetsThatWouldOverflowOrAreNegativeThrowToo() {
        #expect(throws: LEBytes.PastTheEnd.self) { try LEBytes.u32(Self.uf2Start, -1) }
        #expect(throws: LEBytes.PastTheEnd.self) { try LEBytes.u16(Self.uf2Start, Int.max) }
        #expect(throws: LEBytes.PastTheEnd.self) { try LEBytes.u32(Self.uf2Start, Int.min) }
    }

    @Test func pastTheEndIsMalformedDataWithAMessageThatSaysWhatIsWrong() {
        let error = LEBytes.PastTheEnd(offset: 12, width: 4, count: 14)
        #expect(error.failureKind == .malformedData)
        #expect(
            error.description
                == "a 32-bit field at byte 12 reaches past the end of the 14 bytes there are: "
                + "the data is cut short or not in the format expected")
    }
}
