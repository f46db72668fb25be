/// A group's error codes, numbered by their place in `table` (code n is `table[n]`),
/// with every other number kept as `unrecognized`.
protocol GroupErrorCodeTable: Hashable {
    /// (code, name without the group prefix, meaning), in code order.
    static var table: [(Self, String, String)] { get }
    static func unrecognized(_ value: UInt16) -> Self
    var unrecognizedValue: UInt16? { get }
}

extension GroupErrorCodeTable {
    static func code(_ raw: UInt16) -> Self {
        Int(raw) < table.count ? table[Int(raw)].0 : .unrecognized(raw)
    }

    var tableValue: UInt16 {
        unrecognizedValue ?? UInt16(Self.table.firstIndex(where: { $0.0 == self }) ?? 0)
    }

    /// (name, meaning), or nil for an unrecognized code.
    var entry: (String, String)? {
        guard unrecognizedValue == nil else { return nil }
        return Self.table.first(where: { $0.0 == self }).map { ($0.1, $0.2) }
    }
}

/// OS group (0) error codes of SMP v2 `err` maps (OS_MGMT_ERR_*).
public enum OSManagementErrorCode: Sendable, Hashable, GroupErrorCodeTable {
    case ok, unknown, invalidFormat, queryYieldsNoAnswer, rtcNotSet, rtcCommandFailed, queryResponseValueNotValid
    /// Any other value, kept as is.
    case unrecognized(UInt16)

    static let table: [(OSManagementErrorCode, String, String)] = [
        (.ok, "OK", "success"),
        (.unknown, "UNKNOWN", "unknown error"),
        (.invalidFormat, "INVALID_FORMAT", "the requested format is not valid"),
        (.queryYieldsNoAnswer, "QUERY_YIELDS_NO_ANSWER", "the query was not recognised"),
        (.rtcNotSet, "RTC_NOT_SET", "the real-time clock is not set"),
        (.rtcCommandFailed, "RTC_COMMAND_FAILED", "the real-time clock command failed"),
        (.queryResponseValueNotValid, "QUERY_RESPONSE_VALUE_NOT_VALID", "the query's answer is not valid")
    ]

    public init(rawValue: UInt16) { self = Self.code(rawValue) }
    public var rawValue: UInt16 { tableValue }
    var unrecognizedValue: UInt16? { if case let .unrecognized(v) = self { v } else { nil } }
}

/// Image group (1) error codes of SMP v2 `err` maps (IMG_MGMT_ERR_*).
public enum ImageManagementErrorCode: Sendable, Hashable, GroupErrorCodeTable {
    case ok, unknown, flashConfigQueryFail, noImage, noTLVs, invalidTLV, tlvMultipleHashesFound, tlvInvalidSize
    case hashNotFound, noFreeSlot, flashOpenFailed, flashReadFailed, flashWriteFailed, flashEraseFailed
    case invalidSlot, noFreeMemory, flashContextAlreadySet, flashContextNotSet, flashAreaDeviceNull
    case invalidPageOffset, invalidOffset, invalidLength, invalidImageHeader, invalidImageHeaderMagic
    case invalidHash, invalidFlashAddress, versionGetFailed, currentVersionIsNewer, imageAlreadyPending
    case invalidImageVectorTable, invalidImageTooLarge, invalidImageDataOverrun, imageConfirmationDenied
    case imageSettingTestToActiveDenied, activeSlotNotKnown
    /// Any other value, kept as is.
    case unrecognized(UInt16)

