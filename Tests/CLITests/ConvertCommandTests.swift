import FirmwareImage
import Foundation
import SampleFirmware
import Testing
import TestSupport

/// `bitflash convert`, run as a subprocess, its output read back by the reference tools.
@Suite(.enabled(if: BitflashBinary.url != nil, "bitflash binary not built (.build/debug/bitflash): CLI tests skipped"))
struct ConvertCommandTests {
    /// The two board images of the sample Universal Hex: a V1 "heart" and a V2 "counter" build.
    static let v1 = SampleFirmware.image(family: .nrf51, runtime: .r1, program: .heart)
    static let v2 = SampleFirmware.image(family: .nrf52833, runtime: .r2, program: .counter)

    /// A folder of its own for each test, holding the sample Universal Hex.
    static func sample() throws -> (dir: URL, file: URL) {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bitflash-convert-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let file = dir.appendingPathComponent("sample-universal.hex")
        let bytes = UniversalHexWriter.write([.init(boardID: 0x9900, image: v1), .init(boardID: 0x9903, image: v2)])
        try Data(bytes).write(to: file)
        return (dir, file)
    }

    /// Runs `bitflash convert` and expects success; returns the output file.
    static func convert(_ file: URL, board: String, to target: String, in dir: URL, extra: [String] = []) throws -> URL
    {
        let out = dir.appendingPathComponent("\(board).\(target)")
        let r = try BitflashBinary.run(["convert", file.path, "--board", board, "--to", target, "-o", out.path] + extra)
        #expect(r.status == 0, "convert --to \(target) failed: \(r.stderr)")
        #expect(r.stdout.contains("wrote \(out.path): \(target)"), "\(r.stdout)")
        return out
    }

