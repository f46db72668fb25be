import Foundation

/// Why a UF2 file, an MCUboot image or a DFU `.zip` package could not be read or built.
///
/// Every message says what is wrong with the file and what to do about it.
public enum FirmwareFormatError: Error, Sendable, Equatable, CustomStringConvertible, LocalizedError {
    // MARK: UF2
    /// The file holds no UF2 block at all.
    case uf2Empty
    /// The file size is not a multiple of the 512-byte UF2 block.
    case uf2SizeNotBlockMultiple(size: Int)
    /// A magic number of block `block` (file order, from 0) is wrong; `offset` is 0, 4 or 508.
    case uf2BadMagic(block: Int, offset: Int, found: UInt32)
    /// Block `block` claims more than 476 payload bytes.
    case uf2PayloadTooLarge(block: Int, size: UInt32)
    /// Block `block` is part of a file container (a UF2 that carries files, not flash contents).
    case uf2FileContainer(block: Int)
    /// Block `block` is for another chip family than the board's.
    case uf2FamilyMismatch(block: Int, found: UInt32, expected: UInt32)
    /// The blocks' own numbering says some blocks are absent.
    case uf2MissingBlocks(numbers: [UInt32], total: UInt32)
    /// The same block number appears more than once.
    case uf2DuplicateBlocks(numbers: [UInt32])
    /// Block `block` gives a different total block count than the first block.
    case uf2TotalMismatch(block: Int, found: UInt32, expected: UInt32)
    /// Block `block`'s number is not below its own total.
    case uf2BlockNumberOutOfRange(block: Int, number: UInt32, total: UInt32)
    /// Block `block` would write past the end of the 32-bit address space.
    case uf2AddressOverflow(block: Int, address: UInt32)
    /// Two blocks put different bytes at `address`.
    case uf2Conflict(block: Int, address: UInt32)
    /// Every block was marked "not main flash": nothing is left to write.
    case uf2NoFlashData

    // MARK: MCUboot
    /// Fewer bytes than an MCUboot header (or the part of the image the header announces).
    case mcubootTruncated(size: Int, needed: Int, what: String)
    /// The first word is not the MCUboot magic 0x96F3B83D.
    case mcubootBadMagic(found: UInt32)
    /// The legacy (v1) MCUboot magic 0x96F3B83C, which this tool does not read.
    case mcubootLegacyMagic
    /// The header size field is smaller than the 32-byte header itself.
    case mcubootHeaderTooSmall(UInt16)
    /// A TLV area does not start with its info magic (0x6907 unprotected, 0x6908 protected).
    case mcubootBadTLVArea(offset: Int, expected: UInt16, found: UInt16)
    /// The protected TLV area's length disagrees with the header.
    case mcubootProtectedSizeMismatch(header: UInt16, area: UInt16)
    /// A TLV runs past the end of its area.
    case mcubootTLVOverrun(offset: Int, type: UInt16, length: UInt16)
    /// The image carries several SHA-256 TLVs; the device refuses that.
    case mcubootSeveralHashes
    /// The builder was given values that do not fit the format.
    case mcubootCannotBuild(String)

    // MARK: DFU .zip
    /// The bytes are not a readable zip archive.
    case dfuNotAZip
    /// The zip has no `manifest.json` at its root.
    case dfuMissingManifest
    /// `manifest.json` is not valid JSON or lacks the expected keys.
    case dfuBadManifest(String)
    /// The manifest names a file the zip does not contain.
    case dfuMissingFile(String)
    /// A zip entry could not be extracted (corrupt or unsupported compression).
    case dfuUnreadableEntry(String)
    /// A zip entry is larger than any micro:bit or Calliope mini flash.
    case dfuEntryTooLarge(name: String, size: Int)
    /// The manifest lists no firmware image.
    case dfuNoImages

