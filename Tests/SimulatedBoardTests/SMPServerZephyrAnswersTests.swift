import CBOR
import FirmwareImage
import SMP
import Testing
@testable import SimulatedBoard

/// The simulated SMP server's answers, byte by byte and key by key, against what Zephyr's
/// img_mgmt and os_mgmt send in a default single-image build, as docs/protocols/mcumgr-smp.md §6
/// describes them from the Zephyr sources (`img_mgmt_state.c`, `img_mgmt.c`, `smp.c`,
/// `os_mgmt.c`): indefinite-length maps and lists, no `rc` on success, image-state entries with
/// exactly `slot, version, hash, bootable, pending, confirmed, active, permanent` and no
/// `image`, `splitStatus` 0 after the list, `off` (and `match` on the last chunk only) for
/// uploads, an empty map for reset, `err {group, rc}` to v2 and a translated `rc` to v1.
@Suite struct SMPServerZephyrAnswersTests {
    static let entryKeys = ["slot", "version", "hash", "bootable", "pending", "confirmed", "active", "permanent"]

    /// The payload bytes of the answer to `request` (the header checked against it).
    static func payload<R: SMPRequest>(
        _ bench: inout SMPServerTests.Bench, _ request: R, version: SMPVersion = .v2,
        sequence: UInt8 = 7
    ) throws -> [UInt8] {
        let frame = try bench.send(request, version: version, sequence: sequence)
        let bytes = try #require(bench.lastAnswer)
        #expect(Int(frame.header.length) == bytes.count - 8)
        return Array(bytes.dropFirst(8))
    }

    /// A text key as CBOR writes it.
    static func key(_ text: String) -> [UInt8] { [0x60 + UInt8(text.utf8.count)] + Array(text.utf8) }

    /// One image-state entry written out by hand, key by key, in Zephyr's order.
    static func entry(
        slot: UInt8, version: String, hash: [UInt8], pending: Bool, confirmed: Bool, active: Bool,
        permanent: Bool
    ) -> [UInt8] {
        func flag(_ b: Bool) -> UInt8 { b ? 0xF5 : 0xF4 }
        return [0xBF] + key("slot") + [slot] + key("version") + key(version) + key("hash") + [0x58, 0x20] + hash
            + key("bootable") + [0xF5] + key("pending") + [flag(pending)] + key("confirmed") + [flag(confirmed)]
            + key("active") + [flag(active)] + key("permanent") + [flag(permanent)] + [0xFF]
    }

    static func stateBody(_ entries: [[UInt8]]) -> [UInt8] {
        [0xBF] + key("images") + [0x9F] + entries.flatMap { $0 } + [0xFF] + key("splitStatus") + [0x00, 0xFF]
    }

    /// The keys of each map in the `images` list and at the top, in the order written.
    static func keys(_ body: [UInt8]) throws -> (top: [String], entries: [[String]]) {
        let item = try CBORDecoder().decode(body)
        guard case let .map(pairs) = item else { return ([], []) }
        let top = pairs.compactMap(\.key.stringValue)
        let list = item["images"]?.arrayValue ?? []
        let entries = list.map { entry -> [String] in
            guard case let .map(p) = entry else { return [] }
            return p.compactMap(\.key.stringValue)
        }
        return (top, entries)
    }

