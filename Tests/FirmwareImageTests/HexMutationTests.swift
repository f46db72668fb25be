import Testing
import TestSupport
@testable import FirmwareImage

/// Every way real tools write the same data must read back as the same memory image: record
/// lengths 1-255, CRLF, lower case, 02 instead of 04, shuffled records, blank lines and trailing
/// spaces, Universal Hex sections versus blocks.
@Suite struct HexMutationTests {
    static let v1 = HexFixtures.makeCode(.nrf51, seed: 11)
    static let v2 = HexFixtures.makeCode(.nrf52833, seed: 22)
    static let smallV1 = HexFixtures.makeCode(.nrf51, small: true, programSize: 700, seed: 33)
    static let smallV2 = HexFixtures.makeCode(.nrf52833, small: true, programSize: 900, seed: 44)

    static func parsePlain(_ bytes: [UInt8]) throws -> MemoryImage {
        let f = try Firmware.parse(bytes, fileName: "t.hex")
        #expect(f.format == .intelHex)
        #expect(f.sections.count == 1)
        return f.sections[0].image
    }

    @Test("every record length 1-255 reads back identically", arguments: 0..<2)
    func everyRecordLength(_ which: Int) throws {
        let built = [Self.smallV1, Self.smallV2][which]
        for length in 1...255 {
            let text = IntelHexWriter.write(built.image, options: .init(recordLength: length))
            expectSameImage(try Self.parsePlain(text), built.image, "record length \(length)")
        }
    }

    @Test func fullSizeImagesAtTypicalRecordLengths() throws {
        for built in [Self.v1, Self.v2] {
            for length in [16, 32, 255] {
                let text = IntelHexWriter.write(built.image, options: .init(recordLength: length))
                expectSameImage(try Self.parsePlain(text), built.image, "length \(length)")
            }
        }
    }

    static let variants: [(String, IntelHexWriter.Options)] = [
        ("CRLF", .init(lineEnding: .crlf)),
        ("lower case", .init(uppercase: false)),
        ("02 addressing", .init(addressing: .segmentWherePossible)),
        ("shuffled", .init(shuffleSeed: 7)),
        ("shuffled, 32-byte", .init(recordLength: 32, shuffleSeed: 8)),
        (
            "everything",
            .init(
                recordLength: 20, lineEnding: .crlf, uppercase: false, addressing: .segmentWherePossible,
                shuffleSeed: 9, startAddress: .segment(cs: 0x2000, ip: 0x9C51))
        ),
        ("start linear", .init(startAddress: .linear(0x0003_C0C1)))
    ]

    @Test("writer variants read back identically", arguments: variants.indices)
    func writerVariant(_ k: Int) throws {
        let (label, options) = Self.variants[k]
        for built in [Self.v1, Self.v2] {
            let text = IntelHexWriter.write(built.image, options: options)
            let f = try Firmware.parse(text, fileName: "t.hex")
            expectSameImage(f.sections[0].image, built.image, label)
            #expect(f.sections[0].startAddress == options.startAddress)
            #expect(f.sections[0].family == (built.image.byte(at: 0x1000_1018) == nil ? .nrf51 : .nrf52833))
        }
    }

    @Test func segmentAddressingMixesRecordTypes02And04() throws {
        let text = HexFixtures.text(
            IntelHexWriter.write(Self.v2.image, options: .init(addressing: .segmentWherePossible)))
        #expect(text.contains(":020000021000EC"))  // segment 0x1000 = base 0x10000
        #expect(text.contains(":020000041000EA"))  // UICR needs a linear address
        let hex = try IntelHexReader.parse(HexFixtures.bytes(text))
        #expect((hex.recordTypeCounts[0x02] ?? 0) > 0 && (hex.recordTypeCounts[0x04] ?? 0) > 0)
    }

    @Test func textualMutationsReadBackIdentically() throws {
        let base = IntelHexWriter.write(Self.v1.image)
        let lines = HexFixtures.text(base).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let mutations: [(String, String)] = [
            (
                "blank lines",
                lines.enumerated().map { $0.offset % 7 == 3 ? $0.element + "\n" : $0.element }.joined(separator: "\n")
            ),
            ("trailing spaces and tabs", lines.map { $0.isEmpty ? $0 : $0 + " \t " }.joined(separator: "\n")),
            ("leading spaces", lines.map { $0.isEmpty ? $0 : "  " + $0 }.joined(separator: "\n")),
            ("CR line endings", lines.joined(separator: "\r")),
            ("no final newline", lines.joined(separator: "\n").trimmingSuffix("\n")),
            ("byte order mark", "\u{FEFF}" + lines.joined(separator: "\n")),
            (
                "mixed case",
                lines.enumerated().map { $0.offset % 2 == 0 ? $0.element.lowercased() : $0.element }.joined(
                    separator: "\n")
            ),
            (
                "zero-length data records",
                lines.enumerated().map { $0.offset % 11 == 5 ? ":0000000000\n" + $0.element : $0.element }.joined(
                    separator: "\n")
            ),
            ("extra blank lines before EOF", lines.dropLast(2).joined(separator: "\n") + "\n\n\n\n:00000001FF\n")
        ]
        for (label, text) in mutations {
            expectSameImage(try Self.parsePlain(HexFixtures.bytes(text)), Self.v1.image, label)
        }
        expectSameImage(try Self.parsePlain(HexFixtures.crlf(base)), Self.v1.image, "CRLF via text")
    }

