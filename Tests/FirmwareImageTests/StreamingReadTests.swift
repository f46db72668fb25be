import Foundation
import Testing
import TestSupport
@testable import FirmwareImage

/// Intel HEX read as it streams in, a piece at a time: wherever the file is cut into reads, the
/// result (images, record counts, line count, warnings) or the error (line and column) is the one
/// the whole file gives. And a file is recognised from its first bytes and refused for its size
/// before the rest is read.
@Suite struct StreamingReadTests {
    /// The whole-file parse and the piecewise parse, as results.
    static func both(_ bytes: [UInt8], piece: Int) -> (
        whole: Result<IntelHexFile, FirmwareImageError>, pieces: Result<IntelHexFile, FirmwareImageError>
    ) {
        func run(_ body: () throws -> IntelHexFile) -> Result<IntelHexFile, FirmwareImageError> {
            do { return .success(try body()) } catch let e as FirmwareImageError { return .failure(e) } catch {
                Issue.record("unexpected error \(error)")
                return .failure(.emptyFile)
            }
        }
        var source = PiecewiseSource(ByteArraySource(bytes), piece: piece)
        return (run { try IntelHexReader.parse(bytes) }, run { try IntelHexReader.parse(source: &source) })
    }

    static func expectSame(
        _ bytes: [UInt8], pieces: [Int], _ label: String, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        for piece in pieces {
            let (whole, streamed) = both(bytes, piece: piece)
            #expect(whole == streamed, "\(label), pieces of \(piece) bytes", sourceLocation: sourceLocation)
        }
    }

    /// Valid files of every shape the writers make, and the same files broken in many ways.
    static func variants() -> [(String, [UInt8])] {
        let v1 = HexFixtures.makeCode(.nrf51, small: true, programSize: 700, seed: 5).image
        let v2 = HexFixtures.makeCode(.nrf52833, small: true, programSize: 900, seed: 6).image
        let plain = IntelHexWriter.write(v2)
        let universal = UniversalHexWriter.write([.init(boardID: 0x9900, image: v1), .init(boardID: 0x9903, image: v2)])
        let blocks = UniversalHexWriter.write(
            [.init(boardID: 0x9900, image: v1), .init(boardID: 0x9903, image: v2)],
            options: .init(layout: .blocks))
        var out: [(String, [UInt8])] = [
            ("plain", plain), ("CRLF", HexFixtures.crlf(plain)),
            ("CR only", plain.map { $0 == 0x0A ? 0x0D : $0 }),
            ("universal sections", universal), ("universal blocks", blocks),
            ("BOM and blank lines", [0xEF, 0xBB, 0xBF] + Array("\n  \r\n".utf8) + plain),
            ("no final line break", Array(plain.dropLast())),
            (
                "lines after the end",
                plain + Array(":10000000000102030405060708090A0B0C0D0E0F78\r\n junk \n\n:00000001FF".utf8)
            ),
            (
                "universal EOF then more blocks",
                Array((":0400000A9900C0DEBB\n:00000001FF\n\n:020000040000FA\n").utf8) + blocks
            ),
            ("overlap that disagrees", plain + Array(":020000040001F9\n:0100000055AA\n".utf8))
        ]
        // The same overlap inside the file, so that the second pass must name both lines.
        var text = HexFixtures.text(plain)
        text = text.replacingOccurrences(
            of: ":00000001FF", with: ":020000040001F9\n:0100000055AA\n:0100000056A9\n:00000001FF")
        out.append(("two records disagree", HexFixtures.bytes(text)))
        // Broken copies: one byte changed or the file cut, at pseudo-random places.
        var rng = SplitMix64(seed: 42)
        for k in 0..<24 {
            var bytes = k % 2 == 0 ? plain : blocks
            let at = Int(rng.next() % UInt64(bytes.count))
            if k % 3 == 0 {
                bytes = Array(bytes.prefix(at))
                out.append(("cut at \(at)", bytes))
            } else {
                bytes[at] = [UInt8(ascii: "G"), 0x0A, 0x0D, UInt8(ascii: ":"), UInt8(ascii: "0"), 0x20][k % 6]
                out.append(("byte \(at) changed", bytes))
            }
        }
        return out
    }

    @Test("every variant streams to what the whole file gives", arguments: variants().indices)
    func streamedEqualsWhole(_ k: Int) {
        let (label, bytes) = Self.variants()[k]
        Self.expectSame(bytes, pieces: [1, 2, 3, 17, 64, 4096], label)
    }