    @Test func imageStateEntriesHaveZephyrsKeysInZephyrsOrderAndNoImageKey() throws {
        var bench = try SMPServerTests.Bench()
        let (old, new) = try SMPFixture.images(magicAt: 0x20000, programLength: 0x1000)
        // A fresh board: one entry (the empty secondary slot is left out), 134 bytes (docs/protocols/mcumgr-smp.md §6.5).
        let first = try Self.payload(&bench, ImageStateReadRequest())
        let running = Self.entry(
            slot: 0, version: "1.0.0", hash: old.hash, pending: false, confirmed: true, active: true, permanent: false)
        #expect(first == Self.stateBody([running]))
        #expect(first.count == 134)
        let (top, entries) = try Self.keys(first)
        #expect(top == ["images", "splitStatus"] && entries == [Self.entryKeys])

        // After the upload: the new image in slot 1, every flag false but bootable.
        try Self.upload(&bench, new)
        let uploaded = Self.entry(
            slot: 1, version: "2.1.3.4", hash: new.hash, pending: false, confirmed: false, active: false,
            permanent: false)
        #expect(try Self.payload(&bench, ImageStateReadRequest()) == Self.stateBody([running, uploaded]))

        // Test: the state write answers the whole new state; slot 1 is pending.
        let tested = Self.entry(
            slot: 1, version: "2.1.3.4", hash: new.hash, pending: true, confirmed: false, active: false,
            permanent: false)
        #expect(
            try Self.payload(&bench, ImageStateWriteRequest.test(hash: new.hash)) == Self.stateBody([running, tested]))
        // Testing it again changes nothing and succeeds; confirming while a test is set is refused (28).
        #expect(
            try Self.payload(&bench, ImageStateWriteRequest.test(hash: new.hash)) == Self.stateBody([running, tested]))
        #expect(try Self.payload(&bench, ImageStateWriteRequest.confirm()) == Self.groupError(28))

        // Reset: an empty map, then the swap. The new image runs under test, the old one waits confirmed.
        #expect(try Self.payload(&bench, ResetRequest()) == [0xBF, 0xFF])
        bench.reboot()
        let underTest = Self.entry(
            slot: 0, version: "2.1.3.4", hash: new.hash, pending: false, confirmed: false, active: true,
            permanent: false)
        let revertTo = Self.entry(
            slot: 1, version: "1.0.0", hash: old.hash, pending: false, confirmed: true, active: false, permanent: false)
        #expect(try Self.payload(&bench, ImageStateReadRequest()) == Self.stateBody([underTest, revertTo]))
        // Any test now is refused (28); confirming the running image (no hash) takes.
        #expect(try Self.payload(&bench, ImageStateWriteRequest.test(hash: old.hash)) == Self.groupError(28))
        let confirmed = Self.entry(
            slot: 0, version: "2.1.3.4", hash: new.hash, pending: false, confirmed: true, active: true, permanent: false
        )
        let previous = Self.entry(
            slot: 1, version: "1.0.0", hash: old.hash, pending: false, confirmed: false, active: false, permanent: false
        )
        #expect(try Self.payload(&bench, ImageStateWriteRequest.confirm()) == Self.stateBody([confirmed, previous]))

        // Confirming the image in slot 1 marks it pending and permanent.
        let permanent = Self.entry(
            slot: 1, version: "1.0.0", hash: old.hash, pending: true, confirmed: false, active: false, permanent: true)
        #expect(
            try Self.payload(&bench, ImageStateWriteRequest.confirm(hash: old.hash))
                == Self.stateBody([confirmed, permanent]))
        #expect(try Self.payload(&bench, ImageStateWriteRequest.test(hash: new.hash)) == Self.groupError(33))
    }

    /// Uploads `image` in 2,000-byte chunks and checks every answer's bytes.
    static func upload(_ bench: inout SMPServerTests.Bench, _ image: SimulatedMCUbootImage) throws {
        let bytes = image.bytes
        var offset = 0
        while offset < bytes.count {
            let end = min(bytes.count, offset + 2_000)
            var request = ImageUploadRequest(offset: offset, data: Array(bytes[offset..<end]))
            if offset == 0 {
                request.length = bytes.count
                request.sha = image.fileSHA256
            }
            let body = try payload(&bench, request)
            // `{"off": end}`, with `"match": true` after the last chunk only (image check on).
            var expected: [UInt8] = [0xBF] + key("off") + CBOR.int(end).encoded()
            if end == bytes.count { expected += key("match") + [0xF5] }
            #expect(body == expected + [0xFF], "answer at offset \(offset)")
            offset = end
        }
    }

    /// `{"err": {"group": 1, "rc": rc}}`, the SMP v2 form of an image-group error.
    static func groupError(_ rc: UInt8) -> [UInt8] {
        [0xBF] + key("err") + [0xBF] + key("group") + [0x01] + key("rc") + CBOR.int(Int(rc)).encoded() + [0xFF, 0xFF]
    }

    @Test func uploadAnswersOffsetsAndMatchOnlyWhereZephyrDoes() throws {
        var bench = try SMPServerTests.Bench()
        let (_, new) = try SMPFixture.images(magicAt: 0x20000, programLength: 0x1000)
        let head = Array(new.bytes.prefix(1_000))
        // A first chunk, then a chunk at the wrong offset: dropped, answered with the offset expected.
        let first = ImageUploadRequest.first(data: head, imageLength: new.bytes.count, sha: new.fileSHA256)
        #expect(try Self.payload(&bench, first) == [0xBF] + Self.key("off") + [0x19, 0x03, 0xE8, 0xFF])
        let wrong = ImageUploadRequest(offset: 5_000, data: [1, 2, 3])
        #expect(try Self.payload(&bench, wrong) == [0xBF] + Self.key("off") + [0x19, 0x03, 0xE8, 0xFF])
        // The same `sha` at offset 0 continues the session where it stands.
        #expect(try Self.payload(&bench, first) == [0xBF] + Self.key("off") + [0x19, 0x03, 0xE8, 0xFF])
        // A chunk past the announced length ends the session (31); the next chunk learns offset 0.
        let short = ImageUploadRequest.first(data: Array(head.prefix(100)), imageLength: 150, sha: [9, 9])
        #expect(try Self.payload(&bench, short) == [0xBF] + Self.key("off") + [0x18, 0x64, 0xFF])
        let overrun = ImageUploadRequest(offset: 100, data: [UInt8](repeating: 0, count: 51))
        #expect(try Self.payload(&bench, overrun) == Self.groupError(31))
        #expect(
            try Self.payload(&bench, ImageUploadRequest(offset: 100, data: [1])) == [0xBF] + Self.key("off") + [
                0x00, 0xFF
            ])

        // After a whole upload, a first chunk whose `sha` the slot already matches is answered at
        // once with the whole length and `match` (img_mgmt.c, IMAGE_CHECK).
        try Self.upload(&bench, new)
        let length = CBOR.int(new.bytes.count).encoded()
        #expect(try Self.payload(&bench, first) == [0xBF] + Self.key("off") + length + Self.key("match") + [0xF5, 0xFF])
    }

    @Test func errorsTakeTheFormOfTheRequestsVersion() throws {
        var bench = try SMPServerTests.Bench()
        let unknown = [UInt8](repeating: 0x42, count: 32)
        // HASH_NOT_FOUND (8): `err` to v2; to v1 the translation EUNKNOWN (1) (`img_mgmt_translate_error_code`).
        #expect(
            try Self.payload(&bench, ImageStateWriteRequest.test(hash: unknown), version: .v2) == Self.groupError(8))
        #expect(
            try Self.payload(&bench, ImageStateWriteRequest.test(hash: unknown), version: .v1) == [0xBF]
                + Self.key("rc") + [0x01, 0xFF])
        // A test without a hash: INVALID_HASH (24), EINVAL (3) in v1.
        #expect(
            try Self.payload(&bench, ImageStateWriteRequest(hash: nil, confirm: false), version: .v2)
                == Self.groupError(24))
        #expect(
            try Self.payload(&bench, ImageStateWriteRequest(hash: nil, confirm: false), version: .v1) == [0xBF]
                + Self.key("rc") + [0x03, 0xFF])
        // No handler: `{"rc": 8}` in both versions.
        for version in [SMPVersion.v1, .v2] {
            #expect(
                try Self.payload(&bench, ImageEraseResponseProbe(), version: version) == [0xBF] + Self.key("rc") + [
                    0x08, 0xFF
                ])
        }
        // A request in a reserved SMP version: `{"rc": 13}` in a v2 header.
        var header = try SMPFrame(request: ImageStateReadRequest(), sequence: 9).encoded()
        header[0] = (header[0] & 0b1110_0111) | (2 << 3)
        let answer = try #require(bench.write(header).first)
        #expect(answer[0] >> 3 & 0b11 == 1 && Array(answer.dropFirst(8)) == [0xBF] + Self.key("rc") + [0x0D, 0xFF])
    }

    @Test func theDeterministicEncodingRemainsAvailable() throws {
        var bench = try SMPServerTests.Bench()
        bench.server.configuration.payloadEncoding = .deterministic
        let body = try Self.payload(&bench, ResetRequest())
        #expect(body == [0xA0])
    }
}

/// A read of the image group's command 2 ("file", not in Zephyr): no handler answers it.
struct ImageEraseResponseProbe: SMPRequest {
    typealias Response = ImageEraseResponse
    static let group = SMPGroup.image
    static let command: UInt8 = 2
    static let operation = SMPOperation.read
    static let name = "image file"
    init() {}
    init(payload: CBOR) throws(SMPError) {}
    var payload: CBOR { [:] }
}
