import FirmwareImage
import Foundation
import Testing
import TestSupport

/// `bitflash inspect` on the binary containers: an MCUboot image's version, sizes and hash
/// check, a UF2 file's family IDs, a DFU zip's images.
@Suite(.enabled(if: BitflashBinary.url != nil, "bitflash binary not built (.build/debug/bitflash): CLI tests skipped"))
struct InspectContainerTests {
    /// An MCUboot image and a UF2 of the sample's V2 board, made by `bitflash convert`.
    static func converted(_ target: String) throws -> (dir: URL, file: URL) {
        let (dir, file) = try ConvertCommandTests.sample()
        return (dir, try ConvertCommandTests.convert(file, board: "microbit-v2", to: target, in: dir))
    }

    static func json(_ r: BitflashBinary.Result) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
    }

    @Test func showsAnMCUbootImagesVersionSizesAndValidHash() throws {
        let (_, file) = try Self.converted("mcuboot")
        let bytes = [UInt8](try Data(contentsOf: file))
        let image = try MCUbootImage(bytes: bytes)
        let hash = try #require(image.reportedHash).map { String(format: "%02x", $0) }.joined()
        let r = try BitflashBinary.run(["inspect", file.path])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("MCUboot image, \(bytes.count) bytes"), "\(r.stdout)")
        #expect(r.stdout.contains("MCUboot version:  1.0.0+0"))
        #expect(r.stdout.contains("MCUboot header:   4096 bytes, load address 0x00000000, flags 0x00000000"))
        #expect(
            r.stdout.contains("MCUboot image:    \(image.header.imageSize) bytes; \(image.length) with header and TLVs")
        )
        #expect(r.stdout.contains("MCUboot TLVs:     type 0x10 (32 bytes, unprotected)"))
        #expect(r.stdout.contains("image hash:       \(hash)"))
        #expect(r.stdout.contains("hash check:       valid"))
    }

    @Test(.enabled(if: ReferenceTools.hasImgtool, Comment(rawValue: ReferenceTools.imgtoolMissing)))
    func theImageHashIsTheDigestImgtoolReports() throws {
        let (_, file) = try Self.converted("mcuboot")
        let tool = try ReferenceTools.run("imgtool", ["verify", file.path])
        let digest = try #require(
            tool.stdout.split(separator: "\n").first { $0.hasPrefix("Image digest: ") }?.dropFirst(14))
        let mcuboot = try #require(
            try Self.json(try BitflashBinary.run(["inspect", "--json", file.path]))["mcuboot"] as? [String: Any])
        #expect(mcuboot["imageHash"] as? String == String(digest))
    }

    @Test func aCorruptedBodyShowsAHashMismatch() throws {
        let (dir, file) = try Self.converted("mcuboot")
        var bytes = [UInt8](try Data(contentsOf: file))
        bytes[4096 + 100] ^= 0x01
        let broken = dir.appendingPathComponent("broken.bin")
        try Data(bytes).write(to: broken)
        let r = try BitflashBinary.run(["inspect", "--json", broken.path])
        #expect(r.status == 0, "\(r.stderr)")
        let mcuboot = try #require(try Self.json(r)["mcuboot"] as? [String: Any])
        #expect(mcuboot["hashValid"] as? Bool == false)
        #expect((mcuboot["hashCheck"] as? String)?.hasPrefix("mismatch: the bytes hash to ") == true)
        #expect(try BitflashBinary.run(["inspect", broken.path]).stdout.contains("hash check:       mismatch"))
    }

    @Test func showsAUF2FilesFamily() throws {
        let (_, file) = try Self.converted("uf2")
        let r = try BitflashBinary.run(["inspect", file.path])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(
            r.stdout.contains("UF2 families:     0x621E937A (nRF52833: micro:bit V2, Calliope mini 3)"), "\(r.stdout)")
        #expect(r.stdout.contains("MakeCode magic:"))
    }

    @Test(
        .enabled(
            if: ReferenceTools.works("python3", ["-c", "import zipfile"]), "python3 not found: DFU zip test skipped"))
    func listsTheImagesOfADFUZip() throws {
        let (dir, file) = try Self.converted("mcuboot")
        let zip = dir.appendingPathComponent("dfu_application.zip")
        let manifest =
            #"{"format-version":0,"files":[{"file":"app.bin","image_index":"0","type":"application","version_MCUBOOT":"1.0.0+0"}]}"#
        let make = try ReferenceTools.run(
            "python3",
            [
                "-c",
                """
                import sys, zipfile
                with zipfile.ZipFile(sys.argv[1], "w", zipfile.ZIP_DEFLATED) as z:
                    z.writestr("manifest.json", sys.argv[2])
                    z.write(sys.argv[3], "app.bin")
                """, zip.path, manifest, file.path
            ])
        #expect(make.status == 0, "\(make.stderr)")
        let size = try Data(contentsOf: file).count
        let r = try BitflashBinary.run(["inspect", zip.path])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("DFU package:      McuMgr style, 1 image"), "\(r.stdout)")
        #expect(
            r.stdout.contains(
                "app.bin: application, image 0, \(size) bytes, manifest version 1.0.0+0, MCUboot 1.0.0+0, hash valid"))
        #expect(r.stdout.contains("hash check:       valid"))
    }

    @Test(.enabled(if: Corpus.isAvailable, Comment(rawValue: Corpus.skipMessage)))
    func showsTheProtectedTLVsOfACorpusImage() throws {
        let path = Corpus.testdata.appendingPathComponent("real/mcuboot-tfm-protected-tlvs.signed.bin").path
        let r = try BitflashBinary.run(["inspect", "--json", path])
        #expect(r.status == 0, "\(r.stderr)")
        let mcuboot = try #require(try Self.json(r)["mcuboot"] as? [String: Any])
        #expect(mcuboot["protectedTLVSize"] as? Int == 123)
        #expect(mcuboot["headerSize"] as? Int == 0x400)
        #expect(mcuboot["imageSize"] as? Int == 115_296)
        #expect(mcuboot["hashValid"] as? Bool == true)
        #expect((mcuboot["tlvs"] as? [String])?.count == 6)
    }

    @Test(.enabled(if: Corpus.isAvailable, Comment(rawValue: Corpus.skipMessage)))
    func namesAUF2FamilyNoSupportedBoardUses() throws {
        let path = Corpus.testdata.appendingPathComponent("real/uf2-nrf52840-s140-softdevice-6.1.1.uf2").path
        let r = try BitflashBinary.run(["inspect", path])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("UF2 families:     0xADA52840 (nRF52840, no supported board)"), "\(r.stdout)")
    }
}
