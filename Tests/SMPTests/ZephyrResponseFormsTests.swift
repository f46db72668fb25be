import CBOR
import SMP
import Testing

/// The client reads every form real McuMgr servers send: Zephyr's zcbor encoding
/// (indefinite-length maps and lists, keys in its order), the deterministic encoding, the
/// multi-image `image` key, frugal lists, legacy `"rc": 0` on success, and both error forms.
@Suite struct ZephyrResponseFormsTests {
    static func key(_ text: String) -> [UInt8] { [0x60 + UInt8(text.utf8.count)] + Array(text.utf8) }
    static let hash = (0..<32).map { UInt8($0) }

    /// A Zephyr single-image state answer, written out by hand (indefinite lengths, Zephyr's order).
    static let zephyrState: [UInt8] =
        [0xBF] + key("images") + [0x9F, 0xBF] + key("slot") + [0x00] + key("version") + key("1.0.0")
        + key("hash") + [0x58, 0x20] + hash + key("bootable") + [0xF5] + key("pending") + [0xF4] + key("confirmed") + [
            0xF5
        ]
        + key("active") + [0xF5] + key("permanent") + [0xF4] + [0xFF, 0xFF] + key("splitStatus") + [0x00, 0xFF]

    static func response(_ payload: [UInt8], command: UInt8) throws -> SMPFrame {
        let header = SMPHeader(
            version: .v2, operation: .readResponse, length: UInt16(payload.count), group: .image,
            sequence: 1, command: command)
        return try SMPFrame(bytes: header.bytes + payload)
    }

    @Test func readsZephyrsIndefiniteLengthStateAnswer() throws {
        let state = try Self.response(Self.zephyrState, command: 0).response(as: ImageStateResponse.self)
        #expect(state.splitStatus == 0)
        #expect(
            state.images == [
                ImageSlotState(
                    slot: 0, version: "1.0.0", hash: Self.hash, bootable: true, confirmed: true, active: true)
            ])
    }

    @Test func readsTheSameAnswerEncodedDeterministicallyAndWithTheImageKey() throws {
        let entry: CBOR = ["image": 0, "slot": 1, "version": "2.0.0", "hash": .byteString(Self.hash), "pending": true]
        let state = try Self.response(CBOR.map([.init("images", [entry])]).encoded(), command: 0).response(
            as: ImageStateResponse.self)
        #expect(state.splitStatus == nil)
        #expect(state.images == [ImageSlotState(image: 0, slot: 1, version: "2.0.0", hash: Self.hash, pending: true)])
    }

    @Test func readsUploadAnswersWithAndWithoutMatchAndLegacyRC() throws {
        let plain = [0xBF] + Self.key("off") + [0x19, 0x10, 0x00, 0xFF]
        #expect(
            try Self.response(plain, command: 1).response(as: ImageUploadResponse.self)
                == ImageUploadResponse(offset: 4096))
        let last = [0xBF] + Self.key("off") + [0x19, 0x10, 0x00] + Self.key("match") + [0xF4, 0xFF]
        #expect(
            try Self.response(last, command: 1).response(as: ImageUploadResponse.self)
                == ImageUploadResponse(offset: 4096, match: false))
        // CONFIG_MCUMGR_SMP_LEGACY_RC_BEHAVIOUR: `"rc": 0` first, still a success.
        let legacy = [0xBF] + Self.key("rc") + [0x00] + Self.key("off") + [0x18, 0x20, 0xFF]
        #expect(
            try Self.response(legacy, command: 1).response(as: ImageUploadResponse.self)
                == ImageUploadResponse(offset: 32))
    }

    @Test func readsBothErrorForms() throws {
        let v2 =
            [0xBF] + Self.key("err") + [0xBF] + Self.key("group") + [0x01] + Self.key("rc") + [0x18, 0x1C, 0xFF, 0xFF]
        #expect(try Self.response(v2, command: 0).errorResponse() == .group(.image(.imageAlreadyPending)))
        let v1 = [0xBF] + Self.key("rc") + [0x06, 0xFF]
        #expect(try Self.response(v1, command: 0).errorResponse() == .returnCode(.badState))
    }

    @Test func zcborEncodingKeepsTheOrderWrittenAndDecodesToTheSameItems() throws {
        let payload = CBOR.textKeyedMap([
            ("slot", 0), ("version", "1.0.0"), ("hash", .byteString(Self.hash)),
            ("bootable", true), ("pending", false), ("confirmed", true), ("active", true),
            ("permanent", false)
        ])
        let response = CBOR.textKeyedMap([("images", [payload]), ("splitStatus", 0)])
        #expect(SMPPayloadEncoding.zcbor.encode(response) == Self.zephyrState)
        #expect(try CBORDecoder().decode(SMPPayloadEncoding.zcbor.encode(response)) == response)
    }
}
