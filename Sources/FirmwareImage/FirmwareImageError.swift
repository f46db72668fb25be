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

    // MARK: The front door (`Firmware`)

    /// The content matches no supported format.
    case unrecognizedFormat(fileName: String, detail: String)
    /// The format was recognised, but this build cannot read it (yet).
    case unsupportedFormat(Firmware.Format)
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
             .overlappingData(let p, _, _, _, _, _), .dataOutsideUniversalHexSection(let p, _):
            return p
        case .emptyFile, .unrecognizedFormat, .unsupportedFormat, .noImageForBoard, .noMakeCodeProgram:
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
            return "record is truncated: its length byte announces \(expected) characters after ':', the line has \(found)"
        case .badChecksum(_, let expected, let found):
            return "bad checksum: expected \(hex2(expected)), found \(hex2(found))"
        case .badRecordLength(_, let type, let length, let expected):
            return "bad length \(length) for a type-\(hex2(type, prefix: false)) record: expected \(expected)"
        case .unexpectedCharacter(_, let found, let expected):
            return "expected \(expected), found \(describe(found))"
        case .unknownRecordType(_, let type):
            return "unknown record type \(hex2(type, prefix: false)): expected 00-05 (Intel HEX) or 0A-0E (Universal Hex)"
        case .addressOverflow(_, let address):
            return "data record reaches past the 32-bit address space (to 0x\(String(address, radix: 16, uppercase: true)))"
        case .missingEndOfFile:
            return "the file ends without an end-of-file record: expected ':00000001FF'"
        case .emptyFile:
            return "the file is empty: expected Intel HEX records"
        case .overlappingData(_, let address, let board, let byte, let firstLine, let firstByte):
            let section = board.map { " in the section for board ID \(UniversalHex.boardIDString($0))" } ?? ""
            return "overlapping data\(section): address \(hex8(address)) holds \(hex2(firstByte)) from line \(firstLine) and \(hex2(byte)) here; expected the same byte"
        case .dataOutsideUniversalHexSection(_, let firstDataLine):
            return "block-start (0A) record after data records that belong to no board (first on line \(firstDataLine)): expected every Universal Hex data record inside a board section"
        case .unrecognizedFormat(let name, let detail):
            return "\(name): not a firmware file this tool reads (Intel HEX, Universal Hex, UF2, MCUboot image, DFU zip): \(detail)"
        case .unsupportedFormat(let format):
            return "\(format.displayName) files are recognised but not supported by this build yet"
        case .noImageForBoard(let board, let name, let wanted, let available):
            let have = available.isEmpty ? "no board sections" : available.joined(separator: "; ")
            return "\(name) has no \(wanted); this board is a \(board.displayName) (\(board.family.chipName)). The file has: \(have)"
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

func hex2(_ b: UInt8, prefix: Bool = true) -> String {
    let s = String(b, radix: 16, uppercase: true)
    return (prefix ? "0x" : "") + (s.count < 2 ? "0" + s : s)
}

func hex8(_ v: UInt32) -> String {
    let s = String(v, radix: 16, uppercase: true)
    return "0x" + String(repeating: "0", count: max(0, 8 - s.count)) + s
}

/// `'#' (0x23)` for printable ASCII, `byte 0x0A (line feed)` otherwise.
private func describe(_ b: UInt8) -> String {
    switch b {
    case 0x0A: return "end of line"
    case 0x0D: return "end of line (carriage return)"
    case 0x20: return "a space"
    case 0x09: return "a tab"
    case 0x21...0x7E: return "'\(Character(Unicode.Scalar(b)))' (\(hex2(b)))"
    default: return "byte \(hex2(b))"
    }
}