    /// Every byte the reference reader found equals the image's byte there (0xFF where the image
    /// has none, as UF2 pads its 256-byte blocks), and every run of the image is covered.
    static func expectSameData(_ found: ReferenceTools.Contents, as image: MemoryImage, exactRuns: Bool) {
        if exactRuns {
            #expect(found.runs == image.runs)
        } else {
            for run in image.runs {
                #expect(
                    found.runs.contains { $0.contains(run.lowerBound) && $0.upperBound >= run.upperBound },
                    "the reference reader found no data for \(run)")
            }
        }
        for chunk in found.chunks {
            #expect(Array(chunk.bytes) == image.read(chunk.range), "bytes differ in \(chunk.range)")
        }
    }

    // MARK: hex

    @Test(
        .enabled(if: ReferenceTools.hasIntelHex, Comment(rawValue: ReferenceTools.intelHexMissing)),
        arguments: [("microbit-v1", 1), ("calliope-mini-3", 2)])
    func hexReadsBackTheSameBytesInPythonIntelhex(board: String, version: Int) throws {
        let (dir, file) = try Self.sample()
        let out = try Self.convert(file, board: board, to: "hex", in: dir)
        Self.expectSameData(
            try ReferenceTools.read(out, format: "hex"), as: version == 1 ? Self.v1 : Self.v2, exactRuns: true)
    }

    // MARK: bin

    @Test func binIsTheApplicationRegionByDefault() throws {
        let (dir, file) = try Self.sample()
        let out = try Self.convert(file, board: "microbit-v2", to: "bin", in: dir)
        let app = ChipFamily.nrf52833.layout.application
        #expect([UInt8](try Data(contentsOf: out)) == Self.v2.read(app))
    }

    @Test(.enabled(if: ReferenceTools.hasIntelHex, Comment(rawValue: ReferenceTools.intelHexMissing)))
    func binOfARangeMatchesIntelhexOverTheSameRange() throws {
        let (dir, file) = try Self.sample()
        let hex = try Self.convert(file, board: "microbit-v1", to: "hex", in: dir)
        // From the end of the runtime into the program: zeros, then program bytes.
        let range: Range<UInt32> = 0x1F000..<0x21100
        let bin = try Self.convert(
            file, board: "microbit-v1", to: "bin", in: dir, extra: ["--range", "0x1F000-0x21100"])
        let r = try ReferenceTools.run(
            "python3",
            [
                "-c",
                "import sys; from intelhex import IntelHex; "
                    + "sys.stdout.write(IntelHex(sys.argv[1]).tobinstr(start=\(range.lowerBound), end=\(range.upperBound - 1)).hex())",
                hex.path
            ])
        #expect(r.status == 0, "\(r.stderr)")
        let bytes = [UInt8](try Data(contentsOf: bin))
        #expect(bytes.count == range.count)
        #expect(bytes.map { String(format: "%02x", $0) }.joined() == r.stdout)
        #expect(bytes == Self.v1.read(range))
    }

    @Test func decimalRangesWork() throws {
        let (dir, file) = try Self.sample()
        let out = try Self.convert(file, board: "microbit-v2", to: "bin", in: dir, extra: ["--range", "4096-4352"])
        #expect([UInt8](try Data(contentsOf: out)) == Self.v2.read(4096..<4352))
    }

    @Test(arguments: ["0x2000-0x1000", "0x1000", "0x1000-", "start-end", "0x1000-0x1000"])
    func aBadRangeExits64(range: String) throws {
        let (dir, file) = try Self.sample()
        let r = try BitflashBinary.run([
            "convert", file.path, "--board", "microbit-v2", "--to", "bin",
            "--range", range, "-o", dir.appendingPathComponent("x.bin").path
        ])
        #expect(r.status == 64)
        #expect(r.stderr.contains("--range \(range): expected START-END with START below END"), "\(r.stderr)")
    }

    // MARK: errors

    @Test func aBoardTheFileLacksExits65() throws {
        let (dir, _) = try Self.sample()
        let plain = dir.appendingPathComponent("v2-only.hex")
        try Data(IntelHexWriter.write(Self.v2)).write(to: plain)
        let r = try BitflashBinary.run([
            "convert", plain.path, "--board", "microbit-v1", "--to", "hex",
            "-o", dir.appendingPathComponent("x.hex").path
        ])
        #expect(r.status == 65)
        #expect(r.stderr.contains("v2-only.hex has no nRF51822 image; this board is a micro:bit V1"), "\(r.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("x.hex").path))
    }

    @Test func uf2ForAnNRF51BoardIsAClearError() throws {
        let (dir, file) = try Self.sample()
        let r = try BitflashBinary.run([
            "convert", file.path, "--board", "calliope-mini-2", "--to", "uf2",
            "-o", dir.appendingPathComponent("x.uf2").path
        ])
        #expect(r.status == 64)
        #expect(
            r.stderr.contains("UF2 has no family ID for nRF51822 boards (Calliope mini 2): use --to hex"), "\(r.stderr)"
        )
    }

    @Test func anUnwritableOutputExits73() throws {
        let (_, file) = try Self.sample()
        let r = try BitflashBinary.run([
            "convert", file.path, "--board", "microbit-v2", "--to", "hex",
            "-o", "/nonexistent-bitflash-folder/out.hex"
        ])
        #expect(r.status == 73)
        #expect(r.stderr.contains("/nonexistent-bitflash-folder/out.hex: cannot write"), "\(r.stderr)")
    }

    // MARK: uf2

    @Test(.enabled(if: ReferenceTools.hasUF2Utils, Comment(rawValue: ReferenceTools.uf2UtilsMissing)))
    func uf2ReadsBackInUF2UtilsWithTheNRF52833Family() throws {
        let (dir, file) = try Self.sample()
        let out = try Self.convert(file, board: "microbit-v2", to: "uf2", in: dir)
        let found = try ReferenceTools.read(out, format: "uf2")
        #expect(found.families == [0x621E_937A])
        // UF2 carries flash only: the UICR words stay out.
        Self.expectSameData(found, as: Self.v2.slice(ChipFamily.nrf52833.layout.flash), exactRuns: false)
        #expect(found.runs.allSatisfy { $0.upperBound <= ChipFamily.nrf52833.layout.flashSize })
    }

    @Test(.enabled(if: ReferenceTools.hasUF2Conv, Comment(rawValue: ReferenceTools.uf2ConvMissing)))
    func uf2convNamesTheFamilyAndTheStartAddress() throws {
        let (dir, file) = try Self.sample()
        let out = try Self.convert(file, board: "calliope-mini-3", to: "uf2", in: dir)
        let r = try ReferenceTools.run("uf2conv", ["--info", out.path])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("hex value is 0x621e937a"), "\(r.stdout)")
        #expect(r.stdout.contains("Target Address is 0x00000000"), "\(r.stdout)")
        #expect(r.stdout.contains("All block flag values consistent, 0x2000"), "\(r.stdout)")
    }

    // MARK: mcuboot

    @Test(
        .enabled(if: ReferenceTools.hasImgtool, Comment(rawValue: ReferenceTools.imgtoolMissing)),
        arguments: ["microbit-v1", "microbit-v2"])
    func mcubootPassesImgtoolVerify(board: String) throws {
        let (dir, file) = try Self.sample()
        let out = try Self.convert(file, board: board, to: "mcuboot", in: dir)
        let r = try ReferenceTools.run("imgtool", ["verify", out.path])
        #expect(r.status == 0, "\(r.stdout)\(r.stderr)")
        #expect(r.stdout.contains("Image was correctly validated"), "\(r.stdout)")
        #expect(r.stdout.contains("Image version: 1.0.0+0"), "\(r.stdout)")
        // The body is the application region up to its last data byte, after a one-page header.
        let bytes = [UInt8](try Data(contentsOf: out))
        let family: ChipFamily = board == "microbit-v1" ? .nrf51 : .nrf52833
        let image = board == "microbit-v1" ? Self.v1 : Self.v2
        let headerSize = Int(bytes[8]) | Int(bytes[9]) << 8
        let imageSize = UInt32(bytes[12]) | UInt32(bytes[13]) << 8 | UInt32(bytes[14]) << 16 | UInt32(bytes[15]) << 24
        #expect(headerSize == Int(family.pageSize))
        let start = family.layout.applicationStart
        #expect(start + imageSize == image.slice(start..<family.layout.scratchPage).span?.upperBound)
        #expect(Array(bytes[headerSize..<(headerSize + Int(imageSize))]) == image.read(start..<(start + imageSize)))
    }

    // MARK: nordic-dfu-zip

    @Test(
        "a Nordic DFU package reads back in Python's zipfile: manifest, binary and an init packet that matches it",
        arguments: ["microbit-v1", "microbit-v2"])
    func nordicDFUZipReadsBackInPython(board: String) throws {
        guard Python.has("zipfile") else {
            print("skipping: python3 is not available to read the package back")
            return
        }
        let (dir, file) = try Self.sample()
        let out = try Self.convert(file, board: board, to: "nordic-dfu-zip", in: dir)
        // The reference reader: the manifest's files, the binary's SHA-256 (byte-reversed, as the
        // micro:bit's Secure DFU init command holds it) and CRC-16/CCITT-FALSE (the legacy one's).
        let script = """
            import sys, zipfile, json, hashlib, binascii
            z = zipfile.ZipFile(sys.argv[1])
            assert z.testzip() is None
            m = json.loads(z.read('manifest.json'))['manifest']
            app = m['application']
            b = z.read(app['bin_file']); d = z.read(app['dat_file'])
            print(len(b), len(d), m.get('dfu_version'))
            print(hashlib.sha256(b).digest()[::-1].hex() in d.hex(), '%04x' % binascii.crc_hqx(b, 0xFFFF), d[-2:][::-1].hex())
            print(b.hex())
            """
        let r = try Python.run(["-c", script, out.path])
        #expect(r.status == 0, "\(r.output)")
        let lines = r.output.split(separator: "\n").map(String.init)
        try #require(lines.count == 3, "\(r.output)")
        let sizes = lines[0].split(separator: " ")
        let family: ChipFamily = board == "microbit-v1" ? .nrf51 : .nrf52833
        let image = board == "microbit-v1" ? Self.v1 : Self.v2
        let start = family.layout.applicationStart
        let end = try #require(image.slice(start..<family.layout.scratchPage).span?.upperBound)
        let length = (Int(end - start) + 3) & ~3
        #expect(Int(sizes[0]) == length)
        #expect(bytes(hex: lines[2]) == image.read(start..<(start + UInt32(length)), fill: 0xFF))
        let check = lines[1].split(separator: " ").map(String.init)
        if family == .nrf51 {
            #expect(sizes[1] == "14" && sizes[2] == "0.5", "\(lines[0])")
            #expect(check[1] == check[2], "the legacy init packet ends with the binary's CRC-16")
        } else {
            #expect(sizes[1] == "56" && sizes[2] == "None", "\(lines[0])")
            #expect(check[0] == "True", "the init command holds the binary's byte-reversed SHA-256")
        }
        // The project's own reader takes it as a Nordic DFU package.
        let package = try DFUPackage(zipBytes: [UInt8](try Data(contentsOf: out)))
        #expect(package.style == .nordicDFU)
        #expect(package.images.first?.initPacket?.count == (family == .nrf51 ? 14 : 56))
    }

    // MARK: corpus

    @Test(
        .enabled(if: Corpus.isAvailable, Comment(rawValue: Corpus.skipMessage)),
        arguments: [
            "real/makecode-universal-8.0.18-small-heart.hex", "real/calliope-mini3-makecode-8.1.11-demo.hex",
            "real/universal-micropython-python-editor-default.hex"
        ])
    func corpusFilesConvertToWhatTheReferenceToolsRead(path: String) throws {
        let source = Corpus.testdata.appendingPathComponent(path)
        let firmware = try Firmware.parse(try Corpus.bytes(path), fileName: source.lastPathComponent)
        let dir = try Self.sample().dir
        for board in ["microbit-v1", "microbit-v2"] {
            guard let image = try? firmware.image(for: Board(userName: board)!) else { continue }
            if ReferenceTools.hasIntelHex {
                let hex = try Self.convert(source, board: board, to: "hex", in: dir)
                Self.expectSameData(try ReferenceTools.read(hex, format: "hex"), as: image, exactRuns: true)
            }
            if board == "microbit-v2", ReferenceTools.hasUF2Utils {
                let uf2 = try Self.convert(source, board: board, to: "uf2", in: dir)
                Self.expectSameData(
                    try ReferenceTools.read(uf2, format: "uf2"), as: image.slice(ChipFamily.nrf52833.layout.flash),
                    exactRuns: false)
            }
            if ReferenceTools.hasImgtool {
                let mcuboot = try Self.convert(source, board: board, to: "mcuboot", in: dir)
                let r = try ReferenceTools.run("imgtool", ["verify", mcuboot.path])
                #expect(
                    r.status == 0 && r.stdout.contains("Image was correctly validated"),
                    "\(path) \(board): \(r.stdout)\(r.stderr)")
            }
        }
    }
}
