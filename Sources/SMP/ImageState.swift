import CBOR

/// One slot as reported by image state read/write (`images[]`).
/// Flags the device leaves out ("frugal list") decode as false.
public struct ImageSlotState: Sendable, Hashable {
    /// Image number; nil when the device supports a single image (then treat as 0).
    public var image: Int?
    /// 0 primary, 1 secondary.
    public var slot: Int
    /// "major.minor.revision[.build]".
    public var version: String
    /// The image's SHA-256 TLV (32 bytes); nil when the device omits it.
    public var hash: [UInt8]?
    public var bootable: Bool
    public var pending: Bool
    public var confirmed: Bool
    public var active: Bool
    public var permanent: Bool

    public init(
        image: Int? = nil, slot: Int, version: String, hash: [UInt8]?, bootable: Bool = false,
        pending: Bool = false, confirmed: Bool = false, active: Bool = false, permanent: Bool = false
    ) {
        self.image = image
        self.slot = slot
        self.version = version
        self.hash = hash
        self.bootable = bootable
        self.pending = pending
        self.confirmed = confirmed
        self.active = active
        self.permanent = permanent
    }

    /// The map of this slot; all five flags are always written (Zephyr's non-frugal form).
    public var payload: CBOR {
        payloadMap([
            ("image", image.map { .int($0) }), ("slot", .int(slot)), ("version", .textString(version)),
            ("hash", hash.map { .byteString($0) }), ("bootable", .boolean(bootable)),
            ("pending", .boolean(pending)), ("confirmed", .boolean(confirmed)),
            ("active", .boolean(active)), ("permanent", .boolean(permanent))
        ])
    }

    public init(payload: CBOR) throws(SMPError) {
        let f = try PayloadFields(payload, message: "image state entry")
        image = try f.unsigned("image")
        slot = try f.required("slot", f.unsigned)
        version = try f.required("version", f.text)
        hash = try f.bytes("hash")
        bootable = try f.bool("bootable") ?? false
        pending = try f.bool("pending") ?? false
        confirmed = try f.bool("confirmed") ?? false
        active = try f.bool("active") ?? false
        permanent = try f.bool("permanent") ?? false
    }
}

/// Image group (1), command 0, read: list the image slots (empty map).
public struct ImageStateReadRequest: SMPRequest {
    public typealias Response = ImageStateResponse
    public static let group = SMPGroup.image
    public static let command: UInt8 = 0
    public static let operation = SMPOperation.read
    public static let name = "image state read"
    public init() {}
    public var payload: CBOR { [:] }
    public init(payload: CBOR) throws(SMPError) {
        _ = try PayloadFields(payload, message: Self.name + " request")
    }
}

/// Image group (1), command 0, write: mark an image for test (`confirm`
/// false, `hash` required) or confirm one (`confirm` true; without a hash the
/// running image is confirmed). `confirm` is always written.
public struct ImageStateWriteRequest: SMPRequest {
    public typealias Response = ImageStateResponse
    public static let group = SMPGroup.image
    public static let command: UInt8 = 0
    public static let operation = SMPOperation.write
    public static let name = "image state write"

    public var hash: [UInt8]?
    public var confirm: Bool
    public init(hash: [UInt8]?, confirm: Bool) {
        self.hash = hash
        self.confirm = confirm
    }

    /// Boot the image with `hash` once, for test (reverts unless confirmed).
    public static func test(hash: [UInt8]) -> ImageStateWriteRequest { .init(hash: hash, confirm: false) }
    /// Make an image permanent: the one with `hash`, or the running one when nil.
    public static func confirm(hash: [UInt8]? = nil) -> ImageStateWriteRequest { .init(hash: hash, confirm: true) }

    public var payload: CBOR { payloadMap([("hash", hash.map { .byteString($0) }), ("confirm", .boolean(confirm))]) }
    public init(payload: CBOR) throws(SMPError) {
        let f = try PayloadFields(payload, message: Self.name + " request")
        hash = try f.bytes("hash")
        confirm = try f.bool("confirm") ?? false
    }
}

/// The answer to state read and state write: `{"images": [...], "splitStatus"?: int}`.
public struct ImageStateResponse: SMPResponse {
    public static let group = SMPGroup.image
    public static let command: UInt8 = 0
    public static let name = "image state"

    public var images: [ImageSlotState]
    /// Always 0 in Zephyr; nil when omitted.
    public var splitStatus: Int?
    public init(images: [ImageSlotState], splitStatus: Int? = nil) {
        self.images = images
        self.splitStatus = splitStatus
    }

    public var payload: CBOR {
        payloadMap([("images", .array(images.map(\.payload))), ("splitStatus", splitStatus.map { .int($0) })])
    }
    public init(payload: CBOR) throws(SMPError) {
        let f = try PayloadFields(payload, message: Self.name + " response")
        guard let list = payload["images"] else { throw .missingField("images", in: f.message) }
        guard let items = list.arrayValue else { throw .invalidField("images", expected: "an array", in: f.message) }
        var images: [ImageSlotState] = []
        for item in items { images.append(try ImageSlotState(payload: item)) }
        self.images = images
        splitStatus = try f.integer("splitStatus")
    }
}
