import Diagnostics
import Foundation

/// A place in a text firmware file: 1-based line and column (columns count bytes).
public struct TextPosition: Sendable, Hashable, Codable, CustomStringConvertible {
    public var line: Int
    public var column: Int

    public init(line: Int, column: Int) {
        self.line = line
        self.column = column
    }

    public var description: String { "line \(line), column \(column)" }
}

/// Everything that can be wrong with a firmware file, for every format of the module.
///
/// Cases are grouped by format. Text formats carry a `TextPosition`; every case says what
/// was expected and what was found. `description` is the message for the user (it leads with
/// the position); `message` is the same without the position, for callers that print
/// `file:line:column:` themselves.
///
/// Binary formats (UF2, MCUboot, DFU zip) name the block or byte offset in their payloads.
/// Adding a format: add its cases in a new `// MARK:` group below and their messages in
/// `message`. Keep payloads `Equatable` and `Sendable`.
public enum FirmwareImageError: Error, Sendable, Equatable {
    // MARK: Intel HEX and Universal Hex syntax

    /// A non-blank line does not start with `:`.
    case missingColon(TextPosition, found: UInt8)
    /// A character inside a record is not a hexadecimal digit.
    case nonHexDigit(TextPosition, found: UInt8)
    /// The line (or the file) ends before the record does: its length byte announced more.
    /// `position` is where the line ended.
    case truncatedRecord(TextPosition, expectedCharacters: Int, foundCharacters: Int)
    /// The checksum byte is wrong. `expected` is the right value, `found` the value in the file.
    case badChecksum(TextPosition, expected: UInt8, found: UInt8)
    /// The length byte is wrong for the record: a fixed-size record with another size, or
    /// more hex digits on the line than the length byte announces.
    case badRecordLength(TextPosition, recordType: UInt8, length: Int, expected: String)
    /// Something other than whitespace follows the checksum.
    case unexpectedCharacter(TextPosition, found: UInt8, expected: String)
    /// A record type this reader does not know (known: 00-05, 0A-0E).
    case unknownRecordType(TextPosition, recordType: UInt8)
    /// A data record would reach past the 4 GiB address space.
    case addressOverflow(TextPosition, address: UInt64)
    /// The file ends without an end-of-file record (`:00000001FF`). `position` is the end of the file.
    case missingEndOfFile(TextPosition)
    /// The file holds no records at all.
    case emptyFile
    /// Two records put different bytes at one address. `position` points at the byte in the later
    /// record; `firstLine` is the earlier record's line.
    case overlappingData(TextPosition, address: UInt32, boardID: UInt16?, byte: UInt8, firstLine: Int, firstByte: UInt8)
    /// A Universal Hex has data records before its first block-start (0A) record.
    case dataOutsideUniversalHexSection(TextPosition, firstDataLine: Int)
    /// A record's line goes on for more than `limit` characters without a line break.
    case lineTooLong(TextPosition, limit: Int)
    /// A Universal Hex block start names a board ID after `limit` others.
    case tooManySections(TextPosition, limit: Int)
    /// One board's data falls into more than `limit` separate address ranges.
    case tooManyRuns(boardID: UInt16?, limit: Int)

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
    /// The blocks' own numbering says `missing` blocks are absent; `numbers` are the first of them
    /// (at most 10, the ones the message names).
    case uf2MissingBlocks(numbers: [UInt32], missing: Int, total: UInt32)
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
    /// A zip entry is larger than any micro:bit or Calliope mini flash (`name` "*": the files the
    /// manifest names, together).
    case dfuEntryTooLarge(name: String, size: Int)
    /// The manifest lists no firmware image.
    case dfuNoImages
    /// The package holds no application bitflash could flash, only these parts (`name (role)`).
    case dfuNoApplication(parts: [String])
    /// A McuMgr package's application is not a valid MCUboot image; `reason` says why.
    case dfuNotMCUboot(name: String, reason: String)
    /// A Nordic package's init packet is absent (`name` nil) or of a kind that names no supported
    /// board (`size` bytes).
    case dfuUnknownInitPacket(name: String?, size: Int)
    /// A Nordic package's init packet does not describe its binary; `problem` says how.
    case dfuInitPacketMismatch(bin: String, problem: String)
    /// A legacy init packet asks for SoftDevices (FWIDs) none of which these boards run.
    case dfuWrongSoftDevice(listed: String)
    /// A Nordic package's binary is empty or larger than the family's application region.
    case dfuApplicationTooLarge(name: String, size: Int, family: ChipFamily)

