import Crypto
import Foundation
import Testing
import TestSupport
@testable import FirmwareImage

/// A 3000-byte stand-in application with a recognisable pattern.
private let application: [UInt8] = (0..<3000).map { UInt8(truncatingIfNeeded: $0 &* 151 &+ 7) }

@Suite struct MCUbootImageTests {
    @Test func builtImageParsesWithValidHashAndItsFields() throws {
        let bytes = try MCUbootImage.build(
            application: application, loadAddress: 0, version: try #require(MCUbootVersion("1.2.3+4")))
        #expect(bytes.count == 0x200 + 3000 + 40)
        let image = try MCUbootImage(bytes: bytes)
        #expect(image.header.headerSize == 0x200)
        #expect(image.header.imageSize == 3000)
        #expect(image.header.protectedTLVSize == 0)
        #expect(image.version.description == "1.2.3+4")
        #expect(Array(image.body) == application)
        #expect(image.hashCheck == .valid)
        #expect(image.unprotectedTLVs.map(\.type) == [0x10])
        let expected = Array(SHA256.hash(data: Array(bytes[0..<(0x200 + 3000)])))
        #expect(image.reportedHash == expected)
    }

    @Test func headerEncodesBackToTheSameBytes() throws {
        let header = MCUbootHeader(
            loadAddress: 0x2024_0000, headerSize: 0x400, protectedTLVSize: 12, imageSize: 77176,
            flags: [.ramLoad], version: MCUbootVersion(major: 2, minor: 5, revision: 300, build: 70000))
        let decoded = try MCUbootHeader(decoding: header.encoded())
        #expect(decoded == header)
        #expect(header.encoded().prefix(4) == [0x3D, 0xB8, 0xF3, 0x96])
    }

    @Test func corruptedBodyByteIsReportedAsHashMismatch() throws {
        var bytes = try MCUbootImage.build(application: application, version: MCUbootVersion(major: 1))
        bytes[0x200 + 1234] ^= 0x01
        let image = try MCUbootImage(bytes: bytes)
        guard case let .mismatch(stored, computed) = image.hashCheck else {
            Issue.record("expected a hash mismatch, got \(image.hashCheck)")
            return
        }
        #expect(stored != computed)
        #expect(stored == image.reportedHash)
    }

    @Test func rejectsImageTruncatedInsideBody() throws {
        let bytes = try MCUbootImage.build(application: application, version: MCUbootVersion(major: 1))
        #expect(throws: FirmwareImageError.mcubootTruncated(size: 2000, needed: 0x200 + 3000, what: "header and body"))
        {
            try MCUbootImage(bytes: Array(bytes.prefix(2000)))
        }
    }

    @Test func rejectsImageTruncatedInsideTLVArea() throws {
        let bytes = try MCUbootImage.build(application: application, version: MCUbootVersion(major: 1))
        let cut = bytes.count - 10
        #expect(throws: FirmwareImageError.mcubootTruncated(size: cut, needed: bytes.count, what: "TLV area")) {
            try MCUbootImage(bytes: Array(bytes.prefix(cut)))
        }
    }

    @Test func rejectsWrongMagicAndLegacyMagic() throws {
        var bytes = try MCUbootImage.build(application: application, version: MCUbootVersion(major: 1))
        bytes[0] = 0x3C
        #expect(throws: FirmwareImageError.mcubootLegacyMagic) { try MCUbootImage(bytes: bytes) }
        bytes[0] = 0x00
        #expect(throws: FirmwareImageError.mcubootBadMagic(found: 0x96F3_B800)) { try MCUbootImage(bytes: bytes) }
        #expect(throws: FirmwareImageError.mcubootTruncated(size: 3, needed: 32, what: "header")) {
            try MCUbootImage(bytes: [0x3D, 0xB8, 0xF3])
        }
    }

    @Test func rejectsMissingTLVAreaMagic() throws {
        var bytes = try MCUbootImage.build(application: application, version: MCUbootVersion(major: 1))
        bytes[0x200 + 3000] = 0x00
        #expect(throws: FirmwareImageError.mcubootBadTLVArea(offset: 0x200 + 3000, expected: 0x6907, found: 0x6900)) {
            try MCUbootImage(bytes: bytes)
        }
    }

    @Test func rejectsTLVRunningPastItsArea() throws {
        var bytes = try MCUbootImage.build(application: application, version: MCUbootVersion(major: 1))
        bytes[0x200 + 3000 + 6] = 33  // SHA-256 TLV length 32 → 33
        #expect(throws: FirmwareImageError.mcubootTLVOverrun(offset: 0x200 + 3000 + 4, type: 0x10, length: 33)) {
            try MCUbootImage(bytes: bytes)
        }
    }

    @Test func readsProtectedAreaAndIncludesItInTheHash() throws {
        // Header announcing a 12-byte protected area holding a security counter TLV of 7.
        var header = MCUbootHeader(
            headerSize: 0x200, protectedTLVSize: 12, imageSize: UInt32(application.count),
            version: MCUbootVersion(major: 3))
        var bytes = header.encoded() + [UInt8](repeating: 0, count: 0x200 - 32) + application
        bytes += MCUbootTLV.encodeArea(.protected, [MCUbootTLV(area: .protected, type: 0x50, value: [7, 0, 0, 0])])
        let hash = Array(SHA256.hash(data: bytes))
        bytes += MCUbootTLV.encodeArea(.unprotected, [MCUbootTLV(area: .unprotected, type: 0x10, value: hash)])
        let image = try MCUbootImage(bytes: bytes + [UInt8](repeating: 0xFF, count: 100))
        #expect(image.protectedTLVs == [MCUbootTLV(area: .protected, type: 0x50, value: [7, 0, 0, 0])])
        #expect(image.hashCheck == .valid)
        #expect(image.length == bytes.count)

        header.protectedTLVSize = 16
        var wrong = bytes
        wrong.replaceSubrange(0..<32, with: header.encoded())
        #expect(throws: FirmwareImageError.mcubootProtectedSizeMismatch(header: 16, area: 12)) {
            try MCUbootImage(bytes: wrong)
        }
    }

    @Test func locatesImageInsideAMemoryImage() throws {
        let bytes = try MCUbootImage.build(application: application, version: MCUbootVersion(major: 1))
        var memory = MemoryImage()
        try memory.write(bytes, at: 0x27000)
        let (address, image) = try MCUbootImage.locate(in: memory)
        #expect(address == 0x27000)
        #expect(image.hashCheck == .valid)
        #expect(throws: FirmwareImageError.mcubootTruncated(size: 0, needed: 32, what: "header")) {
            try MCUbootImage.locate(in: MemoryImage())
        }
    }

    @Test func versionTextIsReadLikeImgtool() {
        #expect(MCUbootVersion("1.2.3+4") == MCUbootVersion(major: 1, minor: 2, revision: 3, build: 4))
        #expect(MCUbootVersion("2.0") == MCUbootVersion(major: 2))
        #expect(MCUbootVersion("1.2.3.4") == nil)
        #expect(MCUbootVersion("256.0.0") == nil)
        #expect(MCUbootVersion("1.x") == nil)
    }

    @Test func builderRefusesHeaderSmallerThan32Bytes() {
        #expect(throws: FirmwareImageError.mcubootCannotBuild("the header size 16 is below the 32-byte header")) {
            try MCUbootImage.build(application: application, version: MCUbootVersion(major: 1), headerSize: 16)
        }
    }
}
