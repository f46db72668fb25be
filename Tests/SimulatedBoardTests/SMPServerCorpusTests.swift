import FirmwareImage
import Foundation
import LinkModel
import McuMgr
import SMP
import Testing
import TestSupport
@testable import SimulatedBoard

/// Real MCUboot images of the shared corpus through the simulated server: its slot parser
/// against the corpus ground truth, and whole upgrades with the McuMgr client.
@Suite struct SMPServerCorpusTests {
    struct Entry {
        var file: String
        var bytes: [UInt8]
        var fileSHA256: [UInt8]
        var headerHash: [UInt8]
        var protectedTLVs: Int
    }

    static func hex(_ text: String) -> [UInt8] {
        var out: [UInt8] = []
        var chars = Array(text.utf8)
        if chars.count % 2 == 1 { chars.insert(UInt8(ascii: "0"), at: 0) }
        for i in stride(from: 0, to: chars.count, by: 2) {
            guard let b = UInt8(String(decoding: chars[i..<(i + 2)], as: UTF8.self), radix: 16) else { return [] }
            out.append(b)
        }
        return out
    }

    /// The corpus's MCUboot images with their ground truth.
    static func images() throws -> [Entry] {
        let analysis = try Corpus.analysis()
        var entries: [Entry] = []
        for section in ["real", "derived"] {
            let files = analysis[section] as? [String: Any] ?? [:]
            for (name, value) in files.sorted(by: { $0.key < $1.key }) {
                guard let info = value as? [String: Any], info["format"] as? String == "MCUboot image",
                    let sha = info["sha256"] as? String, let headerHash = info["sha256_of_hdr_plus_img"] as? String
                else { continue }
                entries.append(
                    Entry(
                        file: "\(section)/\(name)", bytes: try Corpus.bytes("\(section)/\(name)"),
                        fileSHA256: hex(sha), headerHash: hex(headerHash),
                        protectedTLVs: info["protected_tlv_size"] as? Int ?? 0))
            }
        }
        return entries
    }

    @Test(.enabled(if: Corpus.isAvailable, Comment(rawValue: Corpus.skipMessage)))
    func readsTheHashTLVOfEveryCorpusImage() throws {
        let entries = try Self.images()
        #expect(entries.count >= 6)
        for entry in entries {
            let info = try #require(
                SlotImageInfo(limit: entry.bytes.count) { offset, count in
                    offset + count <= entry.bytes.count ? Array(entry.bytes[offset..<(offset + count)]) : nil
                }, "\(entry.file)")
            // Without protected TLVs the hash TLV is SHA-256 over header and body.
            if entry.protectedTLVs == 0 { #expect(info.hash == entry.headerHash, "\(entry.file)") }
            #expect(info.totalSize <= entry.bytes.count, "\(entry.file)")
        }
    }

    @Test(.enabled(if: Corpus.isAvailable, Comment(rawValue: Corpus.skipMessage)))
    func upgradesTheBoardWithRealImagesOrRefusesThemClearly() throws {
        let (old, _) = try SMPFixture.images(magicAt: 0x20000, programLength: 0x1000)
        let slotSize = Int(SMPServerConfiguration.standard(for: SMPFixture.layout).slotSize)
        for entry in try Self.images() {
            var sim = Simulation(link: .fast)
            sim.recordsTrace = false
            let id = sim.addBoard(try SimulatedBoard.mcuMgrBoard(.microbitV2, primary: old.bytes))
            // The image's own SHA-256 TLV: the client checks it against the image before it sends anything.
            let hash = try #require(try MCUbootImage(bytes: entry.bytes).reportedHash, "\(entry.file)")
            let image = McuMgrUpgradeImage(bytes: entry.bytes, hash: hash, fileSHA256: entry.fileSHA256)
            let run = sim.run(
                McuMgrUpgrade(image: image, options: SMPFixture.options(fast: true)), on: id, deadline: .seconds(900))
            let board = try sim.board(id)
            let slot = try #require(board.smpServer).configuration.primarySlot
            if entry.bytes.count > slotSize {
                guard case let .failure(error) = run.outcome, let failure = error as? McuMgrFailure else {
                    Issue.record("\(entry.file): an image larger than the slot was not refused")
                    continue
                }
                #expect(failure.cause == .deviceRefused(command: "image upload", .group(.image(.invalidImageTooLarge))))
            } else if entry.protectedTLVs == 0 {
                let result = try run.outcome.get()
                #expect(result.finalSlots.first?.hash == entry.headerHash, "\(entry.file)")
                // The swap copies the image up to the end of its TLVs (a padded file's trailer stays behind).
                let info = try #require(
                    SlotImageInfo(limit: entry.bytes.count) { offset, count in
                        offset + count <= entry.bytes.count ? Array(entry.bytes[offset..<(offset + count)]) : nil
                    })
                #expect(
                    try board.readFlash(slot.lowerBound..<(slot.lowerBound + UInt32(info.totalSize)))
                        == Array(entry.bytes.prefix(info.totalSize)), "\(entry.file)")
            }
        }
    }
}
