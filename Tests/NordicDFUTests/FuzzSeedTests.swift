import Foundation
import NordicDFUFrames
import Testing
import TestSupport
@testable import NordicDFU

/// Seeds of the Nordic DFU fuzz targets (`nordic-frames`, `secure-dfu-flow`,
/// `legacy-dfu-flow`), made here from the project's own encoders and event scripts. They live
/// in `Tests/Fuzz/Seeds/<target>/`; crash reproducers in `Tests/Fuzz/Regressions/<target>/`.
enum NordicFuzzSeeds {
    static let root = Corpus.repoRoot.appendingPathComponent("Tests/Fuzz")
    static let targets = ["nordic-frames", "secure-dfu-flow", "legacy-dfu-flow"]

    /// Frames a board or a client sends, each read whole by every decoder of the target.
    static let frames: [String: [UInt8]] = [
        "secure-selected.bin": SecureDFUResponse.selected(maxSize: 4096, offset: 2048, crc: 0x1234_5678).bytes,
        "secure-checksum.bin": SecureDFUResponse.checksum(offset: 56, crc: 0xCAFE_F00D).bytes,
        "secure-extended-error.bin": SecureDFUResponse.failure(opcode: 0x04, result: 0x0B, extended: 0x05).bytes,
        "secure-create.bin": SecureDFURequest.create(.data, size: 4096).bytes,
        "buttonless-answer.bin": ButtonlessMessage.response(opcode: 0x01, result: ButtonlessMessage.success).bytes,
        "legacy-receipt.bin": LegacyDFUNotification.receipt(bytesReceived: 160).bytes,
        "legacy-image-size.bin": LegacyDFUNotification.imageSize(2348).bytes,
        "legacy-start.bin": LegacyDFURequest.start(mode: LegacyDFURequest.applicationMode).bytes,
        "legacy-sizes.bin": LegacyImageSizes(application: 2348).bytes,
        "legacy-init.bin": LegacyInitPacket(application: Array(0..<100)).bytes,
        "secure-init.bin": MicrobitAppInitPacket(application: Array(0..<100)).bytes,
        // An even first byte (nRF52833), two segments: 32 bytes at the application start,
        // 8 bytes 0x108 further on (address = anchor - 0x200 + u16, anchor 0 = the range start).
        "cut-two-segments.bin": [0x00, 0x02, 0x00, 0x00, 0x02, 0x20] + Array(0..<32)
            + [0x00, 0x08, 0x03, 0x08] + Array(repeating: 0xA5, count: 8)
    ]

    /// Flow scripts (see the harnesses): three setup bytes, then one byte per event;
    /// `01 00` answers as a faithful board would, `02 00` fires the earliest timer,
    /// `03` drops the link, `04` connects to the bootloader, `0C` to the application.
    static func scripts() -> [String: [String: [UInt8]]] {
        func answers(_ n: Int, _ variant: UInt8 = 0) -> [UInt8] {
            Array(repeating: [0x01, variant], count: n).flatMap { $0 }
        }
        // Options 0x90 0x1E: receipts every 12 (Secure) / 8 (legacy) packets, 2 attempts per
        // object, 5 connects, 12 timeouts, 9 link losses, 48 retries. 0x92: Secure receipts every packet.
        let secureFromApplication: [UInt8] =
            [0x90, 0x1E, 0x0C] + answers(1) + [0x03, 0x04] + answers(8) + [0x02, 0x00] + answers(4)
        let secureFromBootloader: [UInt8] = [0x92, 0x1E, 0x11] + answers(8) + [0x02, 0x00] + answers(60)
        let secureHostile: [UInt8] =
            [0x90, 0x1E, 0x1C] + answers(3) + [0x01, 0x01] + answers(3) + [0x01, 0x42]
            + answers(2) + [0x02, 0x00, 0x03, 0x04] + answers(3) + [0x01, 0x02, 0x01, 0x04] + answers(3)
            + [0x02, 0x80, 0x02, 0x00, 0x00, 0x03, 0x60, 0x01, 0x01] + answers(6)
        let legacyFromApplication: [UInt8] =
            [0x90, 0x1E, 0x00] + answers(1) + [0x04] + answers(2) + answers(16) + answers(2)
            + [0x01, 0x00, 0x0C]
        let legacyFromBootloader: [UInt8] =
            [0x90, 0x1E, 0x11] + answers(2) + answers(7) + answers(3) + [0x05, 0x05, 0x05]
        // Start refused (an unfinished transfer), a receipt behind, a link loss, an image-size report, a CRC error.
        let legacyHostile: [UInt8] =
            [0x90, 0x1E, 0x10] + answers(1, 0x01) + answers(1) + [0x04] + answers(4) + answers(1, 0x02)
            + answers(1) + [0x04] + answers(5) + [0x03, 0x04] + answers(2) + answers(1, 0x04) + answers(1) + [0x04]
            + answers(20) + answers(1, 0x01) + answers(1) + [0x04] + answers(25) + [0x0C]
        return [
            "secure-dfu-flow": [
                "from-application.script": secureFromApplication, "from-bootloader.script": secureFromBootloader,
                "hostile.script": secureHostile
            ],
            "legacy-dfu-flow": [
                "from-application.script": legacyFromApplication, "from-bootloader.script": legacyFromBootloader,
                "hostile.script": legacyHostile
            ]
        ]
    }

