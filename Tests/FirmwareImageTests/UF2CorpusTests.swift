import Foundation
import Testing
import TestSupport
@testable import FirmwareImage

private func hexAddress(_ any: Any?) -> UInt32? {
    guard let s = any as? String, s.hasPrefix("0x") else { return nil }
    return UInt32(s.dropFirst(2), radix: 16)
}

/// The `analysis.json` entry of a corpus file.
private func analysisEntry(_ path: String) throws -> [String: Any] {
    let parts = path.split(separator: "/").map(String.init)
    let group = try #require(try Corpus.analysis()[parts[0]] as? [String: Any])
    return try #require(group[parts[1]] as? [String: Any])
}

@Suite struct UF2CorpusTests {
    static let files = [
        "real/uf2-nrf52840-s140-softdevice-6.1.1.uf2",
        "real/uf2-nrf5340-app-zephyr-blinky.uf2",
        "real/uf2-nrf5340-net-zephyr-blinky.uf2",
        "derived/calliope-mini3-makecode-8.1.11-demo.nrf52833.uf2",
        "derived/makecode-v2-8.0.18-small-heart.nrf52833.uf2"
    ]

    @Test(.enabled(if: Corpus.isAvailable, Comment(rawValue: Corpus.skipMessage)), arguments: files)
    func corpusUF2MatchesAnalysis(path: String) throws {
        let entry = try analysisEntry(path)
        let file = try UF2File.parse(try Corpus.bytes(path))
        #expect(file.blockCount == entry["blocks"] as? Int)
        let families = try #require(entry["families"] as? [String: Int])
        #expect(Set(file.familyIDs.map { String(format: "0x%08X", $0) }) == Set(families.keys))
        #expect(file.image.byteCount == entry["data_bytes"] as? Int)
        let span = try #require(file.image.span)
        #expect(span.lowerBound == hexAddress(entry["lowest_addr"]))
        #expect(span.upperBound - 1 == hexAddress(entry["highest_addr"]))
        if let magic = hexAddress(entry["makecode_magic_addr"]), let hash8 = entry["makecode_hash8"] as? String {
            #expect(file.image.read(magic..<(magic + 16)) == MakeCodeProgram.magic)
            #expect(file.image.read((magic + 16)..<(magic + 24)).hexString == hash8)
        }
    }

    /// The derived UF2 files were made from hex files by uf2conv: every byte of the hex
    /// must be at the same address in the UF2, and the UF2's runs are the hex's runs
    /// widened to 256-byte blocks.
    @Test(
        .enabled(if: Corpus.isAvailable, Comment(rawValue: Corpus.skipMessage)),
        arguments: [
            (
                "derived/makecode-v2-8.0.18-small-heart.nrf52833.uf2",
                "derived/makecode-v2-8.0.18-small-heart.board-0x9903.hex"
            ),
            ("derived/calliope-mini3-makecode-8.1.11-demo.nrf52833.uf2", "real/calliope-mini3-makecode-8.1.11-demo.hex")
        ])
    func derivedUF2HoldsTheBytesOfItsHex(uf2: String, hex: String) throws {
        let file = try UF2File.parse(try Corpus.bytes(uf2), expectedFamily: ChipFamily.nrf52833.uf2FamilyID)
        let source = try TestHex.read(try Corpus.bytes(hex))
        for segment in source.segments {
            #expect(file.image.read(segment.range) == segment.bytes, "bytes of \(segment.range) differ")
        }
        var widened = MemoryImage()
        for chunk in source.alignedChunks(size: 256) {
            try widened.write([UInt8](repeating: 0, count: 256), at: chunk, overwrite: true)
        }
        #expect(file.image.runs == widened.runs)
    }

    @Test(.enabled(if: Corpus.isAvailable, Comment(rawValue: Corpus.skipMessage)))
    func nrf52840FileIsRefusedForAMicrobitV2() throws {
        let bytes = try Corpus.bytes("real/uf2-nrf52840-s140-softdevice-6.1.1.uf2")
        #expect(throws: FirmwareImageError.uf2FamilyMismatch(block: 0, found: 0xADA5_2840, expected: 0x621E_937A)) {
            try UF2File.parse(bytes, expectedFamily: ChipFamily.nrf52833.uf2FamilyID)
        }
    }

    @Test(.enabled(if: Corpus.isAvailable, Comment(rawValue: Corpus.skipMessage)))
    func writerReproducesTheDerivedUF2ByteForByte() throws {
        let original = try Corpus.bytes("derived/makecode-v2-8.0.18-small-heart.nrf52833.uf2")
        let source = try TestHex.read(try Corpus.bytes("derived/makecode-v2-8.0.18-small-heart.board-0x9903.hex"))
        #expect(UF2File.encode(source, familyID: UF2Family.nrf52833) == original)
    }
}

@Suite struct UF2PythonCrossCheckTests {
    static let uf2conv = ExternalTool.isInstalled("uf2conv")

    /// uf2conv (pip `adafruit-uf2`) converting the same image from Intel HEX must produce
    /// exactly the writer's bytes.
    @Test(.enabled(if: uf2conv, "uf2conv (pip install adafruit-uf2) not installed: cross-check skipped"))
    func uf2convMakesTheSameBytesAsTheWriter() throws {
        var image = MemoryImage()
        try image.write((0..<5000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 5) }, at: 0x47010)
        try image.write([0x00, 0x70, 0x07, 0x00, 0x00, 0xE0, 0x07, 0x00], at: 0x1000_1014)
        let dir = try ExternalTool.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let hex = dir.appendingPathComponent("in.hex"), out = dir.appendingPathComponent("out.uf2")
        try TestHex.write(image).write(to: hex, atomically: true, encoding: .utf8)
        let result = try ExternalTool.run("uf2conv", ["-c", "-f", "0x621E937A", "-o", out.path, hex.path])
        #expect(result.status == 0, "uf2conv failed: \(result.output)")
        let theirs = [UInt8](try Data(contentsOf: out))
        #expect(theirs == UF2File.encode(image, familyID: UF2Family.nrf52833))
    }

    /// uf2conv reading the writer's file back to a binary gets the image's bytes.
    @Test(.enabled(if: uf2conv, "uf2conv (pip install adafruit-uf2) not installed: cross-check skipped"))
    func uf2convReadsTheWritersFileBack() throws {
        var image = MemoryImage()
        let data = (0..<3000).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ 1) }
        try image.write(data, at: 0x1C000)
        let dir = try ExternalTool.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let uf2 = dir.appendingPathComponent("in.uf2"), bin = dir.appendingPathComponent("out.bin")
        try Data(UF2File.encode(image, familyID: UF2Family.nrf52833)).write(to: uf2)
        let result = try ExternalTool.run("uf2conv", ["-c", "-o", bin.path, uf2.path])
        #expect(result.status == 0, "uf2conv failed: \(result.output)")
        #expect(result.output.contains("0x621e937a"))
        let back = [UInt8](try Data(contentsOf: bin))
        #expect(back == data + [UInt8](repeating: 0xFF, count: 3072 - 3000))
    }
}