    @Test func aSecondPassNamesBothLinesOfADisagreement() throws {
        let text = ":020000040000FA\n:0100000055AA\n:0100000056A9\n:00000001FF\n"
        var source = PiecewiseSource(ByteArraySource(HexFixtures.bytes(text)), piece: 5)
        #expect(
            throws: FirmwareImageError.overlappingData(
                TextPosition(line: 3, column: 10), address: 0, boardID: nil,
                byte: 0x56, firstLine: 2, firstByte: 0x55)
        ) {
            try IntelHexReader.parse(source: &source)
        }
    }

    @Test func lineEndingsSplitBetweenReadsCountOnce() throws {
        // A CR LF after the end-of-file record, cut between its two bytes.
        let text = ":020000040000FA\r\n:0100000055AA\r\n:00000001FF\r\n:0100000056A9\r\n\r\nx\r\n"
        let whole = try IntelHexReader.parse(HexFixtures.bytes(text))
        #expect(whole.lineCount == 6)
        #expect(
            whole.warnings == [
                .linesAfterEndOfFile(eofLine: 3, firstLine: 4, lines: 2, recordTypes: [0: 1], dataBytes: 1)
            ])
        for piece in 1...12 {
            var source = PiecewiseSource(ByteArraySource(HexFixtures.bytes(text)), piece: piece)
            #expect(try IntelHexReader.parse(source: &source) == whole, "pieces of \(piece)")
        }
    }

    @Test func aLineWithoutLineBreaksLongerThanAnyRecordIsRefused() throws {
        // A record followed by more blanks than any line needs: the reader stops waiting for its end.
        let record = ":0100000055AA"
        let text =
            ":020000040000FA\n  " + record + String(repeating: " ", count: 3 * IntelHexReader.maximumLineLength)
            + "\n:00000001FF\n"
        var source = PiecewiseSource(ByteArraySource(HexFixtures.bytes(text)), piece: 4096)
        #expect(
            throws: FirmwareImageError.lineTooLong(
                TextPosition(line: 2, column: 3), limit: IntelHexReader.maximumLineLength)
        ) {
            try IntelHexReader.parse(source: &source)
        }
        // Blanks before a record are skipped, however many.
        let indented =
            ":020000040000FA\n" + String(repeating: " ", count: 3 * IntelHexReader.maximumLineLength) + record
            + "\n:00000001FF\n"
        var third = PiecewiseSource(ByteArraySource(HexFixtures.bytes(indented)), piece: 4096)
        let whole = try IntelHexReader.parse(HexFixtures.bytes(indented))
        #expect(try IntelHexReader.parse(source: &third) == whole)
        // Garbage in such a line is named where it is.
        let garbage = ":020000040000FA\n" + String(repeating: " ", count: IntelHexReader.maximumLineLength + 10) + "#"
        var second = PiecewiseSource(ByteArraySource(HexFixtures.bytes(garbage)), piece: 4096)
        #expect(
            throws: FirmwareImageError.missingColon(
                TextPosition(line: 2, column: IntelHexReader.maximumLineLength + 11),
                found: UInt8(ascii: "#"))
        ) {
            try IntelHexReader.parse(source: &second)
        }
    }

    @Test func scatteredDataAndEndlessSectionsAreRefusedBeforeTheyCostMemory() throws {
        // One byte at every other address: each byte a range of its own.
        var text = ":020000040000FA\n"
        for k in 0...IntelHexReader.maximumRuns {
            text +=
                IntelHexRecord(type: .data, offset: UInt16(truncatingIfNeeded: 2 * k), data: [0x55]).encoded() + "\n"
            if (2 * k + 2) % 0x10000 == 0 {
                text += IntelHexRecord.extendedLinearAddress(upper: UInt16((2 * k + 2) >> 16)).encoded() + "\n"
            }
        }
        text += ":00000001FF\n"
        #expect(throws: FirmwareImageError.tooManyRuns(boardID: nil, limit: IntelHexReader.maximumRuns)) {
            try IntelHexReader.parse(HexFixtures.bytes(text))
        }
        // A block start for one board ID after another.
        var sections = ""
        for id in 0...IntelHexReader.maximumSections {
            sections += IntelHexRecord.blockStart(boardID: UInt16(id)).encoded() + "\n"
            sections += IntelHexRecord(type: .customData, offset: 0, data: [0x55]).encoded() + "\n"
        }
        sections += ":00000001FF\n"
        #expect(
            throws: FirmwareImageError.tooManySections(
                TextPosition(line: 2 * IntelHexReader.maximumSections + 1, column: 1),
                limit: IntelHexReader.maximumSections)
        ) {
            try IntelHexReader.parse(HexFixtures.bytes(sections))
        }
    }

    @Test(.enabled(if: Corpus.isAvailable, Comment(rawValue: Corpus.skipMessage)))
    func corpusHexesOfEveryShapeStreamToWhatTheWholeFileGives() throws {
        // Universal Hex in both layouts, CRLF, MicroPython, data after the end, no final line break.
        let names = try FileManager.default.contentsOfDirectory(
            atPath: Corpus.testdata.appendingPathComponent("real").path)
        let chosen = names.sorted().filter { name in
            name.hasSuffix(".hex")
                && ["universal-", "crlf", "micropython", "no-final-newline", "not-a-hex", "pxt-2016"].contains {
                    name.contains($0)
                }
        }
        #expect(chosen.count >= 10)
        for name in chosen {
            Self.expectSame(try Corpus.bytes("real/\(name)"), pieces: [4093], name)
        }
    }
}