    static func seeds() -> [String: [String: [UInt8]]] {
        scripts().merging(["nordic-frames": frames]) { a, _ in a }
    }

    static func files(in folder: String, target: String) -> [(name: String, bytes: [UInt8])] {
        let dir = root.appendingPathComponent("\(folder)/\(target)")
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []).sorted()
        return names.filter { !$0.hasPrefix(".") }.compactMap { name in
            FileManager.default.contents(atPath: dir.appendingPathComponent(name).path).map { (name, [UInt8]($0)) }
        }
    }
}

@Suite struct NordicFuzzSeedTests {
    /// The committed seeds are what the generators make today. Rewrite them with
    /// BITFLASH_WRITE_FUZZ_SEEDS=1 after a deliberate change.
    @Test("the committed Nordic fuzz seeds are what the encoders make today")
    func committedSeedsMatchTheGenerators() throws {
        let seeds = NordicFuzzSeeds.seeds()
        if ProcessInfo.processInfo.environment["BITFLASH_WRITE_FUZZ_SEEDS"] == "1" {
            for (target, files) in seeds {
                let dir = NordicFuzzSeeds.root.appendingPathComponent("Seeds/\(target)")
                try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
                for (name, bytes) in files { try Data(bytes).write(to: dir.appendingPathComponent(name)) }
            }
        }
        for target in NordicFuzzSeeds.targets {
            let committed = NordicFuzzSeeds.files(in: "Seeds", target: target)
            #expect(
                committed.map(\.name) == seeds[target, default: [:]].keys.sorted(),
                "Seeds/\(target) differs from the generator")
            for file in committed {
                #expect(seeds[target]?[file.name] == file.bytes, "Seeds/\(target)/\(file.name) is stale")
            }
        }
    }

    /// Every committed frame input (seeds and crash reproducers) decodes or throws
    /// `malformedFrame` in every decoder, and what decodes encodes back to the same bytes.
    @Test("Nordic fuzz inputs decode or fail with malformedFrame, and decoded frames re-encode to their bytes")
    func frameInputsNeverCrashTheDecoders() throws {
        var decodedFrames = 0
        for folder in ["Seeds", "Regressions"] {
            for file in NordicFuzzSeeds.files(in: folder, target: "nordic-frames") {
                let b = file.bytes
                func check<T: Equatable>(_ decode: ([UInt8]) throws -> T, _ encode: (T) -> [UInt8]) {
                    do {
                        let value = try decode(b)
                        #expect(encode(value) == b, "\(folder)/\(file.name) as \(T.self)")
                        decodedFrames += 1
                    } catch let error as NordicDFUError {
                        guard case .malformedFrame = error else { Issue.record("\(file.name): \(error)"); return }
                    } catch {
                        Issue.record("\(file.name): \(error) is not a NordicDFUError")
                    }
                }
                check(SecureDFURequest.init(bytes:), \.bytes)
                check(SecureDFUResponse.init(bytes:), \.bytes)
                check(ButtonlessMessage.init(bytes:), \.bytes)
                check(LegacyDFUNotification.init(bytes:), \.bytes)
                check(LegacyImageSizes.init(bytes:), \.bytes)
                check(MicrobitAppInitPacket.init(bytes:), \.bytes)
                check(LegacyInitPacket.init(bytes:), \.bytes)
            }
        }
        // Every frame seed but the cut input is some decoder's frame.
        #expect(decodedFrames >= NordicFuzzSeeds.frames.count - 1)
    }
}
