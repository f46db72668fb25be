import FirmwareImage
import Foundation
import Testing
import TestSupport

/// A DFU `.zip` flashes exactly the image its manifest describes, where its format puts it, or is
/// refused: a Nordic package made by `convert --to nordic-dfu-zip` leaves the board's flash byte
/// for byte as flashing the hex does, on stock and MCUboot boards of both families.
@Suite(.enabled(if: BitflashBinary.url != nil, "bitflash binary not built (.build/debug/bitflash): CLI tests skipped"))
struct DFUZipRoundTripTests {
    /// The flash pages a simulated board's state file holds (address → bytes).
    static func pages(_ folder: URL) throws -> [UInt32: Data] {
        let file = folder.appendingPathComponent("sim.json")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: file)) as? [String: Any])
        var out: [UInt32: Data] = [:]
        for page in (json["pages"] as? [[String: Any]]) ?? [] {
            guard let address = page["address"] as? Int, let text = page["data"] as? String,
                let data = Data(base64Encoded: text)
            else { continue }
            out[UInt32(address)] = data
        }
        return out
    }

    /// The JSON result line of `flash … --json`.
    static func result(_ r: BitflashBinary.Result) -> [String: Any]? {
        r.lines.last.flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    /// Flashes `file` onto a fresh simulated board of `profile` with a full update; returns the
    /// result and the board's flash pages.
    static func flash(_ file: URL, profile: String, in dir: URL, as name: String) throws -> (
        result: [String: Any]?, pages: [UInt32: Data], stderr: String
    ) {
        let state = dir.appendingPathComponent(name)
        let r = try BitflashBinary.run([
            "flash", file.path, "--simulate", profile, "--sim-state", state.path, "--mode", "full", "--json"
        ])
        guard r.status == 0 else { return (nil, [:], r.stderr) }
        return (result(r), try pages(state), r.stderr)
    }

    @Test(
        "the issue's small-heart zip flashes the whole image, as the hex does",
        .enabled(if: Corpus.isAvailable, Comment(rawValue: Corpus.skipMessage)),
        arguments: [("microbit-v2", 181_336), ("microbit-v1", 124_974), ("microbit-v2-mcuboot", nil)])
    func theSmallHeartZipFlashesWhatTheHexDoes(profile: String, bytes: Int?) throws {
        let dir = try BitflashBinary.temporaryDirectory()
        let hex = Corpus.testdata.appendingPathComponent("real/makecode-universal-8.0.18-small-heart.hex")
        let zip = dir.appendingPathComponent("z.zip")
        let board = profile.replacingOccurrences(of: "-mcuboot", with: "")
        let convert = try BitflashBinary.run([
            "convert", hex.path, "--board", board, "--to", "nordic-dfu-zip", "-o", zip.path
        ])
        try #require(convert.status == 0, "\(convert.stderr)")
        let fromZip = try Self.flash(zip, profile: profile, in: dir, as: "zip")
        let fromHex = try Self.flash(hex, profile: profile, in: dir, as: "hex")
        let zipResult = try #require(fromZip.result, "\(fromZip.stderr)")
        #expect(zipResult["verified"] as? Bool == true)
        #expect(zipResult["bytesSent"] as? Int == fromHex.result?["bytesSent"] as? Int)
        if let bytes { #expect(zipResult["bytesSent"] as? Int == bytes) }
        let same = fromZip.pages == fromHex.pages
        #expect(same, "the flash differs at \(Self.firstDifference(fromHex.pages, fromZip.pages))")
        // The program sits where the hex puts it: 0x47000 on V2, 0x35400 on V1.
        let family: ChipFamily = board == "microbit-v1" ? .nrf51 : .nrf52833
        let magic: UInt32 = family == .nrf51 ? 0x35400 : 0x47000
        let page = magic & ~(family.pageSize - 1)
        let data = try #require(fromZip.pages[page])
        #expect(Array(data[Int(magic - page)..<Int(magic - page + 16)]) == MakeCodeProgram.magic)
    }

    /// Every corpus hex, one board profile each, rotating over the stock micro:bit and Calliope
    /// boards and the MCUboot ones, so that every kind is covered without flashing everything twice.
    static let hexFiles: [String] = {
        guard Corpus.isAvailable else { return [] }
        return ["real", "derived"].flatMap { folder in
            ((try? FileManager.default.contentsOfDirectory(atPath: Corpus.testdata.appendingPathComponent(folder).path))
                ?? [])
                .filter { $0.hasSuffix(".hex") }.map { "\(folder)/\($0)" }
        }.sorted()
    }()

    static func profile(for family: ChipFamily, index: Int) -> String {
        let profiles =
            family == .nrf51
            ? ["microbit-v1", "calliope-mini-1", "microbit-v1-mcuboot", "calliope-mini-2"]
            : ["microbit-v2", "calliope-mini-3", "microbit-v2-mcuboot"]
        return profiles[index % profiles.count]
    }

    @Test(
        "a corpus hex and its Nordic zip leave the same flash",
        .enabled(if: Corpus.isAvailable, Comment(rawValue: Corpus.skipMessage)), arguments: hexFiles)
    func aZipLeavesTheFlashTheHexLeaves(path: String) throws {
        let index = Self.hexFiles.firstIndex(of: path) ?? 0
        let hex = Corpus.testdata.appendingPathComponent(path)
        let dir = try BitflashBinary.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        var compared = 0
        for (board, family) in [("microbit-v1", ChipFamily.nrf51), ("microbit-v2", .nrf52833)] {
            let zip = dir.appendingPathComponent("\(board).zip")
            let convert = try BitflashBinary.run([
                "convert", hex.path, "--board", board, "--to", "nordic-dfu-zip", "-o", zip.path
            ])
            // No section for this board, or nothing in its application region: nothing to compare.
            guard convert.status == 0 else {
                #expect(convert.status == 65, "\(path) \(board): \(convert.stderr)")
                continue
            }
            let profile = Self.profile(for: family, index: index)
            let fromHex = try Self.flash(hex, profile: profile, in: dir, as: "\(board)-hex")
            let fromZip = try Self.flash(zip, profile: profile, in: dir, as: "\(board)-zip")
            #expect(
                (fromHex.result == nil) == (fromZip.result == nil),
                "\(path) on \(profile): the hex \(fromHex.result == nil ? "failed" : "flashed"), the zip \(fromZip.result == nil ? "failed" : "flashed"): \(fromHex.stderr)\(fromZip.stderr)"
            )
            guard fromHex.result != nil, fromZip.result != nil else { continue }
            #expect(fromZip.result?["verified"] as? Bool == true)
            let same = fromZip.pages == fromHex.pages
            #expect(
                same,
                "\(path) on \(profile): the flash differs at \(Self.firstDifference(fromHex.pages, fromZip.pages))")
            compared += 1
        }
        if compared == 0 { print("\(path): no application for any board, nothing compared") }
    }

    static func firstDifference(_ a: [UInt32: Data], _ b: [UInt32: Data]) -> String {
        let addresses = Set(a.keys).union(b.keys).sorted()
        guard let first = addresses.first(where: { a[$0] != b[$0] }) else { return "no page" }
        return String(format: "page 0x%05X", first)
    }

    @Test(
        .enabled(
            if: ReferenceTools.works("python3", ["-c", "import zipfile"]), "python3 not found: McuMgr zip test skipped")
    )
    func aMcuMgrZipWhoseImageIsNotMCUbootIsRefused() throws {
        let dir = try BitflashBinary.temporaryDirectory()
        let app = dir.appendingPathComponent("app.bin")
        let convert = try BitflashBinary.run([
            "convert", BitflashBinary.sample("sample-r2-heart.hex").path,
            "--board", "microbit-v2", "--to", "mcuboot", "-o", app.path
        ])
        try #require(convert.status == 0, "\(convert.stderr)")
        // img_size 0xFFFFFFFF: the header announces more than the file holds.
        var bytes = [UInt8](try Data(contentsOf: app))
        bytes.replaceSubrange(12..<16, with: [0xFF, 0xFF, 0xFF, 0xFF])
        try Data(bytes).write(to: app)
        let zip = dir.appendingPathComponent("dfu_application.zip")
        let make = try ReferenceTools.run(
            "python3",
            [
                "-c",
                """
                import sys, zipfile
                with zipfile.ZipFile(sys.argv[1], "w", zipfile.ZIP_DEFLATED) as z:
                    z.writestr("manifest.json", '{"format-version":0,"files":[{"file":"app.bin","image_index":"0","type":"application"}]}')
                    z.write(sys.argv[2], "app.bin")
                """, zip.path, app.path
            ])
        try #require(make.status == 0, "\(make.stderr)")
        for args in [
            ["flash", zip.path, "--simulate", "--sim-state", dir.appendingPathComponent("s").path, "--mode", "full"],
            ["inspect", zip.path]
        ] {
            let r = try BitflashBinary.run(args)
            #expect(r.status == 65, "\(args[0]): \(r.stdout)\(r.stderr)")
            #expect(
                r.stderr.contains("'app.bin' is not a valid MCUboot image, which a McuMgr package must hold"),
                "\(r.stderr)")
            #expect(r.stderr.contains("truncated"), "\(r.stderr)")
        }
    }

    @Test func aNordicZipWhoseInitPacketDoesNotMatchIsRefused() throws {
        let dir = try BitflashBinary.temporaryDirectory()
        let good = dir.appendingPathComponent("good.zip")
        let convert = try BitflashBinary.run([
            "convert", BitflashBinary.sample("sample-r2-heart.hex").path,
            "--board", "microbit-v2", "--to", "nordic-dfu-zip", "-o", good.path
        ])
        try #require(convert.status == 0, "\(convert.stderr)")
        let package = try DFUPackage(zipBytes: [UInt8](try Data(contentsOf: good)))
        let app = try #require(package.images.first)
        // The same init packet with a binary one byte of which differs.
        var bin = app.bytes
        bin[100] ^= 0xFF
        let bad = dir.appendingPathComponent("bad.zip")
        try Data(try DFUPackage.nordicZip(application: bin, initPacket: try #require(app.initPacket), legacy: false))
            .write(to: bad)
        let state = dir.appendingPathComponent("s")
        let r = try BitflashBinary.run(["flash", bad.path, "--simulate", "microbit-v2", "--sim-state", state.path])
        #expect(r.status == 65)
        #expect(
            r.stderr.contains("the DFU package's init packet does not match application.bin: its SHA-256 is"),
            "\(r.stderr)")
        #expect(!FileManager.default.fileExists(atPath: state.path), "nothing was flashed")
        // The untouched package flashes.
        let ok = try BitflashBinary.run(["flash", good.path, "--simulate", "microbit-v2", "--sim-state", state.path])
        #expect(ok.status == 0, "\(ok.stderr)")
    }
}