/// The first bytes decide the format, and a file larger than its format allows is refused
/// before its data is read.
@Suite struct FirmwareReadingLimitTests {
    /// A source that serves `head`, then fails if more is read than `allowed` bytes in all.
    struct Guarded: FirmwareByteSource {
        var bytes: [UInt8]
        var allowed: Int
        var served = 0
        mutating func read(maximum: Int) throws -> [UInt8] {
            let n = min(maximum, bytes.count - served)
            guard n > 0 else { return [] }
            served += n
            if served > allowed { throw CocoaError(.fileReadTooLarge) }
            return Array(bytes[(served - n)..<served])
        }
        mutating func rewind() throws { served = 0 }
    }

    @Test(arguments: Firmware.Format.allCases)
    func aFileOverItsFormatsLimitIsRefusedFromItsSizeAfterTheFirstBytes(format: Firmware.Format) throws {
        let head: [UInt8]
        switch format {
        case .intelHex, .universalHex: head = Array(":020000040000FA\n".utf8)
        case .uf2: head = [0x55, 0x46, 0x32, 0x0A, 0x57, 0x51, 0x5D, 0x9E]
        case .mcuboot: head = [0x3D, 0xB8, 0xF3, 0x96]
        case .dfuPackage: head = [0x50, 0x4B, 0x03, 0x04]
        }
        let detected = try #require(Firmware.detectFormat(head))
        let limit = detected.maximumFileSize
        var source = Guarded(
            bytes: head + [UInt8](repeating: 0x41, count: Firmware.headSize * 2), allowed: Firmware.headSize)
        let error = #expect(throws: FirmwareImageError.self) {
            try Firmware.parse(source: &source, size: limit + 1, fileName: "big")
        }
        #expect(error == .fileTooLarge(format: detected, size: limit + 1, limit: limit))
        #expect(error?.description.contains("at most \(grouped(limit)) bytes") == true, "\(error?.description ?? "")")
    }

    @Test func theLimitsFollowFromTheLargestFlash() {
        // 512 KiB of flash and a 4 KiB UICR page, as six Universal Hex sections of 16-byte records.
        #expect(Firmware.Format.largestImage == 528_384)
        #expect(Firmware.Format.intelHex.maximumFileSize == 6 * 528_384 * 45 / 16)
        #expect(Firmware.Format.uf2.maximumFileSize == 1_056_768)
        #expect(Firmware.Format.mcuboot.maximumFileSize == 524_288)
    }

    @Test func aStreamOfUnknownSizeIsCutOffAtTheLimit() throws {
        // A valid start, then more records than any file for these boards holds.
        let line = Array(":10000000000102030405060708090A0B0C0D0E0F78\n".utf8)
        let limit = Firmware.Format.intelHex.maximumFileSize
        let count = limit / line.count + 2
        var bytes: [UInt8] = []
        bytes.reserveCapacity(count * line.count)
        for _ in 0..<count { bytes += line }
        var source = PiecewiseSource(ByteArraySource(bytes), piece: 1 << 16)
        #expect(throws: FirmwareImageError.fileTooLarge(format: .intelHex, size: nil, limit: limit)) {
            try Firmware.parse(source: &source, size: nil, fileName: "stream.hex")
        }
    }

    @Test func blankFirstBytesAreNoFormat() {
        var source = Guarded(bytes: [UInt8](repeating: 0x20, count: Firmware.headSize * 3), allowed: Firmware.headSize)
        let error = #expect(throws: FirmwareImageError.self) {
            try Firmware.parse(source: &source, size: Firmware.headSize * 3, fileName: "blank.bin")
        }
        #expect(error == .unrecognizedFormat(fileName: "blank.bin", detail: "its first 4,096 bytes are blank"))
    }

    @Test func zerosAreNoFormatAndOnlyTheFirstBytesAreRead() {
        var source = Guarded(bytes: [UInt8](repeating: 0, count: 1 << 20), allowed: Firmware.headSize)
        let error = #expect(throws: FirmwareImageError.self) {
            try Firmware.parse(source: &source, size: nil, fileName: "zero")
        }
        #expect(
            error?.description.contains("it starts with 00 00 00 00 00 00 00 00") == true, "\(error?.description ?? "")"
        )
    }
}
