import Crypto
import Diagnostics
import FirmwareImage

/// Why an image cannot be installed, found without the board (before anything is sent).
public enum McuMgrImageProblem: Sendable, Equatable, CustomStringConvertible {
    /// The bytes are not an MCUboot image MCUboot could read (header, sizes, TLV areas).
    case malformed(String)
    /// The SHA-256 TLV does not match the header, body and protected TLVs: MCUboot would refuse
    /// to boot the image, and the device would never list it under the hash it names.
    case hashMismatch(stored: [UInt8], computed: [UInt8])
    /// The image has no 32-byte SHA-256 TLV: Zephyr's image management cannot name it.
    case noSHA256TLV
    /// The hashes given with the image are not the image's own.
    case hashesNotTheImages(String)
    /// The image is larger than the board's slot.
    case tooLarge(bytes: Int, slot: Int, from: SlotSizeSource)

    public var description: String {
        switch self {
        case let .malformed(why):
            return "it is not an MCUboot image MCUboot can read (\(why))"
        case let .hashMismatch(stored, computed):
            return
                "its SHA-256 TLV (\(Self.short(stored))) does not match the SHA-256 of its header, body and protected "
                + "TLVs (\(Self.short(computed))): the file is damaged or was changed after signing, so build and sign it again"
        case .noSHA256TLV:
            return "it has no SHA-256 TLV, which McuMgr names an image by: sign it with imgtool's default SHA-256 hash"
        case let .hashesNotTheImages(what):
            return what
        case let .tooLarge(bytes, slot, from):
            return "it has \(bytes) bytes and the board's slot holds \(slot) (\(from.rawValue)): build a smaller image"
        }
    }

    static func short(_ hash: [UInt8]) -> String { Hex.bytes(hash.prefix(8), uppercase: false) + "…" }
}

/// The size of the board's slot an upload goes to, and where that figure comes from.
public struct SlotSize: Sendable, Equatable {
    public var bytes: Int
    public var source: SlotSizeSource
    public init(bytes: Int, source: SlotSizeSource) {
        self.bytes = bytes
        self.source = source
    }

    /// The board profile's slot for `family` (`McuMgrUpgradeImage.profileSlotSize(for:)`).
    public static func profile(_ family: ChipFamily) -> SlotSize {
        SlotSize(bytes: McuMgrUpgradeImage.profileSlotSize(for: family), source: .profile)
    }
}

/// Where a slot size comes from.
public enum SlotSizeSource: String, Sendable, Equatable, Codable {
    /// The board reported it, or the caller knows it of this board.
    case board = "as the board reports it"
    /// The board profile: `McuMgrUpgradeImage.profileSlotSize(for:)`.
    case profile = "from the board profile"
}

extension McuMgrUpgradeImage {
    /// The size of each MCUboot slot of a micro:bit or Calliope mini built with MCUboot and
    /// McuMgr, as the board profile lays them out: the primary slot from one flash page below
    /// the application start (the page of the image header) up to the runtime's scratch page,
    /// the secondary slot of the same size (the simulated board, `SMPServerConfiguration.standard`,
    /// uses the same layout).
    public static func profileSlotSize(for family: ChipFamily) -> Int {
        let layout = family.layout
        return Int(layout.scratchPage - (layout.applicationStart - layout.pageSize))
    }

    /// Why this image cannot be installed on a board whose slot holds `slotSize` bytes (nil: not
    /// known), found from the image alone: MCUboot's header and TLV areas, the SHA-256 TLV
    /// against the hashed bytes (MCUboot `bootutil_img_hash.c`), the hashes given with the image,
    /// and its size. Nil when nothing stands in the way.
    public func problem(slot: SlotSize?) -> McuMgrImageProblem? {
        let parsed: MCUbootImage
        do {
            parsed = try MCUbootImage(bytes: bytes)
        } catch {
            return .malformed("\(error)")
        }
        switch parsed.hashCheck {
        case let .mismatch(stored, computed): return .hashMismatch(stored: stored, computed: computed)
        case .valid, .absent, .notCheckable: break
        }
        guard let reported = parsed.reportedHash else { return .noSHA256TLV }
        if hash != reported {
            return .hashesNotTheImages(
                "the hash given (\(McuMgrImageProblem.short(hash))) is not the image's SHA-256 TLV "
                    + "(\(McuMgrImageProblem.short(reported)))")
        }
        let digest = Array(SHA256.hash(data: bytes))
        if fileSHA256 != digest {
            return .hashesNotTheImages(
                "the file SHA-256 given (\(McuMgrImageProblem.short(fileSHA256))) is not that of the "
                    + "image's bytes (\(McuMgrImageProblem.short(digest)))")
        }
        if let slot, bytes.count > slot.bytes {
            return .tooLarge(bytes: bytes.count, slot: slot.bytes, from: slot.source)
        }
        return nil
    }
}