    // MARK: Memory images

    /// A write into a `MemoryImage` brought a different byte to an address that already holds data.
    case imageConflict(address: UInt32, existing: UInt8, new: UInt8)
    /// A write into a `MemoryImage` would run past the end of the 32-bit address space.
    case imagePastAddressSpace(address: UInt32, count: Int)

    // MARK: The front door (`Firmware`)

    /// The file is larger than any file of its format for these boards can be (`size` nil: more
    /// than `limit` bytes came from a source whose size was not known).
    case fileTooLarge(format: Firmware.Format, size: Int?, limit: Int)

    /// The content matches no supported format.
    case unrecognizedFormat(fileName: String, detail: String)
    /// The file has no image for the board. `wanted` names what was looked for (`micro:bit V2 section …`),
    /// `available` the sections the file does have.
    case noImageForBoard(Board, fileName: String, wanted: String, available: [String])

    // MARK: MakeCode program region

    /// There is no MakeCode program the device would find; `reason` says why.
    case noMakeCodeProgram(MakeCodeProgram.Absence, family: ChipFamily)
}

extension FirmwareImageError: CustomStringConvertible, LocalizedError {
    /// Where in a text file the error is, when it is about one place.
    public var position: TextPosition? {
        switch self {
        case .missingColon(let p, _), .nonHexDigit(let p, _), .truncatedRecord(let p, _, _),
            .badChecksum(let p, _, _), .badRecordLength(let p, _, _, _), .unexpectedCharacter(let p, _, _),
            .unknownRecordType(let p, _), .addressOverflow(let p, _), .missingEndOfFile(let p),
            .overlappingData(let p, _, _, _, _, _), .dataOutsideUniversalHexSection(let p, _), .lineTooLong(let p, _),
            .tooManySections(let p, _):
            return p
        default:
            return nil
        }
    }

