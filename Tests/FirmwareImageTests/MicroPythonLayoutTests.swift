import Foundation
import Testing
import TestSupport
@testable import FirmwareImage

/// Builds a V2-style image with a layout table ending at 0x62000 and the version string at 0x5A000.
private func imageWithTable(version: String = "micro:bit v9.9.9; MicroPython test") throws -> MemoryImage {
    var image = MemoryImage()
    try image.write([UInt8](repeating: 0x11, count: 0x100), at: 0x1C000)
    try image.write(Array(version.utf8) + [0], at: 0x5A000)
    func le16(_ v: UInt16) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8)] }
    func le32(_ v: UInt32) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 24)] }
    var table: [UInt8] = []
    table += [1, 0] + le16(1) + le32(0x1B000) + [UInt8](repeating: 0, count: 8)
    table += [2, 2] + le16(28) + le32(0x46000) + le32(0x5A000) + [0, 0, 0, 0]
    table += [3, 1] + le16(109) + le32(0x6000) + [1, 2, 3, 4, 5, 6, 7, 8]
    table += le32(0x597F_30FE) + le16(1) + le16(48) + le16(3) + le16(12) + le32(0xC1B1_D79D)
    try image.write(table, at: 0x62000 - UInt32(table.count))
    return image
}

@Suite struct MicroPythonLayoutTests {
    @Test func findsTableBuiltInTestAndItsRegions() throws {
        let layout = try #require(MicroPythonLayout.find(in: try imageWithTable(), family: .nrf52833))
        #expect(layout.headerAddress == 0x61FF0)
        #expect(layout.pageSize == 4096)
        #expect(layout.regions.map(\.id) == [1, 2, 3])
        #expect(layout.regions.map(\.startAddress) == [0x1000, 0x1C000, 0x6D000])
        let fs = try #require(layout.fileSystem)
        #expect(fs.range == 0x6D000..<0x73000)
        #expect(fs.deviceHash == [1, 2, 3, 4, 5, 6, 7, 8])
        #expect(layout.summary == "MicroPython, file-system region at 0x0006D000-0x00073000 (24 KiB)")
        #expect(layout.regions[1].hashString == "micro:bit v9.9.9; MicroPython test")
    }

    @Test func stringHashIsTheCRC32OfTheString() throws {
        // CRC-32/ISO-HDLC check value of "123456789" is 0xCBF43926.
        let layout = try #require(
            MicroPythonLayout.find(in: try imageWithTable(version: "123456789"), family: .nrf52833))
        #expect(layout.regions[1].deviceHash == [0x26, 0x39, 0xF4, 0xCB, 0, 0, 0, 0])
    }

    @Test func ignoresTableWithWrongFooterOrPageSize() throws {
        var image = try imageWithTable()
        #expect(MicroPythonLayout.find(in: image, family: .nrf51) == nil)  // log2 12 ≠ 1 KiB pages
        try image.write([0, 0, 0, 0], at: 0x61FFC, overwrite: true)
        #expect(MicroPythonLayout.find(in: image, family: .nrf52833) == nil)
    }

    @Test func makeCodeImageHasNoTable() throws {
        var image = MemoryImage()
        try image.write(MakeCodeProgram.magic + [UInt8](repeating: 0x42, count: 5000), at: 0x47000)
        #expect(MicroPythonLayout.find(in: image, family: .nrf52833) == nil)
    }
}

private func hexNumber(_ any: Any?) -> UInt32? {
    guard let s = any as? String, s.hasPrefix("0x") else { return nil }
    return UInt32(s.dropFirst(2), radix: 16)
}

@Suite struct MicroPythonCorpusTests {
    /// (file, Universal Hex board section or nil for a plain hex)
    static let withTable: [(String, UInt16?)] = [
        ("real/calliope-mini3-micropython.hex", nil),
        ("real/micropython-v2-beta-region.hex", nil),
        ("real/universal-micropython-python-editor-default.hex", 0x9903),
        ("real/universal-micropython-9901-serial-writer.hex", 0x9903)
    ]

    @Test(.enabled(if: Corpus.isAvailable, Comment(rawValue: Corpus.skipMessage)), arguments: withTable)
    func corpusTableMatchesAnalysis(path: String, board: UInt16?) throws {
        let image = try TestHex.read(try Corpus.bytes(path), board: board)
        let layout = try #require(MicroPythonLayout.find(in: image, family: .nrf52833))
        let parts = path.split(separator: "/").map(String.init)
        let file = try #require((try Corpus.analysis()[parts[0]] as? [String: Any])?[parts[1]] as? [String: Any])
        let sections = try #require(file["sections"] as? [[String: Any]])
        let section = try #require(
            sections.first { board == nil || ($0["board_id"] as? String) == String(format: "0x%04x", board ?? 0) })
        let tables = try #require(section["micropython_layout"] as? [[String: Any]])
        let truth = try #require(tables.first { $0["bogus"] == nil })
        #expect(layout.headerAddress == hexNumber(truth["header_addr"]))
        let regions = try #require(truth["regions"] as? [[String: Any]])
        #expect(layout.regions.count == regions.count)
        for (mine, theirs) in zip(layout.regions, regions) {
            #expect(Int(mine.id) == theirs["id"] as? Int)
            #expect(Int(mine.hashTypeValue) == theirs["hash_type"] as? Int)
            #expect(mine.startAddress == hexNumber(theirs["start_addr"]))
            #expect(Int(mine.length) == theirs["length"] as? Int)
            #expect(mine.hashData.hexString == theirs["hash_data"] as? String)
            if let text = theirs["hash_string"] as? String, let crc = theirs["crc32_of_string"] as? String {
                #expect(mine.hashString == text)
                #expect(Array(mine.deviceHash.prefix(4).reversed()).hexString == crc)
            }
        }
        #expect(layout.fileSystem?.startAddress == 0x6D000)
    }

    @Test(
        .enabled(if: Corpus.isAvailable, Comment(rawValue: Corpus.skipMessage)),
        arguments: [
            "real/micropython-v2-beta-uicr-crlf.hex", "real/calliope-mini3-makecode-8.1.11-demo.hex"
        ])
    func filesWithoutTableGiveNone(path: String) throws {
        let image = try TestHex.read(try Corpus.bytes(path))
        #expect(MicroPythonLayout.find(in: image, family: .nrf52833) == nil)
    }
}
