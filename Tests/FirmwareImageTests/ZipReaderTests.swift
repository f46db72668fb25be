import Foundation
import Testing
import TestSupport
@testable import FirmwareImage

/// The in-memory zip reader under DFU packages: zips written by Python's `zipfile` (the
/// reference writer) and by ZIPFoundation read back exactly; every kind of damage is an
/// error, never a trap or a loop.
@Suite struct ZipReaderTests {
    /// Bytes that deflate well but not trivially: a repeating ramp with noise.
    private static let payload: [UInt8] = {
        var rng = SplitMix64(seed: 7)
        return (0..<20_000).map { i in UInt8(truncatingIfNeeded: i / 7) ^ (rng.next() % 16 == 0 ? 0x55 : 0) }
    }()

    @Test("reads stored and deflated entries written by Python's zipfile", arguments: ["ZIP_STORED", "ZIP_DEFLATED"])
    func readsZipsWrittenByPython(method: String) throws {
        guard Python.has("zipfile") else {
            print("skipping: python3 is not available to write the reference zip")
            return
        }
        let script = """
            import io, sys, zipfile
            data = bytes.fromhex(sys.stdin.read())
            buf = io.BytesIO()
            with zipfile.ZipFile(buf, 'w', zipfile.\(method)) as z:
                z.writestr('manifest.json', b'{"files": []}')
                z.writestr('dir/', b'')
                z.writestr('./app.bin', data)
            print(buf.getvalue().hex())
            """
        let run = try Python.run(["-c", script], input: hex(Self.payload))
        let zip = try #require(bytes(hex: run.output.trimmingCharacters(in: .whitespacesAndNewlines)))
        let reader = try ZipReader(bytes: zip)
        #expect(reader.entries.map(\.path) == ["manifest.json", "dir/", "./app.bin"])
        let app = try #require(reader.entry(named: "app.bin"))
        #expect(app.method == (method == "ZIP_STORED" ? 0 : 8))
        #expect(try reader.contents(of: app, limit: 1 << 20) == Self.payload)
        #expect(reader.entry(named: "dir") == nil, "a directory is not a file entry")
    }

    @Test("reads deflated entries written by ZIPFoundation")
    func readsDeflatedZipFoundationEntries() throws {
        let zip = try makeZip([("a.bin", Self.payload), ("b.bin", [1, 2, 3])], compress: true)
        let reader = try ZipReader(bytes: zip)
        #expect(try reader.contents(of: #require(reader.entry(named: "a.bin")), limit: 1 << 20) == Self.payload)
        #expect(try reader.contents(of: #require(reader.entry(named: "b.bin")), limit: 1 << 20) == [1, 2, 3])
    }

    @Test("every truncation of a zip is refused with an error")
    func everyTruncationIsAnError() throws {
        let zip = try makeZip(
            [
                ("manifest.json", Array(#"{"files": [{"file": "a.bin"}]}"#.utf8)),
                ("a.bin", Array(Self.payload.prefix(3000)))
            ], compress: true)
        for length in stride(from: 0, to: zip.count, by: 7) {
            let cut = Array(zip.prefix(length))
            #expect(throws: FirmwareImageError.self) { try DFUPackage(zipBytes: cut) }
        }
    }

    @Test("a corrupted deflate stream fails the size or CRC check")
    func corruptedDeflateStreamIsRefused() throws {
        let zip = try makeZip([("a.bin", Self.payload)], compress: true)
        let reader = try ZipReader(bytes: zip)
        let entry = try #require(reader.entry(named: "a.bin"))
        var damaged = zip
        damaged[entry.dataOffset + entry.compressedSize / 2] ^= 0x5A
        let again = try ZipReader(bytes: damaged)
        #expect(throws: FirmwareImageError.self) {
            try again.contents(of: #require(again.entry(named: "a.bin")), limit: 1 << 20)
        }
    }

    @Test("an entry larger than the limit is refused before it is inflated")
    func oversizedEntryIsRefused() throws {
        let zip = try makeZip([("big.bin", [UInt8](repeating: 0, count: 100_000))], compress: true)
        let reader = try ZipReader(bytes: zip)
        let entry = try #require(reader.entry(named: "big.bin"))
        #expect(entry.compressedSize < 1_000, "zeros deflate to almost nothing: a small zip claims a large entry")
        #expect(throws: FirmwareImageError.dfuEntryTooLarge(name: "big.bin", size: 100_000)) {
            try reader.contents(of: entry, limit: 50_000)
        }
    }

    @Test("a central directory pointing past the data is not a zip")
    func directoryOffsetPastTheEndIsRefused() throws {
        var zip = try makeZip([("a.bin", [1, 2, 3])])
        // The end record's directory offset sits 16 bytes into the 22-byte record.
        let end = zip.count - 22
        zip[end + 16] = 0xFF; zip[end + 17] = 0xFF
        #expect(throws: FirmwareImageError.dfuNotAZip) { try ZipReader(bytes: zip) }
    }

    @Test("a local header offset pointing past the data is not a zip")
    func localOffsetPastTheEndIsRefused() throws {
        var zip = try makeZip([("a.bin", [1, 2, 3])])
        let end = zip.count - 22
        let directory = Int(zip[end + 16]) | Int(zip[end + 17]) << 8
        zip[directory + 42] = 0xF0; zip[directory + 43] = 0xFF
        #expect(throws: FirmwareImageError.dfuNotAZip) { try ZipReader(bytes: zip) }
    }

    @Test("a stored entry whose recorded size runs past the data is unreadable")
    func compressedSizePastTheEndIsRefused() throws {
        var zip = try makeZip([("a.bin", [1, 2, 3])])
        let end = zip.count - 22
        let directory = Int(zip[end + 16]) | Int(zip[end + 17]) << 8
        zip[directory + 21] = 0x7F
        #expect(throws: FirmwareImageError.dfuUnreadableEntry("a.bin")) { try ZipReader(bytes: zip) }
    }

    @Test("CRC-32 matches the standard check value")
    func crcCheckValue() {
        #expect(ZipReader.crc32(Array("123456789".utf8)) == 0xCBF4_3926)
    }
}
