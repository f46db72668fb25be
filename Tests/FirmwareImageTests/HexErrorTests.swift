import Diagnostics
import Testing
@testable import FirmwareImage

/// Every error names the line, the column and what was expected.
@Suite struct HexErrorTests {
    static func data(_ offset: UInt16, _ bytes: [UInt8]) -> String {
        IntelHexRecord(type: .data, offset: offset, data: bytes).encoded()
    }
    static let ela0 = ":020000040000FA"
    static let eof = ":00000001FF"
    static let sixteen = [UInt8](0..<16)

    static func parse(_ lines: [String]) throws -> IntelHexFile {
        try IntelHexReader.parse(Array((lines.joined(separator: "\n") + "\n").utf8))
    }

    static func replacing(_ s: String, column: Int, with c: Character) -> String {
        var chars = Array(s)
        chars[column - 1] = c
        return String(chars)
    }

    @Test func badChecksumNamesExpectedAndFound() {
        let good = Self.data(0x10, Self.sixteen)
        let cs = IntelHexRecord(type: .data, offset: 0x10, data: Self.sixteen).checksum
        let bad = String(good.dropLast(2)) + Hex.number(cs &+ 1, digits: 2, prefix: false)
        let expected = FirmwareImageError.badChecksum(TextPosition(line: 2, column: 42), expected: cs, found: cs &+ 1)
        #expect(throws: expected) { try Self.parse([Self.ela0, bad, Self.eof]) }
        #expect(
            expected.description
                == "line 2, column 42: bad checksum: expected \(Hex.number(cs, digits: 2)), found \(Hex.number(cs &+ 1, digits: 2))"
        )
    }

    @Test func nonHexDigitNamesTheColumn() {
        let good = Self.data(0, Self.sixteen)
        #expect(throws: FirmwareImageError.nonHexDigit(TextPosition(line: 2, column: 15), found: UInt8(ascii: "G"))) {
            try Self.parse([Self.ela0, Self.replacing(good, column: 15, with: "G"), Self.eof])
        }
        #expect(throws: FirmwareImageError.nonHexDigit(TextPosition(line: 1, column: 3), found: UInt8(ascii: "x"))) {
            try Self.parse([Self.replacing(good, column: 3, with: "x"), Self.eof])
        }
        // A space inside the record is not whitespace to skip.
        #expect(throws: FirmwareImageError.nonHexDigit(TextPosition(line: 1, column: 20), found: 0x20)) {
            try Self.parse([Self.replacing(good, column: 20, with: " "), Self.eof])
        }
    }

    @Test func missingColonNamesWhatWasFound() {
        let good = Self.data(0, Self.sixteen)
        #expect(throws: FirmwareImageError.missingColon(TextPosition(line: 3, column: 1), found: UInt8(ascii: "1"))) {
            try Self.parse([Self.ela0, good, String(good.dropFirst()), Self.eof])
        }
        #expect(throws: FirmwareImageError.missingColon(TextPosition(line: 2, column: 3), found: UInt8(ascii: "h"))) {
            try Self.parse([Self.ela0, "  hello", Self.eof])
        }
        let e = FirmwareImageError.missingColon(TextPosition(line: 1, column: 1), found: UInt8(ascii: "#"))
        #expect(e.description == "line 1, column 1: expected ':' at the start of an Intel HEX record, found '#' (0x23)")
    }

    @Test func truncatedLineSaysWhereItEnded() {
        let good = Self.data(0, Self.sixteen)  // 43 characters
        #expect(
            throws: FirmwareImageError.truncatedRecord(
                TextPosition(line: 2, column: 38), expectedCharacters: 42, foundCharacters: 36)
        ) {
            try Self.parse([Self.ela0, String(good.dropLast(6)), Self.eof])
        }
        // Trailing spaces do not count as digits.
        #expect(
            throws: FirmwareImageError.truncatedRecord(
                TextPosition(line: 2, column: 38), expectedCharacters: 42, foundCharacters: 36)
        ) {
            try Self.parse([Self.ela0, String(good.dropLast(6)) + "   ", Self.eof])
        }
        // A header too short for even the length and type fields.
        #expect(
            throws: FirmwareImageError.truncatedRecord(
                TextPosition(line: 1, column: 6), expectedCharacters: 10, foundCharacters: 4)
        ) {
            try Self.parse([":0000", Self.eof])
        }
        // At the very end of the file, without a newline.
        #expect(
            throws: FirmwareImageError.truncatedRecord(
                TextPosition(line: 2, column: 10), expectedCharacters: 10, foundCharacters: 8)
        ) {
            try IntelHexReader.parse(Array((Self.ela0 + "\n:00000001").utf8))
        }
    }

    @Test func badLengthForFixedSizeRecords() {
        let ela4 = IntelHexRecord(type: .extendedLinearAddress, data: [0, 0, 0, 0]).encoded()
        #expect(
            throws: FirmwareImageError.badRecordLength(
                TextPosition(line: 1, column: 2), recordType: 0x04, length: 4, expected: "2")
        ) {
            try Self.parse([ela4, Self.eof])
        }
        let eofWithData = IntelHexRecord(type: .endOfFile, data: [1]).encoded()
        #expect(
            throws: FirmwareImageError.badRecordLength(
                TextPosition(line: 2, column: 2), recordType: 0x01, length: 1, expected: "0")
        ) {
            try Self.parse([Self.ela0, eofWithData])
        }
        let start3 = IntelHexRecord(type: .startLinearAddress, data: [1, 2, 3]).encoded()
        #expect(
            throws: FirmwareImageError.badRecordLength(
                TextPosition(line: 1, column: 2), recordType: 0x05, length: 3, expected: "4")
        ) {
            try Self.parse([start3, Self.eof])
        }
        let blockStart1 = IntelHexRecord(type: .blockStart, data: [0x99]).encoded()
        #expect(
            throws: FirmwareImageError.badRecordLength(
                TextPosition(line: 2, column: 2), recordType: 0x0A, length: 1, expected: "at least 2 (the board ID)")
        ) {
            try Self.parse([Self.ela0, blockStart1, Self.eof])
        }
    }

    @Test func moreDigitsThanTheLengthByteAnnounces() {
        let fifteen = Self.data(0, Array(0..<15)) + "AB"
        #expect(
            throws: FirmwareImageError.badRecordLength(
                TextPosition(line: 2, column: 2), recordType: 0x00, length: 15,
                expected: "16 (the line holds 42 hex digits)")
        ) {
            try Self.parse([Self.ela0, fifteen, Self.eof])
        }
        let junk = Self.data(0, Self.sixteen) + "x"
        #expect(
            throws: FirmwareImageError.unexpectedCharacter(
                TextPosition(line: 2, column: 44), found: UInt8(ascii: "x"),
                expected: "the end of the line after the checksum")
        ) {
            try Self.parse([Self.ela0, junk, Self.eof])
        }
    }

    @Test func unknownRecordType() {
        let r = IntelHexRecord(type: .init(rawValue: 0x07), data: [1]).encoded()
        #expect(throws: FirmwareImageError.unknownRecordType(TextPosition(line: 2, column: 8), recordType: 0x07)) {
            try Self.parse([Self.ela0, r, Self.eof])
        }
    }

    @Test func dataPastTheAddressSpace() {
        let ela = IntelHexRecord.extendedLinearAddress(upper: 0xFFFF).encoded()
        #expect(throws: FirmwareImageError.addressOverflow(TextPosition(line: 2, column: 4), address: 0x1_0000_0008)) {
            try Self.parse([ela, Self.data(0xFFF8, Self.sixteen), Self.eof])
        }
    }

    @Test func missingEndOfFileAndEmptyFiles() {
        #expect(throws: FirmwareImageError.missingEndOfFile(TextPosition(line: 3, column: 1))) {
            try Self.parse([Self.ela0, Self.data(0, Self.sixteen)])
        }
        #expect(throws: FirmwareImageError.missingEndOfFile(TextPosition(line: 2, column: 44))) {
            try IntelHexReader.parse(Array((Self.ela0 + "\n" + Self.data(0, Self.sixteen)).utf8))
        }
        #expect(throws: FirmwareImageError.emptyFile) { try IntelHexReader.parse([]) }
        #expect(throws: FirmwareImageError.emptyFile) { try IntelHexReader.parse(Array("\n \r\n\t\n".utf8)) }
        #expect(throws: FirmwareImageError.emptyFile) { try Firmware.parse([], fileName: "e.hex") }
    }

    @Test func overlappingDataNamesBothLines() throws {
        var other = Self.sixteen
        other[4] = 0xEE  // address 0x0C: 0x0C in line 2, 0xEE in line 4
        let lines = [
            Self.ela0, Self.data(0, Self.sixteen), Self.data(0x100, Self.sixteen),
            Self.data(0x08, Array(other[4...]) + [0, 0, 0, 0]),
            Self.eof
        ]
        // Line 4 writes 0x08..0x17: bytes 4..15 of `other` then zeros; 0x08 holds 0x04 on line 4 vs 0x08 on line 2.
        let expected = FirmwareImageError.overlappingData(
            TextPosition(line: 4, column: 10), address: 0x08, boardID: nil,
            byte: 0xEE, firstLine: 2, firstByte: 0x08)
        #expect(throws: expected) { try Self.parse(lines) }
        #expect(expected.description.contains("line 4, column 10"))
        #expect(expected.description.contains("0x08 from line 2 and 0xEE here"))
    }

    @Test func overlapInsideOneUniversalHexSection() throws {
        let lines = [
            Self.ela0, IntelHexRecord.blockStart(boardID: 0x9903).encoded(),
            IntelHexRecord(type: .customData, offset: 0x20, data: [1, 2, 3, 4]).encoded(),
            IntelHexRecord(type: .customData, offset: 0x22, data: [3, 9]).encoded(),
            Self.eof
        ]
        #expect(
            throws: FirmwareImageError.overlappingData(
                TextPosition(line: 4, column: 12), address: 0x23, boardID: 0x9903,
                byte: 9, firstLine: 3, firstByte: 4)
        ) {
            try Self.parse(lines)
        }
        // The same addresses in two boards' sections are not an overlap.
        let two = [
            Self.ela0, IntelHexRecord.blockStart(boardID: 0x9900).encoded(), Self.data(0x20, [1, 2]),
            Self.ela0, IntelHexRecord.blockStart(boardID: 0x9903).encoded(),
            IntelHexRecord(type: .customData, offset: 0x20, data: [7, 8]).encoded(), Self.eof
        ]
        let f = try Self.parse(two)
        #expect(f.sections.map { $0.image.read(0x20..<0x22) } == [[1, 2], [7, 8]])
    }

    @Test func dataBeforeTheFirstBlockStart() {
        let lines = [
            Self.ela0, Self.data(0, [1]), Self.ela0, IntelHexRecord.blockStart(boardID: 0x9900).encoded(), Self.eof
        ]
        #expect(
            throws: FirmwareImageError.dataOutsideUniversalHexSection(
                TextPosition(line: 4, column: 1), firstDataLine: 2)
        ) {
            try Self.parse(lines)
        }
    }

    @Test func recordsAfterEndOfFileAreIgnoredWithAWarning() throws {
        let lines = [
            Self.ela0, Self.data(0, [1, 2]), Self.eof, "",
            IntelHexRecord.extendedLinearAddress(upper: 0x2000).encoded(),
            Self.data(0, Self.sixteen), Self.data(0x10, [1, 2, 3, 4]),
            IntelHexRecord(type: .otherData, data: [5]).encoded(),
            "garbage"
        ]
        let f = try Firmware.parse(Array(lines.joined(separator: "\r\n").utf8), fileName: "a.hex")
        #expect(f.sections[0].image.runs == [0..<2])
        let w = FirmwareWarning.linesAfterEndOfFile(
            eofLine: 3, firstLine: 5, lines: 5, recordTypes: [0x00: 2, 0x04: 1, 0x0E: 1], dataBytes: 20)
        #expect(f.allWarnings == [w])
        #expect(
            w.description
                == "ignored 5 lines after the end-of-file record on line 3 (from line 5): 2 type-00 records (20 data bytes), 1 type-04 record, 1 type-0E record, 1 other line"
        )
    }

    @Test func endOfFileFollowedByABlockStartContinuesAUniversalHex() throws {
        let lines = [
            Self.ela0, IntelHexRecord.blockStart(boardID: 0x9900).encoded(), Self.data(0, [1]), Self.eof,
            Self.ela0, IntelHexRecord.blockStart(boardID: 0x9903).encoded(),
            IntelHexRecord(type: .customData, data: [2]).encoded(), Self.eof
        ]
        let f = try Self.parse(lines)
        #expect(f.sections.map(\.boardID) == [0x9900, 0x9903])
        #expect(f.warnings.isEmpty)
    }

    @Test func customDataOutsideAUniversalHexIsReadWithAWarning() throws {
        let lines = [Self.ela0, IntelHexRecord(type: .customData, offset: 4, data: [9]).encoded(), Self.eof]
        let f = try Firmware.parse(Array((lines.joined(separator: "\n")).utf8), fileName: "d.hex")
        #expect(f.sections[0].image.byte(at: 4) == 9)
        #expect(f.allWarnings == [.customDataOutsideUniversalHex(records: 1, firstLine: 2)])
    }

    @Test func startAddressesAreKeptOtherRecordsSkipped() throws {
        let lines = [
            Self.ela0, Self.data(0, [1]), ":0400000320009C51EC",
            IntelHexRecord(type: .otherData, data: [1, 2]).encoded(),
            IntelHexRecord.paddedData(count: 3).encoded(), IntelHexRecord.blockEnd(padding: 2).encoded(), Self.eof
        ]
        let f = try Self.parse(lines)
        #expect(f.sections[0].startAddress == .segment(cs: 0x2000, ip: 0x9C51))
        #expect(f.sections[0].otherDataRecords == 1 && f.sections[0].otherDataBytes == 2)
        #expect(f.sections[0].image.runs == [0..<1])
    }
}