    /// In code order: index = value.
    static let table: [(ImageManagementErrorCode, String, String)] = [
        (.ok, "OK", "success"),
        (.unknown, "UNKNOWN", "unknown error"),
        (.flashConfigQueryFail, "FLASH_CONFIG_QUERY_FAIL", "the flash configuration could not be read"),
        (.noImage, "NO_IMAGE", "there is no image in the slot"),
        (.noTLVs, "NO_TLVS", "the image has no TLV area"),
        (.invalidTLV, "INVALID_TLV", "the image has an invalid TLV"),
        (.tlvMultipleHashesFound, "TLV_MULTIPLE_HASHES_FOUND", "the image has more than one hash TLV"),
        (.tlvInvalidSize, "TLV_INVALID_SIZE", "a TLV of the image has an invalid size"),
        (.hashNotFound, "HASH_NOT_FOUND", "no image on the device has the given hash"),
        (.noFreeSlot, "NO_FREE_SLOT", "there is no free slot for the upload"),
        (.flashOpenFailed, "FLASH_OPEN_FAILED", "the flash area could not be opened"),
        (.flashReadFailed, "FLASH_READ_FAILED", "reading flash failed"),
        (.flashWriteFailed, "FLASH_WRITE_FAILED", "writing flash failed"),
        (.flashEraseFailed, "FLASH_ERASE_FAILED", "erasing flash failed"),
        (.invalidSlot, "INVALID_SLOT", "the slot number is invalid"),
        (.noFreeMemory, "NO_FREE_MEMORY", "the device ran out of memory"),
        (.flashContextAlreadySet, "FLASH_CONTEXT_ALREADY_SET", "the flash context is already set"),
        (.flashContextNotSet, "FLASH_CONTEXT_NOT_SET", "the flash context is not set"),
        (.flashAreaDeviceNull, "FLASH_AREA_DEVICE_NULL", "the flash area has no device"),
        (.invalidPageOffset, "INVALID_PAGE_OFFSET", "the page offset is invalid"),
        (.invalidOffset, "INVALID_OFFSET", "the upload offset is missing or invalid"),
        (.invalidLength, "INVALID_LENGTH", "the image length is missing or invalid"),
        (.invalidImageHeader, "INVALID_IMAGE_HEADER", "the first chunk is shorter than an image header"),
        (.invalidImageHeaderMagic, "INVALID_IMAGE_HEADER_MAGIC", "the data is not an MCUboot image (bad header magic)"),
        (.invalidHash, "INVALID_HASH", "the hash is missing or has the wrong length"),
        (.invalidFlashAddress, "INVALID_FLASH_ADDRESS", "the image's flash address is invalid for this slot"),
        (.versionGetFailed, "VERSION_GET_FAILED", "the running version could not be read"),
        (.currentVersionIsNewer, "CURRENT_VERSION_IS_NEWER", "the running firmware is newer than the upload"),
        (.imageAlreadyPending, "IMAGE_ALREADY_PENDING", "another image is already pending"),
        (.invalidImageVectorTable, "INVALID_IMAGE_VECTOR_TABLE", "the image's vector table is invalid"),
        (.invalidImageTooLarge, "INVALID_IMAGE_TOO_LARGE", "the image is too large for the slot"),
        (.invalidImageDataOverrun, "INVALID_IMAGE_DATA_OVERRUN", "the chunk runs past the declared image length"),
        (.imageConfirmationDenied, "IMAGE_CONFIRMATION_DENIED", "confirming this image is not allowed"),
        (
            .imageSettingTestToActiveDenied, "IMAGE_SETTING_TEST_TO_ACTIVE_DENIED",
            "the running image cannot be marked for test"
        ),
        (.activeSlotNotKnown, "ACTIVE_SLOT_NOT_KNOWN", "the device does not know its active slot")
    ]

    public init(rawValue: UInt16) { self = Self.code(rawValue) }
    public var rawValue: UInt16 { tableValue }
    var unrecognizedValue: UInt16? { if case let .unrecognized(v) = self { v } else { nil } }
}

/// A command-group error of SMP v2: `{"err": {"group": g, "rc": n}}`.
public enum SMPGroupError: Sendable, Hashable, CustomStringConvertible {
    case os(OSManagementErrorCode)
    case image(ImageManagementErrorCode)
    /// A group without a table here; the numbers are kept.
    case other(group: UInt16, rc: UInt16)

    public init(group: UInt16, rc: UInt16) {
        switch group {
        case SMPGroup.os.rawValue: self = .os(OSManagementErrorCode(rawValue: rc))
        case SMPGroup.image.rawValue: self = .image(ImageManagementErrorCode(rawValue: rc))
        default: self = .other(group: group, rc: rc)
        }
    }

    public var group: UInt16 {
        switch self {
        case .os: return SMPGroup.os.rawValue
        case .image: return SMPGroup.image.rawValue
        case let .other(g, _): return g
        }
    }

    public var rc: UInt16 {
        switch self {
        case let .os(c): return c.rawValue
        case let .image(c): return c.rawValue
        case let .other(_, rc): return rc
        }
    }

    /// True when the code is 0 (success in every group).
    public var isOK: Bool { rc == 0 }

    /// The symbolic name, e.g. `IMG_MGMT_ERR_NO_FREE_SLOT`.
    public var name: String {
        switch self {
        case let .os(c): return "OS_MGMT_ERR_" + (c.entry?.0 ?? "\(c.rawValue)")
        case let .image(c): return "IMG_MGMT_ERR_" + (c.entry?.0 ?? "\(c.rawValue)")
        case let .other(g, rc): return "group \(g) error \(rc)"
        }
    }

    /// What the code means, in words.
    public var meaning: String {
        switch self {
        case let .os(c): return c.entry?.1 ?? "unrecognized OS group error \(c.rawValue)"
        case let .image(c): return c.entry?.1 ?? "unrecognized image group error \(c.rawValue)"
        case let .other(g, rc): return "error \(rc) of group \(g)"
        }
    }

    public var description: String { "\(name) (group \(group), rc \(rc)): \(meaning)" }

    /// The SMP v1 `rc` a server sends for this error to a v1 client, following
    /// Zephyr's image-group translation (`img_mgmt_translate_error_code`):
    /// missing image or TLVs → ENOENT; no free slot, newer running version or
    /// an image already pending → EBADSTATE; out of memory → ENOMEM; invalid
    /// slot, page offset, offset, length, header, hash or flash address →
    /// EINVAL; anything else (bad header magic included) → EUNKNOWN. Other
    /// groups translate to EUNKNOWN here (0 stays EOK).
    public var legacyReturnCode: SMPReturnCode {
        guard rc != 0 else { return .ok }
        guard case let .image(code) = self else { return .unknown }
        switch code {
        case .noImage, .noTLVs: return .noEntry
        case .noFreeSlot, .currentVersionIsNewer, .imageAlreadyPending: return .badState
        case .noFreeMemory: return .noMemory
        case .invalidSlot, .invalidPageOffset, .invalidOffset, .invalidLength, .invalidImageHeader,
            .invalidHash, .invalidFlashAddress:
            return .invalidValue
        default: return .unknown
        }
    }
}
