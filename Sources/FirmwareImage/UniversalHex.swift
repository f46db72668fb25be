import Diagnostics

/// Universal Hex vocabulary: board IDs and the two layouts (docs/protocols/partial-flashing.md §6.2).
///
/// A Universal Hex holds one Intel HEX image per board, each introduced by a block-start (0A)
/// record carrying the board ID. `IntelHexReader` reads both layouts; `UniversalHexWriter` writes them.
public enum UniversalHex {
    /// How the board images are laid out in the file.
    public enum Layout: String, Sendable, Hashable, Codable, CaseIterable {
        /// One 512-character-aligned section per board (the recommended layout; MakeCode's).
        case sections
        /// Self-contained 512-character blocks, each with its own block start and end (deprecated).
        case blocks
    }

    /// The chip family whose image a board ID's section holds, or nil for an unknown ID.
    public static func family(forBoardID id: UInt16) -> ChipFamily? {
        ChipFamily.allCases.first { $0.universalHexBoardIDs.contains(id) }
    }

    /// `0x9903`.
    public static func boardIDString(_ id: UInt16) -> String { "0x" + Hex.number(id, digits: 4, prefix: false) }

    /// `board ID 0x9900 (micro:bit V1 section: nRF51822)`, for messages naming a file's sections.
    public static func sectionName(boardID id: UInt16) -> String {
        guard let family = family(forBoardID: id) else { return "board ID \(boardIDString(id)) (unknown board)" }
        return "board ID \(boardIDString(id)) (\(family.universalHexSectionName) section: \(family.chipName))"
    }
}

extension ChipFamily {
    /// What Universal Hex sections for this family are called: the micro:bit they were made for.
    /// Calliope MakeCode reuses the micro:bit IDs (0x9900 for mini 1/2, 0x9903 for mini 3).
    public var universalHexSectionName: String { self == .nrf51 ? "micro:bit V1" : "micro:bit V2" }

    /// The boards built on this chip, for messages: `micro:bit V1, Calliope mini 1, Calliope mini 2`.
    public var boardNames: String {
        Board.allCases.filter { $0.family == self }.map(\.displayName).joined(separator: ", ")
    }

    /// The Universal Hex data record type for this family's section: 00 for V1 (nRF51), 0D otherwise.
    public var universalHexDataRecordType: IntelHexRecord.RecordType {
        self == .nrf51 ? .data : .customData
    }
}