/// Corrupted files must give an error (or parse), never trap.
@Suite struct HexCorruptionTests {
    @Test func randomCorruptionThrowsButNeverTraps() {
        var image = MemoryImage()
        try? image.write([UInt8](repeating: 0x5A, count: 300), at: 0x1FF80)
        try? image.write(MakeCodeProgram.magic + [UInt8](0..<40), at: 0x47000)
        try? image.write([0, 0x70, 7, 0], at: 0x1000_1014)
        let good =
            UniversalHexWriter.write([.init(boardID: 0x9903, image: image)], options: .init(layout: .blocks))
            + IntelHexWriter.write(
                image, options: .init(recordLength: 7, lineEnding: .crlf, addressing: .segmentWherePossible))
        var rng = SplitMix64(seed: 2024)
        let alphabet = Array(":0123456789ABCDEFabcdefXx \t\r\n".utf8)
        var errors = 0
        for _ in 0..<6000 {
            var bytes = good
            for _ in 0..<Int(rng.next() % 4 + 1) {
                let at = Int(rng.next() % UInt64(bytes.count))
                switch rng.next() % 4 {
                case 0: bytes[at] = alphabet[Int(rng.next() % UInt64(alphabet.count))]
                case 1: bytes.remove(at: at)
                case 2: bytes.insert(alphabet[Int(rng.next() % UInt64(alphabet.count))], at: at)
                default: bytes.removeSubrange(at..<min(bytes.count, at + Int(rng.next() % 64)))
                }
                if bytes.isEmpty { bytes = [0x3A] }
            }
            do {
                _ = try Firmware.parse(bytes, fileName: "fuzz.hex")
            } catch let e as FirmwareImageError {
                errors += 1
                if let p = e.position { #expect(p.line >= 1 && p.column >= 1, "\(e)") }
            } catch {
                Issue.record("unexpected error type: \(error)")
            }
        }
        #expect(errors > 1500)
    }
}

@Suite struct IntelHexRecordTests {
    @Test func encodesKnownRecords() {
        #expect(IntelHexRecord.endOfFile.encoded() == ":00000001FF")
        #expect(IntelHexRecord.extendedLinearAddress(upper: 0).encoded() == ":020000040000FA")
        #expect(IntelHexRecord.extendedLinearAddress(upper: 0x1000).encoded() == ":020000041000EA")
        #expect(IntelHexRecord.extendedSegmentAddress(segment: 0x1000).encoded() == ":020000021000EC")
        #expect(IntelHexRecord.blockStart(boardID: 0x9900).encoded() == ":0400000A9900C0DEBB")
        #expect(StartAddress.linear(0x0003_C0C1).record.encoded() == ":040000050003C0C173")
        #expect(IntelHexRecord(type: .data, data: [0xAB]).encoded(uppercase: false) == ":01000000ab54")
    }

