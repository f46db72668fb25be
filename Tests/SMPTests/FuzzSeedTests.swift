import Foundation
import Testing
import TestSupport
import CBOR
@testable import SMP

/// Seeds of the protocol fuzz targets (`cbor`, `smp`, `partial-flow`, `mcumgr-flow`), made
/// here from the project's own encoders and event scripts. They live in
/// `Tests/Fuzz/Seeds/<target>/`; crash reproducers in `Tests/Fuzz/Regressions/<target>/`.
enum ProtocolFuzzSeeds {
    static let root = Corpus.repoRoot.appendingPathComponent("Tests/Fuzz")
    static let targets = ["cbor", "smp", "partial-flow", "mcumgr-flow"]

    static func seeds() throws -> [String: [String: [UInt8]]] {
        let slots = ImageStateResponse(images: [
            ImageSlotState(
                slot: 0, version: "1.2.3", hash: Array(repeating: 0xA5, count: 32), bootable: true,
                confirmed: true, active: true),
            ImageSlotState(slot: 1, version: "1.3.0", hash: (0..<32).map { UInt8($0) }, bootable: true, pending: true)
        ])
        let upload = ImageUploadRequest.first(
            data: (0..<40).map { UInt8($0 &* 3) }, imageLength: 4096,
            sha: Array(repeating: 0x11, count: 32))
        let mixed: CBOR = [
            "i": .negative(41), "f": .float(1.5), "h": .float(65504), "t": .tagged(1, .unsigned(1_700_000_000)),
            "a": [.null, .undefined, .boolean(true), .simple(16), .byteString([])], "big": .unsigned(UInt64.max)
        ]
        let request = SMPHeader(version: .v2, operation: .read, length: 0, group: .image, sequence: 7, command: 0)
        let state = try SMPFrame(response: slots, to: request).encoded()
        let error = try SMPFrame(error: .returnCode(SMPReturnCode(rawValue: 6), reason: "busy"), to: request).encoded()
        let uploadFrame = try SMPFrame(request: upload, sequence: 9).encoded()
        let ack = try SMPFrame(
            response: ImageUploadResponse(offset: 40), to: SMPFrame(request: upload, sequence: 9).header
        ).encoded()

        // Flow scripts (see the harnesses): one byte picks each event; 0x01 answers as a board would.
        let partialHappy: [UInt8] =
            [0, 0] + Array(repeating: [0x01, 0x00], count: 90).flatMap { $0 } + [0x03, 0x04, 0x01, 0x00]
        let partialUpToDate: [UInt8] = [1, 0, 0x01, 0x00, 0x01, 0x00, 0x01, 0x40, 0x01, 0x00]
        let timersOnly: [UInt8] = [0, 0] + Array(repeating: [0x02, 0x00], count: 40).flatMap { $0 }
        let mcumgrHappy: [UInt8] =
            [0, 3] + [0x01, 0x00, 0x02, 0x3F, 0x01, 0x00, 0x00, 0x3F]
            + Array(repeating: [0x01, 0x00, 0x00, 0x3F], count: 12).flatMap { $0 }
            + [0x01, 0x00, 0x01, 0x3F, 0x03, 0x04, 0x01, 0x00, 0x02, 0x3F, 0x01, 0x00, 0x03, 0x3F]
        let mcumgrHostile: [UInt8] =
            [0x12, 0] + [
                0x01, 0x0B, 0x02, 0x05, 0x01, 0x13, 0x00, 0x07, 0x01, 0x23, 0x00, 0x09,
                0x02, 0x00, 0x01, 0x33, 0x00, 0x01, 0x00, 0x05, 0xFF, 0x01, 0x02
            ]
        return [
            "cbor": [
                "image-state.cbor": slots.payload.encoded(), "upload.cbor": upload.payload.encoded(),
                "mixed.cbor": mixed.encoded(),
                "indefinite.cbor": [0x9F, 0x5F, 0x41, 0x01, 0xFF, 0x7F, 0x61, 0x61, 0xFF, 0xFF]
            ],
            "smp": [
                "state-response.smp": [0x05] + state, "error-response.smp": [0x10] + error,
                "upload-and-ack.smp": [0x2A] + uploadFrame + ack
            ],
            "partial-flow": [
                "happy.script": partialHappy, "up-to-date.script": partialUpToDate, "timers.script": timersOnly
            ],
            "mcumgr-flow": ["happy.script": mcumgrHappy, "hostile.script": mcumgrHostile]
        ]
    }

    static func files(in folder: String, target: String) -> [(name: String, bytes: [UInt8])] {
        let dir = root.appendingPathComponent("\(folder)/\(target)")
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []).sorted()
        return names.filter { !$0.hasPrefix(".") }.compactMap { name in
            FileManager.default.contents(atPath: dir.appendingPathComponent(name).path).map { (name, [UInt8]($0)) }
        }
    }
}

@Suite struct ProtocolFuzzSeedTests {
    /// The committed seeds are what the generators make today. Rewrite them with
    /// BITFLASH_WRITE_FUZZ_SEEDS=1 after a deliberate change.
    @Test func committedProtocolSeedsMatchTheGenerators() throws {
        let seeds = try ProtocolFuzzSeeds.seeds()
        if ProcessInfo.processInfo.environment["BITFLASH_WRITE_FUZZ_SEEDS"] == "1" {
            for (target, files) in seeds {
                let dir = ProtocolFuzzSeeds.root.appendingPathComponent("Seeds/\(target)")
                try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
                for (name, bytes) in files { try Data(bytes).write(to: dir.appendingPathComponent(name)) }
            }
        }
        for target in ProtocolFuzzSeeds.targets {
            let committed = ProtocolFuzzSeeds.files(in: "Seeds", target: target)
            #expect(
                committed.map(\.name) == seeds[target, default: [:]].keys.sorted(),
                "Seeds/\(target) differs from the generator")
            for file in committed {
                #expect(seeds[target]?[file.name] == file.bytes, "Seeds/\(target)/\(file.name) is stale")
            }
        }
    }

    @Test func cborSeedsDecodeAndReencodeToTheSameBytes() throws {
        for (name, bytes) in try ProtocolFuzzSeeds.seeds()["cbor", default: [:]] where name != "indefinite.cbor" {
            #expect(try CBORDecoder().decode(bytes).encoded() == bytes, "\(name)")
        }
    }

    @Test func smpSeedsHoldCompleteFrames() throws {
        for (name, bytes) in try ProtocolFuzzSeeds.seeds()["smp", default: [:]] {
            var reassembler = SMPReassembler()
            #expect(try !reassembler.decode(bytes.dropFirst()).isEmpty, "\(name)")
            #expect(reassembler.bufferedByteCount == 0, "\(name)")
        }
    }

    /// Every committed CBOR and SMP input (seeds and crash reproducers) decodes or throws
    /// the layer's error; the decoders never trap.
    @Test func protocolFuzzInputsNeverCrashTheDecoders() throws {
        for folder in ["Seeds", "Regressions"] {
            for file in ProtocolFuzzSeeds.files(in: folder, target: "cbor") {
                if let item = try? CBORDecoder().decode(file.bytes) {
                    #expect(throws: Never.self, "\(folder)/cbor/\(file.name)") {
                        try CBORDecoder().decode(item.encoded())
                    }
                }
            }
            for file in ProtocolFuzzSeeds.files(in: folder, target: "smp") {
                var reassembler = SMPReassembler()
                _ = try? reassembler.decode(file.bytes.dropFirst())
                _ = try? SMPFrame(bytes: file.bytes)
            }
        }
    }
}
