import CBOR

/// Image group (1), command 1: one chunk of an image upload. The first
/// chunk (`offset` 0) also carries `length`, and usually `sha` (SHA-256 of
/// the whole file, the upload session's identity) and `image`; later chunks
/// carry only `off` and `data`.
public struct ImageUploadRequest: SMPRequest {
    public typealias Response = ImageUploadResponse
    public static let group = SMPGroup.image
    public static let command: UInt8 = 1
    public static let operation = SMPOperation.write
    public static let name = "image upload"

    /// Image number (`image`); nil leaves the key out (the device assumes 0).
    public var image: Int?
    /// Offset of this chunk (`off`).
    public var offset: Int
    /// The chunk (`data`).
    public var data: [UInt8]
    /// Total image size (`len`); first chunk only.
    public var length: Int?
    /// SHA-256 of the whole file (`sha`); first chunk only.
    public var sha: [UInt8]?
    /// Refuse unless the upload is newer than the running image (`upgrade`); first chunk only.
    public var upgrade: Bool?

    public init(
        image: Int? = nil, offset: Int, data: [UInt8], length: Int? = nil, sha: [UInt8]? = nil,
        upgrade: Bool? = nil
    ) {
        self.image = image
        self.offset = offset
        self.data = data
        self.length = length
        self.sha = sha
        self.upgrade = upgrade
    }

    /// The first chunk of an upload.
    public static func first(
        data: [UInt8], imageLength: Int, sha: [UInt8]?, image: Int? = nil,
        upgrade: Bool? = nil
    ) -> ImageUploadRequest {
        .init(image: image, offset: 0, data: data, length: imageLength, sha: sha, upgrade: upgrade)
    }

    public var payload: CBOR {
        payloadMap([
            ("image", image.map { .int($0) }), ("off", .int(offset)), ("data", .byteString(data)),
            ("len", length.map { .int($0) }), ("sha", sha.map { .byteString($0) }),
            ("upgrade", upgrade.map { .boolean($0) })
        ])
    }
    public init(payload: CBOR) throws(SMPError) {
        let f = try PayloadFields(payload, message: Self.name + " request")
        image = try f.unsigned("image")
        offset = try f.required("off", f.unsigned)
        data = try f.required("data", f.bytes)
        length = try f.unsigned("len")
        sha = try f.bytes("sha")
        upgrade = try f.bool("upgrade")
    }
}

/// The answer to an upload chunk: `{"off": next offset}`, plus `"match"`
/// (did the SHA-256 of the written slot equal `sha`) after the last chunk.
public struct ImageUploadResponse: SMPResponse {
    public static let group = SMPGroup.image
    public static let command: UInt8 = 1
    public static let name = "image upload"

    /// Bytes written so far: the offset to send next.
    public var offset: Int?
    public var match: Bool?
    public init(offset: Int?, match: Bool? = nil) {
        self.offset = offset
        self.match = match
    }

    public var payload: CBOR { payloadMap([("off", offset.map { .int($0) }), ("match", match.map { .boolean($0) })]) }
    public init(payload: CBOR) throws(SMPError) {
        let f = try PayloadFields(payload, message: Self.name + " response")
        offset = try f.unsigned("off")
        match = try f.bool("match")
    }
}

/// Image group (1), command 5: erase a slot (`slot` absolute; the device's default is 1).
public struct ImageEraseRequest: SMPRequest {
    public typealias Response = ImageEraseResponse
    public static let group = SMPGroup.image
    public static let command: UInt8 = 5
    public static let operation = SMPOperation.write
    public static let name = "image erase"

    public var slot: Int?
    public init(slot: Int? = nil) { self.slot = slot }

    public var payload: CBOR { payloadMap([("slot", slot.map { .int($0) })]) }
    public init(payload: CBOR) throws(SMPError) {
        let f = try PayloadFields(payload, message: Self.name + " request")
        slot = try f.unsigned("slot")
    }
}

/// The answer to `ImageEraseRequest`: an empty map.
public struct ImageEraseResponse: SMPResponse {
    public static let group = SMPGroup.image
    public static let command: UInt8 = 5
    public static let name = "image erase"
    public init() {}
    public var payload: CBOR { [:] }
    public init(payload: CBOR) throws(SMPError) {
        _ = try PayloadFields(payload, message: Self.name + " response")
    }
}
