import Diagnostics
import FirmwareImage

/// Why bitflash will not flash a file onto a board: one of the policy's refusals, found before
/// anything is sent. Every front door (the command line, `BlueZFlasher`, the simulated boards,
/// `watch`, a class set) gets the same refusal in the same words from `FlashPolicy`.
public struct FlashRefusal: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of refusal it is: what a program can act on without reading the words.
    public enum Kind: String, Sendable, Codable, CaseIterable {
        /// The file says it is for another board: another chip (UF2 family, vector table, address
        /// range, SoftDevice), another MCUboot layout or slot, DFU package parts besides the
        /// application (`Firmware.problems(for:)`).
        case notForBoard = "not-for-board"
        /// An MCUboot image whose hash TLV does not match its bytes: the board would not boot it.
        case damagedImage = "damaged-image"
        /// The file holds nothing for this board's chip.
        case noImageForBoard = "no-image-for-board"
        /// Neither path can write the file: no MakeCode program and no application.
        case nothingToWrite = "nothing-to-write"
        /// The board asked for is of another chip family than the one found.
        case boardMismatch = "board-mismatch"
        /// The image given for a full update holds no MCUboot image.
        case notAnMCUbootImage = "not-an-mcuboot-image"
    }

    public var kind: Kind
    /// What was found, what the board needs and what to do, as one sentence.
    public var message: String
    /// The checks found, when the refusal comes from them (`.notForBoard`).
    public var problems: [BoardProblem]
    /// True when every problem found may be overridden by `PlanSettings.force`
    /// (`--force` on the command line).
    public var overridable: Bool

    public init(_ kind: Kind, _ message: String, problems: [BoardProblem] = [], overridable: Bool = false) {
        self.kind = kind
        self.message = message
        self.problems = problems
        self.overridable = overridable
    }

    public var description: String { message }
}

extension FlashRefusal: DomainError {
    /// 64 for a board of another family than the one asked for (the request contradicts itself),
    /// 65 for every refusal of the file.
    public var failureKind: FailureKind { kind == .boardMismatch ? .invalidRequest : .badFirmware }
}
