import FirmwareImage

/// This computer's record that it finished a program on a board itself: the program was
/// written (or found and confirmed) and the board was read back running it in application
/// mode. One per board, kept beside the resume records (`ResumeRecordStore`).
///
/// Why it matters: a board that runs in application mode and reports a program's hash may
/// still hold an unfinished flash of it. Another client that partial-flashes in application
/// mode writes the program's header block (with its hash) first; if it stops after a block or
/// two without END_OF_TRANSMISSION, the board keeps running the old code in RAM, answers
/// REGION_INFO with the new hash (the map is scanned at each request, CODAL
/// `MicroBitPartialFlashingService.cpp` `onDataWritten`) and has `flashIncomplete` set, which
/// only shows at its next boot (pairing mode). Only a board this computer finished itself is
/// taken at its word; any other is restarted into its program (`FF 01`) to confirm
/// (`PartialFlashFlow`).
public struct FinishRecord: Sendable, Equatable, Codable {
    /// The format of the record; bumped when its meaning changes.
    public var version: Int
    /// The board (its address, or the name a simulated board goes by).
    public var board: String
    /// The program finished there (hex of its 8-byte program hash).
    public var programHash: String
    /// When it was finished (ISO 8601 text, set by whoever saves the record).
    public var finishedAt: String

    public static let currentVersion = 1

    public init(board: String, programHash: String, finishedAt: String) {
        self.version = Self.currentVersion
        self.board = board
        self.programHash = programHash
        self.finishedAt = finishedAt
    }

    /// True when the record says this computer finished `program` on the board.
    public func vouches(for program: MakeCodeProgram) -> Bool {
        version == Self.currentVersion && programHash == program.programHash.hexString
    }
}

/// How a flow made sure that a board reporting the program really runs all of it.
public enum UpToDateConfirmation: Sendable, Equatable {
    /// This computer finished the program on this board itself (`FinishRecord`): nothing was
    /// sent; the board keeps running.
    case finishedHere(at: String)
    /// The board was in pairing mode, or nothing vouched for it: it was restarted into its
    /// program (`FF 01`) and read back; `cost` is the time from the restart to the read-back.
    case restarted(cost: Duration)
}