    public var description: String {
        switch self {
        case .uf2Empty:
            return "the UF2 file is empty: export the program again"
        case let .uf2SizeNotBlockMultiple(size):
            return "the file is \(size) bytes, not a whole number of 512-byte UF2 blocks: it is truncated or not a UF2 file"
        case let .uf2BadMagic(block, offset, found):
            return "UF2 block \(block) has a wrong magic number at byte \(offset) (\(FormatText.hex32(found))): the file is corrupt or not a UF2 file"
        case let .uf2PayloadTooLarge(block, size):
            return "UF2 block \(block) claims \(size) payload bytes, more than the 476 a block can hold: the file is corrupt"
        case let .uf2FileContainer(block):
            return "UF2 block \(block) belongs to a file container, which carries files rather than flash contents: use a UF2 made for flashing"
        case let .uf2FamilyMismatch(block, found, expected):
            return "UF2 block \(block) is for chip family \(FormatText.hex32(found)), but the board needs \(FormatText.hex32(expected)): use the file made for this board"
        case let .uf2MissingBlocks(numbers, total):
            return "the UF2 file lacks block(s) \(list(numbers)) of \(total): the download is incomplete, fetch the file again"
        case let .uf2DuplicateBlocks(numbers):
            return "the UF2 file repeats block number(s) \(list(numbers)): it is corrupt, fetch the file again"
        case let .uf2TotalMismatch(block, found, expected):
            return "UF2 block \(block) says the file has \(found) blocks, but the first block says \(expected): the file mixes two files"
        case let .uf2BlockNumberOutOfRange(block, number, total):
            return "UF2 block \(block) is numbered \(number), not below its total of \(total): the file is corrupt"
        case let .uf2AddressOverflow(block, address):
            return "UF2 block \(block) at \(FormatText.hex32(address)) runs past the 4 GiB address space: the file is corrupt"
        case let .uf2Conflict(block, address):
            return "UF2 block \(block) puts a different byte at \(FormatText.hex32(address)) than an earlier block: the file is inconsistent"
        case .uf2NoFlashData:
            return "every UF2 block is marked 'not main flash': the file has nothing to flash"
        case let .mcubootTruncated(size, needed, what):
            return "the MCUboot image is \(size) bytes but its \(what) needs \(needed): the file is truncated"
        case let .mcubootBadMagic(found):
            return "not an MCUboot image: the first word is \(FormatText.hex32(found)), not 0x96F3B83D; sign the application with imgtool first"
        case .mcubootLegacyMagic:
            return "this is a legacy (v1) MCUboot image (magic 0x96F3B83C), which is not supported: sign it again with a current imgtool"
        case let .mcubootHeaderTooSmall(size):
            return "the MCUboot header size field is \(size), smaller than the 32-byte header: the image is corrupt"
        case let .mcubootBadTLVArea(offset, expected, found):
            return "expected the MCUboot TLV area magic \(FormatText.hex16(expected)) at byte \(offset), found \(FormatText.hex16(found)): the image is corrupt or unsigned"
        case let .mcubootProtectedSizeMismatch(header, area):
            return "the MCUboot header announces \(header) bytes of protected TLVs but the area says \(area): the image is corrupt"
        case let .mcubootTLVOverrun(offset, type, length):
            return "the MCUboot TLV of type \(FormatText.hex16(type)) at byte \(offset) claims \(length) bytes, past the end of its area: the image is corrupt"
        case .mcubootSeveralHashes:
            return "the MCUboot image carries more than one SHA-256 TLV, which the device rejects: sign it again"
        case let .mcubootCannotBuild(reason):
            return "cannot build the MCUboot image: \(reason)"
        case .dfuNotAZip:
            return "the DFU package is not a readable .zip archive: download it again"
        case .dfuMissingManifest:
            return "the DFU package has no manifest.json at its root: it is not a Nordic or McuMgr DFU package"
        case let .dfuBadManifest(reason):
            return "the DFU package's manifest.json is invalid (\(reason)): rebuild the package"
        case let .dfuMissingFile(name):
            return "the DFU package's manifest names '\(name)', which is not in the zip: rebuild the package"
        case let .dfuUnreadableEntry(name):
            return "the DFU package entry '\(name)' cannot be extracted: the zip is corrupt or uses an unsupported compression"
        case let .dfuEntryTooLarge(name, size):
            return "the DFU package entry '\(name)' is \(size) bytes, larger than any supported board's flash"
        case .dfuNoImages:
            return "the DFU package's manifest lists no firmware image"
        }
    }

    public var errorDescription: String? { description }
}

/// Hex spellings shared by the format readers' messages.
enum FormatText {
    static func hex32(_ v: UInt32) -> String { "0x" + String(format: "%08X", v) }
    static func hex16(_ v: UInt16) -> String { "0x" + String(format: "%04X", v) }
}

private func list(_ numbers: [UInt32]) -> String {
    let shown = numbers.prefix(10).map(String.init).joined(separator: ", ")
    return numbers.count > 10 ? shown + " and \(numbers.count - 10) more" : shown
}