    @Test func decodesAndRoundTrips() throws {
        let r = try IntelHexRecord(parsing: ":10000000C0070000D1060000D1000000B1060000CA\r\n", lineNumber: 3)
        #expect(r.type == .data && r.offset == 0 && r.data.count == 16 && r.data[0] == 0xC0)
        #expect(r.encoded() == ":10000000C0070000D1060000D1000000B1060000CA")
        #expect(try IntelHexRecord(parsing: r.encoded(uppercase: false)) == r)
        #expect(throws: FirmwareImageError.badChecksum(TextPosition(line: 3, column: 10), expected: 0xFF, found: 0xFE))
        {
            try IntelHexRecord(parsing: ":00000001FE", lineNumber: 3)
        }
        #expect(
            throws: FirmwareImageError.unexpectedCharacter(
                TextPosition(line: 1, column: 13), found: UInt8(ascii: ":"),
                expected: "one record per line")
        ) {
            try IntelHexRecord(parsing: ":00000001FF\n:00000001FF")
        }
    }
}

@Suite struct FirmwareFrontDoorTests {
    /// The magic number picks the reader, whatever the file is called; a broken file gets that
    /// reader's complaint, not the Intel HEX reader's.
    @Test func detectsBinaryFormatsByMagicAndHandsThemToTheirReaders() {
        let uf2: [UInt8] = [0x55, 0x46, 0x32, 0x0A, 0x57, 0x51, 0x5D, 0x9E] + [UInt8](repeating: 0, count: 504)
        #expect(throws: FirmwareImageError.uf2BadMagic(block: 0, offset: 508, found: 0)) {
            try Firmware.parse(uf2, fileName: "a.hex")
        }
        #expect(throws: FirmwareImageError.mcubootTruncated(size: 6, needed: 32, what: "header")) {
            try Firmware.parse([0x3D, 0xB8, 0xF3, 0x96, 0, 0], fileName: "a.bin")
        }
        #expect(throws: FirmwareImageError.dfuNotAZip) {
            try Firmware.parse(Array("PK\u{3}\u{4}rest".utf8), fileName: "a.zip")
        }
        #expect(
            throws: FirmwareImageError.unrecognizedFormat(
                fileName: "a.bin", detail: "it starts with 00 01 02 (\"...\")")
        ) {
            try Firmware.parse([0, 1, 2], fileName: "a.bin")
        }
    }

    @Test func namesTheSectionsAFileHasWhenTheBoardHasNone() throws {
        let v1 = HexFixtures.makeCode(.nrf51, small: true, seed: 5)
        let u = UniversalHexWriter.write([.init(boardID: 0x9900, image: v1.image)])
        let f = try Firmware.parse(u, fileName: "u.hex")
        let error = FirmwareImageError.noImageForBoard(
            .calliopeMini3, fileName: "u.hex",
            wanted: "micro:bit V2 section (board ID 0x9903/0x9904/0x9905/0x9906)",
            available: ["board ID 0x9900 (micro:bit V1 section: nRF51822)"])
        #expect(throws: error) { try f.image(for: .calliopeMini3) }
        #expect(
            error.description
                == "u.hex has no micro:bit V2 section (board ID 0x9903/0x9904/0x9905/0x9906); this board is a Calliope mini 3 (nRF52833). The file has: board ID 0x9900 (micro:bit V1 section: nRF51822)"
        )
        // A plain hex of the other chip.
        let plain = try Firmware.parse(IntelHexWriter.write(v1.image), fileName: "p.hex")
        #expect(throws: FirmwareImageError.self) { try plain.image(for: .microbitV2) }
        #expect(try plain.image(for: .calliopeMini2) == v1.image)
    }

    @Test func unknownBoardIDsAreKeptWithAWarning() throws {
        let v2 = HexFixtures.makeCode(.nrf52833, small: true, seed: 6)
        let f = try Firmware.parse(
            UniversalHexWriter.write([.init(boardID: 0x1234, image: v2.image)]), fileName: "x.hex")
        #expect(f.sections[0].boardID == 0x1234)
        #expect(f.sections[0].family == .nrf52833)  // guessed from the image
        #expect(f.sections[0].warnings == [.unknownBoardID(0x1234)])
    }
}
