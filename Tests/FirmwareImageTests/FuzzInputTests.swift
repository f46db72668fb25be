import Foundation
import Testing
import TestSupport
@testable import FirmwareImage

/// The fuzz targets' seed inputs (made here, by the project's own writers) and the inputs
/// that once crashed a parser. Seeds live in `Tests/Fuzz/Seeds/<target>/`, crash
/// reproducers in `Tests/Fuzz/Regressions/<target>/`.
enum FuzzInputs {
    static let root = Corpus.repoRoot.appendingPathComponent("Tests/Fuzz")

    /// Seed files per fuzz target, by file name.
    static func seeds() throws -> [String: [String: [UInt8]]] {
        var image = MemoryImage()
        try image.write((0..<700).map { UInt8(truncatingIfNeeded: $0 &* 37) }, at: 0x47000)
        try image.write([0x00, 0x70, 0x07, 0x00], at: 0x1000_1014)
        var notFlash = UF2File.encode(image, familyID: UF2Family.nrf52833)
        notFlash[8] |= 1  // block 0: not main flash

        let app = (0..<256).map { UInt8(truncatingIfNeeded: $0 &* 5 &+ 1) }
        let plain = try MCUbootImage.build(
            application: app, loadAddress: 0x27000, version: MCUbootVersion(major: 1, minor: 2, revision: 3, build: 4))
        var protectedHeader = MCUbootHeader(
            headerSize: 0x20, protectedTLVSize: 12, imageSize: 64, version: MCUbootVersion(major: 2))
        protectedHeader.flags = [.ramLoad]
        var withProtected = protectedHeader.encoded() + [UInt8](repeating: 0x42, count: 64)
        withProtected += MCUbootTLV.encodeArea(
            .protected, [MCUbootTLV(area: .protected, type: 0x50, value: [7, 0, 0, 0])])
        withProtected += MCUbootTLV.encodeArea(
            .unprotected, [MCUbootTLV(area: .unprotected, type: 0x10, value: [UInt8](repeating: 0, count: 32))])

        let mcumgr = try makeZip([
            (
                "manifest.json",
                Array(
                    #"{"format-version":0,"files":[{"file":"app.bin","image_index":"0","type":"application","version_MCUBOOT":"1.2.3+4"}]}"#
                        .utf8)
            ),
            ("app.bin", plain)
        ])
        let nordic = try makeZip(
            [
                ("manifest.json", Array(#"{"manifest":{"application":{"bin_file":"a.bin","dat_file":"a.dat"}}}"#.utf8)),
                ("a.bin", app), ("a.dat", [0x01, 0x02, 0x03])
            ], compress: true)
        var v1 = MemoryImage()
        try v1.write((0..<300).map { UInt8(truncatingIfNeeded: $0 &* 11 &+ 3) }, at: 0x18000)
        try v1.write([0x00, 0xC0, 0x03, 0x00], at: 0x1000_1014)
        let plainHex = IntelHexWriter.write(image)
        let crlfHex = IntelHexWriter.write(v1, options: IntelHexWriter.Options(lineEnding: .crlf, uppercase: false))
        let both = [
            UniversalHexWriter.Section(boardID: 0x9900, image: v1),
            UniversalHexWriter.Section(boardID: 0x9903, image: image)
        ]
        let sectionsHex = UniversalHexWriter.write(both)
        let blocksHex = UniversalHexWriter.write(both, options: UniversalHexWriter.Options(layout: .blocks))
        let uf2 = UF2File.encode(image, familyID: UF2Family.nrf52833)
        return [
            "hex": [
                "plain-nrf52833.hex": plainHex, "plain-nrf51-crlf-lowercase.hex": crlfHex,
                "universal-sections.hex": sectionsHex, "universal-blocks.hex": blocksHex
            ],
            "firmware": [
                "intel.hex": plainHex, "universal-blocks.hex": blocksHex, "nrf52833.uf2": uf2,
                "unsigned-mcuboot.bin": plain, "mcumgr.zip": mcumgr
            ],
            "uf2": [
                "small-nrf52833.uf2": UF2File.encode(image, familyID: UF2Family.nrf52833),
                "no-family.uf2": UF2File.encode(image, familyID: nil), "not-main-flash.uf2": notFlash
            ],
            "mcuboot": ["unsigned.bin": plain, "protected-tlvs.bin": withProtected],
            "dfu-zip": ["mcumgr.zip": mcumgr, "nordic.zip": nordic]
        ]
    }

    /// Runs the parser of `target` on `bytes`: success or a `FirmwareImageError` is fine.
    static func exercise(_ target: String, _ bytes: [UInt8]) throws {
        do {
            switch target {
            case "hex": _ = try IntelHexReader.parse(bytes)
            case "firmware": _ = try Firmware.parse(bytes, fileName: "fuzz-input")
            case "uf2": _ = try UF2File.parse(bytes, expectedFamily: UF2Family.nrf52833)
            case "mcuboot": _ = try MCUbootImage(bytes: bytes)
            case "dfu-zip": _ = try DFUPackage(zipBytes: bytes)
            default: Issue.record("unknown fuzz target folder \(target)")
            }
        } catch is FirmwareImageError {}
    }

    /// Files under `folder/<target>/`.
    static func files(in folder: String) -> [(target: String, name: String, bytes: [UInt8])] {
        let fm = FileManager.default
        let base = root.appendingPathComponent(folder)
        var out: [(String, String, [UInt8])] = []
        // The protocol targets (cbor, smp, partial-flow, mcumgr-flow) have their generator in SMPTests,
        // the Nordic DFU ones (nordic-frames, secure-dfu-flow, legacy-dfu-flow) in NordicDFUTests.
        let protocolTargets: Set = [
            "cbor", "smp", "partial-flow", "mcumgr-flow", "nordic-frames", "secure-dfu-flow", "legacy-dfu-flow"
        ]
        for target in ((try? fm.contentsOfDirectory(atPath: base.path)) ?? []).sorted()
        where !protocolTargets.contains(target) {
            let dir = base.appendingPathComponent(target)
            for name in ((try? fm.contentsOfDirectory(atPath: dir.path)) ?? []).sorted() where !name.hasPrefix(".") {
                if let data = fm.contents(atPath: dir.appendingPathComponent(name).path) {
                    out.append((target, name, [UInt8](data)))
                }
            }
        }
        return out
    }
}

@Suite struct FuzzInputTests {
    /// The committed seeds are what the writers make today. To refresh them after a
    /// deliberate format change, run the tests once with BITFLASH_WRITE_FUZZ_SEEDS=1.
    @Test func committedSeedsMatchTheGenerators() throws {
        let seeds = try FuzzInputs.seeds()
        if ProcessInfo.processInfo.environment["BITFLASH_WRITE_FUZZ_SEEDS"] == "1" {
            for (target, files) in seeds {
                let dir = FuzzInputs.root.appendingPathComponent("Seeds/\(target)")
                try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
                for (name, bytes) in files { try Data(bytes).write(to: dir.appendingPathComponent(name)) }
            }
        }
        let committed = FuzzInputs.files(in: "Seeds")
        #expect(committed.count == seeds.values.reduce(0) { $0 + $1.count })
        for file in committed {
            let generated = try #require(
                seeds[file.target]?[file.name], "Seeds/\(file.target)/\(file.name) has no generator")
            if file.target == "dfu-zip" {
                // Zip bytes depend on the ZIPFoundation and zlib versions: compare what they hold.
                #expect(
                    try DFUPackage(zipBytes: generated) == DFUPackage(zipBytes: file.bytes),
                    "Seeds/dfu-zip/\(file.name) is stale")
            } else {
                #expect(generated == file.bytes, "Seeds/\(file.target)/\(file.name) is stale")
            }
        }
    }

    @Test func seedsParseCleanly() throws {
        for (target, files) in try FuzzInputs.seeds() {
            for (name, bytes) in files {
                switch target {
                case "hex":
                    #expect(try IntelHexReader.parse(bytes).sections.allSatisfy { !$0.image.isEmpty }, "\(name)")
                case "firmware": #expect(try Firmware.parse(bytes, fileName: name).sections.count >= 1, "\(name)")
                case "uf2": #expect(try UF2File.parse(bytes).image.isEmpty == false, "\(name)")
                case "mcuboot": #expect(try MCUbootImage(bytes: bytes).header.imageSize > 0, "\(name)")
                default: #expect(try DFUPackage(zipBytes: bytes).images.count == 1, "\(name)")
                }
            }
        }
    }

    /// Every committed seed and crash reproducer goes through its parser without a crash
    /// and without an error outside `FirmwareImageError`.
    @Test func fuzzInputsNeverCrashTheParsers() throws {
        let inputs = FuzzInputs.files(in: "Seeds") + FuzzInputs.files(in: "Regressions")
        #expect(!inputs.isEmpty)
        for input in inputs { try FuzzInputs.exercise(input.target, input.bytes) }
    }
}