    /// The message without the position.
    public var message: String {
        switch self {
        case .missingColon(_, let found):
            return "expected ':' at the start of an Intel HEX record, found \(describe(found))"
        case .nonHexDigit(_, let found):
            return "expected a hexadecimal digit (0-9, A-F), found \(describe(found))"
        case .truncatedRecord(_, let expected, let found):
            return
                "record is truncated: its length byte announces \(expected) characters after ':', the line has \(found)"
        case .badChecksum(_, let expected, let found):
            return "bad checksum: expected \(Hex.number(expected, digits: 2)), found \(Hex.number(found, digits: 2))"
        case .badRecordLength(_, let type, let length, let expected):
            return
                "bad length \(length) for a type-\(Hex.number(type, digits: 2, prefix: false)) record: expected \(expected)"
        case .unexpectedCharacter(_, let found, let expected):
            return "expected \(expected), found \(describe(found))"
        case .unknownRecordType(_, let type):
            return
                "unknown record type \(Hex.number(type, digits: 2, prefix: false)): expected 00-05 (Intel HEX) or 0A-0E (Universal Hex)"
        case .addressOverflow(_, let address):
            return
                "data record reaches past the 32-bit address space (to \(Hex.number(address)))"
        case .missingEndOfFile:
            return "the file ends without an end-of-file record: expected ':00000001FF'"
        case .emptyFile:
            return "the file is empty: expected Intel HEX records"
        case .overlappingData(_, let address, let board, let byte, let firstLine, let firstByte):
            let section = board.map { " in the section for board ID \(UniversalHex.boardIDString($0))" } ?? ""
            return
                "overlapping data\(section): address \(Hex.address(address)) holds \(Hex.number(firstByte, digits: 2)) from line \(firstLine) and \(Hex.number(byte, digits: 2)) here; expected the same byte"
        case .dataOutsideUniversalHexSection(_, let firstDataLine):
            return
                "block-start (0A) record after data records that belong to no board (first on line \(firstDataLine)): expected every Universal Hex data record inside a board section"
        case .tooManySections(_, let limit):
            return
                "a block start for yet another board ID, after \(limit) of them: a Universal Hex for these boards has one section per board (six board IDs)"
        case let .tooManyRuns(board, limit):
            let section = board.map { " of the section for board ID \(UniversalHex.boardIDString($0))" } ?? ""
            return
                "the data\(section) falls into more than \(grouped(limit)) separate address ranges; firmware for these boards has a few dozen: the file is not firmware for them"
        case .lineTooLong(_, let limit):
            return
                "the line goes on for more than \(limit) characters without a line break: expected one Intel HEX record per line"
        case .uf2Empty:
            return "the UF2 file is empty: export the program again"
        case let .uf2SizeNotBlockMultiple(size):
            return
                "the file is \(size) bytes, not a whole number of 512-byte UF2 blocks: it is truncated or not a UF2 file"
        case let .uf2BadMagic(block, offset, found):
            return
                "UF2 block \(block) has a wrong magic number at byte \(offset) (\(Hex.address(found))): the file is corrupt or not a UF2 file"
        case let .uf2PayloadTooLarge(block, size):
            return
                "UF2 block \(block) claims \(size) payload bytes, more than the 476 a block can hold: the file is corrupt"
        case let .uf2FileContainer(block):
            return
                "UF2 block \(block) belongs to a file container, which carries files rather than flash contents: use a UF2 made for flashing"
        case let .uf2FamilyMismatch(block, found, expected):
            return
                "UF2 block \(block) is for chip family \(Hex.address(found)), but the board needs \(Hex.address(expected)): use the file made for this board"
        case let .uf2MissingBlocks(numbers, missing, total):
            let more = missing > numbers.count ? " and \(missing - numbers.count) more" : ""
            return
                "the UF2 file lacks \(missing) of its \(total) blocks (block\(missing == 1 ? "" : "s") \(list(numbers))\(more)): the download is incomplete, fetch the file again"
        case let .uf2DuplicateBlocks(numbers):
            return "the UF2 file repeats block number(s) \(list(numbers)): it is corrupt, fetch the file again"
        case let .uf2TotalMismatch(block, found, expected):
            return
                "UF2 block \(block) says the file has \(found) blocks, but the first block says \(expected): the file mixes two files"
        case let .uf2BlockNumberOutOfRange(block, number, total):
            return "UF2 block \(block) is numbered \(number), not below its total of \(total): the file is corrupt"
        case let .uf2AddressOverflow(block, address):
            return
                "UF2 block \(block) at \(Hex.address(address)) runs past the 4 GiB address space: the file is corrupt"
        case let .uf2Conflict(block, address):
            return
                "UF2 block \(block) puts a different byte at \(Hex.address(address)) than an earlier block: the file is inconsistent"
        case .uf2NoFlashData:
            return "every UF2 block is marked 'not main flash': the file has nothing to flash"
        case let .mcubootTruncated(size, needed, what):
            return "the MCUboot image is \(size) bytes but its \(what) needs \(needed): the file is truncated"
        case let .mcubootBadMagic(found):
            return
                "not an MCUboot image: the first word is \(Hex.address(found)), not 0x96F3B83D; sign the application with imgtool first"
        case .mcubootLegacyMagic:
            return
                "this is a legacy (v1) MCUboot image (magic 0x96F3B83C), which is not supported: sign it again with a current imgtool"
        case let .mcubootHeaderTooSmall(size):
            return "the MCUboot header size field is \(size), smaller than the 32-byte header: the image is corrupt"
        case let .mcubootBadTLVArea(offset, expected, found):
            return
                "expected the MCUboot TLV area magic \(Hex.number(expected, digits: 4)) at byte \(offset), found \(Hex.number(found, digits: 4)): the image is corrupt or unsigned"
        case let .mcubootProtectedSizeMismatch(header, area):
            return
                "the MCUboot header announces \(header) bytes of protected TLVs but the area says \(area): the image is corrupt"
        case let .mcubootTLVOverrun(offset, type, length):
            return
                "the MCUboot TLV of type \(Hex.number(type, digits: 4)) at byte \(offset) claims \(length) bytes, past the end of its area: the image is corrupt"
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
            return
                "the DFU package entry '\(name)' cannot be extracted: the zip is corrupt or uses an unsupported compression"
        case let .dfuEntryTooLarge(name, size):
            if name == "*" {
                return
                    "the files the DFU package's manifest names come to \(grouped(size)) bytes, far more than any supported board's flash"
            }
            return "the DFU package entry '\(name)' is \(size) bytes, larger than any supported board's flash"
        case .dfuNoImages:
            return "the DFU package's manifest lists no firmware image"
        case let .dfuNoApplication(parts):
            return
                "the DFU package holds no application image bitflash can flash (it holds \(parts.joined(separator: ", "))): update a SoftDevice, a bootloader or another core with nRF Connect"
        case let .dfuNotMCUboot(name, reason):
            return
                "the DFU package's '\(name)' is not a valid MCUboot image, which a McuMgr package must hold: \(reason)"
        case let .dfuUnknownInitPacket(name, size):
            guard let name else {
                return
                    "the Nordic DFU package names no init packet (dat_file) for its application, so neither the board it is for nor its integrity can be checked: make it again with `bitflash convert FILE.hex --to nordic-dfu-zip`"
            }
            return
                "\(name) is \(size) bytes: neither the 56-byte microbit_app command of the micro:bit V2 and Calliope mini 3 bootloader nor the 14-byte legacy packet of the micro:bit V1 and Calliope mini 1/2 bootloader (a signed nrfutil packet is not read), so the board the package is for is unknown: make it with `bitflash convert FILE.hex --to nordic-dfu-zip`"
        case let .dfuInitPacketMismatch(bin, problem):
            return
                "the DFU package's init packet does not match \(bin): \(problem); the package is corrupt or its files come from two builds: make it again"
        case let .dfuWrongSoftDevice(listed):
            return
                "the DFU package's legacy init packet asks for SoftDevice FWID \(listed); micro:bit V1 and Calliope mini 1/2 run S110 8.0.0 (0x0064), so their bootloader would refuse it: the package is for another board"
        case let .dfuApplicationTooLarge(name, size, family):
            let region = family.layout.application
            return
                "the DFU package's \(name) is \(grouped(size)) bytes; a \(family.chipName) application goes from \(Hex.address(region.lowerBound)) to the bootloader at \(Hex.address(region.upperBound)) (\(grouped(region.count)) bytes at most)"
        case let .imageConflict(address, existing, new):
            return
                "address \(Hex.address(address)) already holds \(Hex.number(existing, digits: 2)), and a later write brings \(Hex.number(new, digits: 2)): the file puts two different bytes at one address"
        case let .imagePastAddressSpace(address, count):
            return
                "\(count) bytes at \(Hex.address(address)) run past the end of the 32-bit address space: the file is corrupt"
        case let .fileTooLarge(format, size, limit):
            let kind = format == .universalHex ? Firmware.Format.intelHex.displayName : format.displayName
            guard let size else {
                return
                    "the file goes on past \(grouped(limit)) bytes, the most an \(kind) file for these boards can be (\(format.maximumFileSizeReason))"
            }
            return
                "the file is \(grouped(size)) bytes; an \(kind) file for these boards is at most \(grouped(limit)) bytes (\(format.maximumFileSizeReason))"
        case .unrecognizedFormat(let name, let detail):
            return
                "\(name): not a firmware file this tool reads (Intel HEX, Universal Hex, UF2, MCUboot image, DFU zip): \(detail)"
        case .noImageForBoard(let board, let name, let wanted, let available):
            let have = available.isEmpty ? "no board sections" : available.joined(separator: "; ")
            return
                "\(name) has no \(wanted); this board is a \(board.displayName) (\(board.family.chipName)). The file has: \(have)"
        case .noMakeCodeProgram(let reason, let family):
            return "no MakeCode program a \(family.chipName) device would find: \(reason)"
        }
    }

    public var description: String {
        if let p = position { return "\(p): \(message)" }
        return message
    }

    public var errorDescription: String? { description }
}

/// `'#' (0x23)` for printable ASCII, `byte 0x0A (line feed)` otherwise.
private func describe(_ b: UInt8) -> String {
    switch b {
    case 0x0A: return "end of line"
    case 0x0D: return "end of line (carriage return)"
    case 0x20: return "a space"
    case 0x09: return "a tab"
    case 0x21...0x7E: return "'\(Character(Unicode.Scalar(b)))' (\(Hex.number(b, digits: 2)))"
    default: return "byte \(Hex.number(b, digits: 2))"
    }
}

private func list(_ numbers: [UInt32]) -> String {
    let shown = numbers.prefix(10).map(String.init).joined(separator: ", ")
    return numbers.count > 10 ? shown + " and \(numbers.count - 10) more" : shown
}
