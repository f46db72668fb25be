import Diagnostics

/// Something odd about a firmware file that does not stop it from being used. Shown to the user.
public enum FirmwareWarning: Sendable, Hashable, CustomStringConvertible {
    /// Non-blank lines after the end-of-file record were ignored (as DAPLink and `intelhex` do).
    /// `recordTypes` counts the ignored records by type; `dataBytes` is the data they would have held.
    case linesAfterEndOfFile(eofLine: Int, firstLine: Int, lines: Int, recordTypes: [UInt8: Int], dataBytes: Int)
    /// Type-0D (Universal Hex data) records in a file without block-start records were read as data.
    case customDataOutsideUniversalHex(records: Int, firstLine: Int)
    /// A Universal Hex board ID this tool does not know; its section is kept but no board selects it.
    case unknownBoardID(UInt16)
    /// Anything else, in words.
    case note(String)

    public var description: String {
        switch self {
        case .linesAfterEndOfFile(let eofLine, let firstLine, let lines, let types, let dataBytes):
            let kinds = types.sorted { $0.key < $1.key }.map { type, count in
                "\(count) type-\(Hex.number(type, digits: 2, prefix: false)) record\(count == 1 ? "" : "s")"
                    + (type == 0x00 ? " (\(dataBytes) data bytes)" : "")
            }
            let other = lines - types.values.reduce(0, +)
            let all = kinds + (other > 0 ? ["\(other) other line\(other == 1 ? "" : "s")"] : [])
            return
                "ignored \(lines) line\(lines == 1 ? "" : "s") after the end-of-file record on line \(eofLine) (from line \(firstLine)): "
                + all.joined(separator: ", ")
        case .customDataOutsideUniversalHex(let records, let firstLine):
            return
                "\(records) type-0D record\(records == 1 ? "" : "s") (first on line \(firstLine)) in a file without Universal Hex block starts were read as data"
        case .unknownBoardID(let id):
            return
                "unknown Universal Hex board ID \(UniversalHex.boardIDString(id)): its section matches no supported board"
        case .note(let text):
            return text
        }
    }
}
