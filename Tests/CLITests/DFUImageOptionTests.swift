import Foundation
import Testing
import TestSupport

/// `flash --dfu-image`: the full update uploads the image the user gives, from an MCUboot
/// binary or from a DFU zip holding one; a file without one is refused with exit 65.
@Suite(.enabled(if: BitflashBinary.url != nil, "bitflash binary not built (.build/debug/bitflash): CLI tests skipped"))
struct DFUImageOptionTests {
    @Test func uploadsTheMCUbootImageInsideADFUZip() throws {
        let dir = try BitflashBinary.temporaryDirectory()
        let app = dir.appendingPathComponent("app.bin")
        let convert = try BitflashBinary.run([
            "convert", BitflashBinary.sample("sample-r2-heart.hex").path,
            "--board", "microbit-v2", "--to", "mcuboot", "-o", app.path
        ])
        #expect(convert.status == 0, "\(convert.stderr)")
        let manifest =
            #"{"format-version": 0, "files": [{"type": "application", "file": "app.bin", "image_index": "0", "size": 0}]}"#
        let zip = try Python.run([
            "-c",
            """
            import sys, zipfile
            with zipfile.ZipFile(sys.argv[1], 'w') as z:
                z.write(sys.argv[2], 'app.bin'); z.writestr('manifest.json', sys.argv[3])
            """, dir.appendingPathComponent("app.zip").path, app.path, manifest
        ])
        try #require(zip.status == 0, "python3 could not write the zip")
        let r = try BitflashBinary.run([
            "flash", BitflashBinary.sample("sample-r1-counter.hex").path, "--simulate",
            "--sim-state", dir.appendingPathComponent("s").path, "--mode", "full",
            "--dfu-image", dir.appendingPathComponent("app.zip").path, "--json"
        ])
        #expect(r.status == 0, "\(r.stderr)")
        let result = try #require(
            r.lines.last.flatMap { try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] })
        #expect(result["path"] as? String == "full")
        #expect(result["verified"] as? Bool == true)
        #expect(
            result["bytesSent"] as? Int == (try FileManager.default.attributesOfItem(atPath: app.path)[.size] as? Int))
    }

    @Test func refusesADFUImageThatHoldsNoMCUbootImage() throws {
        let dir = try BitflashBinary.temporaryDirectory()
        let r = try BitflashBinary.run([
            "flash", BitflashBinary.sample("sample-r1-counter.hex").path, "--simulate",
            "--sim-state", dir.path, "--dfu-image", BitflashBinary.sample("sample-r1-heart.hex").path
        ])
        #expect(r.status == 65)
        #expect(r.stderr.contains("holds no MCUboot image"))
    }
}
