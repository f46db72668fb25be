import Crypto
import Diagnostics
import FirmwareImage

/// What the server reads from an MCUboot image in a slot, as Zephyr's `img_mgmt_read_info`
/// does: the version and the SHA-256 TLV (docs/protocols/mcumgr-smp.md §5), decoded by `MCUbootImage`.
/// A slot without a readable image yields nil; nothing traps.
struct SlotImageInfo: Sendable, Equatable {
    /// "major.minor.revision", plus ".build" when the build number is not 0 (`img_mgmt_ver_str`).
    var version: String
    var rawVersion: MCUbootVersion
    var hash: [UInt8]
    /// The header's `IMAGE_F_NON_BOOTABLE` flag is clear.
    var bootable: Bool
    /// Header + body + protected TLVs + unprotected TLVs.
    var totalSize: Int
    /// The SHA-256 of header, body and protected TLVs matches the hash TLV (what MCUboot
    /// checks before it swaps an image in).
    var intact: Bool

    /// Reads the image at the start of a slot of `limit` bytes through `read(offset, count)`.
    init?(limit: Int, read: (Int, Int) -> [UInt8]?) {
        guard let head = read(0, MCUbootHeader.encodedSize), let header = try? MCUbootHeader(decoding: head) else {
            return nil
        }
        let tlvStart = Int(header.headerSize) + Int(header.imageSize) + Int(header.protectedTLVSize)
        guard tlvStart + 4 <= limit, let info = read(tlvStart, 4), let total = (try? LEBytes.u16(info, 2)).map(Int.init)
        else { return nil }
        guard tlvStart + total <= limit, let bytes = read(0, tlvStart + total),
            let image = try? MCUbootImage(bytes: bytes), let hash = image.reportedHash
        else { return nil }
        let v = image.version
        version = "\(v.major).\(v.minor).\(v.revision)" + (v.build == 0 ? "" : ".\(v.build)")
        rawVersion = v
        bootable = !header.flags.contains(.nonBootable)
        intact = image.hashCheck == .valid
        self.hash = hash
        totalSize = image.length
    }
}

/// An MCUboot image for the simulated McuMgr board with the two identities the McuMgr
/// client needs: built by `MCUbootImage.build` (unsigned, SHA-256 TLV only), with a
/// one-page header so that its payload runs at the application start.
public struct SimulatedMCUbootImage: Sendable, Equatable {
    /// The image file.
    public let bytes: [UInt8]
    /// The SHA-256 TLV: what the device reports and what test and confirm name.
    public let hash: [UInt8]
    /// SHA-256 of the whole file (the upload's `sha`).
    public let fileSHA256: [UInt8]

    /// Wraps `payload` (built to run at the primary slot + `headerSize`).
    /// - Throws: `FirmwareImageError` when the image cannot be built (payload over 4 GiB).
    public init(payload: [UInt8], version: MCUbootVersion = MCUbootVersion(major: 1), headerSize: UInt16 = 0x1000)
        throws
    {
        bytes = try MCUbootImage.build(application: payload, version: version, headerSize: headerSize)
        hash = try MCUbootImage(bytes: bytes).reportedHash ?? []
        fileSHA256 = Array(SHA256.hash(data: bytes))
    }
}