    @Test func identicalOverlapsAreAccepted() throws {
        // The same record twice (as some tools write at boundaries) is not a conflict.
        var lines = HexFixtures.text(IntelHexWriter.write(Self.smallV1.image)).split(separator: "\n").map(String.init)
        lines.insert(lines[5], at: 9)
        expectSameImage(
            try Self.parsePlain(HexFixtures.bytes(lines.joined(separator: "\n") + "\n")), Self.smallV1.image,
            "duplicate")
    }

    @Test("Universal Hex layouts read back identically", arguments: UniversalHex.Layout.allCases)
    func universalLayouts(_ layout: UniversalHex.Layout) throws {
        // Full-size images at the usual lengths, small ones at the extremes (1-byte records make huge files).
        let cases: [(UInt16, Int, HexFixtures.Built, HexFixtures.Built)] = [
            (0x9900, 16, Self.v1, Self.v2), (0x9901, 32, Self.v1, Self.v2),
            (0x9900, 1, Self.smallV1, Self.smallV2), (0x9901, 200, Self.smallV1, Self.smallV2)
        ]
        for (v1ID, length, v1, v2) in cases {
            let text = UniversalHexWriter.write(
                [.init(boardID: v1ID, image: v1.image), .init(boardID: 0x9903, image: v2.image)],
                options: .init(layout: layout, recordLength: length))
            for bytes in [text, HexFixtures.crlf(text)] {
                let f = try Firmware.parse(bytes, fileName: "u.hex")
                #expect(f.format == .universalHex)
                #expect(f.universalHexLayout == layout)
                #expect(f.sections.map(\.boardID) == [v1ID, 0x9903])
                #expect(f.sections.map(\.family) == [.nrf51, .nrf52833])
                expectSameImage(try f.image(for: .calliopeMini1), v1.image, "\(layout) \(length) V1")
                expectSameImage(try f.image(for: .microbitV2), v2.image, "\(layout) \(length) V2")
            }
        }
    }

    @Test func universalHexIsAlignedTo512Characters() throws {
        for layout in UniversalHex.Layout.allCases {
            let text = UniversalHexWriter.write(
                [.init(boardID: 0x9900, image: Self.smallV1.image), .init(boardID: 0x9903, image: Self.smallV2.image)],
                options: .init(layout: layout))
            let lines = HexFixtures.text(text).split(separator: "\n").map(String.init)
            // Every block start (0A) begins at a 512-character boundary, after its 04 record.
            var offset = 0
            for (k, line) in lines.enumerated() {
                if line.hasPrefix(":0400000A") {
                    #expect((offset - (lines[k - 1].count + 1)) % 512 == 0, "\(layout): block start at \(offset)")
                    #expect(lines[k - 1].hasPrefix(":02000004"))
                }
                offset += line.count + 1
            }
            #expect((offset - ":00000001FF\n".count) % 512 == 0)
            // V1 data is type 00, V2 data type 0D.
            let hex = try IntelHexReader.parse(text)
            #expect(hex.recordTypeCounts[0x0D] != nil && hex.recordTypeCounts[0x00] != nil)
        }
    }

    @Test(.enabled(if: Corpus.isAvailable, Comment(rawValue: Corpus.skipMessage)))
    func corpusImagesSurviveEveryMutation() throws {
        let f = try Firmware.parse(
            try Corpus.bytes("real/makecode-universal-8.0.18-small-heart.hex"), fileName: "heart.hex")
        let v1 = try f.image(for: .microbitV1), v2 = try f.image(for: .microbitV2)
        for (k, options) in Self.variants.map(\.1).enumerated() {
            for image in [v1, v2] {
                let text = IntelHexWriter.write(image, options: options)
                expectSameImage(try Self.parsePlain(text), image, "corpus variant \(k)")
            }
        }
        for layout in UniversalHex.Layout.allCases {
            let text = UniversalHexWriter.write(
                [.init(boardID: 0x9900, image: v1), .init(boardID: 0x9903, image: v2)],
                options: .init(layout: layout, recordLength: 32))
            let g = try Firmware.parse(text, fileName: "again.hex")
            expectSameImage(try g.image(for: .microbitV1), v1, "\(layout) V1")
            expectSameImage(try g.image(for: .microbitV2), v2, "\(layout) V2")
            #expect(
                MakeCodeProgram.find(in: try g.image(for: .microbitV2), family: .nrf52833)
                    == MakeCodeProgram.find(in: v2, family: .nrf52833))
        }
    }
}

extension String {
    fileprivate func trimmingSuffix(_ suffix: String) -> String {
        var s = self
        while s.hasSuffix(suffix) { s.removeLast(suffix.count) }
        return s
    }
}
