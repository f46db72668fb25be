import Foundation
import Testing
import TestSupport
@testable import FirmwareImage

/// Every binary corpus file goes through the front door, `Firmware.parse`, and gives what
/// `analysis.json` (made by independent Python tools) says of it. The file lists come from
/// `analysis.json` itself, so a file added to the corpus is checked without a code change.
@Suite struct FirmwareCorpusTests {
    /// `analysis.json` entries as (`real/…` path, entry), for the formats given.
    static func entries(format: String) -> [String] {
        guard Corpus.isAvailable, let analysis = try? Corpus.analysis() else { return [] }
        var out: [String] = []
        for (group, files) in analysis {
            for (name, entry) in (files as? [String: Any]) ?? [:]
            where (entry as? [String: Any])?["format"] as? String == format {
                out.append("\(group)/\(name)")
            }
        }
        return out.sorted()
    }

    static func entry(_ path: String) throws -> [String: Any] {
        let parts = path.split(separator: "/").map(String.init)
        let group = try #require(try Corpus.analysis()[parts[0]] as? [String: Any])
        return try #require(group[parts[1]] as? [String: Any])
    }

    static func number(_ any: Any?) -> UInt32? {
        if let i = any as? Int { return UInt32(exactly: i) }
        guard let s = any as? String, s.hasPrefix("0x") else { return nil }
        return UInt32(s.dropFirst(2), radix: 16)
    }

    @Test(.enabled(if: Corpus.isAvailable, Comment(rawValue: Corpus.skipMessage)))
    func theCorpusHasFilesOfEveryBinaryFormat() {
        #expect(Self.entries(format: "UF2").count >= 5)
        #expect(Self.entries(format: "MCUboot image").count >= 8)
    }

    @Test(.enabled(if: Corpus.isAvailable, Comment(rawValue: Corpus.skipMessage)), arguments: entries(format: "UF2"))
    func everyUF2ReadsThroughTheFrontDoorAsAnalysed(path: String) throws {
        let truth = try Self.entry(path)
        let firmware = try Firmware.parse(try Corpus.bytes(path), fileName: path)
        #expect(firmware.format == .uf2)
        let families = try #require(truth["families"] as? [String: Int])
        #expect(Set(firmware.uf2FamilyIDs.map { String(format: "0x%08X", $0) }) == Set(families.keys))
        let section = try #require(firmware.sections.first)
        #expect(firmware.sections.count == 1)
        #expect(section.image.byteCount == truth["data_bytes"] as? Int)
        let span = try #require(section.image.span)
        #expect(span.lowerBound == Self.number(truth["lowest_addr"]))
        #expect(span.upperBound - 1 == Self.number(truth["highest_addr"]))
        // The nRF52833 family ID makes the section a micro:bit V2 one.
        #expect((section.family == .nrf52833) == families.keys.contains("0x621E937A"))
        if let magic = Self.number(truth["makecode_magic_addr"]), let hash8 = truth["makecode_hash8"] as? String {
            let program = try MakeCodeProgram.locate(in: try firmware.image(for: .microbitV2), family: .nrf52833)
            #expect(program.magicAddress == magic)
            #expect(program.runtimeHash.hexString == hash8)
        } else {
            #expect(MakeCodeProgram.find(in: section.image, family: section.family ?? .nrf52833) == nil)
        }
    }

    @Test(
        .enabled(if: Corpus.isAvailable, Comment(rawValue: Corpus.skipMessage)),
        arguments: entries(format: "MCUboot image"))
    func everyMCUbootImageReadsThroughTheFrontDoorAsAnalysed(path: String) throws {
        let truth = try Self.entry(path)
        let firmware = try Firmware.parse(try Corpus.bytes(path), fileName: path)
        #expect(firmware.format == .mcuboot)
        let image = try #require(firmware.mcuboot)
        #expect(image.version.description == truth["version"] as? String)
        #expect(UInt32(image.header.headerSize) == Self.number(truth["hdr_size"]))
        #expect(image.header.imageSize == Self.number(truth["img_size"]))
        #expect(image.hashCheck == .valid)
        if image.header.protectedTLVSize == 0 {
            #expect(image.reportedHash?.hexString.lowercased() == truth["sha256_of_hdr_plus_img"] as? String)
        }
        // The section is the body at the load address: one run of img_size bytes.
        let section = try #require(firmware.sections.first)
        let load = try #require(Self.number(truth["load_addr"]))
        #expect(section.image.runs == [load..<(load + image.header.imageSize)])
        #expect(section.image.read(section.image.runs[0]) == Array(image.body))
    }

    /// The signed `.hex` twins hold the same MCUboot image (header, body, hash) at their slot address.
    @Test(
        .enabled(if: Corpus.isAvailable, Comment(rawValue: Corpus.skipMessage)),
        arguments: [
            ("real/mcuboot-zephyr-hello_world.signed.hex", "real/mcuboot-zephyr-hello_world.signed.bin"),
            (
                "derived/mcuboot-makecode-v2-program-1.2.3.ed25519.signed.hex",
                "derived/mcuboot-makecode-v2-program-1.2.3.ed25519.signed.bin"
            )
        ])
    func signedHexFilesHoldTheSignedImage(hex: String, bin: String) throws {
        let firmware = try Firmware.parse(try Corpus.bytes(hex), fileName: hex)
        #expect(firmware.format == .intelHex)
        let image = try #require(firmware.sections.first?.image)
        let span = try #require(image.span)
        let fromHex = try MCUbootImage(bytes: image.read(span))
        let fromBin = try #require(try Firmware.parse(try Corpus.bytes(bin), fileName: bin).mcuboot)
        #expect(fromHex.hashCheck == .valid)
        // Signatures may differ (RSA-PSS is randomised); the hashed part may not.
        #expect(fromHex.reportedHash == fromBin.reportedHash)
        #expect(fromHex.header == fromBin.header)
        #expect(fromHex.body == fromBin.body)
    }

    /// Files that are none of the formats are refused with a message, not read as garbage.
    @Test(
        .enabled(if: Corpus.isAvailable, Comment(rawValue: Corpus.skipMessage)),
        arguments: entries(format: "not Intel HEX"))
    func filesOfNoFormatAreRefusedWithAMessage(path: String) throws {
        let name = String(path.split(separator: "/").last!)
        do {
            let firmware = try Firmware.parse(try Corpus.bytes(path), fileName: name)
            Issue.record("\(path) was read as \(firmware.format.displayName)")
        } catch let error as FirmwareImageError {
            if name.hasSuffix(".hex") {
                #expect(error.position == TextPosition(line: 1, column: 1), "\(error)")
            } else {
                #expect(error.message.hasPrefix("\(name): not a firmware file this tool reads"), "\(error)")
            }
        }
    }
}
