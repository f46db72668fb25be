import Crypto
import Foundation
import Testing
import TestSupport
@testable import FirmwareImage

private func entry(_ path: String) throws -> [String: Any] {
    let parts = path.split(separator: "/").map(String.init)
    let group = try #require(try Corpus.analysis()[parts[0]] as? [String: Any])
    return try #require(group[parts[1]] as? [String: Any])
}

private func number(_ any: Any?) -> UInt32? {
    if let i = any as? Int { return UInt32(exactly: i) }
    guard let s = any as? String, s.hasPrefix("0x") else { return nil }
    return UInt32(s.dropFirst(2), radix: 16)
}

@Suite struct MCUbootCorpusTests {
    static let files = [
        "real/mcuboot-zephyr-hello_world.signed.bin",
        "real/mcuboot-nrf52840dk-smp-ble-ecdsa.signed.bin",
        "real/mcuboot-mimxrt1060-hdr400-rsa.signed.bin",
        "real/mcuboot-tfm-protected-tlvs.signed.bin",
        "real/mcuboot-mps2-ram-load-sha256-only.signed.bin",
        "derived/mcuboot-makecode-v2-program-1.2.3+4.ed25519.padded-confirmed.signed.bin",
        "derived/mcuboot-makecode-v2-program-1.2.3.ed25519.signed.bin",
        "derived/mcuboot-makecode-v2-program-1.2.3.unsigned.bin"
    ]

    @Test(.enabled(if: Corpus.isAvailable, Comment(rawValue: Corpus.skipMessage)), arguments: files)
    func corpusImageMatchesAnalysisAndHashIsValid(path: String) throws {
        let truth = try entry(path)
        let bytes = try Corpus.bytes(path)
        let image = try MCUbootImage(bytes: bytes)
        #expect(image.header.loadAddress == number(truth["load_addr"]))
        #expect(UInt32(image.header.headerSize) == number(truth["hdr_size"]))
        #expect(UInt32(image.header.protectedTLVSize) == number(truth["protected_tlv_size"]))
        #expect(image.header.imageSize == number(truth["img_size"]))
        #expect(image.header.flags.rawValue == number(truth["flags"]))
        #expect(image.version.description == truth["version"] as? String)
        let tlvs = try #require(truth["tlvs"] as? [[String: Any]])
        let mine = (image.protectedTLVs + image.unprotectedTLVs).map {
            "\(String(format: "0x%x", $0.area.rawValue))/\(String(format: "0x%x", $0.type))(\($0.value.count))"
        }
        let theirs = tlvs.map {
            "\($0["area"] as? String ?? "")/\($0["type"] as? String ?? "")(\($0["len"] as? Int ?? -1))"
        }
        #expect(mine == theirs)
        #expect(image.hashCheck == .valid)
        #expect(image.length <= bytes.count)
        // Without a protected area the device hash is SHA-256(header + body).
        if image.header.protectedTLVSize == 0 {
            #expect(image.reportedHash?.hexString.lowercased() == truth["sha256_of_hdr_plus_img"] as? String)
        } else {
            #expect(image.reportedHash?.hexString.lowercased() != truth["sha256_of_hdr_plus_img"] as? String)
        }
    }

    @Test(.enabled(if: Corpus.isAvailable, Comment(rawValue: Corpus.skipMessage)))
    func unsignedZephyrBinaryIsNotAnMCUbootImage() throws {
        let bytes = try Corpus.bytes("real/mcuboot-zephyr-hello_world.bin")
        #expect(throws: FirmwareImageError.mcubootBadMagic(found: 0)) { try MCUbootImage(bytes: bytes) }
    }

    /// An MCUboot image inside an Intel HEX file: the bytes at the slot address parse the same.
    @Test(
        .enabled(if: Corpus.isAvailable, Comment(rawValue: Corpus.skipMessage)),
        arguments: [
            ("real/mcuboot-zephyr-hello_world.signed.hex", "real/mcuboot-zephyr-hello_world.signed.bin"),
            (
                "derived/mcuboot-makecode-v2-program-1.2.3.ed25519.signed.hex",
                "derived/mcuboot-makecode-v2-program-1.2.3.ed25519.signed.bin"
            )
        ])
    func imageInsideHexParsesLikeTheBinary(hex: String, bin: String) throws {
        let memory = try TestHex.read(try Corpus.bytes(hex))
        let (address, fromHex) = try MCUbootImage.locate(in: memory)
        #expect(address == memory.span?.lowerBound)
        let fromBin = try MCUbootImage(bytes: try Corpus.bytes(bin))
        #expect(fromHex.reportedHash == fromBin.reportedHash)
        #expect(fromHex.hashCheck == .valid)
    }

    /// The builder, given the program binary imgtool signed, reproduces imgtool's unsigned image.
    @Test(.enabled(if: Corpus.isAvailable, Comment(rawValue: Corpus.skipMessage)))
    func builderReproducesImgtoolsUnsignedImage() throws {
        let program = try Corpus.bytes("derived/makecode-v2-8.0.18-small-heart.program-0x47000-0x48420.bin")
        let built = try MCUbootImage.build(
            application: program, version: MCUbootVersion(major: 1, minor: 2, revision: 3))
        #expect(built == (try Corpus.bytes("derived/mcuboot-makecode-v2-program-1.2.3.unsigned.bin")))
    }
}

@Suite struct MCUbootImgtoolTests {
    static let imgtool = ExternalTool.isInstalled("imgtool")

    @Test(.enabled(if: imgtool, "imgtool (pip install imgtool) not installed: cross-check skipped"))
    func imgtoolVerifiesTheBuiltImageAndReportsTheSameHash() throws {
        let app = (0..<7000).map { UInt8(truncatingIfNeeded: $0 &* 97 &+ 3) }
        let bytes = try MCUbootImage.build(application: app, version: try #require(MCUbootVersion("2.7.1+42")))
        let dir = try ExternalTool.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("image.bin")
        try Data(bytes).write(to: file)
        let result = try ExternalTool.run("imgtool", ["verify", file.path])
        #expect(result.status == 0, "imgtool verify failed: \(result.output)")
        #expect(result.output.contains("Image was correctly validated"))
        #expect(result.output.contains("Image version: 2.7.1+42"))
        let hash = try #require(try MCUbootImage(bytes: bytes).reportedHash)
        #expect(result.output.contains("Image digest: " + hash.hexString.lowercased()))
    }

    @Test(.enabled(if: imgtool, "imgtool (pip install imgtool) not installed: cross-check skipped"))
    func builderMatchesImgtoolSignWithoutKey() throws {
        let app = (0..<4321).map { UInt8(truncatingIfNeeded: $0 &* 11 &+ 200) }
        let dir = try ExternalTool.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let input = dir.appendingPathComponent("app.bin"), output = dir.appendingPathComponent("signed.bin")
        try Data(app).write(to: input)
        let result = try ExternalTool.run(
            "imgtool",
            [
                "sign", "--header-size", "0x200", "--pad-header", "--version", "1.2.3+4",
                "--slot-size", "0x10000", input.path, output.path
            ])
        #expect(result.status == 0, "imgtool sign failed: \(result.output)")
        let theirs = [UInt8](try Data(contentsOf: output))
        let version = try #require(MCUbootVersion("1.2.3+4"))
        let mine = try MCUbootImage.build(application: app, version: version)
        #expect(theirs == mine)
    }
}
