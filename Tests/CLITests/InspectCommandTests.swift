import Foundation
import Testing
import TestSupport

/// `bitflash inspect`, run as a subprocess: output, JSON and exit codes.
@Suite(.enabled(if: BitflashBinary.url != nil, "bitflash binary not built (.build/debug/bitflash): CLI tests skipped"))
struct InspectCommandTests {
    /// A tiny V2-style image: the magic at 0x47000 with hashes, and the UICR bootloader address.
    static let hex = """
        :020000040004F6
        :10700000708E3B92C615A841C49866C975EE51971B
        :1070100011223344556677880A000B000C000D00DE
        :020000041000EA
        :041014000070070061
        :00000001FF

        """

    static func write(_ text: String, name: String) throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bitflash-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let url = dir.appendingPathComponent(name)
        try Data(text.utf8).write(to: url)
        return url
    }

    @Test func printsTheSectionTable() throws {
        let file = try Self.write(Self.hex, name: "tiny.hex")
        let r = try BitflashBinary.run(["inspect", file.path])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("tiny.hex: Intel HEX"))
        #expect(r.stdout.contains("one image for nRF52833"))
        #expect(r.stdout.contains("MakeCode magic:   0x00047000"))
        #expect(r.stdout.contains("runtime hash:     1122334455667788"))
        #expect(r.stdout.contains("program hash:     0A000B000C000D00"))
        #expect(r.stdout.contains("0x00047000-0x00047040 (64 bytes, 1 blocks of 64 bytes, 1 page of 4096 bytes)"))
    }

    @Test func printsStableJSON() throws {
        let file = try Self.write(Self.hex, name: "tiny.hex")
        let r = try BitflashBinary.run(["inspect", "--json", "--board", "calliope-mini-3", file.path])
        #expect(r.status == 0, "\(r.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        #expect(json["format"] as? String == "intel-hex")
        let section = try #require((json["sections"] as? [[String: Any]])?.first)
        #expect((section["makeCode"] as? [String: Any])?["magicAddress"] as? String == "0x00047000")
        #expect(section["family"] as? String == "nrf52833")
        // Sorted keys: "file" comes before "format", "sections", "size".
        let order = ["\"file\"", "\"format\"", "\"sections\"", "\"size\""].compactMap {
            r.stdout.range(of: $0)?.lowerBound
        }
        #expect(order == order.sorted() && order.count == 4)
        // Same input, same bytes.
        #expect(
            try BitflashBinary.run(["inspect", "--json", "--board", "calliope-mini-3", file.path]).stdout == r.stdout)
    }

    @Test func badDataExits65WithFileLineAndColumn() throws {
        let broken = Self.hex.replacingOccurrences(of: "C975EE51971B", with: "C975EE51971C")
        let file = try Self.write(broken, name: "broken.hex")
        let r = try BitflashBinary.run(["inspect", file.path])
        #expect(r.status == 65)
        #expect(r.stderr.contains("broken.hex:2:42: bad checksum: expected 0x1B, found 0x1C"), "\(r.stderr)")
    }

    @Test func wrongBoardExits65AndNamesTheSections() throws {
        let file = try Self.write(Self.hex, name: "tiny.hex")
        let r = try BitflashBinary.run(["inspect", "--board", "microbit-v1", file.path])
        #expect(r.status == 65)
        #expect(
            r.stderr.contains("tiny.hex has no nRF51822 image; this board is a micro:bit V1 (nRF51822)"), "\(r.stderr)")
    }

    @Test func unreadableFileExits66() throws {
        let r = try BitflashBinary.run(["inspect", "/nonexistent/bitflash-test.hex"])
        #expect(r.status == 66)
        #expect(r.stderr.contains("/nonexistent/bitflash-test.hex: cannot read the file"))
    }

    @Test(.enabled(if: Corpus.isAvailable, Comment(rawValue: Corpus.skipMessage)))
    func showsTheIgnoredFalseMagic() throws {
        let path = Corpus.testdata.appendingPathComponent(
            "real/makecode-universal-3.0.67-serial-writer-double-magic.hex"
        ).path
        let r = try BitflashBinary.run(["inspect", "--board", "microbit-v2", path])
        #expect(r.status == 0)
        #expect(r.stdout.contains("MakeCode magic:   0x00045000"))
        #expect(
            r.stdout.contains(
                "other magic:      0x0002BCD4 (not page-aligned, hash F8B50346002203F8): not used by the device"))
        #expect(!r.stdout.contains("Section 1:"))
    }
}
