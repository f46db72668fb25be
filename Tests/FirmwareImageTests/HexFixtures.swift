import Foundation
import Testing
@testable import FirmwareImage

/// Realistic MakeCode-style images the tests build themselves: MBR, SoftDevice, runtime, the
/// program page (magic, runtime hash, program hash, program), bootloader and UICR, at the
/// addresses micro:bit builds use. Bytes are pseudo-random from a seed.
enum HexFixtures {
    struct Built {
        var image: MemoryImage
        var magicAddress: UInt32
        var runtimeHash: [UInt8]
        var programHash: [UInt8]
        var programEnd: UInt32
    }

    /// - Parameters:
    ///   - small: a few KiB per area instead of full-size areas (for exhaustive sweeps).
    ///   - falseMagicAt: also put the 16 magic bytes at this offset into the runtime (not page-aligned, like MakeCode 3.0.67).
    static func makeCode(
        _ family: ChipFamily, small: Bool = false, programSize: Int = 5152, seed: UInt64 = 1,
        falseMagicAt: Int? = nil
    ) -> Built {
        var rng = SplitMix64(seed: seed)
        func random(_ count: Int) -> [UInt8] { (0..<count).map { _ in UInt8(truncatingIfNeeded: rng.next()) } }
        func le32(_ v: UInt32) -> [UInt8] {
            [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 24)]
        }
        var m = MemoryImage()
        func put(_ bytes: [UInt8], _ at: UInt32) { try! m.write(bytes, at: at) }
        let layout = family.layout
        let page = family.pageSize
        let v1 = family == .nrf51
        // MBR (its first word tells nRF51 from nRF52 builds) and SoftDevice.
        put(le32(v1 ? 0x7C0 : 0x2000_0400) + random(small ? 0x100 : (v1 ? 0x7C0 : 0xB00) - 4), 0)
        put(random(small ? 0x400 : (v1 ? 0x15918 : 0x1A400)), 0x1000)
        // Runtime, then zeros up to one page past its page-aligned end (MakeCode's codeStartAddrPadded).
        var runtime = random(small ? 0x1234 : (v1 ? 0x1D123 : 0x2A0F0))
        // Its vector table: the stack at the top of the chip's RAM, the reset handler in the runtime.
        runtime.replaceSubrange(
            0..<8, with: le32(v1 ? 0x2000_4000 : 0x2002_0000) + le32(layout.applicationStart + 0x101))
        if let k = falseMagicAt { runtime.replaceSubrange(k..<(k + 16), with: MakeCodeProgram.magic) }
        put(runtime, layout.applicationStart)
        let runtimeEnd = layout.applicationStart + UInt32(runtime.count)
        let magic = (runtimeEnd & ~(page - 1)) + page
        put([UInt8](repeating: 0, count: Int(magic - runtimeEnd)), runtimeEnd)
        let runtimeHash = random(8)
        let h = random(4)
        let programHash = [h[0], 0, h[1], 0, h[2], 0, h[3], 0]
        put(MakeCodeProgram.magic + runtimeHash + programHash + random(programSize - 32), magic)
        // Bootloader, settings and UICR.
        if v1 {
            put(random(small ? 0x200 : 0x3874), 0x3C000)
            put(random(0x20), 0x3FC00)
            put(le32(0x3C000), 0x1000_1014)
        } else {
            put(random(small ? 0x200 : 0x63EC), 0x77000)
            put(random(small ? 0x123 : 0x1323), 0x7E000)
            put(le32(0x77000) + le32(0x7E000), 0x1000_1014)
        }
        return Built(
            image: m, magicAddress: magic, runtimeHash: runtimeHash, programHash: programHash,
            programEnd: magic + UInt32(programSize))
    }

    /// Text helpers for mutating files.
    static func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }
    static func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    /// Replaces every LF with CRLF.
    static func crlf(_ bytes: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count + bytes.count / 40)
        for b in bytes {
            if b == 0x0A { out.append(0x0D) }
            out.append(b)
        }
        return out
    }
}

/// Compares two images with a readable failure: the runs, then the first differing address.
func expectSameImage(
    _ actual: MemoryImage, _ expected: MemoryImage, _ label: String,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    guard actual != expected else { return }
    if actual.runs != expected.runs {
        Issue.record(
            "\(label): runs differ: \(actual.runs.map(describe)) vs expected \(expected.runs.map(describe))",
            sourceLocation: sourceLocation)
        return
    }
    for (a, e) in zip(actual.segments, expected.segments) where a.bytes != e.bytes {
        let k = a.bytes.indices.first { a.bytes[$0] != e.bytes[$0] } ?? 0
        Issue.record(
            "\(label): byte at 0x\(String(a.start + UInt32(k), radix: 16)) is \(a.bytes[k]), expected \(e.bytes[k])",
            sourceLocation: sourceLocation)
        return
    }
}

func describe(_ r: Range<UInt32>) -> String {
    "0x\(String(r.lowerBound, radix: 16))-0x\(String(r.upperBound, radix: 16))"
}
